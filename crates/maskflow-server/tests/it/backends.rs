//! Issue 12: every shell resolves each call's back end from the stored
//! settings. A recording OpenAI-compatible server (wiremock on loopback)
//! stands behind flow runs configured the way a user configures them
//! (`PUT /api/settings`), through the API and through the `maskflow flows`
//! command line; every recorded request is checked against the raw values
//! of the user's file, and every call must be in the ledger.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::StatusCode;
use common::spawned::{Serve, http};
use common::{TOKEN, call};
use maskflow_core::service::PythonInput;
use maskflow_core::{Event, Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::Provider;
use maskflow_llm::Role;
use maskflow_llm::keys::KeyringCredentials;
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/flows/seed004"
);
/// Raw values of the user's file; none may reach the server.
const RAW: [&str; 3] = ["Zebulon", "Quagmire", "PROD-194211"];
const CSV: &str = "customer,sku,amount\nZebulon Quagmire,PROD-194211,12345\nOttoline Fairweather,PROD-550012,9876\n";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read fixture") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

/// Opens the service as `maskflow serve` does (settings mode), with keys
/// in a mock keyring so the test never touches the user's.
fn open(home: &Path) -> (Router, Service) {
    let service = Service::open(ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home)
    })
    .expect("service");
    (
        router(AppState::new(service.clone(), TOKEN.into(), 4242)),
        service,
    )
}

async fn upload(service: &Service) {
    let (id, path) = service.new_upload("sales.csv").expect("upload slot");
    std::fs::write(&path, CSV).expect("write");
    service
        .add_upload(&id, "sales.csv", path)
        .await
        .expect("extract");
}

/// An OpenAI-compatible chat server that answers a flow's break question
/// with `{"answer":"yes"}` and anything else with a short text, streaming
/// like a real one, and records every request body.
#[derive(Clone, Default)]
struct Recording {
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Recording {
    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().expect("lock").clone()
    }
}

impl Respond for Recording {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let text = if body.to_string().contains("Is the summary complete") {
            r#"{"answer":"yes"}"#
        } else {
            "A short summary of the notes."
        };
        self.bodies.lock().expect("lock").push(body);
        let mut out = format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]})
        );
        out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":9}}\n\ndata: [DONE]\n\n");
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(out)
    }
}

async fn recording_server() -> (MockServer, Recording) {
    let server = MockServer::start().await;
    let rec = Recording::default();
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(rec.clone())
        .mount(&server)
        .await;
    (server, rec)
}

/// The settings a user saves: two OpenAI-compatible providers on the
/// recording server, the flows default on `main`.
fn settings(base: &str, flows_model: &str) -> Value {
    json!({
        "providers": [
            {"id": "manual", "kind": "manual"},
            {"id": "main", "kind": "openai", "base_url": base, "model": "main-model"},
            {"id": "flowsrv", "kind": "openai", "base_url": base, "model": flows_model},
            {"id": "second", "kind": "openai", "base_url": base, "model": "second-model"}
        ],
        "roles": {"validator": "main", "clarifier": "main", "builder": "main", "flows": "flowsrv"}
    })
}

fn assert_no_raw(bodies: &[Value]) {
    for b in bodies {
        let text = b.to_string().to_lowercase();
        for raw in RAW {
            assert!(
                !text.contains(&raw.to_lowercase()),
                "{raw} reached the server: {b}"
            );
        }
    }
}

