//! A loopback OpenAI-compatible server that answers the first chat request
//! in full, then starts the next reply and stalls until the client hangs up:
//! what cancel and Ctrl-C tests stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server saw.
pub struct Slow {
    pub posts: AtomicUsize,
    pub stalled: AtomicBool,
    pub dropped: AtomicBool,
}

/// Reads one HTTP request (head and content-length body).
pub async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
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
                return Some(text);
            }
        }
    }
}

/// A loopback OpenAI-compatible server: the first chat request gets a
/// whole streamed reply; the second one piece, then silence until the
/// client hangs up.
pub async fn slow_server() -> (String, Arc<Slow>) {
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
                let Some(text) = read_request(&mut sock).await else {
                    return;
                };
                if text.starts_with("GET") {
                    let _ = sock
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                }
                let piece = |t: &str| {
                    format!(
                        "data: {}\n\n",
                        json!({"choices":[{"index":0,"delta":{"content":t},"finish_reason":null}]})
                    )
                };
                if st.posts.fetch_add(1, Ordering::SeqCst) == 0 {
                    let body = format!(
                        "{}data: {}\n\ndata: [DONE]\n\n",
                        piece("The notes list three open invoices."),
                        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})
                    );
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(reply.as_bytes()).await;
                    return;
                }
                let data = piece("The plan is");
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock
                    .write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
                    .await;
                let _ = sock.flush().await;
                st.stalled.store(true, Ordering::SeqCst);
                let mut chunk = [0u8; 1024];
                loop {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                st.dropped.store(true, Ordering::SeqCst);
            });
        }
    });
    (format!("http://{addr}/v1"), state)
}

pub async fn until(flag: &AtomicBool) -> bool {
    // Bounded: 30 s at most; the caller asserts.
    for _ in 0..3000 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}
