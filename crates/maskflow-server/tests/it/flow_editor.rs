//! The flow editor's calls over HTTP (issue 31, point 1): the pickers'
//! options, a draft checked with the loader's messages, a flow saved and
//! reopened with its revision, an outside edit refused as `409 conflict`
//! with the file left as it was, and names and bodies that must not write.

use maskflow_core::{Service, ServiceConfig};
use serde_json::{Value, json};

use super::common::{app, call};
use axum::http::StatusCode;

const FLOW: &str = r#"{"description": "One question", "steps": [
  {"type": "gate", "prompt": "Ship it?", "options": [{"label": "yes"}, {"label": "no", "next": null}]}
]}"#;

#[tokio::test]
async fn a_flow_is_checked_saved_reopened_and_an_outside_edit_is_not_overwritten() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("data");
    let app = app(Service::open(ServiceConfig::from_settings(&home)).expect("service"));

    let (status, options) = call(&app, "GET", "/api/flow-editor/options", None).await;
    assert_eq!(status, StatusCode::OK, "{options}");
    assert!(
        options["stepTypes"]
            .as_array()
            .expect("types")
            .contains(&json!("gate"))
    );

    let (status, check) = call(
        &app,
        "POST",
        "/api/flow-editor/validate",
        Some(json!({"text": "{\"steps\": ["})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{check}");
    assert_eq!(check["valid"], false);
    assert!(
        check["messages"][0]["message"]
            .as_str()
            .expect("message")
            .starts_with("not valid JSON"),
        "{check}"
    );
    let (_, check) = call(
        &app,
        "POST",
        "/api/flow-editor/validate",
        Some(json!({"text": FLOW})),
    )
    .await;
    assert_eq!(check["valid"], true, "{check}");
    assert!(
        check["mermaid"]
            .as_str()
            .expect("mermaid")
            .contains("Ship it?"),
        "{check}"
    );

    let (status, saved) = call(&app, "PUT", "/api/flows/ship", Some(json!({"text": FLOW}))).await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    let (status, source) = call(&app, "GET", "/api/flows/ship/source", None).await;
    assert_eq!(status, StatusCode::OK, "{source}");
    assert_eq!(source["revision"], saved["revision"]);
    let (status, def) = call(&app, "GET", "/api/flows/ship", None).await;
    assert_eq!(status, StatusCode::OK, "{def}");
    assert_eq!(def["steps"][0]["prompt"], "Ship it?");

    // Edited outside since it was opened: refused, and the file stays as edited.
    let file = home.join("flows/ship.json");
    let outside = FLOW.replace("Ship it?", "Ship it now?");
    std::fs::write(&file, &outside).expect("outside edit");
    let body =
        json!({"text": FLOW.replace("Ship it?", "Mine?"), "baseRevision": source["revision"]});
    let (status, err) = call(&app, "PUT", "/api/flows/ship", Some(body)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{err}");
    assert_eq!(err["code"], "conflict");
    assert!(
        err["message"]
            .as_str()
            .expect("message")
            .contains("changed outside Maskflow"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).expect("file"), outside);

    // A loader refusal is a 400 with its message; nothing is written.
    let bad = json!({"text": "{\"steps\": [{\"type\": \"teleport\"}]}"});
    let (status, err) = call(&app, "PUT", "/api/flows/other", Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    assert!(
        err["message"]
            .as_str()
            .expect("message")
            .contains("unknown step type"),
        "{err}"
    );
    assert!(!home.join("flows/other.json").exists());
}

#[tokio::test]
async fn hostile_names_and_bodies_write_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("data");
    let app = app(Service::open(ServiceConfig::from_settings(&home)).expect("service"));
    for name in ["..%2Fescape", "%2E%2E", "a%2Fb", "x.json", "%00"] {
        let uri = format!("/api/flows/{name}");
        let (status, err) = call(&app, "PUT", &uri, Some(json!({"text": FLOW}))).await;
        assert!(status.is_client_error(), "{name}: {status} {err}");
        let (status, _) = call(&app, "GET", &format!("{uri}/source"), None).await;
        assert!(status.is_client_error(), "{name}: {status}");
    }
    let (status, err) = call(
        &app,
        "PUT",
        "/api/flows/ok",
        Some(json!({"text": FLOW, "overwrite": true})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    let names: Vec<Value> = std::fs::read_dir(tmp.path())
        .expect("read")
        .flatten()
        .map(|e| json!(e.file_name().to_string_lossy()))
        .collect();
    assert_eq!(names, vec![json!("data")]);
    assert!(
        !home.join("flows").exists()
            || std::fs::read_dir(home.join("flows"))
                .expect("read")
                .next()
                .is_none()
    );
}
