//! `/api/settings/budgets`: each LLM role's output budget is shown with the
//! defaults, checked before it is stored, kept across a restart, and in
//! force for the back ends.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789";

async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
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

#[tokio::test]
async fn budgets_are_shown_checked_stored_and_in_force() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
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
        maskflow_core::providers::budget::max_tokens(
            &maskflow_core::providers::Role::Validator,
            None
        ),
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
