//! Flow routes end to end: seed 004's example through the HTTP API with the
//! replay provider, its error cases, a gate answered through the API, stop
//! and resume, and `maskflow flows run` killed with SIGKILL at random points
//! then resumed, compared with an uninterrupted run.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::StatusCode;
use common::{TOKEN, call, settled};
use maskflow_core::{Event, Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::Roles;
use maskflow_llm::{
    BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, ReplayProvider,
};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/flows/seed004"
);

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

fn open(home: &Path, provider: Arc<dyn Provider>) -> (Router, Service) {
    let service =
        Service::open(ServiceConfig::from_settings(home).overriding(Roles::all(provider)))
            .expect("service");
    (
        router(AppState::new(service.clone(), TOKEN.into(), 4242)),
        service,
    )
}

#[tokio::test]
async fn seed_004_example_lists_runs_and_reports_its_metadata_through_the_api() {
    let home = tempfile::tempdir().expect("tempdir");
    copy_dir(Path::new(FIXTURE), home.path());
    std::fs::write(
        home.path().join("flows/broken.json"),
        r#"{"steps":[{"type":"startLoop","steps":[]}]}"#,
    )
    .expect("write");
    std::fs::write(home.path().join("flows/nocmd.json"), r#"{"steps":[{"type":"command","agentType":"planning_agent","identifier":"p","commandName":"missing"}]}"#).expect("write");
    std::fs::write(home.path().join("flows/badbreak.json"), r#"{"steps":[{"type":"startLoop","steps":[{"type":"break","agentType":"coding_agent","identifier":"s","question":"done?","breakOn":"yes"}]}]}"#).expect("write");
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({
            "agent:coding_agent": ["Summary one.", {"answer": "no"}, "Summary two.", {"answer": "yes"}, "not json at all"],
            "agent:planning_agent": ["Plan one.", "Plan two."]
        }))
        .expect("replay"),
    );
    let (app, service) = open(home.path(), provider);
    let (status, list) = call(&app, "GET", "/api/flows", None).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = list["flows"]
        .as_array()
        .expect("flows")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(names, ["badbreak", "broken", "nocmd", "seed_example"]);
    assert_eq!(list["flows"][1]["disabled"], true);
    assert!(
        list["flows"][1]["error"]
            .as_str()
            .expect("error")
            .contains("steps[0].steps")
    );
    assert_eq!(
        list["flows"][3],
        json!({"name": "seed_example", "description": "Summarize, refine, and iterate until done.", "disabled": false})
    );
    let (status, def) = call(&app, "GET", "/api/flows/seed_example", None).await;
    assert_eq!(
        (status, def["steps"][0]["type"].as_str()),
        (StatusCode::OK, Some("startLoop"))
    );

    // Errors of seed 004's list.
    let (status, body) = call(&app, "POST", "/api/flows/nope/run", Some(json!({}))).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, body) = call(&app, "POST", "/api/flows/broken/run", Some(json!({}))).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    // Seed 004: an unknown command starts a run that ends failed, naming it.
    let mut nocmd_events = service.subscribe();
    let (status, body) = call(&app, "POST", "/api/flows/nocmd/run", Some(json!({}))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let nocmd = body["conversationId"].as_str().expect("id").to_owned();
    assert_eq!(settled(&mut nocmd_events, &nocmd).await, RunStatus::Failed);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{nocmd}"), None).await;
    assert!(
        run["error"]
            .as_str()
            .expect("error")
            .contains("unknown command \"missing\""),
        "{run}"
    );
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"colour": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let mut events = service.subscribe();
    let (status, started) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"working_folder": home.path()})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    assert_eq!(started["status"], "started");
    assert_eq!(started["flowName"], "seed_example");
    assert!(
        started["inflightId"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(started["modelId"], "replay");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let mut streamed = 0;
    loop {
        match events.recv().await.expect("event") {
            Event::FlowTurn {
                conversation_id, ..
            } if conversation_id == id => streamed += 1,
            Event::FlowStatus {
                conversation_id,
                status,
                ..
            } if conversation_id == id && status != RunStatus::Running => {
                assert_eq!(status, RunStatus::Completed);
                break;
            }
            _ => {}
        }
    }
    // Seed 004: six prompts (user turns) and six replies.
    assert_eq!(streamed, 12);
    let (status, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(run["status"], "completed");
    assert_eq!(run["title"], "Flow: seed_example");
    assert_eq!(run["flags"]["flow"]["stepPath"], json!([0, 2]));
    assert!(run["flags"]["flow"]["agentConversations"]["coding_agent:summary"].is_string());
    let turns = run["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 12);
    let roles: Vec<&str> = turns.iter().filter_map(|t| t["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant"].repeat(6));
    assert_eq!(turns[4]["command"], turns[5]["command"]);
    let c = &turns[5]["command"];
    assert_eq!(
        (
            &c["name"],
            &c["stepIndex"],
            &c["totalSteps"],
            &c["loopDepth"],
            &c["agentType"],
            &c["identifier"],
            &c["label"]
        ),
        (
            &json!("flow"),
            &json!(2),
            &json!(3),
            &json!(1),
            &json!("coding_agent"),
            &json!("summary"),
            &json!("Check for completion")
        )
    );
    assert!(turns[0]["createdAt"].is_string());
    let (_, runs) = call(&app, "GET", "/api/flows/seed_example/runs", None).await;
    assert_eq!(runs["runs"][0]["conversationId"], id.as_str());

    // Resume checks: bad path, completed without path, the wrong flow, archived.
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"conversationId": id, "resumeStepPath": [0, 9]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"conversationId": id, "resumeStepPath": [-1]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"conversationId": id})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"conversationId": "flow_nope"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, patched) = call(
        &app,
        "PATCH",
        &format!("/api/flow-runs/{id}"),
        Some(json!({"title": "Mine", "archived": true})),
    )
    .await;
    assert_eq!(
        (status, patched["title"].as_str()),
        (StatusCode::OK, Some("Mine"))
    );
    let (status, body) = call(
        &app,
        "POST",
        "/api/flows/seed_example/run",
        Some(json!({"conversationId": id, "resumeStepPath": [0, 0]})),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::GONE, Some("archived"))
    );

    // A break reply that is not {"answer": "yes"|"no"} fails the run clearly.
    let (_, started) = call(&app, "POST", "/api/flows/badbreak/run", Some(json!({}))).await;
    let bad = started["conversationId"].as_str().expect("id").to_owned();
    assert_eq!(settled(&mut events, &bad).await, RunStatus::Failed);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{bad}"), None).await;
    assert!(
        run["error"].as_str().expect("error").contains("not JSON"),
        "{run}"
    );

    let (status, preview) = call(&app, "DELETE", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{preview}");
    let token = preview["confirm_token"].as_str().expect("token");
    let (status, _) = call(
        &app,
        "DELETE",
        &format!("/api/flow-runs/{id}?confirm={token}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Hangs on its first call (until stopped), then answers `{"answer": "yes"}`.
#[derive(Debug, Default)]
struct HangOnce(AtomicUsize, tokio::sync::Notify);

impl Provider for HangOnce {
    fn name(&self) -> &str {
        "hang-once"
    }
    fn complete<'a>(
        &'a self,
        _r: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
                self.1.notify_one();
                std::future::pending::<()>().await;
            }
            Ok(LlmReply {
                text: r#"{"answer": "yes"}"#.into(),
            })
        })
    }
}

