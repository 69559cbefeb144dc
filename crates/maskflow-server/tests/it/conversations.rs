//! Seed 004's one conversation list through the HTTP API: a builder
//! conversation and a flow run listed together, most recent activity first,
//! `flowName=NAME` and `flowName=__none__` filters, and an unknown flow name.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use common::{app, call};
use maskflow_clock::UlidGen;
use maskflow_core::testing::OffsetClock;
use maskflow_core::{Event, Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::ReplayProvider;
use maskflow_llm::Roles;
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/flows/seed004"
);

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

/// The `conversationId`s of a list, in order.
fn ids(list: &Value) -> Vec<String> {
    list["conversations"]
        .as_array()
        .expect("conversations")
        .iter()
        .map(|c| c["conversationId"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn builder_conversations_and_flow_runs_are_listed_together_and_filtered() {
    let home = tempfile::tempdir().expect("tempdir");
    copy_dir(Path::new(FIXTURE), home.path());
    let replay = ReplayProvider::from_value(&json!({
        "validator": [{"feasible": true}],
        "clarifier": [
            {"needs_clarification": true, "question": "Keep every column?"},
            {"needs_clarification": true, "question": "Keep rows without a match?"}
        ],
        "agent:coding_agent": ["Summary one.", {"answer": "no"}, "Summary two.", {"answer": "yes"}],
        "agent:planning_agent": ["Plan one.", "Plan two."]
    }))
    .expect("replay");
    // Each phase a second apart, so "most recent activity" is unambiguous.
    let clock = Arc::new(OffsetClock::default());
    let mut config =
        ServiceConfig::from_settings(home.path()).overriding(Roles::all(Arc::new(replay)));
    config.clock = clock.clone();
    config.ids = Arc::new(UlidGen::new(clock.clone()));
    let service = Service::open(config).expect("service");
    let app = app(service.clone());

    // Nothing yet: an empty list, not an error.
    let (status, list) = call(&app, "GET", "/api/conversations", None).await;
    assert_eq!(
        (status, list),
        (StatusCode::OK, json!({"conversations": []}))
    );

    // A builder conversation with one exchange.
    let extract = json!({"filename": "sales.csv", "columns": ["date", "revenue"],
                         "sample_rows": [["####-##-##", "$#,###.##"]], "row_count": 12});
    let (status, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_extracts": [extract]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let messages = format!("/api/workflows/{wf}/messages");
    let (status, reply) = call(
        &app,
        "POST",
        &messages,
        Some(json!({"content": "merge these files by the date column\nand sort them"})),
    )
    .await;
    assert_eq!(
        (status, &reply["status"]),
        (StatusCode::OK, &json!("clarifying"))
    );

    // Then a flow run.
    clock.advance(1_000);
    let mut events = service.subscribe();
    let (status, started) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"working_folder": home.path()})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let run = started["conversationId"].as_str().expect("run").to_owned();
    loop {
        if let Event::FlowStatus {
            conversation_id,
            status,
            ..
        } = events.recv().await.expect("event")
            && conversation_id == run
            && status != RunStatus::Running
        {
            assert_eq!(status, RunStatus::Completed);
            break;
        }
    }

    // Both, the run's activity being the latest.
    let (status, list) = call(&app, "GET", "/api/conversations", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&list), [run.clone(), wf.clone()]);
    let flow = &list["conversations"][0];
    assert_eq!(flow["kind"], "flow");
    assert_eq!(flow["flowName"], "seed_example");
    assert_eq!(flow["title"], "Flow: seed_example");
    assert_eq!(flow["status"], "completed");
    assert_eq!(flow["archived"], false);
    let builder = &list["conversations"][1];
    assert_eq!(builder["kind"], "builder");
    assert!(builder.get("flowName").is_none(), "{builder}");
    assert_eq!(builder["title"], "merge these files by the date column");
    assert_eq!(builder["status"], "clarifying");
    assert!(
        builder["lastMessageAt"].as_str().expect("time")
            < flow["lastMessageAt"].as_str().expect("time")
    );

    // A later message moves the builder conversation to the top.
    clock.advance(1_000);
    let (status, _) = call(
        &app,
        "POST",
        &messages,
        Some(json!({"content": "all of them"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, list) = call(&app, "GET", "/api/conversations", None).await;
    assert_eq!(ids(&list), [wf.clone(), run.clone()]);

    // The filters of seed 004.
    let (status, only_flow) = call(
        &app,
        "GET",
        "/api/conversations?flowName=seed_example",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&only_flow), [run.as_str()]);
    assert_eq!(only_flow["conversations"][0], list["conversations"][1]);
    let (status, none) = call(&app, "GET", "/api/conversations?flowName=__none__", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ids(&none), [wf.as_str()]);
    assert_eq!(none["conversations"][0], list["conversations"][0]);
    let (status, unknown) = call(&app, "GET", "/api/conversations?flowName=nope", None).await;
    assert_eq!(
        (status, unknown),
        (StatusCode::OK, json!({"conversations": []}))
    );
    let (status, empty) = call(&app, "GET", "/api/conversations?flowName=", None).await;
    assert_eq!((status, ids(&empty)), (StatusCode::OK, ids(&list)));
}

#[test]
fn the_openapi_document_names_the_filter_flow_name() {
    let doc = serde_json::to_value(maskflow_server::api::openapi()).expect("OpenAPI as JSON");
    let params = &doc["paths"]["/api/conversations"]["get"]["parameters"];
    let names: Vec<&str> = params
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["flowName"]);
    assert_eq!(params[0]["in"], "query");
}
