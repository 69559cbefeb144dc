//! The clients' answers through the guard and the ledger: a value of the
//! user's files in an answer blocks it (the client gets the value masked,
//! the ledger a blocked row), and an answer that passes is recorded exactly.

use std::sync::Arc;

use maskflow_llm::ReplayProvider;
use serde_json::json;

use super::clients::{Answer, ClientContext};
use super::tests::service_with;

const PEOPLE: &str = "name,city\nZebulon Quagmire,Ouagadougou\nOttoline Fairweather,Tegucigalpa\n";

fn setup() -> (tempfile::TempDir, super::Service, ClientContext) {
    let dir = tempfile::tempdir().expect("tmp");
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    std::fs::write(files.join("people.csv"), PEOPLE).expect("csv");
    let replay = ReplayProvider::from_value(&json!({})).expect("replay");
    let service = service_with(&dir.path().join("data"), Arc::new(replay));
    let ctx = ClientContext {
        name: "test-client".into(),
        transport: "stdio".into(),
        roots: vec![std::fs::canonicalize(&files).expect("canonical")],
    };
    (dir, service, ctx)
}

#[tokio::test]
async fn an_answer_holding_a_raw_value_is_blocked_and_ledgered_without_it() {
    let (dir, service, ctx) = setup();
    let path = dir.path().join("files/people.csv");
    // Asking for the extract records the file: its values are guarded from now on.
    let asked = service
        .client_extract(&ctx, &path.display().to_string())
        .await;
    assert!(!asked.is_error, "{}", asked.text);
    assert!(asked.text.contains("approval_required"), "{}", asked.text);
    assert!(!asked.text.contains("Zebulon"), "{}", asked.text);

    let leaked = Answer::new(json!({"preview": "Zebulon Quagmire lives in Ouagadougou"}));
    let reply = service.deliver(&ctx, "run_workflow", Ok(leaked));
    assert!(reply.is_error);
    assert!(reply.text.contains("privacy guard"), "{}", reply.text);
    for raw in ["Zebulon", "Quagmire", "Ouagadougou"] {
        assert!(!reply.text.contains(raw), "{}", reply.text);
    }
    assert!(
        reply.text.contains("Aaaaaaa"),
        "the value, masked: {}",
        reply.text
    );

    let rows = service.ledger(None, 10, 0).expect("ledger");
    let blocked = rows
        .iter()
        .find(|r| r.role == "mcp:run_workflow")
        .expect("the blocked answer is in the ledger");
    assert!(blocked.blocked);
    assert_eq!(blocked.request_body, "", "nothing was sent");
    assert_eq!(blocked.provider, "mcp");
    assert_eq!(blocked.model, "test-client");
    let sent = rows
        .iter()
        .find(|r| r.role == "mcp:get_masked_extract")
        .expect("the extract's answer is in the ledger");
    assert_eq!(sent.request_body, asked.text, "exactly what the client got");
}

#[tokio::test]
async fn an_error_quoting_a_raw_value_is_blocked_too() {
    let (dir, service, ctx) = setup();
    let path = dir.path().join("files/people.csv");
    service
        .client_extract(&ctx, &path.display().to_string())
        .await;
    let failed = crate::error::CoreError::InvalidRequest("no row for Tegucigalpa".into());
    let reply = service.deliver(&ctx, "watch_flow", Err(failed));
    assert!(reply.is_error);
    assert!(!reply.text.contains("Tegucigalpa"), "{}", reply.text);
}

#[tokio::test]
async fn a_declined_request_is_refused_and_a_decided_one_cannot_change() {
    let (dir, service, ctx) = setup();
    let path = dir.path().join("files/people.csv").display().to_string();
    service.client_extract(&ctx, &path).await;
    let pending = service.client_requests().expect("requests");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].file.extract["row_count"], 2);
    let id = pending[0].id.clone();
    service.decline_client_request(&id).expect("decline");
    assert!(
        service.approve_client_request(&id).is_err(),
        "already decided"
    );
    let reply = service.client_extract(&ctx, &path).await;
    assert!(reply.is_error);
    assert!(reply.text.contains("declined"), "{}", reply.text);
    assert!(service.client_requests().expect("requests").is_empty());
}

/// A ledger row of what an LLM back end was sent with the user's consent:
/// a confirmed value of `people.csv`.
fn insert_sent(service: &super::Service) {
    let sent = maskflow_privacy::ledger::LedgerEntry {
        id: "call_sent".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        role: "clarifier".into(),
        provider: "openai".into(),
        model: "m".into(),
        workflow_id: None,
        url: None,
        request_body: "{\"content\": \"only Zebulon Quagmire\"}".into(),
        reply: None,
        input_tokens: None,
        output_tokens: None,
        latency_ms: 1,
        outcome: maskflow_privacy::ledger::CallOutcome::Ok,
        blocked: false,
        local: false,
        note: None,
        error: None,
        deleted_workflow: None,
        flow_run_id: None,
        flow_step: None,
    };
    crate::store::llm_calls::insert(&service.db(), &sent).expect("row");
}

