//! Seed 003/004 contract leftovers over HTTP (issue 31 point 6): a flow's
//! step by its stage id.

use crate::common;

use std::sync::Arc;

use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::{ReplayProvider, Roles};
use maskflow_server::api::{AppState, router};
use serde_json::json;

const PR_HUMAN: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review-human.mmd");

#[tokio::test]
async fn a_step_is_read_by_its_stage_id() {
    let home = tempfile::tempdir().expect("tempdir");
    let provider = Arc::new(ReplayProvider::from_value(&json!({})).expect("replay"));
    let service =
        Service::open(ServiceConfig::from_settings(home.path()).overriding(Roles::all(provider)))
            .expect("service");
    let app = router(AppState::new(service, TOKEN.into(), 4242));
    let (status, body) = call(
        &app,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": PR_HUMAN, "name": "pr"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, step) = call(&app, "GET", "/api/flows/pr/steps/G", None).await;
    assert_eq!(status, StatusCode::OK, "{step}");
    assert_eq!(step["type"], "gate");
    assert_eq!(step["label"], "Human Review");
    assert_eq!(step["options"][1]["label"], "request changes");
    assert_eq!(step["options"][1]["next"], "H");
    let (status, step) = call(&app, "GET", "/api/flows/pr/steps/D", None).await;
    assert_eq!(
        (status, step["type"].as_str()),
        (StatusCode::OK, Some("join"))
    );
    let (status, err) = call(&app, "GET", "/api/flows/pr/steps/Z", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{err}");
    assert!(err.to_string().contains("pr/Z"), "{err}");
    let (status, _) = call(&app, "GET", "/api/flows/nope/steps/A", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
