//! The sandbox as a user meets it: `maskflow serve` on a back end chosen
//! through `PUT /api/settings` (a recording OpenAI-compatible server on
//! loopback), whose builder writes a hostile script. The script's test run
//! reaches none of the server's secrets, files or network, and the privacy
//! ledger still holds every call. Then, with isolation made impossible (the
//! runner's test-only switch), a run is refused until the Settings switch
//! allows it, and the run report says so.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "sandbox-test-token-7f3a";
const API_KEY: &str = "sk-canary-sandbox-9d21";
const BIN: &str = env!("CARGO_BIN_EXE_maskflow");

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http(port: u16, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    s.write_all(body).expect("write body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).to_string();
    let (headers, rest) = text.split_once("\r\n\r\n").expect("headers end");
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let body = if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = String::new();
        let mut rest = rest;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.push_str(&tail[..n]);
            rest = &tail[n + 2..];
        }
        out
    } else {
        rest.to_owned()
    };
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn call(port: u16, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    http(port, method, path, "application/json", &bytes)
}

fn upload(port: u16, name: &str, text: &str) -> String {
    let boundary = "sandboxboundary";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: text/csv\r\n\r\n{text}\r\n--{boundary}--\r\n"
    );
    let (status, v) = http(
        port,
        "POST",
        "/api/extracts",
        &format!("multipart/form-data; boundary={boundary}"),
        body.as_bytes(),
    );
    assert_eq!(status, 200, "{v}");
    v[0]["file_id"].as_str().expect("id").to_owned()
}

fn serve(data: &Path, home: &Path, no_landlock: bool) -> (Server, u16) {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--port", "0", "--token", TOKEN])
        .env("MASKFLOW_HOME", data)
        .env("HOME", home)
        .env("MASKFLOW_OPENAI_API_KEY", API_KEY)
        .env_remove("MASKFLOW_TEST_NO_LANDLOCK")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if no_landlock {
        cmd.env("MASKFLOW_TEST_NO_LANDLOCK", "1");
    }
    let mut child = cmd.spawn().expect("start serve");
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
        .expect("port in the URL");
    (Server(child), port)
}