async fn settled(events: &mut tokio::sync::broadcast::Receiver<Event>, id: &str) -> RunStatus {
    let wait = async {
        loop {
            if let Ok(Event::FlowStatus {
                conversation_id,
                status,
                ..
            }) = events.recv().await
                && conversation_id == id
                && status != RunStatus::Running
            {
                return status;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(120), wait)
        .await
        .expect("the run settled")
}

async fn run_flow(app: &Router, service: &Service, name: &str) -> (RunStatus, Value) {
    let mut events = service.subscribe();
    let (s, started) = call(
        app,
        "POST",
        &format!("/api/flows/{name}/run"),
        Some(json!({})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let status = settled(&mut events, &id).await;
    let (_, run) = call(app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    (status, run)
}

#[test]
fn every_command_opens_a_fresh_data_folder_on_the_manual_back_end() {
    let home = tempfile::tempdir().expect("tmp");
    let service = maskflow_server::serve::open_service(home.path(), None).expect("open");
    for role in [
        Role::Validator,
        Role::Clarifier,
        Role::Builder,
        Role::Agent("coding_agent".into()),
    ] {
        let p = service.llm(&role, None, None, None).expect("provider");
        assert!(p.is_manual(), "{role:?} uses {}", p.name());
    }
    let def = maskflow_flows::agents::AgentDef::default();
    let p = service
        .agent_llm(
            "coding_agent",
            &def,
            "",
            &maskflow_flows::FlowCall::naming_only(),
        )
        .expect("agent");
    assert!(p.is_manual());
}

#[tokio::test]
async fn seed_004_runs_on_the_settings_back_ends_and_an_agent_uses_its_own_provider_and_model() {
    let (server, rec) = recording_server().await;
    let base = format!("{}/v1", server.uri());
    let home = tempfile::tempdir().expect("tmp");
    copy_dir(Path::new(FIXTURE), home.path());
    std::fs::write(
        home.path().join("agents/planning_agent.json"),
        r#"{"provider": "second", "model": "planner-model-x", "prompt": "You plan work in small steps."}"#,
    )
    .expect("write agent");
    let (app, service) = open(home.path());
    upload(&service).await;
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base, "flows-model")),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let (status, run) = run_flow(&app, &service, "seed_example").await;
    assert_eq!(status, RunStatus::Completed, "{run}");
    let bodies = rec.bodies();
    assert_eq!(bodies.len(), 3, "summary, plan, break question: {bodies:?}");
    for b in &bodies {
        let planner = b.to_string().contains("You plan work in small steps.");
        let want = if planner {
            "planner-model-x"
        } else {
            "flows-model"
        };
        assert_eq!(b["model"], want, "{b}");
    }
    assert_no_raw(&bodies);
    let (_, ledger) = call(&app, "GET", "/api/ledger?limit=50", None).await;
    let entries = ledger.as_array().expect("ledger");
    assert_eq!(entries.len(), 3, "{ledger}");
    assert!(
        entries.iter().all(
            |e| e["role"].as_str().is_some_and(|r| r.starts_with("agent:")) && e["outcome"] == "ok"
        ),
        "{ledger}"
    );

    // A changed back end is used by the next call, without a restart.
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base, "changed-model")),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (status, run) = run_flow(&app, &service, "seed_example").await;
    assert_eq!(status, RunStatus::Completed, "{run}");
    let bodies = rec.bodies();
    assert_eq!(bodies.len(), 6);
    assert_eq!(bodies[3]["model"], "changed-model", "{}", bodies[3]);

    // An agent naming a provider that does not exist: the error says which.
    std::fs::write(
        home.path().join("agents/coding_agent.json"),
        r#"{"provider": "nope", "prompt": "You write clear, short summaries."}"#,
    )
    .expect("write agent");
    let (status, run) = run_flow(&app, &service, "seed_example").await;
    assert_ne!(status, RunStatus::Completed, "{run}");
    let text = run.to_string();
    assert!(
        text.contains("coding_agent") && text.contains("nope") && text.contains("not configured"),
        "{run}"
    );
    assert_eq!(rec.bodies().len(), 6, "nothing was sent");
}

#[tokio::test]
async fn a_raw_value_in_a_flow_llm_prompt_is_blocked_by_the_guard_and_recorded() {
    let (server, rec) = recording_server().await;
    let base = format!("{}/v1", server.uri());
    let home = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    crate::common::agent_files(home.path(), &["a"]);
    std::fs::write(
        home.path().join("flows/ask.json"),
        json!({"steps": [
            {"type": "llm", "label": "Plain", "agentType": "a", "identifier": "x",
             "messages": [{"role": "user", "content": ["Please summarise the quarterly notes."]}]},
            {"type": "gate", "id": "g", "label": "Name", "prompt": "Who?",
             "options": [{"label": "Name", "requiresInput": true}]},
            {"type": "llm", "label": "Leaky", "agentType": "a", "identifier": "x",
             "messages": [{"role": "user", "content": ["Write to {{gate.input}}."]}]}
        ]})
        .to_string(),
    )
    .expect("write flow");
    let (app, service) = open(home.path());
    upload(&service).await;
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base, "flows-model")),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let (status, run) = run_flow(&app, &service, "ask").await;
    assert_eq!(status, RunStatus::Waiting, "ordinary words pass: {run}");
    assert_eq!(rec.bodies().len(), 1);
    let id = run["conversationId"].as_str().expect("id").to_owned();
    let mut events = service.subscribe();
    let (s, v) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Name", "input": "Zebulon Quagmire"})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let status = settled(&mut events, &id).await;
    assert_ne!(status, RunStatus::Completed);
    assert_eq!(rec.bodies().len(), 1, "the raw value was not sent");
    assert_no_raw(&rec.bodies());
    let (_, ledger) = call(&app, "GET", "/api/ledger?limit=50", None).await;
    let entries = ledger.as_array().expect("ledger");
    assert_eq!(entries.len(), 2, "{ledger}");
    let blocked: Vec<&Value> = entries.iter().filter(|e| e["blocked"] == true).collect();
    assert_eq!(blocked.len(), 1, "{ledger}");
    assert_eq!(blocked[0]["role"], "agent:a");
    assert!(!blocked[0].to_string().contains("Zebulon"), "{ledger}");
}

