//! Issue 30, point 1: `maskflow mcp` driven by a real MCP client, the
//! Python `mcp` package's (pinned, in a venv of its own under the test
//! cache). The client lists the tools, asks for a CSV's masked extract
//! (refused until the user approves it in Maskflow, through `serve`'s API as
//! the app does), runs an approved workflow on a new file, starts a flow and
//! answers its gate, and answers a manual task with "request changes" and a
//! JSON result that routes the flow; no cell of either file appears in anything the client
//! received, and each answer is in the ledger. Also: the HTTP transport
//! refuses a request without the token, and hostile paths get clear errors.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::common::TOKEN;
use crate::common::spawned::{BIN, Serve, upload};
use crate::hostile::requirements::{skip_without_uv, uv_cache};

/// The client's version, pinned so a new release cannot change the test.
const MCP_CLIENT: &str = "mcp==2.3.0";

/// The client's name, as the ledger records it.
const CLIENT_NAME: &str = "maskflow-it";

/// Reads one JSON request a line, answers one JSON line: the tools' names,
/// or a tool's result (its text, whether it failed, and the whole result
/// object as the client received it).
const DRIVER: &str = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation

async def main():
    cfg = json.loads(sys.argv[1])
    params = StdioServerParameters(command=cfg["command"], args=cfg["args"], env=cfg["env"])
    info = Implementation(name=cfg["name"], version="1")
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, client_info=info) as s:
            await s.initialize()
            loop = asyncio.get_running_loop()
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    break
                req = json.loads(line)
                if req["op"] == "tools":
                    listed = await s.list_tools()
                    out = {"tools": [t.name for t in listed.tools], "raw": listed.model_dump_json()}
                else:
                    res = await s.call_tool(req["tool"], req.get("args", {}))
                    text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
                    out = {"is_error": bool(res.is_error), "text": text, "raw": res.model_dump_json()}
                print(json.dumps(out), flush=True)

asyncio.run(main())
"#;

const PEOPLE: &str = "name,city\nZebulon Quagmire,Ouagadougou\nOttoline Fairweather,Tegucigalpa\nPerpetua Wolfsbane,Ouagadougou\n";
const NEW_PEOPLE: &str =
    "name,city\nBarnaby Thistlewood,Ulaanbaatar\nGriselda Moonwhistle,Antananarivo\n";

/// Counts the people of each city: its output holds the cities, raw.
const SCRIPT: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
counts = {}
for r in csv.DictReader(open(f["people"])):
    counts[r["city"]] = counts.get(r["city"], 0) + 1
with open("outputs/by_city.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["city", "people"])
    for c, n in sorted(counts.items()):
        w.writerow([c, n])
"#;

/// A step of an agent on the manual back end (the client answers its
/// prompt), then a gate (the client answers it).
const FLOW: &str = r#"{"description": "Drafts a note, then asks before shipping.", "steps": [
    {"type": "llm", "label": "Draft", "agentType": "writer", "identifier": "x",
     "messages": [{"role": "user", "content": ["Draft a one-line release note."]}]},
    {"type": "gate", "id": "g", "label": "Review", "prompt": "Ship it?",
     "options": [{"label": "Approve"}, {"label": "Reject"}]}]}"#;

/// A manual task (seed 003's decisions) in a graph-form flow (a node
/// without `next` ends the run), routing on the person's decision:
/// "request changes" goes to the writer with the person's notes, "approve"
/// to the announcement.
const DECIDE: &str = r#"{"description": "A person decides on a draft.", "nodes": [
    {"type": "gate", "id": "decide", "label": "Decide", "prompt": "Approve, request changes, or reject the draft.",
     "options": [{"label": "approve", "next": "ship"}, {"label": "request changes", "next": "revise"},
                 {"label": "reject", "next": null}]},
    {"type": "llm", "id": "revise", "label": "Revise", "agentType": "writer", "identifier": "x",
     "messages": [{"role": "user", "content": ["Revise the draft: {{output.notes}}"]}]},
    {"type": "llm", "id": "ship", "label": "Ship", "agentType": "writer", "identifier": "x",
     "messages": [{"role": "user", "content": ["Announce the release."]}]}]}"#;