#[tokio::test]
async fn a_gate_is_answered_and_a_run_is_stopped_and_resumed_through_the_api() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    crate::common::agent_files(home.path(), &["a"]);
    let llm = json!({"type": "llm", "label": "Work", "agentType": "a", "identifier": "x", "messages": [{"role": "user", "content": ["go"]}]});
    std::fs::write(
        home.path().join("flows/review.json"),
        json!({"steps": [
            llm,
            {"type": "gate", "id": "g", "label": "Review", "prompt": "Approve {{output.answer}}?", "context": ["output.answer"],
             "options": [{"label": "Approve"}, {"label": "Revise", "requiresInput": true, "next": "g"}, {"label": "Reject", "next": null}]}
        ]})
        .to_string(),
    )
    .expect("write");
    let hang = Arc::new(HangOnce::default());
    let (app, service) = open(home.path(), hang.clone());
    let mut events = service.subscribe();
    let (status, started) = call(&app, "POST", "/api/flows/review/run", Some(json!({}))).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let id = started["conversationId"].as_str().expect("id").to_owned();
    let (status, body) = call(
        &app,
        "POST",
        "/api/flows/review/run",
        Some(json!({"conversationId": id})),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str(), body["code"].as_str()),
        (
            StatusCode::CONFLICT,
            Some("conflict"),
            Some("RUN_IN_PROGRESS")
        )
    );
    hang.1.notified().await; // the step is in flight
    let (status, stopped) = call(&app, "POST", &format!("/api/flow-runs/{id}/stop"), None).await;
    assert_eq!(
        (status, stopped["status"].as_str()),
        (StatusCode::OK, Some("stopped"))
    );
    assert_eq!(settled(&mut events, &id).await, RunStatus::Stopped);
    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Approve"})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/review/run",
        Some(json!({"conversationId": id})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Waiting);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(run["pending"]["kind"], "gate");
    assert_eq!(run["pending"]["prompt"], "Approve yes?");
    assert_eq!(run["pending"]["context"], json!({"output.answer": "yes"}));
    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Maybe"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Revise"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Revise", "input": "shorter"})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Waiting);
    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "Approve"})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Completed);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let contents: Vec<&str> = run["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter_map(|t| t["content"].as_str())
        .collect();
    assert_eq!(
        contents,
        [
            "go",
            r#"{"answer": "yes"}"#,
            "Approve yes?",
            "Revise: shorter",
            "Approve {{output.answer}}?",
            "Approve"
        ]
    );
}