#[tokio::test]
async fn a_ledger_body_holding_a_raw_value_is_withheld_from_clients() {
    let (dir, service, ctx) = setup();
    let path = dir.path().join("files/people.csv");
    service
        .client_extract(&ctx, &path.display().to_string())
        .await;
    insert_sent(&service);
    let reply = service.client_ledger(&ctx, None, 50, 0);
    assert!(!reply.is_error, "{}", reply.text);
    assert!(!reply.text.contains("Zebulon"), "{}", reply.text);
    assert!(
        reply.text.contains("withheld from clients"),
        "{}",
        reply.text
    );
    assert!(
        reply.text.contains("approval_required"),
        "a clean body is listed: {}",
        reply.text
    );
}

/// Issue 39, finding 7: a client's query searched the bodies it is not
/// shown, so a guessed name came back as "some row matches" — an oracle.
/// The query now finds only what the client sees.
#[tokio::test]
async fn a_client_ledger_query_searches_only_what_it_shows() {
    let (dir, service, ctx) = setup();
    let path = dir.path().join("files/people.csv");
    service
        .client_extract(&ctx, &path.display().to_string())
        .await;
    insert_sent(&service);
    let found = |q: &str| -> Vec<String> {
        let reply = service.client_ledger(&ctx, Some(q), 50, 0);
        assert!(!reply.is_error, "{}", reply.text);
        let value: serde_json::Value = serde_json::from_str(&reply.text).expect("json");
        value["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| format!("{} {}", e["id"], e["role"]))
            .collect()
    };
    let sent = |rows: Vec<String>| rows.iter().any(|r| r.contains("call_sent"));
    for guess in ["Zebulon", "zebulon quagmire", "Quagmire"] {
        assert!(
            !sent(found(guess)),
            "the withheld body answered the query {guess:?}"
        );
    }
    // What the client is shown is still found: the role, and a clean body.
    assert!(sent(found("clarifier")));
    assert!(
        found("approval_required")
            .iter()
            .any(|r| r.contains("mcp:get_masked_extract"))
    );
}

#[tokio::test]
async fn without_a_root_no_file_may_be_named_and_the_error_says_how() {
    let (dir, service, mut ctx) = setup();
    ctx.roots.clear();
    let path = dir.path().join("files/people.csv");
    let reply = service
        .client_extract(&ctx, &path.display().to_string())
        .await;
    assert!(reply.is_error);
    assert!(reply.text.contains("(none)"), "{}", reply.text);
    assert!(reply.text.contains("--root"), "{}", reply.text);
    assert!(service.client_requests().expect("requests").is_empty());
    let rows = service.ledger(None, 10, 0).expect("ledger");
    assert_eq!(
        rows[0].outcome,
        maskflow_privacy::ledger::CallOutcome::Error
    );
    assert_eq!(rows[0].request_body, reply.text, "the error as sent");
}

/// Issue 39: a hard link in a client's folder to a file elsewhere (an
/// upload in the data folder, or any file outside the roots) passes
/// `canonicalize`; the file's link count refuses it.
#[cfg(unix)]
#[tokio::test]
async fn a_hard_link_in_a_root_to_a_file_elsewhere_is_refused() {
    let (dir, service, ctx) = setup();
    let outside = dir.path().join("outside.csv");
    std::fs::write(&outside, PEOPLE).expect("outside");
    let linked = dir.path().join("files/linked.csv");
    std::fs::hard_link(&outside, &linked).expect("hard link");
    let reply = service
        .client_extract(&ctx, &linked.display().to_string())
        .await;
    assert!(reply.is_error, "{}", reply.text);
    assert!(reply.text.contains("hard links"), "{}", reply.text);
    assert!(service.client_requests().expect("requests").is_empty());
}

/// Polls the run until `done` holds of its `watch_flow` answer.
async fn watch_until(
    service: &super::Service,
    ctx: &ClientContext,
    run: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    for _ in 0..400 {
        let reply = service.client_flow_watch(ctx, run);
        assert!(!reply.is_error, "{}", reply.text);
        last = serde_json::from_str(&reply.text).expect("json");
        if done(&last) {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("the run never got there: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resumes_a_flow_run_from_a_step_path_and_sees_what_it_goes_on_from() {
    let (dir, service, ctx) = setup();
    let flows = dir.path().join("data/flows");
    std::fs::create_dir_all(&flows).expect("flows");
    let flow = json!({"steps": [
        {"type": "gate", "label": "First", "prompt": "One?", "options": [{"label": "go"}]},
        {"type": "gate", "label": "Second", "prompt": "Two?", "options": [{"label": "go"}]}]});
    std::fs::write(flows.join("two.json"), flow.to_string()).expect("flow");
    let started = service.client_flow_start(&ctx, "two", super::ClientStart::default());
    assert!(!started.is_error, "{}", started.text);
    let run =
        serde_json::from_str::<serde_json::Value>(&started.text).expect("json")["conversationId"]
            .as_str()
            .expect("run")
            .to_owned();
    for prompt in ["One?", "Two?"] {
        watch_until(&service, &ctx, &run, |v| v["pending"]["prompt"] == prompt).await;
        let answer = maskflow_flows::GateAnswer {
            option: "go".into(),
            input: None,
            result: None,
        };
        let a = service.client_flow_answer(&ctx, &run, answer);
        assert!(!a.is_error, "{}", a.text);
    }
    let done = watch_until(&service, &ctx, &run, |v| v["status"] == "completed").await;
    let steps: Vec<serde_json::Value> = done["resume"]["completedSteps"]
        .as_array()
        .expect("completed steps")
        .iter()
        .map(|c| c["stepPath"].clone())
        .collect();
    assert_eq!(steps, [json!([0]), json!([1])], "{done}");
    assert_eq!(done["resume_steps"][1]["stepPath"], json!([1]), "{done}");

    // From the second gate again: the run waits there, not at the first.
    let start = super::ClientStart {
        run_id: Some(&run),
        resume_step_path: Some(vec![1]),
        ..super::ClientStart::default()
    };
    let again = service.client_flow_start(&ctx, "two", start);
    assert!(!again.is_error, "{}", again.text);
    assert!(again.text.contains(&run), "{}", again.text);
    let waiting = watch_until(&service, &ctx, &run, |v| v["status"] == "waiting").await;
    assert_eq!(waiting["pending"]["prompt"], "Two?", "{waiting}");
}

/// Issue 38, finding 8: a script step's output is the run's local data, not
/// an LLM's words. `watch_flow` shows it withheld when it holds a value of
/// the run's working folder (a file nobody uploaded), and the rest of the
/// run — its gate, its status — still reaches the client.
#[tokio::test]
async fn watch_flow_withholds_a_script_steps_output_that_holds_a_value() {
    let (dir, service, ctx) = setup();
    let work = dir.path().join("files/work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(
        work.join("customers.csv"),
        "name,city\nMarguerite Okonkwo,Lagos\n",
    )
    .expect("csv");
    std::fs::write(
        work.join("read.py"),
        "print(open('customers.csv').read().splitlines()[1])\n",
    )
    .expect("script");
    std::fs::write(work.join("count.py"), "print('rows read: 1')\n").expect("script");
    let flows = dir.path().join("data/flows");
    std::fs::create_dir_all(&flows).expect("flows");
    let flow = json!({"steps": [
        {"type": "script", "label": "read", "path": "read.py"},
        {"type": "script", "label": "count", "path": "count.py"},
        {"type": "gate", "label": "Check", "prompt": "Send it?", "options": [{"label": "go"}]}]});
    std::fs::write(flows.join("local.json"), flow.to_string()).expect("flow");
    let start = super::ClientStart {
        working_folder: Some(work.to_str().expect("utf-8")),
        ..super::ClientStart::default()
    };
    let started = service.client_flow_start(&ctx, "local", start);
    assert!(!started.is_error, "{}", started.text);
    let run =
        serde_json::from_str::<serde_json::Value>(&started.text).expect("json")["conversationId"]
            .as_str()
            .expect("run")
            .to_owned();
    let waiting = watch_until(&service, &ctx, &run, |v| {
        v["pending"]["prompt"] == "Send it?"
    })
    .await;
    let text = waiting.to_string();
    for raw in ["Marguerite", "Okonkwo", "Lagos"] {
        assert!(!text.contains(raw), "{raw} reached the client: {text}");
    }
    let turns = waiting["turns"].as_array().expect("turns");
    let read = turns
        .iter()
        .find(|t| t["step"] == "read")
        .expect("the read step's turn");
    assert!(
        read["content"]
            .as_str()
            .expect("content")
            .contains("open the run in Maskflow"),
        "{read}"
    );
    let count = turns
        .iter()
        .find(|t| t["step"] == "count")
        .expect("the count step's turn");
    assert!(
        count["content"]
            .as_str()
            .expect("content")
            .contains("rows read: 1"),
        "ordinary output is shown: {count}"
    );
    // The local transcript keeps the real output.
    let view = service.flow_run(&run).expect("view");
    assert!(
        view.turns
            .iter()
            .any(|t| t.content.contains("Marguerite Okonkwo"))
    );
}

/// Writes one file per person, named after them (a stdlib script).
const PER_PERSON: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
for r in csv.DictReader(open(f["people"])):
    with open("outputs/" + r["name"] + ".csv", "w") as out:
        out.write("city\n" + r["city"] + "\n")
with open("outputs/summary.txt", "w") as out:
    out.write("people written\n")
"#;

/// Issue 38, finding 7: a workflow that writes "one file per customer"
/// names its outputs after values of the file it read. `run_workflow`
/// hands those names out masked and without their paths; an output whose
/// name holds no value keeps its name and path; nothing else is refused.
/// Issue 39, point 4: a file never approved for clients is asked about
/// before the workflow runs on it.
#[tokio::test]
async fn run_workflow_masks_an_output_named_after_a_value_and_keeps_its_path_back() {
    let dir = tempfile::tempdir().expect("tmp");
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let spec = json!({
        "name": "One file per person", "description": "Writes each person's city",
        "script": PER_PERSON,
        "fields": [{"name": "people", "label": "People", "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "summary.txt", "description": "what was written"}]}
    });
    let replay = ReplayProvider::from_value(&json!({
        "validator": [{"feasible": true}],
        "clarifier": [{"needs_clarification": false}],
        "builder": [spec],
    }))
    .expect("replay");
    let s = service_with(&dir.path().join("data"), Arc::new(replay));
    let ctx = ClientContext {
        name: "test-client".into(),
        transport: "stdio".into(),
        roots: vec![std::fs::canonicalize(&files).expect("canonical")],
    };
    let file = s
        .add_upload_bytes("people.csv", PEOPLE.as_bytes())
        .await
        .expect("upload");
    let mut rx = s.subscribe();
    let created = s
        .create_workflow(crate::service::CreateWorkflow {
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("create");
    s.send_message(&created.workflow_id, "one file per person with their city")
        .await
        .expect("message");
    loop {
        if let crate::events::Event::StatusChanged {
            version_id, status, ..
        } = rx.recv().await.expect("event")
            && version_id == created.version_id
            && matches!(
                status,
                crate::versions::Status::PendingUserApproval | crate::versions::Status::Failed
            )
        {
            assert_eq!(status, crate::versions::Status::PendingUserApproval);
            break;
        }
    }
    s.approve(&created.workflow_id, &created.version_id)
        .expect("approve");

    let next = files.join("next.csv");
    std::fs::write(&next, "name,city\nMarguerite Okonkwo,Lagos\n").expect("next");
    let inputs: std::collections::BTreeMap<String, Vec<String>> =
        [("people".to_owned(), vec![next.display().to_string()])].into();
    // A file the user never approved for clients: asked about first, nothing run.
    let asked = s
        .client_run(&ctx, &created.workflow_id, inputs.clone(), false)
        .await;
    assert!(!asked.is_error, "{}", asked.text);
    let asked: serde_json::Value = serde_json::from_str(&asked.text).expect("json");
    assert_eq!(asked["status"], "approval_required", "{asked}");
    assert!(asked.get("outputs").is_none(), "{asked}");
    let request = asked["requests"][0]["request_id"]
        .as_str()
        .expect("request");
    assert_eq!(s.client_requests().expect("requests")[0].id, request);
    s.approve_client_request(request).expect("approve");
    let reply = s
        .client_run(&ctx, &created.workflow_id, inputs, false)
        .await;
    assert!(!reply.is_error, "{}", reply.text);
    for raw in ["Marguerite", "Okonkwo", "Lagos"] {
        assert!(
            !reply.text.contains(raw),
            "{raw} reached the client: {}",
            reply.text
        );
    }
    let ran: serde_json::Value = serde_json::from_str(&reply.text).expect("json");
    let outputs = ran["outputs"].as_array().expect("outputs");
    let named = outputs
        .iter()
        .find(|o| o["name"] == "Aaaaaaaaaa Aaaaaaa.aaa")
        .unwrap_or_else(|| panic!("the person's file, masked: {ran}"));
    assert_eq!(named["path"], serde_json::Value::Null, "{named}");
    assert!(
        named["withheld"]
            .as_str()
            .is_some_and(|w| w.contains("open the outputs in Maskflow"))
    );
    let summary = outputs
        .iter()
        .find(|o| o["name"] == "summary.txt")
        .unwrap_or_else(|| panic!("the summary: {ran}"));
    assert!(
        summary["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("summary.txt")),
        "{summary}"
    );
}
