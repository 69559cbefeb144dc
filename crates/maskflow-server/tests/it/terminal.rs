//! Issue #26, break 7: a script's text never drives the terminal. An
//! approved workflow whose script (chosen by the back end) names an output
//! with escape sequences, and prints OSC 52 (clipboard), OSC 0 (window
//! title) and 8-bit CSI sequences to stderr before failing, is run with
//! `maskflow run`: no raw ESC (0x1b) or C1 CSI (0x9b) byte reaches the
//! command's stdout or stderr, and what was there is shown escaped.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::spawned::{BIN, Serve, json_call, upload};

/// Copies its input when it holds `ok`; with `name`, also writes an output
/// whose name holds escapes; with `fail`, prints escapes to stderr and fails.
const SCRIPT: &str = r#"import json, sys
f = json.load(open(sys.argv[1]))["fields"]
text = open(f["data"]).read()
if "fail" in text:
    sys.stderr.write("\x1b]52;c;c2VjcmV0\x07\x1b]0;pwned\x07\x9b31mred\x1b[2J\n")
    sys.exit(3)
open("outputs/out.csv", "w").write(text)
if "name" in text:
    open("outputs/x\x1b]0;title\x07\x9by.csv", "w").write(text)
"#;

fn maskflow_run(data: &std::path::Path, work: &std::path::Path, input: &str) -> Output {
    Command::new(BIN)
        .args(["run", "Escapes", "--input", &format!("data={input}")])
        .current_dir(work)
        .env("MASKFLOW_HOME", data)
        .output()
        .expect("maskflow run")
}

fn assert_no_raw_escape(out: &Output) -> String {
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !bytes.iter().any(|b| *b == 0x1b || *b == 0x9b || *b == 0x07),
            "a raw escape byte on {what}: {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn maskflow_run_prints_a_scripts_escapes_escaped() {
    let home = tempfile::tempdir().expect("home");
    let replay = home.path().join("replay.json");
    let spec = json!({
        "name": "Escapes",
        "description": "Copies a file",
        "script": SCRIPT,
        "fields": [{"name": "data", "label": "Data", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "out.csv", "description": "the copy"}]}
    });
    std::fs::write(
        &replay,
        json!({"validator": [{"feasible": true}], "clarifier": [{"needs_clarification": false}],
               "builder": [spec]})
        .to_string(),
    )
    .expect("replay");
    let data = home.path().join("data");
    let server = Serve::start(&data, Some(&replay), &[]);
    let ids = upload(
        server.port,
        &[("in.csv", "text/csv", "a,b\nok,1\n".as_bytes())],
    );
    let (status, created) = json_call(
        server.port,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": ids})),
    );
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "copy it"})),
    );
    assert_eq!(reply["status"], "building", "{reply}");
    let view: Value = server.wait_for(&format!("/api/workflows/{wf}"), "the build", |v| {
        v["current_version"]["status"] != "building"
    });
    assert_eq!(
        view["current_version"]["status"], "pending_user_approval",
        "{view}"
    );
    let (status, _) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200);
    drop(server);

    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("fail.csv"), "a,b\nfail,1\n").expect("write");
    std::fs::write(work.join("name.csv"), "a,b\nname,1\n").expect("write");

    // A failing script's stderr is shown, escaped.
    let failed = maskflow_run(&data, &work, "fail.csv");
    assert!(!failed.status.success());
    let printed = assert_no_raw_escape(&failed);
    assert!(printed.contains("\\x1b]52;c;c2VjcmV0\\x07"), "{printed}");
    assert!(printed.contains("\\u{9b}31mred"), "{printed}");

    // An output named with escapes: its path is printed escaped (where the
    // runner drops or refuses such a name, whatever it prints), never raw.
    let named = maskflow_run(&data, &work, "name.csv");
    let printed = assert_no_raw_escape(&named);
    if named.status.success() && printed.contains("y.csv") {
        assert!(
            printed.contains("x\\x1b]0;title\\x07\\u{9b}y.csv"),
            "{printed}"
        );
    }
}
