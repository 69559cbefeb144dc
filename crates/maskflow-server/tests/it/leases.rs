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
    crate::common::agent_files(home.path(), &["worker"]);
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

/// The runs of flow `solo` as listed, and the run `id` among them.
fn listed(server: &crate::common::spawned::Serve, id: &str) -> serde_json::Value {
    let (status, list) = server.call("GET", "/api/flows/solo/runs", None);
    assert_eq!(status, 200, "{list}");
    list["runs"]
        .as_array()
        .and_then(|l| l.iter().find(|r| r["conversationId"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("run {id} listed: {list}"))
}

#[test]
fn a_run_whose_process_was_killed_shows_as_interrupted_and_resumes_without_a_stop() {
    use crate::common::spawned::Serve;

    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    crate::common::agent_files(home.path(), &["worker"]);
    let flow = json!({"steps": [
        {"type": "llm", "label": "One", "agentType": "worker", "identifier": "w", "messages": [{"role": "user", "content": ["one"]}]},
        {"type": "llm", "label": "Two", "agentType": "worker", "identifier": "w", "messages": [{"role": "user", "content": ["two"]}]}
    ]});
    std::fs::write(home.path().join("flows/solo.json"), flow.to_string()).expect("write");
    let replay = home.path().join("replay.json");
    std::fs::write(
        &replay,
        json!({"agent:worker": ["first", "second"]}).to_string(),
    )
    .expect("write");

    // The first process runs the flow; its first step waits on a manual prompt.
    let first = Serve::start(home.path(), None, &[]);
    let (status, started) = first.call("POST", "/api/flows/solo/run", Some(json!({})));
    assert_eq!(status, 202, "{started}");
    let id = started["conversationId"]
        .as_str()
        .expect("run id")
        .to_owned();
    let path = format!("/api/flow-runs/{id}");
    first.wait_for("/api/manual", "the step's prompt", |v| {
        v.as_array()
            .is_some_and(|l| l.iter().any(|p| p["waiter"]["run_id"] == id.as_str()))
    });
    let (_, view) = first.call("GET", &path, None);
    assert_eq!(view["status"], "running", "{view}");
    assert_eq!(view["interrupted"], false, "run here: {view}");
    assert_eq!(
        view["runningElsewherePid"],
        serde_json::Value::Null,
        "{view}"
    );

    // A second process on the same folder sees the first one run it, and
    // may not resume it.
    let second = Serve::start(home.path(), Some(&replay), &[]);
    let (_, view) = second.call("GET", &path, None);
    assert_eq!(view["status"], "running", "{view}");
    assert_eq!(view["interrupted"], false, "{view}");
    assert_eq!(view["runningElsewherePid"], first.pid(), "{view}");
    assert_eq!(listed(&second, &id)["runningElsewherePid"], first.pid());
    let resume = json!({"conversationId": id});
    let (status, refused) = second.call("POST", "/api/flows/solo/run", Some(resume.clone()));
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused
            .to_string()
            .contains(&format!("another Maskflow process (pid {})", first.pid())),
        "{refused}"
    );

    // kill -9 the first: the stored status still says running, its lease
    // has not run out, yet the run is told as interrupted (its owner is gone).
    let first_pid = first.pid();
    first.kill();
    {
        let conn = store::open(home.path(), "t").expect("open");
        let lease = leases::holder(&conn, &format!("flow_run:{id}"), now_ms())
            .expect("read")
            .expect("the dead owner's lease is not expired yet");
        assert_eq!(lease.owner_pid, first_pid);
    }
    let view = second.wait_for(&path, "the run to show as interrupted", |v| {
        v["interrupted"] == true
    });
    assert_eq!(view["status"], "running", "stored status untouched: {view}");
    assert_eq!(
        view["runningElsewherePid"],
        serde_json::Value::Null,
        "{view}"
    );
    let summary = listed(&second, &id);
    assert_eq!(summary["interrupted"], true, "{summary}");
    assert_eq!(summary["status"], "running", "{summary}");
    let (_, conversations) = second.call("GET", "/api/conversations", None);
    let entry = conversations["conversations"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["conversationId"] == id.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("run listed: {conversations}"));
    assert_eq!(entry["interrupted"], true, "{entry}");

    // Resume directly, no Stop first: the second process takes the lease and finishes.
    let (status, body) = second.call("POST", "/api/flows/solo/run", Some(resume));
    assert_eq!(status, 202, "{body}");
    let view = second.wait_for(&path, "completion", |v| v["status"] == "completed");
    assert_eq!(view["interrupted"], false, "{view}");
    assert!(
        view.to_string().contains("second"),
        "both steps ran: {view}"
    );
    let summary = listed(&second, &id);
    assert_eq!(
        (summary["status"].clone(), summary["interrupted"].clone()),
        (json!("completed"), json!(false))
    );
}
