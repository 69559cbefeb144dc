//! A real `maskflow serve` process on a loopback port and a blocking
//! HTTP/1.1 client for it, for the tests that cross a process boundary.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::TOKEN;

/// The `maskflow` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

/// A spawned `maskflow serve`, killed when dropped whatever the test did.
pub struct Serve {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Serve {
    /// Starts `maskflow serve --port 0` on a data folder, with a replay file
    /// if given and extra environment, and reads its port from the URL it prints.
    pub fn start(home: &Path, replay: Option<&Path>, envs: &[(&str, &OsStr)]) -> Serve {
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--port", "0", "--token", TOKEN])
            .env("MASKFLOW_HOME", home)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(replay) = replay {
            command.arg("--replay").arg(replay);
        }
        for (k, v) in envs {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("url");
        let port = line
            .trim()
            .trim_start_matches("http://127.0.0.1:")
            .split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("a port in the URL: {line:?}"));
        Serve { child, port }
    }
}

impl Serve {
    /// Ctrl-C: `serve` shuts down gracefully; waits until it has exited.
    pub fn interrupt(mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -INT {pid}");
        for _ in 0..200 {
            if self.child.try_wait().expect("wait").is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("serve did not stop on Ctrl-C");
    }

    /// The process's id (what a lease names).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: nothing of the process runs any more.
    pub fn kill(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }

    /// A JSON call to this server.
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        json_call(self.port, method, path, body)
    }

    /// Polls `GET path` until `done` holds (bounded; no timing is asserted).
    pub fn wait_for(&self, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        for _ in 0..600 {
            let (_, v) = self.call("GET", path, None);
            if done(&v) {
                return v;
            }
            last = v;
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("timed out waiting for {what}: {last}");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One blocking call with `Connection: close`: the status and the (de-chunked) body.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("headers end");
    let headers = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status: u16 = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let body = &raw[split + 4..];
    if !headers.contains("transfer-encoding: chunked") {
        return (status, body.to_vec());
    }
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let end = rest.windows(2).position(|w| w == b"\r\n").expect("chunk");
        let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..end]).trim(), 16)
            .expect("chunk size");
        if size == 0 {
            break;
        }
        out.extend_from_slice(&rest[end + 2..end + 2 + size]);
        rest = &rest[end + 4 + size..];
    }
    (status, out)
}

/// A JSON call: the status and the body as JSON (`null` if it is not JSON).
pub fn json_call(port: u16, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let (status, out) = http(port, method, path, "application/json", &bytes);
    (status, serde_json::from_slice(&out).unwrap_or(Value::Null))
}

/// Uploads files (name, content type, bytes) in one multipart request; their ids.
pub fn upload(port: u16, files: &[(&str, &str, &[u8])]) -> Vec<String> {
    let boundary = "maskflowboundary42";
    let mut body = Vec::new();
    for (name, content_type, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: {content_type}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let (status, out) = http(
        port,
        "POST",
        "/api/extracts",
        &format!("multipart/form-data; boundary={boundary}"),
        &body,
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&out));
    let v: Value = serde_json::from_slice(&out).expect("json");
    v.as_array()
        .expect("list")
        .iter()
        .map(|f| f["file_id"].as_str().expect("id").to_owned())
        .collect()
}
