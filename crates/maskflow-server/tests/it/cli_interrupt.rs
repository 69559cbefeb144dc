//! `maskflow flows run` waits on a model that starts a reply and stalls;
//! Ctrl-C (SIGINT to the process) stops the run: the HTTP request is
//! dropped, the run ends `stopped` with its completed step kept, the ledger
//! records the call as cancelled, and the command exits with 130.

use crate::common;

use common::stalling::{slow_server, until};
use std::io::Read;
use std::process::{Command, Stdio};

use maskflow_core::{Service, ServiceConfig};
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_call_in_flight_and_the_run() {
    let (base, slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    std::fs::create_dir_all(data.join("agents")).expect("agents");
    std::fs::write(
        data.join("agents/coding_agent.json"),
        r#"{"prompt": "You write clear, short summaries."}"#,
    )
    .expect("agent");
    std::fs::write(
        data.join("flows/notes.json"),
        json!({"description": "Summarise, then plan.", "steps": [
            {"type": "llm", "label": "Summarise", "agentType": "coding_agent", "identifier": "summary",
             "messages": [{"role": "user", "content": ["Summarise the notes."]}]},
            {"type": "llm", "label": "Plan", "agentType": "coding_agent", "identifier": "summary",
             "messages": [{"role": "user", "content": ["Write the plan."]}]}
        ]})
        .to_string(),
    )
    .expect("flow");
    {
        let service = Service::open(ServiceConfig::from_settings(&data)).expect("service");
        let settings = serde_json::from_value(json!({
            "providers": [{"id": "local", "kind": "openai", "base_url": base, "model": "slow-model"}],
            "roles": {"validator": "local", "clarifier": "local", "builder": "local", "flows": "local"}
        }))
        .expect("settings");
        service.update_settings(settings).expect("stored");
    }

    let mut child = Command::new(BIN)
        .args(["flows", "run", "notes"])
        .env("MASKFLOW_HOME", &data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start maskflow flows run");
    assert!(
        until(&slow.stalled).await,
        "the second step reached the slow server"
    );
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    assert!(until(&slow.dropped).await, "the HTTP request was dropped");
    let status = tokio::task::spawn_blocking(move || {
        let status = child.wait().expect("wait");
        let mut out = String::new();
        let mut err = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("read");
        (status, out, err)
    })
    .await
    .expect("wait task");
    let (status, out, err) = status;
    assert_eq!(status.code(), Some(130), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("turn 0 Summarise"), "{out}");
    assert!(out.trim_end().ends_with("status stopped"), "{out}");
    assert!(err.contains("stopping run"), "{err}");

    let service = Service::open(ServiceConfig::from_settings(&data)).expect("service");
    let ledger = service.ledger(None, 10, 0).expect("ledger");
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert_eq!(
        ledger[0].outcome,
        maskflow_privacy::CallOutcome::Cancelled,
        "{ledger:?}"
    );
    assert!(ledger[0].request_body.contains("Write the plan."));
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();
    let run = service.flows().get_run(&id).expect("run");
    assert_eq!(run.status.as_str(), "stopped");
}