/// The venv with the pinned client, made once per test run (both tests use it).
fn client_python(uv: &Path) -> PathBuf {
    static MADE: Mutex<()> = Mutex::new(());
    let _once = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = uv_cache()
        .parent()
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
        .join(format!("mcp-client-{}", MCP_CLIENT.replace("==", "-")));
    let python = dir.join("bin").join("python");
    let works = |p: &Path| {
        Command::new(p)
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&python) {
        return python;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let run = |args: &[&str]| {
        let out = Command::new(uv)
            .args(args)
            .env("UV_CACHE_DIR", uv_cache())
            .output()
            .expect("run uv");
        assert!(
            out.status.success(),
            "uv {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let dir_s = dir.display().to_string();
    let python_s = python.display().to_string();
    run(&["venv", "--quiet", &dir_s]);
    run(&[
        "pip", "install", "--quiet", "--python", &python_s, MCP_CLIENT,
    ]);
    assert!(works(&python), "the MCP client imports after installing");
    python
}

/// A real MCP client session with `maskflow mcp` on stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Every raw result received, for the leak checks.
    received: Vec<String>,
}

impl Client {
    fn start(python: &Path, dir: &Path, data: &Path, roots: &[&Path]) -> Client {
        let driver = dir.join("driver.py");
        std::fs::write(&driver, DRIVER).expect("driver");
        let mut args = vec!["mcp".to_owned()];
        for r in roots {
            args.extend(["--root".to_owned(), r.display().to_string()]);
        }
        // The server gets this test's environment, as `serve` does.
        let mut env: serde_json::Map<String, Value> = std::env::vars()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        env.insert("MASKFLOW_HOME".into(), json!(data.display().to_string()));
        let cfg = json!({"command": BIN, "args": args, "env": env, "name": CLIENT_NAME});
        let mut child = Command::new(python)
            .arg(&driver)
            .arg(cfg.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the MCP client");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Client {
            child,
            stdin,
            stdout,
            received: Vec::new(),
        }
    }

    fn ask(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").expect("write to the client");
        self.stdin.flush().expect("flush");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read the client");
        assert!(!line.is_empty(), "the client ended on {request}");
        let out: Value = serde_json::from_str(&line).expect("a JSON line");
        self.received
            .push(out["raw"].as_str().unwrap_or_default().to_owned());
        out
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.ask(json!({"op": "call", "tool": tool, "args": args}))
    }

    /// A tool's successful answer, parsed.
    fn ok(&mut self, tool: &str, args: Value) -> Value {
        let out = self.call(tool, args);
        assert_eq!(out["is_error"], false, "{tool}: {out}");
        serde_json::from_str(out["text"].as_str().expect("text")).expect("a JSON answer")
    }

    /// Polls `watch_flow` until `done` holds (bounded; no timing is asserted).
    fn watch_until(&mut self, run: &str, done: impl Fn(&Value) -> bool) -> Value {
        let mut last = Value::Null;
        for _ in 0..400 {
            last = self.ok("watch_flow", json!({"run_id": run}));
            if done(&last) {
                return last;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the run never got there: {last}");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every data cell of a CSV text (the header row is the column names,
/// which the extract shows by design).
fn cells(csv: &str) -> Vec<String> {
    csv.lines()
        .skip(1)
        .flat_map(|l| l.split(','))
        .map(str::to_owned)
        .collect()
}

fn assert_nothing_raw(received: &[String], files: &[&str]) {
    let all = received.join("\n");
    for file in files {
        for cell in cells(file) {
            assert!(!all.contains(&cell), "the client received {cell:?}: {all}");
            for word in cell.split(' ') {
                assert!(!all.contains(word), "the client received {word:?}");
            }
        }
    }
}

fn replay(dir: &Path) -> PathBuf {
    let spec = json!({
        "name": "People by city",
        "description": "Counts the people of each city",
        "script": SCRIPT,
        "fields": [{"name": "people", "label": "People", "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "by_city.csv", "description": "people per city"}]}
    });
    let path = dir.join("replay.json");
    let replies = json!({
        "validator": [{"feasible": true}],
        "clarifier": [{"needs_clarification": false}],
        "builder": [spec],
    });
    std::fs::write(&path, replies.to_string()).expect("replay");
    path
}

/// Builds and approves the workflow through `serve`, as a user would.
fn approved_workflow(server: &Serve) -> String {
    let ids = upload(
        server.port,
        &[("people.csv", "text/csv", PEOPLE.as_bytes())],
    );
    let (status, created) = server.call("POST", "/api/workflows", Some(json!({"file_ids": ids})));
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "count the people of each city"})),
    );
    assert_eq!(reply["status"], "building", "{reply}");
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build", |v| {
        v["current_version"]["status"] != "building"
    });
    assert_eq!(
        view["current_version"]["status"], "pending_user_approval",
        "{view}"
    );
    let (status, approved) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/versions/{vid}/approve"),
        None,
    );
    assert_eq!(status, 200, "{approved}");
    wf
}

#[test]
fn an_mcp_client_gets_masked_extracts_runs_a_workflow_and_answers_a_gate() {
    let Some(uv) = skip_without_uv("an_mcp_client_gets_masked_extracts…") else {
        return;
    };
    let python = client_python(&uv);
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let files = tmp.path().join("files");
    std::fs::create_dir_all(data.join("flows")).expect("flows");
    crate::common::agent_files(&data, &["writer"]);
    std::fs::create_dir_all(&files).expect("files");
    std::fs::write(data.join("flows/review.json"), FLOW).expect("flow");
    std::fs::write(data.join("flows/signoff.json"), DECIDE).expect("flow");
    let people = files.join("people.csv");
    std::fs::write(&people, PEOPLE).expect("people");
    let new_people = files.join("new_people.csv");
    std::fs::write(&new_people, NEW_PEOPLE).expect("new people");
    let server = Serve::start(&data, Some(&replay(tmp.path())), &[]);
    let wf = approved_workflow(&server);

    let mut client = Client::start(&python, tmp.path(), &data, &[&files]);
    let tools = client.ask(json!({"op": "tools"}));
    for name in [
        "list_workflows",
        "list_flows",
        "get_masked_extract",
        "run_workflow",
        "start_flow",
        "watch_flow",
        "stop_flow",
        "answer_flow",
        "answer_prompt",
        "read_ledger",
    ] {
        assert!(
            tools["tools"]
                .as_array()
                .expect("names")
                .contains(&json!(name)),
            "{name}: {tools}"
        );
    }
    // answer_flow's schema tells a client about a manual task's decision and result.
    let raw: Value = serde_json::from_str(tools["raw"].as_str().expect("raw")).expect("json");
    let answer = raw["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "answer_flow")
        .expect("answer_flow");
    for arg in ["run_id", "option", "decision", "input", "result"] {
        assert!(
            answer["input_schema"]["properties"][arg].is_object(),
            "{arg}: {answer}"
        );
    }
    assert_eq!(
        answer["input_schema"]["required"],
        json!(["run_id"]),
        "{answer}"
    );
    let listed = client.ok("list_workflows", json!({}));
    assert_eq!(listed["workflows"][0]["id"], wf.as_str(), "{listed}");
    assert_eq!(listed["workflows"][0]["approved"], true);
    assert_eq!(listed["workflows"][0]["inputs"][0]["name"], "people");
    let flows = client.ok("list_flows", json!({}));
    assert_eq!(flows["flows"][0]["name"], "review", "{flows}");

    // The extract waits for the user's approval, listed in the app.
    let path = people.display().to_string();
    let asked = client.ok("get_masked_extract", json!({"path": path}));
    assert_eq!(asked["status"], "approval_required", "{asked}");
    assert!(
        asked["message"]
            .as_str()
            .expect("message")
            .contains("Approve in Maskflow")
    );
    let request = asked["request_id"].as_str().expect("request").to_owned();
    let again = client.ok("get_masked_extract", json!({"path": path}));
    assert_eq!(
        again["request_id"],
        request.as_str(),
        "one request, not two"
    );
    let (_, listed) = server.call("GET", "/api/client-requests", None);
    assert_eq!(listed[0]["id"], request.as_str(), "{listed}");
    assert_eq!(listed[0]["client"], CLIENT_NAME);
    assert_eq!(listed[0]["file"]["extract"]["row_count"], 3, "{listed}");
    let (status, _) = server.call(
        "POST",
        &format!("/api/client-requests/{request}/approve"),
        None,
    );
    assert_eq!(status, 200);
    let extract = client.ok("get_masked_extract", json!({"path": path}));
    assert_eq!(extract["status"], "approved", "{extract}");
    assert_eq!(
        extract["extract"], listed[0]["file"]["extract"],
        "exactly what the user approved"
    );
    assert_eq!(extract["extract"]["columns"], json!(["name", "city"]));

    // An approved workflow on a new file: asked about first (issue 39),
    // then run; outputs stay on disk, previews masked.
    let run_args =
        json!({"workflow": wf, "inputs": {"people": [new_people.display().to_string()]}});
    let asked = client.ok("run_workflow", run_args.clone());
    assert_eq!(asked["status"], "approval_required", "{asked}");
    let request = asked["requests"][0]["request_id"]
        .as_str()
        .expect("request");
    let (status, _) = server.call(
        "POST",
        &format!("/api/client-requests/{request}/approve"),
        None,
    );
    assert_eq!(status, 200);
    let ran = client.ok("run_workflow", run_args);
    assert_eq!(ran["status"], "succeeded", "{ran}");
    let output = &ran["outputs"][0];
    let on_disk = std::fs::read_to_string(output["path"].as_str().expect("path")).expect("output");
    assert!(
        on_disk.contains("Ulaanbaatar"),
        "the raw output stays on disk: {on_disk}"
    );
    assert_eq!(output["size"], on_disk.len());
    assert_eq!(
        output["preview"]["columns"],
        json!(["city", "people"]),
        "{ran}"
    );
    assert!(
        ran.to_string().contains("Aaaaaaaaaaa"),
        "a masked city: {ran}"
    );

    // A flow's gate, answered by the client.
    let started = client.ok("start_flow", json!({"name": "review"}));
    let run = started["conversationId"].as_str().expect("run").to_owned();
    let drafting = client.watch_until(&run, |v| {
        v["manual_prompts"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    });
    let prompt = &drafting["manual_prompts"][0];
    assert!(
        prompt
            .to_string()
            .contains("Draft a one-line release note."),
        "{drafting}"
    );
    let prompt_id = prompt["prompt_id"].as_str().expect("prompt id").to_owned();
    client.ok(
        "answer_prompt",
        json!({"prompt_id": prompt_id, "text": "Faster extracts."}),
    );
    let waiting = client.watch_until(&run, |v| v["pending"]["kind"] == "gate");
    assert_eq!(waiting["pending"]["prompt"], "Ship it?", "{waiting}");
    client.ok("answer_flow", json!({"run_id": run, "option": "Approve"}));
    let done = client.watch_until(&run, |v| v["status"] == "completed");
    let steps: Vec<&Value> = done["resume"]["completedSteps"]
        .as_array()
        .map(|a| a.iter().map(|c| &c["stepPath"]).collect())
        .unwrap_or_default();
    assert_eq!(steps, [&json!([0]), &json!([1])], "{done}");
    assert_eq!(done["resume_steps"][1]["stepPath"], json!([1]), "{done}");

    // Resumed over MCP from a step path (seed 004): back at the gate.
    let again = client.ok(
        "start_flow",
        json!({"name": "review", "run_id": run, "resume_step_path": [1]}),
    );
    assert_eq!(again["conversationId"], run.as_str(), "{again}");
    let waiting = client.watch_until(&run, |v| v["pending"]["kind"] == "gate");
    assert_eq!(waiting["pending"]["prompt"], "Ship it?", "{waiting}");
    client.ok("answer_flow", json!({"run_id": run, "option": "Approve"}));
    client.watch_until(&run, |v| v["status"] == "completed");
    answer_a_manual_task(&mut client);

    let ledger = client.ok("read_ledger", json!({"limit": 50}));
    assert_nothing_raw(&client.received, &[PEOPLE, NEW_PEOPLE]);

    // Each answer is in the ledger, as the client received it.
    let (_, rows) = server.call("GET", "/api/ledger?limit=100", None);
    let rows = rows.as_array().expect("rows").clone();
    for role in [
        "mcp:get_masked_extract",
        "mcp:run_workflow",
        "mcp:start_flow",
        "mcp:answer_flow",
        "mcp:answer_prompt",
        "mcp:watch_flow",
        "mcp:read_ledger",
    ] {
        let row = rows
            .iter()
            .find(|r| r["role"] == role)
            .unwrap_or_else(|| panic!("{role} is in the ledger: {rows:?}"));
        assert_eq!(row["provider"], "mcp");
        assert_eq!(row["model"], CLIENT_NAME);
        assert_eq!(row["outcome"], "ok");
    }
    let extract_row = rows
        .iter()
        .find(|r| {
            r["role"] == "mcp:get_masked_extract"
                && r["request_body"]
                    .as_str()
                    .unwrap_or("")
                    .contains("\"approved\"")
        })
        .expect("the approved extract's row");
    let sent: Value =
        serde_json::from_str(extract_row["request_body"].as_str().expect("body")).expect("json");
    assert_eq!(sent, extract, "the ledger holds exactly what was sent");
    let roles: Vec<&str> = ledger["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["role"].as_str())
        .collect();
    assert!(roles.contains(&"mcp:answer_flow"), "{roles:?}");
    drop(client);
    server.interrupt();
}

/// A manual task answered with "request changes" and a JSON result: the
/// flow routes to the revision, whose prompt carries the person's notes.
fn answer_a_manual_task(client: &mut Client) {
    let started = client.ok("start_flow", json!({"name": "signoff"}));
    let run = started["conversationId"].as_str().expect("run").to_owned();
    let waiting = client.watch_until(&run, |v| v["pending"]["kind"] == "gate");
    let labels: Vec<&str> = waiting["pending"]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["label"].as_str())
        .collect();
    assert_eq!(
        labels,
        ["approve", "request changes", "reject"],
        "{waiting}"
    );
    // Wrong answers get clear errors, and the run still waits.
    let both = client.call(
        "answer_flow",
        json!({"run_id": run, "option": "approve", "decision": "reject"}),
    );
    assert_eq!(both["is_error"], true, "{both}");
    assert!(
        both["text"].as_str().expect("text").contains("not both"),
        "{both}"
    );
    let merge = client.call("answer_flow", json!({"run_id": run, "decision": "merge"}));
    assert_eq!(merge["is_error"], true, "{merge}");
    assert!(
        merge["text"].as_str().expect("text").contains("merge"),
        "{merge}"
    );
    let answer = json!({"run_id": run, "decision": "request changes",
                        "result": {"notes": "name the faster extracts"}});
    client.ok("answer_flow", answer);
    let revising = client.watch_until(&run, |v| {
        v["manual_prompts"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    });
    let prompt = &revising["manual_prompts"][0];
    assert!(
        prompt
            .to_string()
            .contains("Revise the draft: name the faster extracts"),
        "routed to the revision with the person's notes: {revising}"
    );
    assert!(
        !revising.to_string().contains("Announce the release."),
        "{revising}"
    );
    let prompt_id = prompt["prompt_id"].as_str().expect("prompt id").to_owned();
    client.ok(
        "answer_prompt",
        json!({"prompt_id": prompt_id, "text": "Extracts are faster."}),
    );
    client.watch_until(&run, |v| v["status"] == "completed");
}

#[test]
fn hostile_paths_get_a_clear_error_and_nothing_of_the_file() {
    let Some(uv) = skip_without_uv("hostile_paths_get_a_clear_error…") else {
        return;
    };
    let python = client_python(&uv);
    let tmp = tempfile::tempdir().expect("tmp");
    let data = tmp.path().join("data");
    let files = tmp.path().join("files");
    let outside = tmp.path().join("outside");
    for d in [&data, &files, &outside] {
        std::fs::create_dir_all(d).expect("dir");
    }
    let secret = outside.join("secret.csv");
    std::fs::write(&secret, PEOPLE).expect("secret");
    std::fs::write(data.join("stored.csv"), PEOPLE).expect("stored");
    std::os::unix::fs::symlink(&secret, files.join("link.csv")).expect("link");
    let in_files = files.display().to_string();
    let cases = [
        (secret.display().to_string(), "outside the folders"),
        (format!("{in_files}/link.csv"), "outside the folders"),
        (
            format!("{in_files}/../outside/secret.csv"),
            "outside the folders",
        ),
        (format!("{in_files}/missing.csv"), "no file or folder"),
        ("files/link.csv".to_owned(), "not an absolute path"),
        ("/etc/passwd".to_owned(), "outside the folders"),
    ];
    let mut client = Client::start(&python, tmp.path(), &data, &[&files]);
    for (path, why) in &cases {
        let out = client.call("get_masked_extract", json!({"path": path}));
        assert_eq!(out["is_error"], true, "{path}: {out}");
        assert!(
            out["text"].as_str().expect("text").contains(why),
            "{path}: {out}"
        );
    }
    let received = std::mem::take(&mut client.received);
    drop(client);
    // A root that holds the data folder still never opens it.
    let mut client = Client::start(&python, tmp.path(), &data, &[tmp.path()]);
    let stored = data.join("stored.csv").display().to_string();
    let out = client.call("get_masked_extract", json!({"path": stored}));
    assert_eq!(out["is_error"], true, "{out}");
    assert!(
        out["text"].as_str().expect("text").contains("data folder"),
        "{out}"
    );
    let out = client.call("run_workflow", json!({"workflow": "nope", "inputs": {}}));
    assert_eq!(out["is_error"], true, "{out}");
    assert!(
        out["text"].as_str().expect("text").contains("nope"),
        "{out}"
    );
    client.received.extend(received);
    assert_nothing_raw(&client.received, &[PEOPLE]);
}

/// POSTs `body` to `/api/mcp` with `auth` (an `Authorization` value, if
/// any): the status and what came before the reply was complete.
fn post_mcp(port: u16, auth: Option<&str>, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let auth = auth
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /api/mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write");
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    // A served reply may stay open as an event stream: read until the result.
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&raw).contains("serverInfo") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status");
    (status, text)
}

#[test]
fn the_http_transport_refuses_a_request_without_the_token() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut child = Command::new(BIN)
        .args(["mcp", "--http", "--port", "0", "--token", TOKEN])
        .env("MASKFLOW_HOME", tmp.path().join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start mcp --http");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut url = String::new();
    out.read_line(&mut url).expect("url");
    let port: u16 = url
        .trim()
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/api/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("a URL with a port: {url:?}"));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"}}})
    .to_string();
    let (status, body) = post_mcp(port, None, &init);
    assert_eq!(status, 401, "{body}");
    assert!(!body.contains("serverInfo"), "{body}");
    let (status, _) = post_mcp(port, Some("Bearer wrong-token-123"), &init);
    assert_eq!(status, 401);
    // A page of another site is refused even with the token, as by `serve`.
    let (status, body) = post_mcp(
        port,
        Some(&format!("Bearer {TOKEN}\r\nOrigin: http://evil.example")),
        &init,
    );
    assert_eq!(status, 403, "{body}");
    // With the token the same request is served.
    let (status, body) = post_mcp(port, Some(&format!("Bearer {TOKEN}")), &init);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"maskflow\""), "{body}");
    let _ = child.kill();
    let _ = child.wait();
}