#[test]
fn a_changed_python_setting_is_used_by_the_next_run() {
    let home = tempfile::tempdir().expect("tmp");
    let service = maskflow_server::serve::open_service(home.path(), None).expect("open");
    let found = service.runner().python().expect("a python3 on PATH");
    let real = which(&found.program);
    // A wrapper of its own, so the runner's choice shows which setting it read.
    let link = home.path().join("my-python3");
    std::fs::write(
        &link,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()),
    )
    .expect("write wrapper");
    std::fs::set_permissions(&link, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    service
        .set_python(PythonInput {
            path: Some(link.display().to_string()),
        })
        .expect("set python");
    assert_eq!(service.runner().python().expect("python").program, link);
    service
        .set_python(PythonInput { path: None })
        .expect("unset python");
    assert_ne!(service.runner().python().expect("python").program, link);
}

fn which(program: &Path) -> std::path::PathBuf {
    if program.is_absolute() {
        return program.to_path_buf();
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
        .expect("python on PATH")
}

/// Runs the `maskflow` binary on `home` (blocking, off the runtime).
async fn cli(home: &Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    let home = home.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_maskflow"))
            .args(&args)
            .env("MASKFLOW_HOME", &home)
            .env_remove("MASKFLOW_REPLAY")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn maskflow");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        let out = child.wait_with_output().expect("wait");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .expect("join")
}

fn review_flow(home: &Path) {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir");
    crate::common::agent_files(home, &["writer"]);
    std::fs::write(
        home.join("flows/review.json"),
        json!({"steps": [
            {"type": "llm", "label": "Draft", "agentType": "writer", "identifier": "x",
             "messages": [{"role": "user", "content": ["Draft the weekly notes."]}]},
            {"type": "gate", "id": "g", "label": "Review", "prompt": "Approve?",
             "options": [{"label": "Approve"}, {"label": "Reject", "next": null}]},
            {"type": "llm", "label": "Polish", "agentType": "writer", "identifier": "x",
             "messages": [{"role": "user", "content": ["Polish the draft."]}]}
        ]})
        .to_string(),
    )
    .expect("write flow");
}

#[tokio::test]
async fn flows_run_on_the_command_line_uses_the_settings_and_flows_answer_passes_the_gate() {
    let (server, rec) = recording_server().await;
    let base = format!("{}/v1", server.uri());
    let home = tempfile::tempdir().expect("tmp");
    review_flow(home.path());
    {
        let (app, service) = open(home.path());
        upload(&service).await;
        let (s, v) = call(
            &app,
            "PUT",
            "/api/settings",
            Some(settings(&base, "cli-model")),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    let (ok, out, err) = cli(home.path(), &["flows", "run", "review"], "").await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("status waiting"), "{out}");
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();
    assert_eq!(rec.bodies().len(), 1);

    let (ok, out, err) = cli(home.path(), &["flows", "answer", &id, "Approve"], "").await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("status completed"), "{out}");
    let bodies = rec.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies.iter().all(|b| b["model"] == "cli-model"),
        "{bodies:?}"
    );
    assert_no_raw(&bodies);
    let (_, service) = open(home.path());
    let ledger = service.ledger(None, 50, 0).expect("ledger");
    assert_eq!(ledger.len(), 2);
    assert!(
        ledger
            .iter()
            .all(|e| e.role == "agent:writer" && e.outcome == maskflow_privacy::CallOutcome::Ok)
    );
}

