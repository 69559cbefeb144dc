//! What the HTTP tests share: the in-process router with a test token, JSON
//! calls and multipart uploads.

pub mod spawned;
pub mod stalling;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use maskflow_core::Service;
use maskflow_server::api::{AppState, router};
use serde_json::Value;
use tower::ServiceExt;

/// The bearer token of the test routers.
pub const TOKEN: &str = "test-token-0123456789";

/// The API of `service`, as `maskflow serve` would serve it.
pub fn app(service: Service) -> Router {
    router(AppState::new(service, TOKEN.into(), 4242))
}

/// Sends `request` and reads the reply as JSON (`Null` when it is not).
pub async fn send(app: &Router, request: Request<Body>) -> (StatusCode, Value) {
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

/// A JSON call with the test token.
pub async fn call(
    app: &Router,
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
    send(app, request).await
}

/// `POST /api/extracts` of `(filename, bytes)` files, as a browser sends them.
pub fn upload(files: &[(&str, &[u8])]) -> Request<Body> {
    let boundary = "XmaskflowBoundaryX";
    let mut body = Vec::new();
    for (filename, content) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; \
                 filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Request::builder()
        .method("POST")
        .uri("/api/extracts")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .header(header::CONTENT_LENGTH, body.len())
        .body(Body::from(body))
        .expect("request")
}

/// Waits for the run's next status other than `running` (from the event stream).
pub async fn settled(
    events: &mut tokio::sync::broadcast::Receiver<maskflow_core::Event>,
    id: &str,
) -> maskflow_flows::RunStatus {
    use maskflow_core::Event;
    use maskflow_flows::RunStatus;
    loop {
        if let Event::FlowStatus {
            conversation_id,
            status,
            ..
        } = events.recv().await.expect("event")
            && conversation_id == id
            && status != RunStatus::Running
        {
            return status;
        }
    }
}

/// Writes `agents/<name>.json` (default settings) under `home` for each
/// name without a file: a flow may only name agents Maskflow knows.
pub fn agent_files(home: &std::path::Path, names: &[&str]) {
    std::fs::create_dir_all(home.join("agents")).expect("mkdir agents");
    for name in names {
        let file = home.join("agents").join(format!("{name}.json"));
        if !file.exists() {
            std::fs::write(file, "{}").expect("write agent");
        }
    }
}
