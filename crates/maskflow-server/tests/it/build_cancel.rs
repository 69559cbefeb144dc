//! Issue 18, point 4 (seed 001's `CANCELLED`): a build in progress is
//! cancelled from the API while its auto-test script runs in the sandbox —
//! the script is killed, the version ends `failed` with the reason
//! "cancelled by the user", and the workflow takes a new message.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use common::{app, call, send, upload};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::Roles;
use serde_json::{Value, json};

/// A script that records its pid, then works for a minute.
const SLOW: &str =
    "import os, sys, time\nopen('pid.txt', 'w').write(str(os.getpid()))\ntime.sleep(60)\n";

fn replay() -> Roles {
    let build = json!({
        "name": "Slow totals",
        "description": "Adds up the amounts, slowly",
        "script": SLOW,
        "fields": [{"name": "sales", "label": "Sales file", "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [], "outputs": []}
    });
    Roles::all(Arc::new(
        maskflow_llm::ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": [build]
        }))
        .expect("replay"),
    ))
}

/// The pid file the test script wrote somewhere under `dir`.
fn find_pid(dir: &Path) -> Option<u32> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p: PathBuf = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "pid.txt") {
                return std::fs::read_to_string(&p).ok()?.trim().parse().ok();
            }
        }
    }
    None
}

/// The live processes (not zombies) whose command line names a path under
/// `dir`: a sandboxed script's carries its `inputs.json`.
fn alive_under(dir: &Path) -> Vec<u32> {
    let marker = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            String::from_utf8_lossy(&cmdline).contains(&marker) && !zombie
        })
        .collect()
}

async fn poll<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..600 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("gave up waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_build_kills_its_test_script_and_fails_the_version() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path()).overriding(replay()))
        .expect("service");
    let api = app(service);
    let csv =
        b"date,customer,amount\n2024-03-01,Maria Okafor,120.50\n2024-03-02,John Smith,80.00\n";
    let (s, up) = send(&api, upload(&[("sales.csv", csv)])).await;
    assert_eq!(s, StatusCode::OK, "{up}");
    let (s, wf) = call(
        &api,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [up[0]["file_id"]]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{wf}");
    let id = wf["workflow_id"].as_str().expect("id").to_owned();
    let messages = format!("/api/workflows/{id}/messages");
    let (s, r) = call(
        &api,
        "POST",
        &messages,
        Some(json!({"content": "add up the amounts"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");

    // The auto-test's script is running in the sandbox.
    let test_runs = home.path().join("test-runs");
    poll("the test script to start", async || find_pid(&test_runs)).await;
    // Its pid is its own namespace's; out here it is found by its folder.
    assert!(!alive_under(&test_runs).is_empty());

    let (s, r) = call(&api, "POST", &format!("/api/workflows/{id}/cancel"), None).await;
    assert_eq!((s, &r["cancelled"]), (StatusCode::OK, &json!(true)), "{r}");

    let version: Value = poll("the version to fail", async || {
        let (_, w) = call(&api, "GET", &format!("/api/workflows/{id}"), None).await;
        (w["current_version"]["status"] == "failed").then(|| w["current_version"].clone())
    })
    .await;
    assert_eq!(
        version["failure_reason"], "cancelled by the user",
        "{version}"
    );
    // Gone, or a zombie waiting for its parent.
    poll("the script to be killed", async || {
        alive_under(&test_runs).is_empty().then_some(())
    })
    .await;

    // Nothing left to cancel; the workflow is not stuck. The build's task
    // lets go of the workflow just after it fails the version, so on a busy
    // machine the first ask can still find it.
    poll("nothing left to cancel", async || {
        let (s, r) = call(&api, "POST", &format!("/api/workflows/{id}/cancel"), None).await;
        assert_eq!(s, StatusCode::OK, "{r}");
        (r["cancelled"] == json!(false)).then_some(())
    })
    .await;
}
