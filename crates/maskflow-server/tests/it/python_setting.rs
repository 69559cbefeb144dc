//! `/api/settings/python`: the Python interpreter workflows run with. It is
//! shown with what it finds, checked before it is stored, and documented.

use crate::common;

use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

#[tokio::test]
async fn the_python_setting_is_shown_checked_and_stored() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
    let app = router(AppState::new(service, TOKEN.into(), 4242));

    let (s, r) = call(&app, "GET", "/api/settings/python", None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["path"], Value::Null);
    assert!(
        r["version"].as_str().is_some_and(|v| v.starts_with("3.")),
        "{r}"
    );

    // Not a path, a missing file, and a program that is not Python: refused in words.
    for bad in ["python3", "/nonexistent/python3", "/bin/true"] {
        let (s, r) = call(
            &app,
            "PUT",
            "/api/settings/python",
            Some(json!({"path": bad})),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {r}");
        assert_eq!(r["error"], "invalid_request");
        assert!(!r["message"].as_str().unwrap_or("").is_empty());
    }
    let (_, r) = call(&app, "GET", "/api/settings/python", None).await;
    assert_eq!(r["path"], Value::Null, "a refused path is not stored");

    let program = r["program"].as_str().expect("program").to_owned();
    let absolute = if program.starts_with('/') {
        program
    } else {
        let out = std::process::Command::new(&program)
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let (s, r) = call(
        &app,
        "PUT",
        "/api/settings/python",
        Some(json!({"path": absolute})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["path"], absolute.as_str());
    let (_, r) = call(&app, "GET", "/api/settings/python", None).await;
    assert_eq!(r["path"], absolute.as_str());

    // Empty goes back to python3 on PATH.
    let (s, r) = call(
        &app,
        "PUT",
        "/api/settings/python",
        Some(json!({"path": ""})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["path"], Value::Null);

    let (_, doc) = call(&app, "GET", "/api/openapi.json", None).await;
    assert!(doc["paths"]["/api/settings/python"]["get"].is_object());
    assert!(doc["paths"]["/api/settings/python"]["put"].is_object());
}
