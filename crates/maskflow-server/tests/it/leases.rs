//! Leases across real processes on one data folder (issue #19): while a live
//! Maskflow process holds a flow run's lease, `maskflow flows resume` in
//! another process is refused with the holder's pid; once the holder is
//! killed with SIGKILL, the run resumes at once and completes.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use maskflow_core::store::{self, leases};
use serde_json::json;

fn maskflow(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(args)
        .env("MASKFLOW_HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("run maskflow")
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

#[test]
fn a_second_process_is_refused_and_a_killed_owners_run_resumes() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    let flow = json!({"steps": [
        {"type": "llm", "label": "One", "agentType": "worker", "identifier": "w", "messages": [{"role": "user", "content": ["one"]}]},
        {"type": "llm", "label": "Two", "agentType": "worker", "identifier": "w", "messages": [{"role": "user", "content": ["two"]}]}
    ]});
    std::fs::write(home.path().join("flows/two.json"), flow.to_string()).expect("write");
    // Too few answers: the run stops part-way and can be resumed.
    let short = home.path().join("short.json");
    std::fs::write(&short, json!({"agent:worker": ["first"]}).to_string()).expect("write");
    let full = home.path().join("full.json");
    std::fs::write(
        &full,
        json!({"agent:worker": ["second", "third"]}).to_string(),
    )
    .expect("write");

    let out = maskflow(
        home.path(),
        &[
            "flows",
            "run",
            "two",
            "--replay",
            &short.display().to_string(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .unwrap_or_else(|| panic!("no run id: {text} {}", String::from_utf8_lossy(&out.stderr)))
        .to_owned();
    assert!(!text.contains("status completed"), "{text}");

    // A live process (a real `maskflow serve`) owns the run's lease.
    let mut owner_proc = Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(["serve", "--port", "0"])
        .env("MASKFLOW_HOME", home.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let owner = leases::LeaseOwner {
        pid: owner_proc.id(),
        id: "proc_serve".into(),
    };
    let resource = format!("flow_run:{id}");
    {
        let conn = store::open(home.path(), "t").expect("open");
        leases::acquire(&conn, &resource, &owner, now_ms(), 600_000).expect("lease");
    }

    let resume = |replay: &Path| {
        maskflow(
            home.path(),
            &[
                "flows",
                "resume",
                &id,
                "--replay",
                &replay.display().to_string(),
            ],
        )
    };
    let refused = resume(&full);
    let err = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(!refused.status.success());
    assert!(
        err.contains(&format!(
            "in progress in another Maskflow process (pid {})",
            owner.pid
        )),
        "{err}"
    );
    {
        let conn = store::open(home.path(), "t").expect("open");
        let held = leases::holder(&conn, &resource, now_ms())
            .expect("read")
            .expect("held");
        assert_eq!(
            held.owner_id, "proc_serve",
            "the refused process took nothing"
        );
    }

    // kill -9 the owner: its lease is dead though not expired, and the run resumes.
    owner_proc.kill().expect("kill -9");
    owner_proc.wait().expect("reap");
    let resumed = resume(&full);
    let text = String::from_utf8_lossy(&resumed.stdout).into_owned();
    assert!(
        resumed.status.success() && text.contains("status completed"),
        "{text} {}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let conn = store::open(home.path(), "t").expect("open");
    assert!(
        leases::holder(&conn, &resource, now_ms())
            .expect("read")
            .is_none(),
        "released at the end"
    );
}
