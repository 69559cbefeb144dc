//! The issue's "done when" flow through the real binary: `maskflow serve
//! --replay` — upload two real CSVs, converse, build (the test report shows
//! the script ran on the real files with the expected output), approve,
//! then `maskflow run` on two new files gives the right output.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const TOKEN: &str = "build-run-token-123";
const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

const SCRIPT: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
prices = {r["sku"]: float(r["price"]) for r in csv.DictReader(open(f["prices"]))}
with open("outputs/totals.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["order", "total"])
    for r in csv.DictReader(open(f["orders"])):
        w.writerow([r["order"], "%.2f" % (prices[r["sku"]] * int(r["qty"]))])
"#;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http(port: u16, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Vec<u8>) {
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
    let headers = String::from_utf8_lossy(&raw[..split]).to_string();
    let status: u16 = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let mut body = raw[split + 4..].to_vec();
    if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").expect("chunk");
            let size = usize::from_str_radix(String::from_utf8_lossy(&rest[..line_end]).trim(), 16)
                .expect("chunk size");
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 4 + size..];
        }
        body = out;
    }
    (status, body)
}

fn json_call(port: u16, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let (status, out) = http(port, method, path, "application/json", &bytes);
    (status, serde_json::from_slice(&out).unwrap_or(Value::Null))
}

fn upload(port: u16, files: &[(&str, &str)]) -> Vec<String> {
    let boundary = "maskflowboundary42";
    let mut body = Vec::new();
    for (name, text) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: text/csv\r\n\r\n{text}\r\n"
            )
            .as_bytes(),
        );
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

fn serve(home: &Path, replay: &Path) -> (Server, u16) {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--token", TOKEN, "--replay"])
        .arg(replay)
        .env("MASKFLOW_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("url");
    let port: u16 = line
        .trim()
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port in the URL");
    (Server(child), port)
}

#[test]
fn build_on_real_files_then_run_on_new_ones() {
    let home = tempfile::tempdir().expect("home");
    let replay = home.path().join("replay.json");
    let spec = json!({
        "name": "Order totals",
        "description": "Prices each order line",
        "script": SCRIPT,
        "fields": [
            {"name": "orders", "label": "Orders", "type": "file", "required": true, "accept": [".csv"]},
            {"name": "prices", "label": "Prices", "type": "file", "required": true, "accept": [".csv"]}
        ],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "totals.csv", "description": "order totals"}]}
    });
    std::fs::write(
        &replay,
        json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": true, "question": "Round to cents?"}, {"needs_clarification": false}],
            "builder": [spec],
        })
        .to_string(),
    )
    .expect("replay");
    let data = home.path().join("data");
    let (server, port) = serve(&data, &replay);

    let ids = upload(
        port,
        &[
            ("orders.csv", "order,sku,qty\nA-1,X,2\nA-2,Y,1\n"),
            ("prices.csv", "sku,price\nX,1.50\nY,10.00\n"),
        ],
    );
    let (status, created) = json_call(
        port,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": ids})),
    );
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "total per order"})),
    );
    assert_eq!(reply["status"], "clarifying");
    let (_, reply) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "yes, two decimals"})),
    );
    assert_eq!(reply["status"], "building");

    // Wait for the background build (bounded; no timing is asserted).
    let mut view = Value::Null;
    for _ in 0..600 {
        let (_, v) = json_call(port, "GET", &format!("/api/workflows/{wf}"), None);
        if v["current_version"]["status"] != "building" {
            view = v;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let report = &current["test_report"];
    assert_eq!(report["status"], "passed", "{report}");
    assert_eq!(report["inputs"]["orders"], json!(["orders.csv"]));
    let out = &report["run"]["outputs"][0];
    assert_eq!(out["name"], "totals.csv");
    assert_eq!(out["row_count"], 2);
    assert_eq!(
        out["preview_rows"],
        json!([["order", "total"], ["A-1", "3.00"], ["A-2", "10.00"]])
    );
    assert_eq!(current["build"]["phase"], "complete");

    let (status, sessions) = json_call(
        port,
        "GET",
        &format!("/api/workflows/{wf}/versions/{vid}/sessions"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(sessions[0]["iteration"], 1);
    let (status, script) = http(
        port,
        "GET",
        &format!("/api/workflows/{wf}/versions/{vid}/sessions/1/code/script.py"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&script), SCRIPT);

    let (status, _) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200);

    // A run through the API on uploaded files.
    let new_ids = upload(
        port,
        &[
            ("orders2.csv", "order,sku,qty\nB-1,Y,3\n"),
            ("prices2.csv", "sku,price\nY,2.25\n"),
        ],
    );
    let (status, run) = json_call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(json!({"inputs": {"orders": new_ids[0], "prices": new_ids[1]}})),
    );
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["status"], "succeeded");
    let run_id = run["id"].as_str().expect("run id");
    let (status, bytes) = http(
        port,
        "GET",
        &format!("/api/runs/{run_id}/outputs/totals.csv"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200);
    assert_eq!(
        String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
        "order,total\nB-1,6.75\n"
    );
    let (_, runs) = json_call(port, "GET", &format!("/api/workflows/{wf}/runs"), None);
    assert_eq!(runs.as_array().map(Vec::len), Some(1));
    drop(server);

    // `maskflow run` on two new local files.
    let work = home.path().join("cli");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("o.csv"), "order,sku,qty\nC-1,X,4\nC-2,Z,1\n").expect("write");
    std::fs::write(work.join("p.csv"), "sku,price\nX,0.25\nZ,7\n").expect("write");
    let output = Command::new(BIN)
        .args([
            "run",
            "Order totals",
            "--input",
            "orders=o.csv",
            "--input",
            "prices=p.csv",
        ])
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow run");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout);
    let path = printed.lines().next().expect("an output path");
    assert!(path.contains("maskflow-run-run_"), "{path}");
    assert_eq!(
        std::fs::read_to_string(path)
            .expect("output")
            .replace("\r\n", "\n"),
        "order,total\nC-1,1.00\nC-2,7.00\n"
    );

    // A failing run exits non-zero.
    std::fs::write(work.join("bad.csv"), "order,sku,qty\nD-1,NOPE,1\n").expect("write");
    let failed = Command::new(BIN)
        .args([
            "run",
            &wf,
            "--input",
            "orders=bad.csv",
            "--input",
            "prices=p.csv",
            "--out",
        ])
        .arg(work.join("out"))
        .current_dir(&work)
        .env("MASKFLOW_HOME", &data)
        .output()
        .expect("maskflow run");
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("KeyError"));
}
