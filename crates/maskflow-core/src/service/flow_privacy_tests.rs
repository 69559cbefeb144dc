//! Issue 26, break 10: a flow's `script` step reads files of the run's
//! working folder that were never uploaded, and its output feeds later agent
//! steps. Through the whole service (sandboxed scripts, the privacy guard,
//! the ledger) with a recording back end: what the back end receives holds
//! no raw value of those files, a prompt that would is refused with the step
//! named and the run waits for a person, and the ledger names the flow run
//! and step of every call. Ordinary script output still goes through.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Service;
use super::tests::service_with;
use maskflow_flows::{GateAnswer, RunStatus, StartFlow};
use maskflow_llm::ReplayProvider;

/// A file of the working folder nobody uploaded.
const CUSTOMERS: &str = "name,email,city\n\
Zebulon Okonkwo,zeb.okonkwo@example.org,Lagos\n\
Marisol Quarrington,marisol.q@example.net,Leeds\n\
Tadeusz Wojcik,t.wojcik@example.com,Gdansk\n";

/// Pieces of the rows that must never reach the back end.
const RAW: &[&str] = &[
    "Zebulon",
    "Okonkwo",
    "zeb.okonkwo",
    "Marisol",
    "Quarrington",
    "Wojcik",
    "example.org",
];

fn write_flow(home: &Path, name: &str, flow: &Value) {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir flows");
    // The agent `llm` names: a flow may only name agents Maskflow knows.
    std::fs::create_dir_all(home.join("agents")).expect("mkdir agents");
    std::fs::write(home.join("agents/a.json"), "{}").expect("agent");
    std::fs::write(home.join(format!("flows/{name}.json")), flow.to_string()).expect("flow");
}

fn llm(label: &str, text: &str) -> Value {
    json!({"type": "llm", "label": label, "agentType": "a", "identifier": "x",
           "messages": [{"role": "user", "content": [text]}]})
}