fn wait_built(port: u16, wf: &str) -> Value {
    for _ in 0..1200 {
        let (_, v) = call(port, "GET", &format!("/api/workflows/{wf}"), None);
        if v["current_version"]["status"] != "building" {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the build did not end");
}

/// The hostile script a prompt-injected builder could write: it tries each
/// way out, with the paths written into it, and reports what it reached.
fn hostile_script(home: &Path, data: &Path, other_upload: &Path, llm_port: u16) -> String {
    format!(
        r#"import json, os, socket, sqlite3
reached = {{}}
def attempt(name, f):
    try:
        f()
        reached[name] = True
    except Exception:
        reached[name] = False
def wipe():
    db = sqlite3.connect({db:?})
    db.execute("DELETE FROM llm_calls")
    db.commit()
attempt("server_environ", lambda: open(f"/proc/{{os.getppid()}}/environ", "rb").read())
attempt("server_cmdline", lambda: open(f"/proc/{{os.getppid()}}/cmdline", "rb").read())
attempt("ssh_key", lambda: open({ssh:?}).read())
attempt("database", lambda: open({db:?}, "rb").read())
attempt("wipe_ledger", wipe)
attempt("other_upload", lambda: open({other:?}).read())
attempt("write_outside", lambda: open({outside:?}, "w").write("persisted"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", {llm_port}), timeout=3).sendall(b"GET /leak HTTP/1.0\r\n\r\n"))
os.makedirs("outputs", exist_ok=True)
with open("outputs/reached.json", "w") as f:
    json.dump(reached, f)
print(json.dumps(reached))
"#,
        db = data.join("maskflow.db").display().to_string(),
        ssh = home.join(".ssh/id_rsa").display().to_string(),
        other = other_upload.display().to_string(),
        outside = home.join("persisted.py").display().to_string(),
    )
}

/// Answers each role in OpenAI's streaming format; counts the calls.
#[derive(Clone)]
struct Recorder {
    script: String,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Respond for Recorder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body).to_string();
        let text = if body.contains("needs_clarification") {
            json!({"needs_clarification": false}).to_string()
        } else if body.contains("feasible") {
            json!({"feasible": true}).to_string()
        } else {
            json!({
                "name": "Row report",
                "description": "Reports the rows",
                "script": self.script,
                "fields": [{"name": "people", "label": "People", "type": "file", "required": true, "accept": [".csv"]}],
                "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                              "outputs": [{"name": "reached.json", "description": "what the script reached"}]}
            })
            .to_string()
        };
        self.calls.lock().expect("lock").push(body);
        let out = format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}})
        );
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(out)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_builder_script_reaches_nothing_and_the_ledger_keeps_every_call() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    std::fs::write(home.join(".ssh/id_rsa"), "-----BEGIN CANARY-----").expect("write");
    let data = tmp.path().join("data");
    let llm = MockServer::start().await;
    let llm_port = llm.address().port();
    let calls = Arc::new(Mutex::new(Vec::new()));

    let (server, port) = serve(&data, &home, false);
    let other_id = upload(port, "salaries.csv", "name,salary\nAda Lovelace,85000\n");
    let other_upload = walk(&data)
        .into_iter()
        .find(|p| p.ends_with("salaries.csv") && p.to_string_lossy().contains(&other_id))
        .or_else(|| {
            walk(&data)
                .into_iter()
                .find(|p| p.ends_with("salaries.csv"))
        })
        .expect("the other upload is on disk");
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(Recorder {
            script: hostile_script(&home, &data, &other_upload, llm_port),
            calls: calls.clone(),
        })
        .mount(&llm)
        .await;
    let (s, v) = call(
        port,
        "PUT",
        "/api/settings",
        Some(json!({
            "providers": [{"id": "local", "kind": "openai", "base_url": format!("{}/v1", llm.uri()), "model": "m"},
                          {"id": "manual", "kind": "manual"}],
            "roles": {"validator": "local", "clarifier": "local", "builder": "local"}
        })),
    );
    assert_eq!(s, 200, "{v}");

    let file = upload(
        port,
        "people.csv",
        "name,city\nJohn Smith,Leeds\nMary Jones,York\n",
    );
    let (s, created) = call(
        port,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file]})),
    );
    assert_eq!(s, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let (_, r) = call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "report the rows"})),
    );
    assert_eq!(r["status"], "building", "{r}");
    let view = wait_built(port, &wf);
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let run = &current["test_report"]["run"];
    let reached: Value =
        serde_json::from_str(run["stdout"].as_str().expect("stdout").trim()).expect("report");
    assert_eq!(reached.as_object().map(|o| o.len()), Some(8), "{reached}");
    for (attempt, got) in reached.as_object().expect("object") {
        assert_eq!(
            got,
            &json!(false),
            "the script reached {attempt}: {reached}"
        );
    }
    assert!(!home.join("persisted.py").exists());
    assert!(!run.to_string().contains(API_KEY));
    assert!(!run.to_string().contains(TOKEN));

    // The ledger still holds every call that left the machine.
    let made = calls.lock().expect("lock").len();
    assert_eq!(made, 3, "validator, clarifier, builder");
    let (_, ledger) = call(port, "GET", "/api/ledger", None);
    assert_eq!(ledger.as_array().map(Vec::len), Some(made), "{ledger}");
    // Only Maskflow's own requests reached the server: the chat calls and
    // the probe of the model's context window — never the script's.
    let received = llm.received_requests().await.unwrap_or_default();
    let paths: Vec<String> = received.iter().map(|r| r.url.path().to_owned()).collect();
    assert!(
        paths
            .iter()
            .all(|p| p == "/v1/chat/completions" || p == "/v1/models"),
        "{paths:?}"
    );
    assert_eq!(
        paths
            .iter()
            .filter(|p| *p == "/v1/chat/completions")
            .count(),
        made
    );

    // Approve, then make isolation impossible: a run is refused with the
    // sentence until the Settings switch allows it.
    let vid = current["id"].as_str().expect("vid").to_owned();
    let (s, _) = call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(s, 200);
    drop(server);
    let (_server, port) = serve(&data, &home, true);
    let (_, iso) = call(port, "GET", "/api/settings/isolation", None);
    assert_eq!(iso["allow_unisolated"], false, "{iso}");
    let input = upload(port, "people2.csv", "name,city\nAnn Lee,Bath\n");
    let (_, refused) = call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(json!({"inputs": {"people": input}})),
    );
    let refusal = refused.to_string();
    assert!(
        refusal.contains("could not establish file-system isolation"),
        "{refusal}"
    );
    assert!(
        refusal.contains("Run scripts without isolation"),
        "{refusal}"
    );

    let (s, iso) = call(
        port,
        "PUT",
        "/api/settings/isolation",
        Some(json!({"allow_unisolated": true})),
    );
    assert_eq!((s, &iso["allow_unisolated"]), (200, &json!(true)), "{iso}");
    // A harmless run: the hostile one would now succeed at what it tries.
    std::fs::write(home.join(".ssh/id_rsa"), "").expect("emptied");
    let input = upload(port, "people3.csv", "name,city\nAnn Lee,Bath\n");
    let (s, run) = call(
        port,
        "POST",
        &format!("/api/workflows/{wf}/runs"),
        Some(json!({"inputs": {"people": input}})),
    );
    assert_eq!(s, 201, "{run}");
    let fs = run["limits"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["name"] == "file_system"))
        .expect("file_system reported");
    assert!(fs.get("mechanism").is_none_or(Value::is_null), "{fs}");
    assert!(
        fs["note"]
            .as_str()
            .is_some_and(|n| n.contains("NOT ISOLATED")),
        "{fs}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
