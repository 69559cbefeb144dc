//! `/api/settings/budgets`: each LLM role's output budget is shown with the
//! defaults, checked before it is stored, kept across a restart, and in
//! force for the back ends.

use crate::common;

use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

#[tokio::test]
async fn budgets_are_shown_checked_stored_and_in_force() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
    let budgets = service.budgets().clone();
    let app = router(AppState::new(service, TOKEN.into(), 4242));

    let (s, r) = call(&app, "GET", "/api/settings/budgets", None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["budgets"]["validator"], Value::Null);
    assert_eq!(r["defaults"]["validator"], 512);
    assert_eq!(r["defaults"]["builder"], 8192);

    // Out of bounds, or not a number: refused, naming the role.
    let (s, r) = call(
        &app,
        "PUT",
        "/api/settings/budgets",
        Some(json!({"clarifier": 3})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{r}");
    assert!(r.to_string().contains("clarifier"), "{r}");
    let (s, _) = call(
        &app,
        "PUT",
        "/api/settings/budgets",
        Some(json!({"validator": "x"})),
    )
    .await;
    assert!(s.is_client_error());

    let (s, r) = call(
        &app,
        "PUT",
        "/api/settings/budgets",
        Some(json!({"validator": 200, "builder": 6000})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["budgets"]["validator"], 200);
    assert_eq!(
        budgets.max_tokens(&maskflow_llm::Role::Validator, None),
        200
    );
    drop(app);

    // A restart keeps them.
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
    let app = router(AppState::new(service, TOKEN.into(), 4242));
    let (_, r) = call(&app, "GET", "/api/settings/budgets", None).await;
    assert_eq!(r["budgets"]["builder"], 6000);
    assert_eq!(r["budgets"]["clarifier"], Value::Null);
}
