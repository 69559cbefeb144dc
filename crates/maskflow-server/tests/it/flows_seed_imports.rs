//! The seeds' own shapes through the user's door: seed 003's export bundle
//! and its bare edge-label diagram, and seed 004's flow file, posted verbatim to `POST
//! /api/flows/import`, become runnable flows (and the bundle's agent an
//! agent file); a seed step with a wrong field is refused with its place.

use std::path::Path;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789";
const SEEDS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../maskflow-flows/tests/fixtures/seeds"
);

fn app(home: &Path) -> Router {
    let service = Service::open(ServiceConfig::from_settings(home)).expect("service");
    router(AppState::new(service, TOKEN.into(), 4242))
}

async fn call(app: &Router, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    let b = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    let request = match body {
        Some(v) => b
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(v.to_string())),
        None => b.body(Body::empty()),
    }
    .expect("request");
    let response = app.clone().oneshot(request).await.expect("response");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn seed(file: &str) -> String {
    std::fs::read_to_string(Path::new(SEEDS).join(file)).expect("seed fixture")
}

fn listed(list: &Value, name: &str) -> Option<Value> {
    list["flows"]
        .as_array()?
        .iter()
        .find(|f| f["name"] == name)
        .cloned()
}

#[tokio::test]
async fn seed_003_bundle_and_diagram_import_verbatim_over_http() {
    let home = tempfile::tempdir().expect("tempdir");
    let app = app(home.path());

    let bundle: Value = serde_json::from_str(&seed("003-export-bundle.json")).expect("json");
    let (s, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": bundle})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(body["name"], "pr-review-pipeline");
    assert_eq!(
        body["description"],
        "Automated PR review with human escalation"
    );
    let (s, def) = call(&app, "GET", "/api/flows/pr-review-pipeline", None).await;
    assert_eq!(s, StatusCode::OK, "{def}");
    let text = def.to_string();
    assert!(text.contains("Fetch PR #{{input.prNumber}}..."), "{text}");
    assert!(text.contains("\"agentType\":\"assistant\""), "{text}");
    let agent: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("agents/code-reviewer.json")).expect("agent"),
    )
    .expect("agent json");
    assert_eq!(agent["displayName"], "Code Review Agent");
    assert_eq!(agent["prompt"], "You are an expert code reviewer...");

    let (s, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": seed("003-edge-labels.mmd"), "name": "edge-labels"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, def) = call(&app, "GET", "/api/flows/edge-labels", None).await;
    let text = def.to_string();
    assert!(
        text.contains("\"condition\":\"output.score >= 80\""),
        "{text}"
    );
    assert!(text.contains("\"prompt\":\"Human Review\""), "{text}");

    // Seed 004's flow file, as written, imports under a name (its agents
    // exist first: a flow naming an agent Maskflow does not know is disabled).
    crate::common::agent_files(home.path(), &["coding_agent", "planning_agent"]);
    let flow: Value = serde_json::from_str(&seed("004-flow-example.json")).expect("json");
    let (s, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"flow": flow, "name": "flows-mode"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(
        body["description"],
        "Summarize, refine, and iterate until done."
    );
    let (_, def) = call(&app, "GET", "/api/flows/flows-mode", None).await;
    assert_eq!(def, flow, "the file is kept as written");
    let (s, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"flow": flow})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("name is required"), "{body}");

    let (_, list) = call(&app, "GET", "/api/flows", None).await;
    for name in ["pr-review-pipeline", "edge-labels", "flows-mode"] {
        let entry = listed(&list, name).unwrap_or_else(|| panic!("{name} in {list}"));
        assert_eq!(entry["disabled"], false, "{entry}");
    }

    // A seed step with a misspelt key is refused, and the key is named.
    let (s, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": {
            "workflow": {"name": "Typo", "steps": [{"id": "A", "stepType": "foreach",
                "itemPath": "output.files", "itemVariable": "f", "prompt": "x"}]},
            "exportVersion": "2.0", "exportedAt": "2025-01-15T10:00:00Z"}})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    let text = body.to_string();
    assert!(
        text.contains("workflow.steps[0]") && text.contains("itemPath"),
        "{text}"
    );
    assert!(!home.path().join("flows/typo.json").exists());
}