/// Everything the back end was sent, as one text.
fn received(provider: &ReplayProvider) -> String {
    provider
        .requests()
        .iter()
        .flat_map(|r| r.messages.iter().map(|m| m.content.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_nothing_raw(provider: &ReplayProvider) {
    let sent = received(provider);
    for raw in RAW {
        assert!(!sent.contains(raw), "{raw:?} reached the back end:\n{sent}");
    }
}

async fn start(s: &Service, flow: &str, work: &Path) -> String {
    let request = StartFlow {
        working_folder: Some(work.display().to_string()),
        ..StartFlow::default()
    };
    let (started, handle) = s.flow_prepare(flow, request).expect("prepare");
    handle.run().await;
    started.conversation_id
}

#[tokio::test]
async fn a_script_step_reading_an_unuploaded_file_cannot_hand_its_rows_to_an_agent() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    std::fs::write(work.path().join("customers.csv"), CUSTOMERS).expect("csv");
    // The script prints a whole row, as text and as JSON keys and values,
    // then removes the file it read.
    std::fs::write(
        work.path().join("leak.py"),
        "import json, os\nrows = open('customers.csv').read().splitlines()\n\
         print(json.dumps({'row': rows[1], rows[2]: rows[3], 'stdout': rows[1]}))\n\
         os.remove('customers.csv')\n",
    )
    .expect("script");
    write_flow(
        home.path(),
        "leak",
        &json!({"steps": [
            {"type": "script", "label": "read customers", "path": "leak.py"},
            llm("summarize", "Summarize {{output.row}}; everything: {{output}}; {{steps}}"),
            {"type": "gate", "label": "check", "prompt": "Who is it?",
             "options": [{"label": "Name", "requiresInput": true}]},
            llm("tell", "The person said: {{gate.input}}")
        ]}),
    );
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:a": ["noted", "told"]})).expect("replay"),
    );
    let s = service_with(home.path(), provider.clone());
    let id = start(&s, "leak", work.path()).await;

    let view = s.flow_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
    assert!(
        view.turns[0].content.contains("Zebulon Okonkwo"),
        "the local transcript shows the real row: {:?}",
        view.turns[0]
    );
    assert_eq!(provider.requests().len(), 1);
    assert_nothing_raw(&provider);
    let sent = received(&provider);
    assert!(
        sent.contains("Summarize aaaaaaa aaaaaaa,aaa.aaaaaaa@aaaaaaa.aaa,aaaaa;"),
        "the row went masked, case folded:\n{sent}"
    );

    // The person types a value of the file at the gate: the next prompt
    // would carry it; the guard knows the (deleted) file and refuses it.
    let answer = GateAnswer {
        option: "Name".into(),
        input: Some("Zebulon Okonkwo".into()),
        result: None,
    };
    let (_, handle) = s.flow_prepare_answer(&id, answer).expect("answer");
    handle.expect("a handle").run().await;
    let view = s.flow_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    let pending = view.pending.clone().expect("a question for a person");
    let error = pending["error"].as_str().unwrap_or_default();
    assert!(error.contains("step \"tell\""), "{error}");
    assert!(error.contains("privacy guard"), "{error}");
    assert!(error.contains("Aaaaaaa Aaaaaaa (from "), "{error}");
    assert!(error.contains("then retry, skip or stop"), "{error}");
    assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
    assert_eq!(provider.requests().len(), 1, "nothing more was sent");
    assert_nothing_raw(&provider);

    // The ledger names the run and the step of each call, sent or refused.
    let rows = s.ledger(None, 50, 0).expect("ledger");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let blocked = &rows[0];
    assert_eq!(blocked.outcome, maskflow_privacy::CallOutcome::Blocked);
    assert_eq!(blocked.flow_run_id.as_deref(), Some(id.as_str()));
    assert_eq!(blocked.flow_step.as_deref(), Some("tell [3]"));
    assert_eq!(rows[1].outcome, maskflow_privacy::CallOutcome::Ok);
    assert_eq!(rows[1].flow_run_id.as_deref(), Some(id.as_str()));
    assert_eq!(rows[1].flow_step.as_deref(), Some("summarize [1]"));
    for row in &rows {
        for raw in RAW {
            assert!(
                !row.request_body.contains(raw),
                "{raw:?} in the ledger body"
            );
        }
    }

    // The run kept its place: resumed at the gate, the person answers
    // without the value and the run finishes.
    let resume = StartFlow {
        conversation_id: Some(id.clone()),
        resume_step_path: Some(vec![2]),
        ..StartFlow::default()
    };
    let (_, handle) = s.flow_prepare("leak", resume).expect("resume");
    handle.run().await;
    assert_eq!(s.flow_run(&id).expect("view").status, RunStatus::Waiting);
    let answer = GateAnswer {
        option: "Name".into(),
        input: Some("a regular customer".into()),
        result: None,
    };
    let (_, handle) = s.flow_prepare_answer(&id, answer).expect("answer");
    handle.expect("a handle").run().await;
    let view = s.flow_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(view.turns.last().map(|t| t.content.as_str()), Some("told"));
    assert_eq!(provider.requests().len(), 2);
    assert_nothing_raw(&provider);
}

#[tokio::test]
async fn ordinary_script_output_reaches_the_next_agent_step() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    std::fs::write(work.path().join("customers.csv"), CUSTOMERS).expect("csv");
    std::fs::write(
        work.path().join("count.py"),
        "import csv, json\nrows = list(csv.DictReader(open('customers.csv')))\n\
         print(json.dumps({'rows': len(rows), 'columns': list(rows[0]), 'status': 'complete'}))\n",
    )
    .expect("script");
    write_flow(
        home.path(),
        "count",
        &json!({"steps": [
            {"type": "script", "label": "count customers", "path": "count.py"},
            llm("report", "The customers file has {{output.rows}} rows in the name, email and city columns ({{output.columns}}); the count is {{output.status}}. Write a one-line report.")
        ]}),
    );
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:a": ["Three customers, all complete."]}))
            .expect("replay"),
    );
    let s = service_with(home.path(), provider.clone());
    let id = start(&s, "count", work.path()).await;
    let view = s.flow_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(
        view.turns.last().map(|t| t.content.as_str()),
        Some("Three customers, all complete.")
    );
    let sent = received(&provider);
    // Sent, masked as an extract's samples are (the count's digits too).
    for part in [
        "The customers file has # rows in the name, email and city columns",
        "\"aaaaa\"",
        "the count is aaaaaaaa. Write a one-line report.",
    ] {
        assert!(sent.contains(part), "{part:?} not in:\n{sent}");
    }
    let rows = s.ledger(None, 50, 0).expect("ledger");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].outcome,
        maskflow_privacy::CallOutcome::Ok,
        "{:?}",
        rows[0].error
    );
    assert!(!rows[0].blocked);
    assert_eq!(rows[0].flow_run_id.as_deref(), Some(id.as_str()));
    assert_eq!(rows[0].flow_step.as_deref(), Some("report [1]"));
}

