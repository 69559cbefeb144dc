//! `maskflow flows run` waits on a model that starts a reply and stalls;
//! Ctrl-C (SIGINT to the process) stops the run: the HTTP request is
//! dropped, the run ends `stopped` with its completed step kept, the ledger
//! records the call as cancelled, and the command exits with 130.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use maskflow_core::{Service, ServiceConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

struct Slow {
    posts: AtomicUsize,
    stalled: AtomicBool,
    dropped: AtomicBool,
}

/// Reads one HTTP request (head and content-length body).
async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<String> {
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

async fn until(flag: &AtomicBool) -> bool {
    // Bounded: 30 s at most; the caller asserts.
    for _ in 0..3000 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_call_in_flight_and_the_run() {
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
    {
        let service = Service::open(ServiceConfig::from_settings(&data)).expect("service");
        let settings = serde_json::from_value(json!({
            "providers": [{"id": "local", "kind": "openai", "base_url": base, "model": "slow-model"}],
            "roles": {"validator": "local", "clarifier": "local", "builder": "local", "flows": "local"}
        }))
        .expect("settings");
        service.update_settings(settings).expect("stored");
    }

    let mut child = Command::new(BIN)
        .args(["flows", "run", "notes"])
        .env("MASKFLOW_HOME", &data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start maskflow flows run");
    assert!(
        until(&slow.stalled).await,
        "the second step reached the slow server"
    );
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    assert!(until(&slow.dropped).await, "the HTTP request was dropped");
    let status = tokio::task::spawn_blocking(move || {
        let status = child.wait().expect("wait");
        let mut out = String::new();
        let mut err = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut out)
            .expect("read");
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut err)
            .expect("read");
        (status, out, err)
    })
    .await
    .expect("wait task");
    let (status, out, err) = status;
    assert_eq!(status.code(), Some(130), "stdout: {out}\nstderr: {err}");
    assert!(out.contains("turn 0 Summarise"), "{out}");
    assert!(out.trim_end().ends_with("status stopped"), "{out}");
    assert!(err.contains("stopping run"), "{err}");

    let service = Service::open(ServiceConfig::from_settings(&data)).expect("service");
    let ledger = service.ledger(None, 10, 0).expect("ledger");
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert_eq!(ledger[0].outcome, "cancelled", "{ledger:?}");
    assert!(ledger[0].request_body.contains("Write the plan."));
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();
    let run = service.flows().get_run(&id).expect("run");
    assert_eq!(run.status.as_str(), "stopped");
}
