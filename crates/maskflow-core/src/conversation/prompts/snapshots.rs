//! Snapshot tests of every prompt builder: the builder conversation's
//! (validator, clarifier, builder, repair) and the flows' (system layers,
//! assembled request, break question). A wording change shows up as a diff
//! of a `.snap` file under `src/prompts/snapshots/`; review it with
//! `cargo insta review`, or rerun with `INSTA_UPDATE=always` and read the diff.

use serde_json::{Value, json};

use super::*;
use maskflow_flows::prompt::{TaskContext, assemble, break_question, system_message};

fn history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::new(ChatRole::User, "merge these files by the date column"),
        ChatMessage::new(ChatRole::Assistant, "Keep all columns?"),
        ChatMessage::new(ChatRole::User, "yes"),
    ]
}

fn extracts() -> Value {
    json!([{"filename": "sales.csv", "columns": ["date", "revenue"], "sample_rows": [["####-##-##", "$#,###.##"]], "row_count": 3}])
}

/// A request as a reader sees it: the role, each message, the schema.
fn show(req: &LlmRequest) -> String {
    let mut out = format!("role: {}\n", req.role.key());
    for m in &req.messages {
        out.push_str(&format!("\n===== {:?}\n{}\n", m.role, m.content));
    }
    if let Some(schema) = &req.schema {
        let pretty = serde_json::to_string_pretty(schema).expect("serialises");
        out.push_str(&format!("\n===== schema\n{pretty}\n"));
    }
    out
}

fn show_messages(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .map(|m| format!("===== {:?}\n{}\n", m.role, m.content))
        .collect()
}

#[test]
fn validator() {
    insta::assert_snapshot!(show(&validator_request(&extracts(), &history())));
}

#[test]
fn clarifier() {
    insta::assert_snapshot!(show(&clarifier_request(&extracts(), &history())));
}

#[test]
fn builder() {
    insta::assert_snapshot!(show(&builder_request(&extracts(), &history())));
}

#[test]
fn repair() {
    insta::assert_snapshot!(repair_prompt("missing field `script`"));
}

#[test]
fn flow_system_message_with_every_layer() {
    let task = TaskContext {
        flow: "review".into(),
        step: "Check a file".into(),
        iterations: vec![2, 1],
        item: Some(("file".into(), json!({"path": "Aaaa.csv"}))),
    };
    insta::assert_snapshot!(system_message(
        Some("You review spreadsheets."),
        Some("Look for empty columns."),
        &task
    ));
}

#[test]
fn flow_system_message_bare() {
    let task = TaskContext {
        flow: "review".into(),
        step: "Start".into(),
        ..TaskContext::default()
    };
    insta::assert_snapshot!(system_message(None, None, &task));
}

#[test]
fn flow_request_with_history_and_feedback() {
    let step = vec![ChatMessage::new(ChatRole::User, "Review Aaaa.csv")];
    let messages = assemble(
        "SYSTEM".into(),
        &history(),
        step,
        Some("output.ok was not true"),
    );
    insta::assert_snapshot!(show_messages(&messages));
}

#[test]
fn flow_break_question() {
    insta::assert_snapshot!(break_question("Is the review complete?"));
}