/// Issue 27, egress by type: the engine's agent port hands it only guarded
/// back ends (`AgentBackends` returns a `GuardedProvider`: a port that
/// returns a bare provider does not compile), so a raw value planted in an
/// `llm` step's prompt is refused and ledgered. Here no script and no
/// working folder: the value is a row of a file the user uploaded, typed at
/// a gate, and the next step's prompt would carry it out.
#[tokio::test]
async fn a_raw_value_planted_in_an_llm_steps_prompt_is_blocked_and_ledgered() {
    let home = tempfile::tempdir().expect("home");
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:a": ["noted", "never sent"]})).expect("replay"),
    );
    let s = service_with(home.path(), provider.clone());
    s.add_upload_bytes("customers.csv", CUSTOMERS.as_bytes())
        .await
        .expect("upload");
    write_flow(
        home.path(),
        "plant",
        &json!({"steps": [
            llm("ask", "Which customer should we write to?"),
            {"type": "gate", "label": "who", "prompt": "Who?",
             "options": [{"label": "Name", "requiresInput": true}]},
            llm("write", "Write a letter to {{gate.input}}.")
        ]}),
    );
    let (started, handle) = s
        .flow_prepare("plant", StartFlow::default())
        .expect("prepare");
    handle.run().await;
    let id = started.conversation_id;
    assert_eq!(s.flow_run(&id).expect("view").status, RunStatus::Waiting);
    let answer = GateAnswer {
        option: "Name".into(),
        input: Some("Marisol Quarrington".into()),
        result: None,
    };
    let (_, handle) = s.flow_prepare_answer(&id, answer).expect("answer");
    handle.expect("a handle").run().await;

    let view = s.flow_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    let pending = view.pending.clone().expect("a question for a person");
    let error = pending["error"].as_str().unwrap_or_default();
    assert!(error.contains("step \"write\""), "{error}");
    assert!(error.contains("privacy guard"), "{error}");
    assert!(
        error.contains("(from customers.csv, column \"name\")"),
        "{error}"
    );
    assert!(
        !error.contains("Marisol"),
        "the error shows it masked: {error}"
    );
    assert_eq!(provider.requests().len(), 1, "the prompt was not sent");
    assert_nothing_raw(&provider);

    let rows = s.ledger(None, 50, 0).expect("ledger");
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].outcome, maskflow_privacy::CallOutcome::Blocked);
    assert!(rows[0].blocked);
    assert_eq!(rows[0].flow_run_id.as_deref(), Some(id.as_str()));
    assert_eq!(rows[0].flow_step.as_deref(), Some("write [2]"));
    assert_eq!(rows[1].outcome, maskflow_privacy::CallOutcome::Ok);
    assert_eq!(rows[1].flow_step.as_deref(), Some("ask [0]"));
    for row in &rows {
        for raw in RAW {
            assert!(
                !row.request_body.contains(raw),
                "{raw:?} in the ledger body"
            );
        }
    }
}
