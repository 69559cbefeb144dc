//! Restart-safe waiting (issue 19, point 3) with real processes on one data
//! folder: a build or a flow step waiting on a manual prompt, and a flow run
//! waiting at a human gate, survive the `maskflow serve` that waited being
//! stopped (Ctrl-C) or killed (SIGKILL). The next `serve` lists the prompt
//! again, says what happened, takes the answer, and the work goes on; a
//! prompt whose work was deleted is listed with the reason and can only be
//! dismissed.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::spawned::{Serve as Server, http, upload};

/// What these tests ask of a spawned server.
trait Waiting {
    fn prompt(&self, role: &str) -> Value;
    fn answer(&self, id: &str, text: &str) -> (u16, Value);
}

impl Waiting for Server {
    /// The one manual prompt of `role`, once it is listed.
    fn prompt(&self, role: &str) -> Value {
        let list = self.wait_for("/api/manual", &format!("a {role} prompt"), |v| {
            v.as_array()
                .is_some_and(|l| l.iter().any(|p| p["role"] == role))
        });
        list.as_array()
            .and_then(|l| l.iter().find(|p| p["role"] == role))
            .cloned()
            .expect("prompt")
    }

    fn answer(&self, id: &str, text: &str) -> (u16, Value) {
        self.call(
            "POST",
            &format!("/api/manual/{id}/answer"),
            Some(json!({ "text": text })),
        )
    }
}

fn upload_csv(port: u16, name: &str, text: &str) -> String {
    upload(port, &[(name, "text/csv", text.as_bytes())]).remove(0)
}

const SCRIPT: &str = "import json, sys\nprint(json.load(open(sys.argv[1])))\n";

/// A new workflow on one uploaded CSV: `(workflow id, version id)`.
fn new_workflow(server: &Server) -> (String, String) {
    let file = upload_csv(server.port, "orders.csv", "order,qty\nA-1,2\nA-2,1\n");
    let (status, created) = server.call(
        "POST",
        "/api/workflows",
        Some(json!({ "file_ids": [file] })),
    );
    assert_eq!(status, 201, "{created}");
    (
        created["workflow_id"].as_str().expect("wf").to_owned(),
        created["version_id"].as_str().expect("vid").to_owned(),
    )
}

/// Sends a message in the background (it waits for pasted answers).
fn send_message(server: &Server, wf: &str) -> std::thread::JoinHandle<(u16, String)> {
    let port = server.port;
    let path = format!("/api/workflows/{wf}/messages");
    std::thread::spawn(move || {
        let body = json!({"content": "count the orders"}).to_string();
        let (status, out) = http(port, "POST", &path, "application/json", body.as_bytes());
        (status, String::from_utf8_lossy(&out).into_owned())
    })
}

