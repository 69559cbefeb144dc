//! Mermaid and bundle export/import through the API and the CLI: seed 004's
//! example exported as Mermaid and as a bundle, imported into another data
//! folder, name clashes refused without overwrite (409 / a non-zero exit),
//! seed 003's PR Review diagram imported, and bad diagrams rejected.

use std::path::Path;
use std::process::Command;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use maskflow_core::{Service, ServiceConfig};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use tower::ServiceExt;

const TOKEN: &str = "test-token-0123456789";
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/flows");

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

fn app(home: &Path) -> Router {
    let service = Service::open(ServiceConfig::from_settings(home)).expect("service");
    router(AppState::new(service, TOKEN.into(), 4242))
}

async fn call(app: &Router, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, String) {
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
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

#[tokio::test]
async fn flows_export_as_mermaid_and_bundles_and_import_elsewhere() {
    let a = tempfile::tempdir().expect("tempdir");
    copy_dir(&Path::new(ROOT).join("seed004"), a.path());
    let app_a = app(a.path());

    let (s, text) = call(&app_a, "GET", "/api/flows/seed_example/mermaid", None).await;
    assert_eq!(s, StatusCode::OK, "{text}");
    assert!(text.starts_with("graph TD\n"), "{text}");
    assert!(text.contains("%% === WORKFLOW_CONFIG ===") && text.contains("%% === END_CONFIG ==="));

    let (s, body) = call(&app_a, "GET", "/api/flows/nope/mermaid", None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{body}");

    let (s, body) = call(&app_a, "GET", "/api/flows/seed_example/export", None).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let bundle = json_of(&body);
    assert_eq!(bundle["exportVersion"], "2.0");
    assert!(
        bundle["exportedAt"]
            .as_str()
            .is_some_and(|t| t.contains('T'))
    );
    assert_eq!(bundle["workflow"]["name"], "seed_example");
    assert_eq!(bundle["workflow"]["mermaidSource"], text);
    let agents: Vec<&str> = bundle["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|x| x["id"].as_str())
        .collect();
    assert!(agents.contains(&"planning_agent"), "{agents:?}");

    // Another machine: the bundle brings the flow and its agents.
    let b = tempfile::tempdir().expect("tempdir");
    let app_b = app(b.path());
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": bundle})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(json_of(&body)["name"], "seed_example");
    assert!(b.path().join("agents/planning_agent.json").exists());
    let (_, def_a) = call(&app_a, "GET", "/api/flows/seed_example", None).await;
    let (_, def_b) = call(&app_b, "GET", "/api/flows/seed_example", None).await;
    assert_eq!(json_of(&def_a), json_of(&def_b));

    // A clash is refused without overwrite, accepted with it.
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": bundle})),
    )
    .await;
    assert_eq!(s, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("overwrite"), "{body}");
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"bundle": bundle, "overwrite": true})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");

    // The Mermaid text alone imports under a new name, and runs the same definition.
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": text, "name": "from_mermaid"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, def_m) = call(&app_b, "GET", "/api/flows/from_mermaid", None).await;
    assert_eq!(json_of(&def_a), json_of(&def_m));

    // Seed 003's PR Review example.
    let pr =
        std::fs::read_to_string(Path::new(ROOT).join("mermaid/pr-review.mmd")).expect("fixture");
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": pr, "name": "pr-review"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let (_, list) = call(&app_b, "GET", "/api/flows", None).await;
    let list = json_of(&list);
    let pr_entry = list["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .find(|f| f["name"] == "pr-review")
        .cloned();
    assert_eq!(pr_entry.map(|f| f["disabled"].clone()), Some(json!(false)));

    // Bad input.
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": "graph TD\n  A --> B\n", "name": "bad"})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("has no config"), "{body}");
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": text})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
    let (s, body) = call(
        &app_b,
        "POST",
        "/api/flows/import",
        Some(json!({"mermaid": text, "name": "../x"})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test]
async fn the_routes_are_in_the_openapi_document() {
    let home = tempfile::tempdir().expect("tempdir");
    let app = app(home.path());
    let (s, body) = call(&app, "GET", "/api/openapi.json", None).await;
    assert_eq!(s, StatusCode::OK);
    let doc = json_of(&body);
    for p in [
        "/api/flows/{name}/mermaid",
        "/api/flows/{name}/export",
        "/api/flows/import",
    ] {
        assert!(doc["paths"].get(p).is_some(), "{p} missing");
    }
}

fn cli(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(args)
        .env("MASKFLOW_HOME", home)
        .output()
        .expect("run maskflow")
}

#[test]
fn the_cli_exports_and_imports_with_force_on_a_clash() {
    let a = tempfile::tempdir().expect("tempdir");
    copy_dir(&Path::new(ROOT).join("seed004"), a.path());
    let out = cli(a.path(), &["flows", "export", "seed_example", "--mermaid"]);
    assert!(out.status.success());
    let mermaid = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(mermaid.starts_with("graph TD"));
    let out = cli(a.path(), &["flows", "export", "seed_example"]);
    assert!(out.status.success());
    let bundle: Value = serde_json::from_slice(&out.stdout).expect("bundle JSON");
    assert_eq!(bundle["exportVersion"], "2.0");

    let b = tempfile::tempdir().expect("tempdir");
    let mmd = b.path().join("copied.mmd");
    std::fs::write(&mmd, &mermaid).expect("write");
    let file = mmd.display().to_string();
    let out = cli(b.path(), &["flows", "import", &file]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(b.path().join("flows/copied.json").exists());
    let out = cli(b.path(), &["flows", "import", &file]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    let out = cli(b.path(), &["flows", "import", &file, "--force"]);
    assert!(out.status.success());

    let json_file = b.path().join("bundle.json");
    std::fs::write(&json_file, bundle.to_string()).expect("write");
    let out = cli(
        b.path(),
        &[
            "flows",
            "import",
            &json_file.display().to_string(),
            "--name",
            "again",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(b.path(), &["flows", "list"]);
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        list.contains("again") && list.contains("copied") && !list.contains("disabled"),
        "{list}"
    );
}
