//! A recording HTTP server on loopback: every request it receives (method,
//! path, body) is kept, and a handler the test chooses answers it. One
//! plays the hostile LLM back end, another a foreign package index.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Received {
    /// `GET`, `POST`…
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The body (after de-chunking).
    pub body: Vec<u8>,
}

impl Received {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What the handler answers.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The `content-type`.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// `404 Not Found`, empty.
    pub fn not_found() -> Reply {
        Reply {
            status: 404,
            content_type: "text/plain".into(),
            body: Vec::new(),
        }
    }
}

type Handler = dyn Fn(&Received, usize) -> Reply + Send + Sync;

/// The running server; stops accepting when dropped.
pub struct Recorder {
    /// The loopback port it listens on.
    pub port: u16,
    log: Arc<Mutex<Vec<Received>>>,
    stop: Arc<AtomicBool>,
}

impl Recorder {
    /// Starts a server on `127.0.0.1:0`; `handler` gets each request and
    /// how many requests came before it.
    pub fn start(handler: impl Fn(&Received, usize) -> Reply + Send + Sync + 'static) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the recorder");
        let port = listener.local_addr().expect("recorder address").port();
        let log: Arc<Mutex<Vec<Received>>> = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let (l, s) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (l, h) = (l.clone(), handler.clone());
                std::thread::spawn(move || serve_one(conn, &l, h.as_ref()));
            }
        });
        Recorder { port, log, stop }
    }

    /// Every request received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.log.lock().expect("recorder log").clone()
    }

    /// The bodies of the `POST`s received so far, as text.
    pub fn bodies(&self) -> Vec<String> {
        self.received()
            .iter()
            .filter(|r| r.method == "POST")
            .map(Received::text)
            .collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Reads one request, records it, answers it and closes.
fn serve_one(conn: TcpStream, log: &Mutex<Vec<Received>>, handler: &Handler) {
    let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let lower = line.trim().to_ascii_lowercase();
        if lower.is_empty() {
            break;
        }
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)
    } else {
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        body
    };
    let received = Received { method, path, body };
    let seen = {
        let mut log = log.lock().expect("recorder log");
        log.push(received.clone());
        log.len() - 1
    };
    let reply = handler(&received, seen);
    let head = format!(
        "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        reply.status,
        reply.content_type,
        reply.body.len()
    );
    let _ = writer.write_all(head.as_bytes());
    let _ = writer.write_all(&reply.body);
    let _ = writer.flush();
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).unwrap_or(0) == 0 {
            return body;
        }
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        let mut chunk = vec![0u8; n + 2];
        if n == 0 || reader.read_exact(&mut chunk).is_err() {
            return body;
        }
        body.extend_from_slice(&chunk[..n]);
    }
}