/// Answers the validator and the clarifier: the build starts.
fn converse_to_build(server: &Server, wf: &str) {
    let message = send_message(server, wf);
    let validator = server.prompt("validator");
    assert_eq!(validator["interrupted"], Value::Null, "{validator}");
    let id = validator["id"].as_str().expect("id");
    assert_eq!(server.answer(id, r#"{"feasible": true}"#).0, 204);
    let clarifier = server.prompt("clarifier");
    let id = clarifier["id"].as_str().expect("id");
    assert_eq!(
        server.answer(id, r#"{"needs_clarification": false}"#).0,
        204
    );
    let (status, reply) = message.join().expect("message");
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains("building"), "{reply}");
}

#[test]
fn a_build_waiting_on_the_builders_prompt_continues_after_a_restart() {
    let home = tempfile::tempdir().expect("home");
    let server = Server::start(home.path(), None, &[]);
    let (wf, vid) = new_workflow(&server);
    converse_to_build(&server, &wf);

    // The build's builder call waits on a prompt that names the build.
    let builder = server.prompt("builder");
    assert_eq!(builder["waiter"]["kind"], "build", "{builder}");
    assert_eq!(builder["waiter"]["version_id"], vid.as_str());
    let prompt_id = builder["id"].as_str().expect("id").to_owned();
    let messages = builder["messages"].clone();
    server.interrupt();

    // The next process: the build still waits, and the prompt is listed again.
    let server = Server::start(home.path(), None, &[]);
    let view = server.call("GET", &format!("/api/workflows/{wf}"), None).1;
    assert_eq!(view["current_version"]["status"], "building", "{view}");
    let restored = server.prompt("builder");
    assert_eq!(restored["id"], prompt_id.as_str());
    assert_eq!(restored["messages"], messages, "the same prompt to copy");
    assert_eq!(restored["interrupted"]["resumes"], true, "{restored}");
    let reason = restored["interrupted"]["reason"].as_str().expect("reason");
    assert!(reason.contains("Maskflow stopped"), "{reason}");
    assert!(reason.contains("build continues"), "{reason}");

    let spec = json!({
        "name": "Order count",
        "description": "Counts the orders",
        "script": SCRIPT,
        "fields": [{"name": "orders", "label": "Orders", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "count.txt", "description": "the count"}]}
    });
    assert_eq!(server.answer(&prompt_id, "  ").0, 400, "an empty answer");
    let (status, body) = server.answer(&prompt_id, &spec.to_string());
    assert_eq!(status, 204, "{body}");

    // The build took the answer and moved on without asking the user to
    // approve what they just pasted (#28): its reply is written, and the
    // build never stops at a gate on it.
    let view = server.wait_for(
        &format!("/api/workflows/{wf}"),
        "the end of the build",
        |v| {
            v["current_version"]["build"]["pending_gate"] == true
                || v["current_version"]["status"] != "building"
        },
    );
    let build = &view["current_version"]["build"];
    assert_ne!(
        build["pending_gate"], true,
        "no gate on a pasted reply: {view}"
    );
    assert_ne!(
        build["phase"], "generate",
        "the build moved past its reply: {view}"
    );
    let response = home
        .path()
        .join(format!("sessions/{vid}/iteration-1/generation-response.md"));
    let text = std::fs::read_to_string(&response).expect("the reply was written");
    assert!(text.contains("Order count"), "{text}");
    let (_, list) = server.call("GET", "/api/manual", None);
    assert_eq!(list, json!([]), "the answered prompt is gone");
    let (status, _) = server.answer(&prompt_id, "again");
    assert_eq!(status, 404);
    // The ledger shows the answered call as sent by the manual back end.
    let (_, ledger) = server.call("GET", "/api/ledger", None);
    let builder_calls: Vec<&Value> = ledger
        .as_array()
        .map(|l| l.iter().filter(|e| e["role"] == "builder").collect())
        .unwrap_or_default();
    assert!(
        builder_calls.iter().any(|e| e["outcome"] == "ok"
            && e["reply"]
                .as_str()
                .is_some_and(|r| r.contains("Order count"))),
        "{ledger}"
    );
}

#[test]
fn after_a_kill_a_cut_off_message_says_to_send_it_again_and_dismissing_a_builds_prompt_stops_it() {
    let home = tempfile::tempdir().expect("home");
    let server = Server::start(home.path(), None, &[]);
    let (wf, vid) = new_workflow(&server);
    let message = send_message(&server, &wf);
    let validator = server.prompt("validator");
    server.kill();
    let _ = message.join();

    // The message was cut off: its prompt is listed with what to do — an
    // answer lets the message go on (manual_restart_phases); here it is
    // dismissed, and the message is sent again.
    let server = Server::start(home.path(), None, &[]);
    let orphan = server.prompt("validator");
    assert_eq!(orphan["id"], validator["id"]);
    assert_eq!(orphan["interrupted"]["resumes"], true, "{orphan}");
    let why = orphan["interrupted"]["reason"].as_str().expect("reason");
    assert!(why.contains("send your message again"), "{why}");
    let id = orphan["id"].as_str().expect("id");
    assert_eq!(
        server.call("DELETE", &format!("/api/manual/{id}"), None).0,
        204
    );
    assert_eq!(server.call("GET", "/api/manual", None).1, json!([]));
    let (status, body) = server.answer(id, r#"{"feasible": true}"#);
    assert_eq!(status, 404, "dismissed: {body}");

    // The message again, then the build waits on the builder; killed there.
    converse_to_build(&server, &wf);
    let builder = server.prompt("builder");
    server.kill();
    let server = Server::start(home.path(), None, &[]);
    let restored = server.prompt("builder");
    assert_eq!(restored["id"], builder["id"]);
    assert_eq!(restored["interrupted"]["resumes"], true, "{restored}");
    let id = restored["id"].as_str().expect("id");
    assert_eq!(
        server.call("DELETE", &format!("/api/manual/{id}"), None).0,
        204
    );
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build to stop", |v| {
        v["current_version"]["status"] == "failed"
    });
    let version = &view["current_version"];
    assert_eq!(version["id"], vid.as_str());
    let reason = version["failure_reason"].to_string();
    assert!(reason.contains("dismissed the builder's prompt"), "{view}");
    assert_eq!(server.call("GET", "/api/manual", None).1, json!([]));
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

fn start_run(server: &Server) -> String {
    let (status, started) = server.call("POST", "/api/flows/review/run", Some(json!({})));
    assert_eq!(status, 202, "{started}");
    started
        .get("conversationId")
        .or_else(|| started.get("conversation_id"))
        .and_then(Value::as_str)
        .expect("run id")
        .to_owned()
}

/// The prompt waiting for run `run`.
fn prompt_of(server: &Server, run: &str) -> Value {
    let list = server.wait_for("/api/manual", &format!("run {run}'s prompt"), |v| {
        v.as_array()
            .is_some_and(|l| l.iter().any(|p| p["waiter"]["run_id"] == run))
    });
    list.as_array()
        .and_then(|l| l.iter().find(|p| p["waiter"]["run_id"] == run))
        .cloned()
        .expect("prompt")
}

fn run_path(run: &str) -> String {
    format!("/api/flow-runs/{run}")
}

#[test]
fn a_flow_step_and_a_gate_wait_across_killed_processes() {
    let home = tempfile::tempdir().expect("home");
    review_flow(home.path());
    let server = Server::start(home.path(), None, &[]);
    let run = start_run(&server);
    let gone = start_run(&server);
    let again = start_run(&server);
    let draft = prompt_of(&server, &run);
    assert_eq!(draft["role"], "agent:writer", "{draft}");
    assert_eq!(draft["waiter"]["kind"], "flow_run", "{draft}");
    assert!(draft.to_string().contains("Draft the weekly notes."));
    let other = prompt_of(&server, &gone);
    let first_ask = prompt_of(&server, &again);
    server.kill();

    // A new process: both prompts are listed again, resumable.
    let server = Server::start(home.path(), None, &[]);
    let restored = prompt_of(&server, &run);
    assert_eq!(restored["id"], draft["id"]);
    assert_eq!(restored["interrupted"]["resumes"], true, "{restored}");
    let reason = restored["interrupted"]["reason"].as_str().expect("reason");
    assert!(reason.contains("run resumes"), "{reason}");
    assert!(reason.contains("review"), "names the flow: {reason}");

    // The other run is deleted: its prompt stays, saying why, and can only
    // be dismissed.
    let (status, preview) = server.call("DELETE", &run_path(&gone), None);
    assert_eq!(status, 409, "{preview}");
    let token = preview["confirm_token"].as_str().expect("token");
    let (status, _) = server.call(
        "DELETE",
        &format!("{}?confirm={token}", run_path(&gone)),
        None,
    );
    assert_eq!(status, 200);
    let orphan = prompt_of(&server, &gone);
    assert_eq!(orphan["id"], other["id"]);
    assert_eq!(orphan["interrupted"]["resumes"], false, "{orphan}");
    let why = orphan["interrupted"]["reason"].as_str().expect("reason");
    assert!(
        why.contains("was deleted") && why.contains("dismiss"),
        "{why}"
    );
    let orphan_id = orphan["id"].as_str().expect("id");
    let (status, body) = server.answer(orphan_id, "too late");
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("was deleted"), "{body}");
    let (status, _) = server.call("DELETE", &format!("/api/manual/{orphan_id}"), None);
    assert_eq!(status, 204);

    // A run resumed the usual way asks again: the new prompt replaces the
    // one the killed process left.
    assert_eq!(prompt_of(&server, &again)["interrupted"]["resumes"], true);
    let (status, body) = server.call(
        "POST",
        "/api/flows/review/run",
        Some(json!({"conversationId": again})),
    );
    assert_eq!(status, 202, "{body}");
    let asked = server.wait_for("/api/manual", "the run's new prompt", |v| {
        v.as_array().is_some_and(|l| {
            l.iter()
                .any(|p| p["waiter"]["run_id"] == again.as_str() && p["id"] != first_ask["id"])
        })
    });
    let of_again: Vec<&Value> = asked
        .as_array()
        .map(|l| {
            l.iter()
                .filter(|p| p["waiter"]["run_id"] == again.as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(of_again.len(), 1, "replaced, not doubled: {asked}");
    assert_eq!(of_again[0]["interrupted"], Value::Null);
    let (status, _) = server.call("POST", &format!("{}/stop", run_path(&again)), None);
    assert_eq!(status, 200);

    // The answer resumes the run at the step that asked; it goes on to the gate.
    let id = restored["id"].as_str().expect("id");
    let (status, body) = server.answer(id, "My pasted draft.");
    assert_eq!(status, 204, "{body}");
    let view = server.wait_for(&run_path(&run), "the gate", |v| v["status"] == "waiting");
    assert!(view.to_string().contains("My pasted draft."), "{view}");
    assert_eq!(server.call("GET", "/api/manual", None).1, json!([]));
    server.kill();

    // Killed at the gate: the next process shows the gate and takes the answer.
    let server = Server::start(home.path(), None, &[]);
    let view = server.call("GET", &run_path(&run), None).1;
    assert_eq!(view["status"], "waiting", "{view}");
    assert!(view["pending"].to_string().contains("Approve"), "{view}");
    let (status, body) = server.call(
        "POST",
        &format!("{}/gate", run_path(&run)),
        Some(json!({"option": "Approve"})),
    );
    assert_eq!(status, 202, "{body}");
    let polish = prompt_of(&server, &run);
    assert!(polish.to_string().contains("Polish the draft."), "{polish}");
    assert_eq!(polish["interrupted"], Value::Null, "asked by this process");
    let (status, _) = server.answer(polish["id"].as_str().expect("id"), "Polished text.");
    assert_eq!(status, 204);
    let view = server.wait_for(&run_path(&run), "completion", |v| {
        v["status"] == "completed"
    });
    assert!(view.to_string().contains("Polished text."), "{view}");
}

/// A fan-out over three items, two asked at a time, then its join.
fn fan_flow(home: &Path) {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir");
    crate::common::agent_files(home, &["rev"]);
    std::fs::write(
        home.join("flows/fan.json"),
        json!({"input": {"files": ["item-a", "item-b", "item-c"]}, "steps": [
            {"type": "foreach", "label": "Review", "itemsPath": "input.files",
             "itemVariable": "file", "concurrency": 2,
             "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                      "messages": [{"role": "user", "content": ["Review {{file}} now."]}]}},
            {"type": "join", "id": "all", "label": "Gather"}
        ]})
        .to_string(),
    )
    .expect("write flow");
}

/// The prompts waiting for run `run`, once `done` holds of them.
fn prompts_of(server: &Server, run: &str, done: impl Fn(&[&Value]) -> bool) -> Vec<Value> {
    let of = |v: &Value| -> Vec<Value> {
        v.as_array()
            .map(|l| {
                l.iter()
                    .filter(|p| p["waiter"]["run_id"] == run)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    let list = server.wait_for("/api/manual", &format!("run {run}'s prompts"), |v| {
        done(&of(v).iter().collect::<Vec<_>>())
    });
    of(&list)
}

/// The prompt of `item` among `prompts`.
fn for_item<'a>(prompts: &'a [Value], item: &str) -> &'a Value {
    let asks = format!("Review {item} now.");
    prompts
        .iter()
        .find(|p| p["messages"].to_string().contains(&asks))
        .unwrap_or_else(|| panic!("no prompt for {item}: {prompts:?}"))
}

#[test]
fn the_items_of_a_fan_out_wait_across_a_restart_and_their_answers_complete_the_run() {
    let home = tempfile::tempdir().expect("home");
    fan_flow(home.path());
    let server = Server::start(home.path(), None, &[]);
    let (status, started) = server.call("POST", "/api/flows/fan/run", Some(json!({})));
    assert_eq!(status, 202, "{started}");
    let run = started["conversationId"]
        .as_str()
        .expect("run id")
        .to_owned();

    // Two items ask at once; each prompt names the run that waits on it.
    let asked = prompts_of(&server, &run, |l| l.len() == 2);
    for p in &asked {
        assert_eq!(p["role"], "agent:rev", "{p}");
        assert_eq!(p["waiter"]["kind"], "flow_run", "{p}");
    }
    let (a, b) = (for_item(&asked, "item-a"), for_item(&asked, "item-b"));
    server.interrupt();

    // The next process lists both again, resumable.
    let server = Server::start(home.path(), None, &[]);
    let restored = prompts_of(&server, &run, |l| l.len() == 2);
    for (before, item) in [(a, "item-a"), (b, "item-b")] {
        let p = for_item(&restored, item);
        assert_eq!(p["id"], before["id"], "{item}");
        assert_eq!(p["interrupted"]["resumes"], true, "{p}");
        let why = p["interrupted"]["reason"].as_str().expect("reason");
        assert!(why.contains("run resumes"), "{why}");
    }

    // Answering one resumes the run: that item takes the answer, the other
    // asks again (replacing its old prompt) and the third item asks.
    let id = a["id"].as_str().expect("id");
    let (status, body) = server.answer(id, r#"{"ok": true, "item": "item-a"}"#);
    assert_eq!(status, 204, "{body}");
    let live = prompts_of(&server, &run, |l| {
        l.len() == 2 && l.iter().all(|p| p["interrupted"].is_null())
    });
    assert_ne!(for_item(&live, "item-b")["id"], b["id"], "asked afresh");
    for item in ["item-b", "item-c"] {
        let p = for_item(&live, item);
        assert_eq!(p["waiter"]["kind"], "flow_run", "{p}");
        let answer = format!(r#"{{"ok": true, "item": "{item}"}}"#);
        let (status, body) = server.answer(p["id"].as_str().expect("id"), &answer);
        assert_eq!(status, 204, "{body}");
    }
    let view = server.wait_for(&run_path(&run), "completion", |v| v["status"] != "running");
    assert_eq!(view["status"], "completed", "{view}");
    // Seed 004: each item's prompt is a user turn of the run, with its index.
    let turns = view["turns"].as_array().expect("turns");
    for (i, item) in ["item-a", "item-b", "item-c"].iter().enumerate() {
        let asked: Vec<&Value> = turns
            .iter()
            .filter(|t| t["role"] == "user" && t["content"] == format!("Review {item} now."))
            .collect();
        assert_eq!(asked.len(), 1, "{item}: {view}");
        assert_eq!(asked[0]["command"]["itemIndex"], i, "{view}");
    }
    let text = view.to_string();
    for item in ["item-a", "item-b", "item-c"] {
        assert!(
            text.contains(&format!("\\\"item\\\": \\\"{item}\\\"")),
            "{item}: {view}"
        );
    }
    assert_eq!(server.call("GET", "/api/manual", None).1, json!([]));
}
