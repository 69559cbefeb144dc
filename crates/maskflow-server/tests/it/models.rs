//! The model manager through its two shells: `maskflow models
//! list|pull|rm|use` as a user runs it, and the HTTP calls Settings makes,
//! both downloading from a file server on loopback (dropping the first
//! connection mid-way, so the pull has to resume with a `Range` request).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use maskflow_core::{Event, Service};
use serde_json::json;

use crate::common::{app, call};

/// A GGUF header (version 3, architecture `llama`, no tensors) and padding.
fn fake_model(padding: usize) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    string(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes());
    string(&mut out, "llama");
    out.extend((0..padding).map(|i| (i % 253) as u8));
    out
}

fn sha256(bytes: &[u8]) -> String {
    // The binary under test computes it with sha2; here `sha256sum` is an
    // independent check.
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("f");
    std::fs::write(&file, bytes).expect("write");
    let out = Command::new("sha256sum")
        .arg(&file)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("hash")
        .to_owned()
}

/// Serves `body` at `/m.gguf` with `Range` support; the first response
/// stops after `cut` bytes. Returns the URL and the `Range` headers seen.
fn file_server(body: Vec<u8>, cut: usize) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/m.gguf", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let ranges = seen.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.strip_prefix("range:").or(line.strip_prefix("Range:")) {
                    range = Some(v.trim().to_owned());
                }
            }
            ranges.lock().expect("ranges").push(range.clone());
            let start: usize = range
                .as_deref()
                .and_then(|r| r.strip_prefix("bytes="))
                .and_then(|r| r.trim_end_matches('-').parse().ok())
                .unwrap_or(0);
            let len = body.len();
            let head = match range {
                Some(_) => format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {start}-{}/{len}\r\nConnection: close\r\n\r\n",
                    len - start,
                    len - 1
                ),
                None => {
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n")
                }
            };
            let _ = stream.write_all(head.as_bytes());
            let rest = &body[start..];
            let end = if n == 0 {
                cut.min(rest.len())
            } else {
                rest.len()
            };
            let _ = stream.write_all(&rest[..end]);
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    (url, seen)
}

fn maskflow(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .arg("models")
        .args(args)
        .env("MASKFLOW_HOME", home)
        .output()
        .expect("run maskflow")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_command_line_lists_pulls_resumes_uses_and_removes_a_model() {
    let home = tempfile::tempdir().expect("home");
    let out = maskflow(home.path(), &["list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list = text(&out.stdout);
    for name in ["smollm2-135m", "qwen2.5-0.5b", "llama3.2-3b"] {
        assert!(list.contains(name), "{list}");
    }
    assert!(list.contains("(none)"), "{list}");

    let body = fake_model(2 << 20);
    let sum = sha256(&body);
    let (url, ranges) = file_server(body.clone(), 700_000);
    let out = maskflow(
        home.path(),
        &["pull", "tiny", "--url", &url, "--sha256", &sum],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("downloading tiny: "), "{stderr}");
    assert!(stderr.contains("tiny ready"), "{stderr}");
    assert!(text(&out.stdout).contains(&sum));
    assert_eq!(
        ranges.lock().expect("ranges").clone(),
        vec![None, Some("bytes=700000-".to_owned())]
    );
    let kept = home.path().join("models/tiny.gguf");
    assert_eq!(std::fs::read(&kept).expect("kept"), body);

    let out = maskflow(home.path(), &["list", "--json"]);
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(view["installed"][0]["name"], "tiny");
    assert_eq!(view["installed"][0]["sha256"], sum.as_str());

    let out = maskflow(home.path(), &["use", "tiny"]);
    if view["local_backend"] == json!(true) {
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = maskflow(home.path(), &["rm", "tiny"]);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains("local back end uses"));
    } else {
        assert!(!out.status.success());
        assert!(
            text(&out.stderr).contains("without the embedded back end"),
            "{}",
            text(&out.stderr)
        );
        let out = maskflow(home.path(), &["rm", "tiny"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(!kept.exists());
    }

    // A wrong checksum: refused, nothing kept.
    let (url, _) = file_server(body, usize::MAX);
    let out = maskflow(
        home.path(),
        &["pull", "other", "--url", &url, "--sha256", &"0".repeat(64)],
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("SHA-256"), "{stderr}");
    assert!(!home.path().join("models/other.gguf").exists());
    assert!(!home.path().join("models/other.gguf.part").exists());

    // An unknown name lists the known ones.
    let out = maskflow(home.path(), &["pull", "gpt-9"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("smollm2-135m"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_pull_a_model_over_http_and_follow_its_progress() {
    let home = tempfile::tempdir().expect("home");
    let service =
        Service::open(maskflow_core::ServiceConfig::from_settings(home.path())).expect("service");
    let mut events = service.subscribe();
    let app = app(service);
    let (status, view) = call(&app, "GET", "/api/models", None).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["first_start"], true);
    let body = fake_model(1 << 20);
    let sum = sha256(&body);
    let (url, ranges) = file_server(body, 300_000);
    let (status, view) = call(
        &app,
        "POST",
        "/api/models/pull",
        Some(json!({"name": "tiny", "url": url, "sha256": sum})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{view}");
    assert_eq!(view["downloads"][0]["name"], "tiny");
    let mut downloading = 0;
    loop {
        match events.recv().await.expect("event") {
            Event::ModelProgress { stage, .. } if stage == "downloading" => downloading += 1,
            // Verifying, then (with the embedded back end) measuring the speed, come before the end.
            Event::ModelProgress { stage, message, .. }
                if stage != "verifying" && stage != "measuring" =>
            {
                assert_eq!(stage, "ready", "{message}");
                break;
            }
            _ => {}
        }
    }
    assert!(downloading >= 2);
    assert_eq!(ranges.lock().expect("ranges").len(), 2);
    let (_, view) = call(&app, "GET", "/api/models", None).await;
    assert_eq!(view["installed"][0]["name"], "tiny");
    assert_eq!(view["downloads"], json!([]));
    let (status, body) = call(
        &app,
        "POST",
        "/api/models/pull",
        Some(json!({"url": "ftp://x/m.gguf", "sha256": "0"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = call(&app, "DELETE", "/api/models/tiny", None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&app, "DELETE", "/api/models/tiny", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, view) = call(
        &app,
        "POST",
        "/api/models/first-start",
        Some(json!({"choice": "manual"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["first_start"], false);
}