fn long_flow(home: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir");
    crate::common::agent_files(home, &["worker", "checker", "stopper"]);
    let flow = json!({"description": "60 steps", "steps": [{"type": "startLoop", "label": "work", "maxIterations": 50, "steps": [
        {"type": "llm", "label": "Do", "agentType": "worker", "identifier": "w", "messages": [{"role": "user", "content": ["Step {{loop.iteration}}"]}]},
        {"type": "llm", "label": "Check", "agentType": "checker", "identifier": "c", "messages": [{"role": "user", "content": ["Check {{output.text}}"]}]},
        {"type": "decision", "label": "Enough?", "branches": [{"condition": "loop.iteration >= 20", "steps": [
            {"type": "break", "label": "Stop", "agentType": "stopper", "identifier": "s", "question": "Stop now?", "breakOn": "yes"}
        ]}], "default": {}}
    ]}]});
    std::fs::write(home.join("flows/long.json"), flow.to_string()).expect("write");
    let replay = home.join("replay.json");
    std::fs::write(
        &replay,
        json!({"agent:worker": vec!["done"; 100], "agent:checker": vec![json!({"ok": true}); 100], "agent:stopper": vec![json!({"answer": "yes"}); 5]}).to_string(),
    )
    .expect("write");
    replay
}

fn cli(home: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_maskflow"))
        .args(args)
        .env("MASKFLOW_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn maskflow")
}

fn transcript(home: &Path, id: &str) -> (RunStatus, Vec<Value>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _guard = rt.enter();
    let service = Service::open(ServiceConfig::from_settings(home)).expect("open");
    let run = service.flows().get_run(id).expect("run");
    let turns = run
        .turns
        .into_iter()
        .map(|t| json!([t.role, t.content, t.command]))
        .collect();
    (run.status, turns)
}

/// A small deterministic generator seeded from the OS.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn a_run_killed_20_times_resumes_to_the_same_transcript() {
    use std::hash::{BuildHasher, Hasher};
    let seed = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
        | 1;
    eprintln!("kill test seed {seed}");
    let mut rng = Rng(seed);

    // The reference: one uninterrupted run.
    let reference_home = tempfile::tempdir().expect("tempdir");
    let replay = long_flow(reference_home.path());
    let replay_arg = replay.display().to_string();
    let out = cli(
        reference_home.path(),
        &["flows", "run", "long", "--replay", &replay_arg],
    )
    .wait_with_output()
    .expect("run");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && text.contains("status completed"),
        "{text}"
    );
    let ref_id = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("run "))
        .expect("run id")
        .to_owned();
    let (status, reference) = transcript(reference_home.path(), &ref_id);
    assert_eq!(status, RunStatus::Completed);
    // 41 agent steps, each a prompt (seed 004's user turn) and a reply, and 20 decisions.
    assert_eq!(reference.len(), 102);

    // The same flow, killed with SIGKILL 20 times at random points.
    let home = tempfile::tempdir().expect("tempdir");
    let replay = long_flow(home.path());
    let replay_arg = replay.display().to_string();
    let mut id: Option<String> = None;
    let mut kills = 0;
    let mut completed = false;
    while kills < 20 && !completed {
        let mut child = match &id {
            None => cli(
                home.path(),
                &["flows", "run", "long", "--replay", &replay_arg],
            ),
            Some(i) => cli(
                home.path(),
                &["flows", "resume", i, "--replay", &replay_arg],
            ),
        };
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let wanted = rng.next(4);
        let mut seen = 0;
        while let Some(Ok(line)) = lines.next() {
            if let Some(i) = line.strip_prefix("run ") {
                id.get_or_insert_with(|| i.to_owned());
            }
            if line.starts_with("status completed") {
                completed = true;
            }
            if line.starts_with("turn ") {
                seen += 1;
            }
            if id.is_some() && seen >= wanted {
                break;
            }
        }
        // Land between or inside steps.
        for _ in 0..rng.next(2000) {
            std::hint::spin_loop();
        }
        let _ = child.kill();
        let _ = child.wait();
        kills += 1;
    }
    let id = id.expect("the run started");
    if !completed {
        let out = cli(
            home.path(),
            &["flows", "resume", &id, "--replay", &replay_arg],
        )
        .wait_with_output()
        .expect("resume");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (status, _) = transcript(home.path(), &id);
        assert_eq!(status, RunStatus::Completed, "seed {seed}: {text}");
    }
    let (status, resumed) = transcript(home.path(), &id);
    assert_eq!(status, RunStatus::Completed, "seed {seed}");
    assert_eq!(
        resumed, reference,
        "seed {seed}: the transcript differs after {kills} kills"
    );
}
