//! `GET /api/flows/{name}/export?format=seed003`: seed 003's own shape over
//! HTTP, imported by another server and exported again the same.

use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};

fn app(home: &std::path::Path) -> Router {
    let service = Service::open(ServiceConfig::from_settings(home)).expect("service");
    router(AppState::new(service, TOKEN.into(), 4242))
}

fn without_time(mut v: Value) -> Value {
    v.as_object_mut().expect("bundle").remove("exportedAt");
    v
}

#[tokio::test]
async fn a_seed_003_export_over_http_re_imports_and_exports_the_same() {
    let a = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(a.path().join("flows")).expect("mkdir");
    crate::common::agent_files(a.path(), &[]);
    std::fs::write(
        a.path().join("agents/writer.json"),
        r#"{"displayName": "Writer", "prompt": "You write short notes."}"#,
    )
    .expect("agent");
    std::fs::write(
        a.path().join("flows/notes.json"),
        json!({"steps": [
            {"type": "llm", "label": "Draft", "agentType": "writer", "identifier": "x",
             "messages": [{"role": "user", "content": ["Draft the notes."]}]},
            {"type": "gate", "label": "Check", "prompt": "Send it?", "options": [{"label": "yes"}]}
        ]})
        .to_string(),
    )
    .expect("flow");
    let app_a = app(a.path());
    let (s, bundle) = call(
        &app_a,
        "GET",
        "/api/flows/notes/export?format=seed003",
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{bundle}");
    assert_eq!(
        bundle["agents"],
        json!([{"id": "writer", "displayName": "Writer", "agentPrompt": "You write short notes."}])
    );
    let kinds: Vec<(&str, &str)> = bundle["workflow"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["stepType"].as_str().unwrap_or(""),
                s["execution"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(kinds, [("task", "automated"), ("task", "manual")]);

    // The default shape is unchanged for the clients that read it.
    let (s, full) = call(&app_a, "GET", "/api/flows/notes/export", None).await;
    assert_eq!(s, StatusCode::OK, "{full}");
    assert!(full["workflow"]["definition"].is_object(), "{full}");
    assert_eq!(
        full["agents"][0]["agent"]["prompt"],
        "You write short notes."
    );
    // A format it does not know is refused by name.
    let (s, body) = call(&app_a, "GET", "/api/flows/notes/export?format=yaml", None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.to_string().contains("yaml"), "{body}");

    let b = tempfile::tempdir().expect("tempdir");
    let app_b = app(b.path());
    let (s, imported) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": bundle.clone()})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{imported}");
    assert_eq!(imported["disabled"], false, "{imported}");
    let (s, again) = call(
        &app_b,
        "GET",
        "/api/flows/notes/export?format=seed003",
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(without_time(again), without_time(bundle));
}