#[tokio::test]
async fn flows_run_on_the_command_line_prints_a_manual_prompt_and_reads_the_pasted_answer() {
    let home = tempfile::tempdir().expect("tmp");
    review_flow(home.path());
    let answers = home.path().join("answers.txt");
    std::fs::write(&answers, "My pasted draft.\n.\n").expect("write answers");
    let (ok, out, err) = cli(
        home.path(),
        &[
            "flows",
            "run",
            "review",
            "--answers",
            &answers.display().to_string(),
        ],
        "",
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("prompt mp_"), "{out}");
    assert!(out.contains("Draft the weekly notes."), "{out}");
    assert!(out.contains("status waiting"), "{out}");
    assert!(
        out.contains("My pasted draft."),
        "the answer is the turn: {out}"
    );

    // From the terminal: the answer ends at a line holding only ".".
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();
    let (ok, out, err) = cli(
        home.path(),
        &["flows", "answer", &id, "Approve"],
        "Polished text.\n.\n",
    )
    .await;
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("Polish the draft."), "{out}");
    assert!(out.contains("status completed"), "{out}");
    let (_, service) = open(home.path());
    let ledger = service.ledger(None, 50, 0).expect("ledger");
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert!(ledger.iter().all(|e| e.provider == "manual"), "{ledger:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_004_runs_under_a_real_maskflow_serve_on_the_back_ends_set_over_http() {
    let (server, rec) = recording_server().await;
    let base = format!("{}/v1", server.uri());
    let home = tempfile::tempdir().expect("tmp");
    copy_dir(Path::new(FIXTURE), home.path());
    std::fs::write(
        home.path().join("agents/planning_agent.json"),
        r#"{"provider": "second", "model": "planner-model-x", "prompt": "You plan work in small steps."}"#,
    )
    .expect("write agent");
    let serve = Serve::start(home.path(), None, &[]);
    let port = serve.port;
    let boundary = "seedboundary";
    let form = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"sales.csv\"\r\nContent-Type: text/csv\r\n\r\n{CSV}\r\n--{boundary}--\r\n"
    );
    let uploaded = serve_json(
        port,
        "POST",
        "/api/extracts",
        &format!("multipart/form-data; boundary={boundary}"),
        form.as_bytes(),
    );
    assert!(uploaded[0]["file_id"].is_string(), "{uploaded}");
    let json = "application/json";
    let saved = serve_json(
        port,
        "PUT",
        "/api/settings",
        json,
        settings(&base, "flows-model").to_string().as_bytes(),
    );
    assert_eq!(saved["roles"]["flows"], "flowsrv", "{saved}");
    let started = serve_json(port, "POST", "/api/flows/seed_example/run", json, b"{}");
    let id = started["conversationId"]
        .as_str()
        .expect("a run id")
        .to_owned();
    let mut run = Value::Null;
    for _ in 0..1200 {
        run = serve_json(port, "GET", &format!("/api/flow-runs/{id}"), json, b"");
        if run["status"] != "running" && run["status"] != "started" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(run["status"], "completed", "{run}");
    let bodies = rec.bodies();
    assert_eq!(bodies.len(), 3, "summary, plan, break question: {bodies:?}");
    for b in &bodies {
        let planner = b.to_string().contains("You plan work in small steps.");
        let want = if planner {
            "planner-model-x"
        } else {
            "flows-model"
        };
        assert_eq!(b["model"], want, "{b}");
    }
    assert_no_raw(&bodies);
    let ledger = serve_json(port, "GET", "/api/ledger?limit=50", json, b"");
    let entries = ledger.as_array().expect("ledger");
    assert_eq!(entries.len(), bodies.len(), "{ledger}");
    assert!(entries.iter().all(|e| e["outcome"] == "ok"), "{ledger}");
}

/// A call to the spawned server whose reply is JSON (`null` if it is not).
fn serve_json(port: u16, method: &str, path: &str, content_type: &str, body: &[u8]) -> Value {
    let (_, out) = http(port, method, path, content_type, body);
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}
