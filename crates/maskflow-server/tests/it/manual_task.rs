//! A person's decision at a manual task (issue 31 point 2), over HTTP and
//! from `maskflow flows answer`: seed 003's PR Review example, its human
//! step routed on the reviewer's decision, the reviewer's result read by the
//! steps after it.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use common::{TOKEN, call, settled};
use maskflow_core::{Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::{ReplayProvider, Roles};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

const PR_HUMAN: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review-human.mmd");

/// The agent's replies up to the human review (a middling score).
fn to_the_review() -> Vec<Value> {
    vec![
        json!({"title": "Fix parser"}),
        json!({"files": [{"path": "src/a.rs"}]}),
        json!({"score": 60, "issues": []}),
        json!({"score": 60, "summary": "so-so"}),
    ]
}

#[tokio::test]
async fn the_human_step_routes_on_request_changes_over_http() {
    let home = tempfile::tempdir().expect("tempdir");
    let mut replies = to_the_review();
    replies.extend([json!({"shouldRetry": false}), json!("Closed.")]);
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({ "agent:assistant": replies })).expect("replay"),
    );
    let service = Service::open(
        ServiceConfig::from_settings(home.path()).overriding(Roles::all(provider.clone())),
    )
    .expect("service");
    let app = router(AppState::new(service.clone(), TOKEN.into(), 4242));
    let mut events = service.subscribe();
    let (status, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": PR_HUMAN, "name": "pr-review"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, started) = call(&app, "POST", "/api/flows/pr-review/run", Some(json!({}))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    assert_eq!(settled(&mut events, &id).await, RunStatus::Waiting);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let labels: Vec<&str> = run["pending"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["label"].as_str())
        .collect();
    assert_eq!(labels, ["approve", "request changes", "reject"], "{run}");

    // A decision the step does not offer is refused, by name.
    let gate = format!("/api/flow-runs/{id}/gate");
    let (status, err) = call(&app, "POST", &gate, Some(json!({"decision": "merge"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(err.to_string().contains("merge"), "{err}");

    let answer = json!({"decision": "request changes", "result": {"notes": "rename the parser"}});
    let (status, body) = call(&app, "POST", &gate, Some(answer)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(settled(&mut events, &id).await, RunStatus::Completed);
    let sent: Vec<String> = provider
        .requests()
        .iter()
        .map(|r| r.messages.last().expect("message").content.clone())
        .collect();
    assert!(
        sent[4].starts_with("Generate constructive feedback"),
        "{sent:#?}"
    );
    assert!(
        !sent.iter().any(|m| m.starts_with("Merge the PR")),
        "{sent:#?}"
    );
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let said = run["turns"].as_array().expect("turns").iter().any(|t| {
        t["content"]
            .as_str()
            .unwrap_or("")
            .contains("rename the parser")
    });
    assert!(
        said,
        "the decision and its result are in the transcript: {run}"
    );
}

fn maskflow(home: &Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(args)
        .env("MASKFLOW_HOME", home)
        .env_remove("MASKFLOW_REPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run maskflow");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn flows_answer_takes_a_decision_and_a_json_result() {
    let home = tempfile::tempdir().expect("tempdir");
    let file = home.path().join("pr-review.mmd");
    std::fs::write(&file, PR_HUMAN).expect("write");
    let before = home.path().join("before.json");
    std::fs::write(
        &before,
        json!({"agent:assistant": to_the_review()}).to_string(),
    )
    .expect("write");
    // The process that answers starts its own replay: the steps after the review.
    let after = home.path().join("after.json");
    let tail = json!({"agent:assistant": [{"shouldRetry": false}, "Closed."]});
    std::fs::write(&after, tail.to_string()).expect("write");
    let s = |p: &Path| p.display().to_string();

    let (ok, out, err) = maskflow(home.path(), &["flows", "import", &s(&file), "--name", "pr"]);
    assert!(ok, "{out}\n{err}");
    let (ok, out, err) = maskflow(
        home.path(),
        &["flows", "run", "pr", "--replay", &s(&before)],
    );
    assert!(ok && out.contains("status waiting"), "{out}\n{err}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();

    let bad = [
        "flows",
        "answer",
        &id,
        "--decision",
        "approve",
        "--json",
        "{not json",
    ];
    let (ok, out, err) = maskflow(home.path(), &bad);
    assert!(!ok && err.contains("--json"), "{out}\n{err}");

    let json = r#"{"notes": "rename the parser", "blocking": true}"#;
    let args = [
        "flows",
        "answer",
        &id,
        "--decision",
        "request changes",
        "--json",
        json,
        "--replay",
        &s(&after),
    ];
    let (ok, out, err) = maskflow(home.path(), &args);
    assert!(ok && out.contains("status completed"), "{out}\n{err}");
    // The steps after the review were the feedback and the close, not the merge.
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
    let view = service.flow_run(&id).expect("run");
    let said: Vec<&str> = view.turns.iter().map(|t| t.content.as_str()).collect();
    assert!(
        said.iter().any(|t| t.starts_with("request changes")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|t| t.starts_with("Generate constructive feedback")),
        "{said:?}"
    );
    assert!(
        !said.iter().any(|t| t.starts_with("Merge the PR")),
        "{said:?}"
    );
}
