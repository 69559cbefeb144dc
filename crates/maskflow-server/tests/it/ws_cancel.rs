//! Seed 004's `cancel_inflight` over a real WebSocket: `maskflow serve` on
//! a TCP port, a flow whose second agent step calls a loopback
//! OpenAI-compatible server that starts a streamed reply and then stalls.
//! A WebSocket client sends `{"type": "cancel_inflight", conversationId,
//! inflightId}`: the HTTP request is dropped, the run ends `stopped` (the
//! `flow_status` event — the seed's `turn_final` — comes over the same
//! socket), the last completed step is kept for resuming, and the ledger
//! records the call as cancelled. A stale inflight id and a malformed
//! message each get an error frame. And the socket outlives a client that
//! vanishes mid-stream.

use crate::common;

use common::stalling::{slow_server, until};
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::TOKEN;
use crate::common::spawned::{Serve, json_call};

async fn call(port: u16, method: &'static str, path: String, body: Option<Value>) -> (u16, Value) {
    tokio::task::spawn_blocking(move || json_call(port, method, &path, body))
        .await
        .expect("http task")
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next JSON text frame for which `pick` is true (30 s at most).
async fn next_frame(ws: &mut Socket, pick: impl Fn(&Value) -> bool) -> Value {
    let wait = async {
        while let Some(frame) = ws.next().await {
            if let Ok(Message::Text(text)) = frame
                && let Ok(v) = serde_json::from_str::<Value>(text.as_str())
                && pick(&v)
            {
                return v;
            }
        }
        Value::Null
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or(Value::Null)
}

async fn connect(port: u16) -> Socket {
    // This client reads Maskflow's own `flow_status`, so it asks for it.
    let mut request = format!("ws://127.0.0.1:{port}/api/events?events=flow_status")
        .into_client_request()
        .expect("ws request");
    request.headers_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("header"),
    );
    tokio_tungstenite::connect_async(request)
        .await
        .expect("WebSocket connects")
        .0
}

/// Creates a workflow over HTTP; its first status change is published.
async fn create_workflow(port: u16) -> String {
    let extract = json!({"filename": "sales.csv", "columns": ["date", "customer", "amount"],
        "sample_rows": [["####-##-##", "Aaaa Aaaaa", "$#,###.##"]], "row_count": 1542});
    let (s, v) = call(
        port,
        "POST",
        "/api/workflows".into(),
        Some(json!({"file_extracts": [extract]})),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    v["workflow_id"].as_str().expect("id").to_owned()
}

/// Issue 19: the event socket over a real connection — two subscribers
/// receive the same event; one vanishes mid-stream (its TCP connection
/// dropped without a close frame, while events keep coming); the server
/// stays healthy: the other subscriber still receives, HTTP answers, and a
/// new subscriber connects and receives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_socket_survives_a_client_that_vanishes_mid_stream() {
    let home = tempfile::tempdir().expect("home");
    let server = Serve::start(home.path(), None, &[]);
    let port = server.port;
    let mut a = connect(port).await;
    let mut b = connect(port).await;
    let wf = create_workflow(port).await;
    let about = |wf: String| move |v: &Value| v.to_string().contains(&wf);
    assert_ne!(
        next_frame(&mut a, about(wf.clone())).await,
        Value::Null,
        "a receives"
    );
    assert_ne!(
        next_frame(&mut b, about(wf.clone())).await,
        Value::Null,
        "b receives"
    );

    // Events in flight while `a` disappears: its socket is dropped
    // mid-stream, without a close frame.
    let busy = tokio::spawn(async move {
        let mut last = String::new();
        for _ in 0..40 {
            last = create_workflow(port).await;
        }
        last
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(a);
    let last = busy.await.expect("creates");
    assert_ne!(
        next_frame(&mut b, about(last)).await,
        Value::Null,
        "b still receives after a vanished"
    );

    let (s, list) = call(port, "GET", "/api/workflows".into(), None).await;
    assert_eq!(
        (s, list.as_array().map(Vec::len)),
        (200, Some(41)),
        "HTTP still answers"
    );
    let mut c = connect(port).await;
    let wf = create_workflow(port).await;
    assert_ne!(
        next_frame(&mut c, about(wf.clone())).await,
        Value::Null,
        "a new subscriber receives"
    );
    assert_ne!(next_frame(&mut b, about(wf)).await, Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_inflight_over_a_websocket_stops_the_step_in_flight() {
    let (base, slow) = slow_server().await;
    let home = tempfile::tempdir().expect("home");
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    std::fs::create_dir_all(data.join("agents")).expect("agents");
    std::fs::write(
        data.join("agents/coding_agent.json"),
        r#"{"prompt": "You write clear, short summaries."}"#,
    )
    .expect("agent");
    std::fs::write(
        data.join("flows/notes.json"),
        json!({"description": "Summarise, then plan.", "steps": [
            {"type": "llm", "label": "Summarise", "agentType": "coding_agent", "identifier": "summary",
             "messages": [{"role": "user", "content": ["Summarise the notes."]}]},
            {"type": "llm", "label": "Plan", "agentType": "coding_agent", "identifier": "summary",
             "messages": [{"role": "user", "content": ["Write the plan."]}]}
        ]})
        .to_string(),
    )
    .expect("flow");
    let server = Serve::start(&data, None, &[]);
    let port = server.port;

    let (s, v) = call(
        port,
        "PUT",
        "/api/settings".into(),
        Some(json!({
            "providers": [{"id": "local", "kind": "openai", "base_url": base, "model": "slow-model"}],
            "roles": {"validator": "local", "clarifier": "local", "builder": "local", "flows": "local"}
        })),
    )
    .await;
    assert_eq!(s, 200, "{v}");

    let mut ws = connect(port).await;

    let (s, started) = call(port, "POST", "/api/flows/notes/run".into(), Some(json!({}))).await;
    assert_eq!(s, 202, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let inflight = started["inflightId"].as_str().expect("inflight").to_owned();
    assert!(
        until(&slow.stalled).await,
        "the second step reached the slow server"
    );

    // A malformed message and a stale inflight id: an error frame each,
    // and the step goes on.
    ws.send(Message::text(r#"{"type": "cancel_everything"}"#))
        .await
        .expect("send");
    let err = next_frame(&mut ws, |v| v["type"] == "error").await;
    assert_eq!(err["code"], "invalid_request", "{err}");
    ws.send(Message::text(
        json!({"type": "cancel_inflight", "conversationId": id, "inflightId": "inf_stale"})
            .to_string(),
    ))
    .await
    .expect("send");
    let err = next_frame(&mut ws, |v| v["type"] == "error").await;
    assert_eq!(err["code"], "conflict", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("inf_stale")),
        "{err}"
    );
    assert!(!slow.dropped.load(Ordering::SeqCst));

    // The seed's payload stops the step in flight.
    ws.send(Message::text(
        json!({"type": "cancel_inflight", "conversationId": id, "inflightId": inflight})
            .to_string(),
    ))
    .await
    .expect("send");
    let fin = next_frame(&mut ws, |v| {
        v["type"] == "flow_status" && v["conversation_id"] == id.as_str()
    })
    .await;
    assert_eq!(fin["status"], "stopped", "{fin}");
    assert!(until(&slow.dropped).await, "the HTTP request was dropped");

    let (_, run) = call(port, "GET", format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(run["status"], "stopped", "{run}");
    assert_eq!(
        run["flags"]["flow"]["stepPath"],
        json!([0]),
        "the last completed step is kept for resuming: {run}"
    );
    let (_, ledger) = call(port, "GET", "/api/ledger?limit=10".into(), None).await;
    let rows = ledger.as_array().expect("ledger");
    assert_eq!(rows.len(), 2, "{ledger}");
    assert_eq!(rows[0]["outcome"], "cancelled", "{ledger}");
    assert_eq!(rows[0]["role"], "agent:coding_agent", "{ledger}");
    assert!(
        rows[0]["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("Write the plan.")),
        "{ledger}"
    );
    assert_eq!(rows[1]["outcome"], "ok", "{ledger}");
    let _ = ws.close(None).await;
}
