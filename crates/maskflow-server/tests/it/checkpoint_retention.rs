//! Issue 18 point 7 through the HTTP router: the storage settings hold how
//! many checkpoints a flow run keeps; the running engine follows a change at
//! once, a restarted service follows the stored value, and a value out of
//! range is a 400 naming the field.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use maskflow_core::{Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::Roles;
use serde_json::{Value, json};

use crate::common::{call, settled};

/// Loop iterations per run: each commits an agent step, a break and the
/// loop's end, so a run writes far more checkpoints than any policy keeps.
const ITERATIONS: usize = 12;

/// A loop of an agent step and a break (answered "yes" on the last
/// iteration), then a gate that leaves the run waiting, in progress.
const FLOW: &str = r#"{"description": "A long loop, then a question.", "steps": [
    {"type": "startLoop", "steps": [
        {"type": "llm", "label": "Work", "agentType": "worker", "identifier": "w",
         "messages": [{"role": "user", "content": ["Step {{loop.iteration}}."]}]},
        {"type": "break", "agentType": "stopper", "identifier": "s",
         "question": "Stop?", "breakOn": "yes"}]},
    {"type": "gate", "id": "g", "label": "Done?", "prompt": "Finish the run?",
     "options": [{"label": "Finish"}]}]}"#;

fn home_with_flow() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tmp");
    for (rel, text) in [
        ("flows/long.json", FLOW),
        ("agents/worker.json", r#"{"prompt": "You work."}"#),
        ("agents/stopper.json", r#"{"prompt": "You decide."}"#),
    ] {
        let path = home.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    home
}

/// A replay back end answering `runs` runs of [`FLOW`].
fn open(home: &Path, runs: usize) -> (Router, Service) {
    let mut work = Vec::new();
    let mut stop = Vec::new();
    for _ in 0..runs {
        for i in 1..=ITERATIONS {
            work.push(json!(format!("Worked on part {i} of the report.")));
            stop.push(json!({"answer": if i == ITERATIONS { "yes" } else { "no" }}));
        }
    }
    let doc = json!({"agent:worker": work, "agent:stopper": stop});
    let roles = Roles::all(Arc::new(
        maskflow_llm::ReplayProvider::from_value(&doc).expect("replay doc"),
    ));
    let service =
        Service::open(ServiceConfig::from_settings(home).overriding(roles)).expect("open service");
    (crate::common::app(service.clone()), service)
}

/// Starts the flow and waits for its gate: the run is in progress.
async fn run_to_gate(app: &Router, service: &Service) -> String {
    let mut events = service.subscribe();
    let (s, started) = call(app, "POST", "/api/flows/long/run", Some(json!({}))).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let status = settled(&mut events, &id).await;
    let (_, run) = call(app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(status, RunStatus::Waiting, "{run}");
    id
}

/// Answers the gate and waits for the run to end.
async fn finish(app: &Router, service: &Service, id: &str) {
    let mut events = service.subscribe();
    let (s, r) = call(
        app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Finish"})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{r}");
    assert_eq!(settled(&mut events, id).await, RunStatus::Completed);
}

/// The run's checkpoints as the API counts them (the delete preview) and
/// their kinds in the database, oldest first.
async fn checkpoints(app: &Router, home: &Path, id: &str) -> Vec<String> {
    let (s, preview) = call(app, "DELETE", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(s, StatusCode::CONFLICT, "{preview}");
    let kinds = maskflow_core::store::inspect::flow_checkpoint_kinds(&home.join("maskflow.db"), id)
        .expect("kinds");
    assert_eq!(
        preview["would_delete"]["checkpoints"].as_u64(),
        Some(kinds.len() as u64),
        "{preview}"
    );
    kinds
}

/// The longest run of deltas after one full snapshot.
fn longest_deltas(kinds: &[String]) -> usize {
    kinds
        .split(|k| k == "full")
        .map(|deltas| deltas.len())
        .max()
        .unwrap_or(0)
}

async fn put_storage(app: &Router, body: Value) -> (StatusCode, Value) {
    call(app, "PUT", "/api/settings/storage", Some(body)).await
}

#[tokio::test]
async fn runs_keep_the_checkpoints_the_storage_setting_says_from_the_change_on_and_after_a_restart()
{
    let home = home_with_flow();
    let (app, service) = open(home.path(), 2);
    let (s, view) = call(&app, "GET", "/api/settings/storage", None).await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(
        (
            &view["checkpoint_keep_full_snapshots"],
            &view["checkpoint_full_every"]
        ),
        (&json!(2), &json!(256)),
        "the defaults"
    );

    // Changed while the service runs: the next run follows it.
    let (s, view) = put_storage(
        &app,
        json!({"upload_expiry_hours": 24, "checkpoint_keep_full_snapshots": 2, "checkpoint_full_every": 1}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(view["checkpoint_full_every"], 1);
    let id = run_to_gate(&app, &service).await;
    let kinds = checkpoints(&app, home.path(), &id).await;
    let fulls = kinds.iter().filter(|k| *k == "full").count();
    assert_eq!(kinds.first().map(String::as_str), Some("full"), "{kinds:?}");
    assert_eq!(fulls, 2, "two full snapshots kept: {kinds:?}");
    // At most one delta after each full snapshot (the default allows 256).
    assert!(longest_deltas(&kinds) <= 1, "{kinds:?}");
    assert!(kinds.len() <= 2 * (1 + 1), "{kinds:?}");
    // A finished run keeps its final state only.
    finish(&app, &service, &id).await;
    assert_eq!(checkpoints(&app, home.path(), &id).await, vec!["full"]);

    // 0 keeps every checkpoint, the run's whole history.
    let (s, view) = put_storage(
        &app,
        json!({"upload_expiry_hours": 24, "checkpoint_keep_full_snapshots": 0}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(
        (
            &view["checkpoint_keep_full_snapshots"],
            &view["checkpoint_full_every"]
        ),
        (&json!(0), &json!(1)),
        "an absent field is left as it was"
    );
    let id = run_to_gate(&app, &service).await;
    let waiting = checkpoints(&app, home.path(), &id).await;
    assert!(waiting.len() >= 3 * ITERATIONS, "{waiting:?}");
    assert!(longest_deltas(&waiting) <= 1, "{waiting:?}");
    assert!(waiting.iter().any(|k| k == "delta"), "{waiting:?}");
    finish(&app, &service, &id).await;
    let done = checkpoints(&app, home.path(), &id).await;
    assert!(done.len() > waiting.len(), "{done:?}");
    assert_eq!(done[..waiting.len()], waiting[..], "nothing was pruned");

    // Out of range: a 400 that names the field; nothing is stored.
    for (body, field) in [
        (
            json!({"upload_expiry_hours": 24, "checkpoint_keep_full_snapshots": 5000}),
            "checkpoint_keep_full_snapshots",
        ),
        (
            json!({"upload_expiry_hours": 48, "checkpoint_full_every": 10001}),
            "checkpoint_full_every",
        ),
    ] {
        let (s, e) = put_storage(&app, body).await;
        assert_eq!(
            (s, e["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_request")),
            "{e}"
        );
        let message = e["message"].as_str().expect("message");
        assert!(
            message.contains(field) && message.contains("between 0"),
            "{message}"
        );
    }
    let (s, e) = put_storage(
        &app,
        json!({"upload_expiry_hours": 24, "checkpoint_keep_full_snapshots": -1}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let (_, view) = call(&app, "GET", "/api/settings/storage", None).await;
    assert_eq!(
        (
            &view["upload_expiry_hours"],
            &view["checkpoint_keep_full_snapshots"],
            &view["checkpoint_full_every"]
        ),
        (&json!(24), &json!(0), &json!(1)),
        "a refused change stores nothing"
    );

    // A restarted service reads the stored policy before its first run.
    let (_, view) = put_storage(
        &app,
        json!({"upload_expiry_hours": 24, "checkpoint_keep_full_snapshots": 1, "checkpoint_full_every": 2}),
    )
    .await;
    assert_eq!(view["checkpoint_keep_full_snapshots"], 1, "{view}");
    drop((app, service));
    let (app, service) = open(home.path(), 1);
    let id = run_to_gate(&app, &service).await;
    let kinds = checkpoints(&app, home.path(), &id).await;
    assert_eq!(kinds.first().map(String::as_str), Some("full"), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "full").count(),
        1,
        "{kinds:?}"
    );
    assert!(longest_deltas(&kinds) <= 2, "{kinds:?}");
    assert!(kinds.len() <= 2 + 1, "{kinds:?}");
}
