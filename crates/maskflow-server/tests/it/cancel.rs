//! Cancel of the builder conversation's LLM call in flight, over HTTP,
//! against a real loopback server that starts a streamed reply and then
//! stalls: `POST /api/workflows/{id}/cancel` drops the request (the server
//! sees its connection closed), the sender gets a clear "cancelled" error,
//! the ledger records the call as cancelled with the body that was sent, and
//! the next message works.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::Roles;
use maskflow_llm::http::Endpoint;
use maskflow_llm::openai::OpenAiProvider;
use maskflow_server::api::{AppState, router};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn sse_reply(text: &str) -> String {
    let c = json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]});
    let f = json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
    let body = format!("data: {c}\n\ndata: {f}\n\ndata: [DONE]\n\n");
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

struct Slow {
    posts: AtomicUsize,
    stalled: AtomicBool,
    dropped: AtomicBool,
}

/// A loopback OpenAI-compatible server: the first chat request gets one
/// streamed piece and then silence until the client hangs up; later ones
/// get a whole reply (the validator's or the clarifier's, by the prompt).
async fn slow_server() -> (String, Arc<Slow>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = Arc::new(Slow {
        posts: AtomicUsize::new(0),
        stalled: AtomicBool::new(false),
        dropped: AtomicBool::new(false),
    });
    let st = state.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let st = st.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Read the head and the body (content-length).
                loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let text = String::from_utf8_lossy(&buf).to_string();
                if text.starts_with("GET") {
                    let _ = sock
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                }
                if st.posts.fetch_add(1, Ordering::SeqCst) == 0 {
                    let piece = json!({"choices":[{"index":0,"delta":{"content":"{\"feas"},"finish_reason":null}]});
                    let head = "HTTP/1.1 200 OK
content-type: text/event-stream
transfer-encoding: chunked

";
                    let data = format!("data: {piece}\n\n");
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock
                        .write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
                        .await;
                    let _ = sock.flush().await;
                    st.stalled.store(true, Ordering::SeqCst);
                    // Silence until the client hangs up.
                    loop {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {}
                        }
                    }
                    st.dropped.store(true, Ordering::SeqCst);
                    return;
                }
                let reply = if text.contains("Maskflow's validator") {
                    sse_reply("{\"feasible\": true}")
                } else {
                    sse_reply("{\"needs_clarification\": true, \"question\": \"Which column?\"}")
                };
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}/v1"), state)
}

async fn until(flag: &AtomicBool) {
    // Bounded: 30 s at most, then the assertion after it fails.
    for _ in 0..3000 {
        if flag.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_drops_the_call_records_it_and_the_next_message_works() {
    let (base, slow) = slow_server().await;
    let mut endpoint = Endpoint::new(base, "slow-model");
    endpoint.http.retries = 0;
    let provider = Arc::new(OpenAiProvider::new(endpoint).expect("client"));
    let home = tempfile::tempdir().expect("tmp");
    let service =
        Service::open(ServiceConfig::from_settings(home.path()).overriding(Roles::all(provider)))
            .expect("service");
    let app = router(AppState::new(service, TOKEN.into(), 4242));

    let extract = json!({"filename": "sales.csv", "columns": ["date", "region", "amount"],
        "sample_rows": [["####-##-##", "Aaaaa", "###.##"]], "row_count": 12});
    let (s, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_extracts": [extract]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();

    // Nothing in flight: nothing to cancel; an unknown workflow is a 404.
    let (s, r) = call(&app, "POST", &format!("/api/workflows/{wf}/cancel"), None).await;
    assert_eq!(
        (s, r["cancelled"].as_bool()),
        (StatusCode::OK, Some(false)),
        "{r}"
    );
    let (s, _) = call(&app, "POST", "/api/workflows/wf_nope/cancel", None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    let msg = format!("/api/workflows/{wf}/messages");
    let sender = {
        let app = app.clone();
        let msg = msg.clone();
        tokio::spawn(async move {
            call(
                &app,
                "POST",
                &msg,
                Some(json!({"content": "sum the amount by region"})),
            )
            .await
        })
    };
    until(&slow.stalled).await;
    assert!(
        slow.stalled.load(Ordering::SeqCst),
        "the slow server got the request"
    );

    let (s, r) = call(&app, "POST", &format!("/api/workflows/{wf}/cancel"), None).await;
    assert_eq!(
        (s, r["cancelled"].as_bool()),
        (StatusCode::OK, Some(true)),
        "{r}"
    );
    let (s, r) = sender.await.expect("sender");
    assert!(!s.is_success(), "{s} {r}");
    assert!(r.to_string().contains("cancelled"), "{r}");
    until(&slow.dropped).await;
    assert!(
        slow.dropped.load(Ordering::SeqCst),
        "the HTTP request was dropped"
    );

    // The ledger: cancelled, with what was sent.
    let (_, ledger) = call(&app, "GET", "/api/ledger?limit=10", None).await;
    let last = &ledger[0];
    assert_eq!(last["outcome"], "cancelled", "{ledger}");
    assert_eq!(last["role"], "validator", "{last}");
    assert!(
        last["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("sum the amount by region")),
        "{last}"
    );

    // The workflow takes the next message at once.
    let (s, r) = call(
        &app,
        "POST",
        &msg,
        Some(json!({"content": "sum the amount by region"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["status"], "clarifying");
    assert_eq!(r["message"], "Which column?");
}
