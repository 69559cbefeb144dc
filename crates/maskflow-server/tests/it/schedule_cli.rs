//! `maskflow schedule` (issue 30): add, list, pause, resume, remove, and
//! `install --dry-run`, whose systemd timer and service are checked with
//! `systemd-analyze verify` and `systemd-analyze calendar` where the tool
//! exists (Debian's `systemd` package); the unit structure is checked
//! either way.

use std::path::Path;
use std::process::{Command, Output};

const FLOWS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/flows/seed004"
);

fn cli(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(args)
        .env("MASKFLOW_HOME", home)
        .output()
        .expect("run maskflow")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read fixture") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

fn systemd_analyze() -> Option<&'static str> {
    let found = Command::new("systemd-analyze").arg("--version").output();
    if found.is_ok_and(|o| o.status.success()) {
        return Some("systemd-analyze");
    }
    eprintln!("SKIPPED the systemd-analyze checks: systemd-analyze is not installed");
    None
}

#[test]
fn schedules_are_added_listed_paused_and_installed_as_a_valid_systemd_timer() {
    let home = tempfile::tempdir().expect("home");
    copy_dir(Path::new(FLOWS), home.path());
    let h = home.path();
    let added = ok(&cli(
        h,
        &[
            "schedule",
            "add",
            "weekday",
            "--flow",
            "seed_example",
            "--cron",
            "30 8 * * 1-5",
        ],
    ));
    assert!(
        added.starts_with("weekday  active  flow seed_example  cron \"30 8 * * 1-5\"  next "),
        "{added}"
    );
    assert!(ok(&cli(h, &["schedule", "list"])).contains("cron \"30 8 * * 1-5\""));
    assert!(ok(&cli(h, &["schedule", "pause", "weekday"])).contains("  paused  "));
    assert!(ok(&cli(h, &["schedule", "resume", "weekday"])).contains("  active  "));

    let units = ok(&cli(h, &["schedule", "install", "weekday", "--dry-run"]));
    let (timer, service) = units
        .split_once("# maskflow-weekday.service\n")
        .expect("both units are printed");
    let timer = timer
        .strip_prefix("# maskflow-weekday.timer\n")
        .expect("the timer first");
    assert!(
        timer.contains("\n[Timer]\nOnCalendar=Mon..Fri *-*-* 08:30:00\n"),
        "{timer}"
    );
    assert!(
        timer.contains("Unit=maskflow-weekday.service\n")
            && timer.contains("WantedBy=timers.target")
    );
    let exe = env!("CARGO_BIN_EXE_maskflow");
    assert!(
        service.contains(&format!(
            "ExecStart=\"{exe}\" \"flows\" \"run\" \"seed_example\"\n"
        )),
        "{service}"
    );
    assert!(service.contains(&format!("Environment=\"MASKFLOW_HOME={}\"", h.display())));
    assert!(!h.join(".config").exists(), "a dry run writes nothing");

    if let Some(tool) = systemd_analyze() {
        let dir = tempfile::tempdir().expect("units");
        let (t, s) = (
            dir.path().join("maskflow-weekday.timer"),
            dir.path().join("maskflow-weekday.service"),
        );
        std::fs::write(&t, timer).expect("timer");
        std::fs::write(&s, service).expect("service");
        let verify = Command::new(tool)
            .arg("verify")
            .arg(&t)
            .arg(&s)
            .output()
            .expect("verify");
        let said = String::from_utf8_lossy(&verify.stderr).into_owned();
        assert!(
            verify.status.success() && said.trim().is_empty(),
            "systemd-analyze verify: {said}"
        );
        let calendar = Command::new(tool)
            .args(["calendar", "Mon..Fri *-*-* 08:30:00"])
            .output()
            .expect("calendar");
        assert!(calendar.status.success());
        assert!(
            String::from_utf8_lossy(&calendar.stdout)
                .contains("Normalized form: Mon..Fri *-*-* 08:30:00")
        );
    }

    // What a timer cannot do is refused, naming why.
    ok(&cli(
        h,
        &[
            "schedule",
            "add",
            "either",
            "--flow",
            "seed_example",
            "--cron",
            "0 7 1 * 1",
        ],
    ));
    let why = refused(&cli(h, &["schedule", "install", "either", "--dry-run"]));
    assert!(
        why.contains("EITHER the day of month or the day of week"),
        "{why}"
    );
    let why = refused(&cli(
        h,
        &[
            "schedule",
            "add",
            "bad",
            "--flow",
            "seed_example",
            "--cron",
            "0 25 * * *",
        ],
    ));
    assert!(why.contains("cron \"0 25 * * *\""), "{why}");
    let why = refused(&cli(
        h,
        &[
            "schedule",
            "add",
            "nope",
            "--flow",
            "no_such_flow",
            "--cron",
            "0 7 * * *",
        ],
    ));
    assert!(why.contains("no_such_flow"), "{why}");

    ok(&cli(h, &["schedule", "rm", "weekday"]));
    let left = ok(&cli(h, &["schedule", "list"]));
    assert!(
        !left.contains("weekday") && left.contains("either"),
        "{left}"
    );
}

/// Issue 44, point 4: a schedule named as people write it is accepted,
/// listed with its safe name, and its units are named by that safe name.
#[test]
fn a_schedule_named_with_spaces_and_accents_gets_safe_unit_names() {
    let home = tempfile::tempdir().expect("home");
    copy_dir(Path::new(FLOWS), home.path());
    let h = home.path();
    let added = ok(&cli(
        h,
        &[
            "schedule",
            "add",
            "Weekly sales report é",
            "--flow",
            "seed_example",
            "--cron",
            "0 7 * * 1",
        ],
    ));
    assert!(
        added.starts_with("Weekly sales report é (weekly-sales-report-e)  active  "),
        "{added}"
    );
    let units = ok(&cli(
        h,
        &["schedule", "install", "Weekly sales report é", "--dry-run"],
    ));
    assert!(
        units.starts_with("# maskflow-weekly-sales-report-e.timer\n")
            && units.contains("# maskflow-weekly-sales-report-e.service\n"),
        "{units}"
    );
    assert!(
        units.contains("Unit=maskflow-weekly-sales-report-e.service\n"),
        "{units}"
    );
}
