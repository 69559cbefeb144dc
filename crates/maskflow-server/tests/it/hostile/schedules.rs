//! Issue 39, finding 1: the LLM names the workflow
//! `"Tidy\r[Service]\rExecStartPre=…"`; systemd ends a line at CR, so a
//! name written raw into a unit's `Description=` adds a directive that runs
//! a command outside the sandbox when the timer fires. The builder's reply
//! is refused (naming `name`), a rename to such a name is refused, and the
//! units `maskflow schedule install` writes for a workflow that still has
//! one (a data folder from before) pass a real `systemd-analyze verify`
//! with nothing injected.

use std::path::Path;
use std::process::Command;

use maskflow_server::schedule_units::{UnitSpec, systemd_units};
use serde_json::json;

use super::{Folders, backend_with, spec};

/// The injected directive names a program that does not exist, so
/// `systemd-analyze verify` reports it when it is parsed.
const HOSTILE: &str = "Tidy\r[Service]\rExecStartPre=/nonexistent/maskflow-injected -c \"id\"";

fn has_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
}

#[test]
fn a_builder_s_workflow_name_with_control_characters_is_refused() {
    let dirs = Folders::new();
    let mut hostile = spec("print('tidy')\n", &[], &[]);
    hostile["name"] = json!(HOSTILE);
    let llm = backend_with(hostile);
    let mf = dirs.serve(&llm, &[]);
    let (view, wf, _) = mf.build_people(super::ASK);
    let name = view["name"].as_str().unwrap_or_default();
    assert!(
        !has_control(name),
        "the workflow took the builder's name with its control characters: {name:?}"
    );
    let version = &view["current_version"];
    assert_eq!(version["status"], "failed", "{version}");
    let reason = version.to_string();
    assert!(
        reason.contains("`name`") && reason.contains("control character"),
        "the failure names the field and the problem: {reason}"
    );

    // The person renaming it is held to the same rule.
    let (s, refused) = mf.call(
        "PATCH",
        &format!("/api/workflows/{wf}"),
        Some(json!({"name": "Weekly\nExecStartPre=/bin/true"})),
    );
    assert_eq!(s, 400, "{refused}");
    assert!(
        refused.to_string().contains("control character"),
        "{refused}"
    );
}

/// `systemd-analyze`, which `scripts/setup.sh --test` installs (Debian's
/// `systemd`): this check is never skipped.
fn systemd_analyze() -> &'static str {
    let found = Command::new("systemd-analyze").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "systemd-analyze is not installed: run scripts/setup.sh --test (it installs Debian's systemd)"
    );
    "systemd-analyze"
}

fn verify(dir: &Path, units: &[(String, String)]) -> (bool, String) {
    let mut cmd = Command::new(systemd_analyze());
    cmd.args(["verify", "--man=no"]);
    for (file, text) in units {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write unit");
        cmd.arg(path);
    }
    let out = cmd.output().expect("systemd-analyze verify");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_units_for_a_hostile_workflow_name_pass_systemd_analyze_verify() {
    let dirs = Folders::new();
    let units_dir = dirs.root.path().join("units");
    std::fs::create_dir_all(&units_dir).expect("units folder");
    let out = dirs.root.path().join("out 50%");
    let bin = super::bin();
    let spec = UnitSpec {
        name: "tidy".into(),
        what: format!("run workflow {HOSTILE}\u{2028}ExecStartPre=/nonexistent/two\\"),
        cron: "0 7 * * 1-5".into(),
        command: vec![
            bin.display().to_string(),
            "run".into(),
            "wf_0123".into(),
            "--out".into(),
            out.display().to_string(),
            "--schedule".into(),
            "tidy".into(),
        ],
        home: dirs.data().display().to_string(),
    };
    let units = systemd_units(&spec).expect("the units");
    let (ok, said) = verify(&units_dir, &units);
    assert!(
        ok && said.trim().is_empty(),
        "systemd-analyze verify of the units written for {HOSTILE:?}: {said}"
    );
    for (file, text) in &units {
        assert!(
            !text.contains("\nExecStartPre=") && !text.contains('\r'),
            "{file}: {text:?}"
        );
    }

    // The control: the same text written raw is what systemd would run.
    let raw = units
        .iter()
        .map(|(f, t)| {
            let t = t.replace(
                "run workflow Tidy\\x0d[Service]\\x0d",
                "run workflow Tidy\r[Service]\r",
            );
            (f.clone(), t)
        })
        .collect::<Vec<_>>();
    let (_, said) = verify(&units_dir, &raw);
    assert!(
        said.contains("/nonexistent/maskflow-injected"),
        "systemd-analyze parses a directive after a raw CR: {said}"
    );

    // A path that names something cannot be escaped into another name:
    // refused, naming it.
    let mut bad = spec.clone();
    bad.home = format!("{}\r[Service]", dirs.data().display());
    let err = systemd_units(&bad).expect_err("a data folder with a CR");
    assert!(err.to_string().contains("data folder"), "{err}");
}
