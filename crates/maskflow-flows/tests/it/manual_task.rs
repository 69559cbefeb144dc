//! People return results in flows (issue 31 point 2): a manual task asks for
//! a decision and an optional result; the PR Review example's human step
//! routes on the decision, and a later condition reads the result like an
//! agent's output.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, run, stored_state, write_flows};
use maskflow_flows::*;
use maskflow_llm::ReplayProvider;

const PR_HUMAN: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review-human.mmd");

fn replay(v: Value) -> Arc<ReplayProvider> {
    Arc::new(ReplayProvider::from_value(&v).expect("replay"))
}

/// The agent's replies up to the human review (a middling score), then `tail`.
fn to_the_review(tail: &[Value]) -> Arc<ReplayProvider> {
    let mut replies = vec![
        json!({"title": "Fix parser"}),
        json!({"files": [{"path": "src/a.rs"}]}),
        json!({"score": 60, "issues": []}),
        json!({"score": 60, "summary": "so-so"}),
    ];
    replies.extend(tail.iter().cloned());
    replay(json!({ "agent:assistant": replies }))
}

async fn answer(engine: &FlowEngine, id: &str, answer: GateAnswer) -> RunView {
    let (_, handle) = engine.prepare_answer(id, answer).expect("answer");
    if let Some(h) = handle {
        h.run().await;
    }
    engine.get_run(id).expect("view")
}

fn sent(provider: &ReplayProvider) -> Vec<String> {
    provider
        .requests()
        .iter()
        .map(|r| r.messages.last().expect("message").content.clone())
        .collect()
}

#[tokio::test]
async fn the_pr_reviews_human_step_routes_on_request_changes() {
    let flow = serde_json::to_value(mermaid::import(PR_HUMAN).expect("imports")).expect("json");
    for (decision, then, never) in [
        (
            "request changes",
            "Generate constructive feedback",
            "Merge the PR",
        ),
        ("approve", "Merge the PR", "Generate constructive feedback"),
        ("reject", "Close the PR", "Merge the PR"),
    ] {
        let tail = [json!({"shouldRetry": false}), json!("closed")];
        let provider = to_the_review(&tail);
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("pr", flow.clone())]);
        let engine = engine_at(home.path(), provider.clone(), START_MS);
        let view = run(&engine, "pr", None).await;
        assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
        let pending = view.pending.clone().expect("the reviewer is asked");
        assert_eq!(pending["kind"], "gate");
        let labels: Vec<&str> = pending["options"]
            .as_array()
            .expect("options")
            .iter()
            .filter_map(|o| o["label"].as_str())
            .collect();
        assert_eq!(labels, ["approve", "request changes", "reject"]);
        let asked_before = sent(&provider).len();
        let reply = GateAnswer {
            option: decision.into(),
            input: None,
            result: Some(json!({"notes": "rename the parser"})),
        };
        let view = answer(&engine, &view.conversation_id, reply).await;
        assert_eq!(view.status, RunStatus::Completed, "{decision}: {view:?}");
        let after = sent(&provider)[asked_before..].to_vec();
        assert!(after[0].starts_with(then), "{decision}: {after:?}");
        assert!(
            !after.iter().any(|m| m.starts_with(never)),
            "{decision}: {after:?}"
        );
        let st = stored_state(home.path(), &view.conversation_id);
        assert_eq!(st.steps["G"]["decision"], decision);
        assert_eq!(st.steps["G"]["notes"], "rename the parser");
        assert_eq!(st.steps["G"]["result"]["notes"], "rename the parser");
    }
}

fn llm(prompt: &str) -> Value {
    json!({"type": "llm", "agentType": "assistant", "identifier": "t",
           "messages": [{"role": "user", "content": [prompt]}]})
}

/// A person's step with the flow's own options, and a decision reading the
/// person's result after it.
fn triage() -> Value {
    json!({"steps": [
        {"type": "gate", "id": "ask", "prompt": "How urgent is it?",
         "options": [{"label": "Ship it"}, {"label": "Hold"}]},
        {"type": "decision", "branches": [
            {"condition": "output.decision == \"Hold\"", "steps": [llm("Hold it")]},
            {"condition": "output.priority >= 2",
             "steps": [llm("Page the on-call about {{steps.ask.result.note}}")]}
         ],
         "default": {"steps": [llm("File a ticket: {{steps.ask.result}}")]}}
    ]})
}

#[tokio::test]
async fn a_later_condition_reads_the_persons_result_like_an_agents_output() {
    for (option, input, result, expect) in [
        (
            "Ship it",
            None,
            json!({"priority": 3, "note": "login down"}),
            "Page the on-call about login down",
        ),
        (
            "ship it",
            None,
            json!("cosmetic"),
            "File a ticket: cosmetic",
        ),
        // A note typed as text is the result when no JSON was given.
        ("Ship it", Some("typo"), Value::Null, "File a ticket: typo"),
        ("Hold", None, Value::Null, "Hold it"),
    ] {
        let provider = replay(json!({"agent:assistant": ["ok"]}));
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("triage", triage())]);
        let engine = engine_at(home.path(), provider.clone(), START_MS);
        let view = run(&engine, "triage", None).await;
        assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
        let reply = GateAnswer {
            option: option.into(),
            input: input.map(str::to_owned),
            result: Some(result.clone()),
        };
        let view = answer(&engine, &view.conversation_id, reply).await;
        assert_eq!(view.status, RunStatus::Completed, "{option}: {view:?}");
        let asked = sent(&provider);
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].starts_with(expect), "{option}: {asked:?}");
        // The decision is written to the transcript with its result.
        let said = view
            .turns
            .iter()
            .any(|t| t.content.starts_with(option) || t.content.starts_with("Ship it"));
        assert!(said, "{:?}", view.turns);
    }
}

#[tokio::test]
async fn a_decision_the_step_does_not_offer_is_refused_by_name() {
    let provider = replay(json!({"agent:assistant": []}));
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("triage", triage())]);
    let engine = engine_at(home.path(), provider, START_MS);
    let view = run(&engine, "triage", None).await;
    let wrong = GateAnswer {
        option: "approve".into(),
        input: None,
        result: None,
    };
    let Err(err) = engine.prepare_answer(&view.conversation_id, wrong) else {
        panic!("a decision the step does not offer is refused");
    };
    let text = err.to_string();
    assert!(
        text.contains("\"approve\"") && text.contains("Ship it"),
        "{text}"
    );
}

#[test]
fn an_answer_may_name_its_option_decision() {
    let a: GateAnswer =
        serde_json::from_value(json!({"decision": "reject", "result": {"why": "no"}}))
            .expect("parses");
    assert_eq!(a.option, "reject");
    assert_eq!(a.result, Some(json!({"why": "no"})));
}

/// A seed 003 flow whose decision after the manual task names its branches
/// by the options' labels (`approve`, `"request changes"`) rather than by a
/// condition on `decision`: each routes by its label.
fn by_labels() -> Value {
    json!({"steps": [
        {"type": "gate", "label": "Human Review", "prompt": "Approve?", "options": [
            {"label": "approve"}, {"label": "request changes"}, {"label": "reject"}]},
        {"type": "decision", "label": "Route", "branches": [
            {"condition": "approve", "steps": [
                {"type": "llm", "label": "Merge", "agentType": "assistant", "identifier": "a",
                 "messages": [{"role": "user", "content": ["Merge the PR"]}]}]},
            {"condition": "\"request changes\"", "steps": [
                {"type": "llm", "label": "Feedback", "agentType": "assistant", "identifier": "a",
                 "messages": [{"role": "user", "content": ["Write the feedback"]}]}]}],
         "default": {"steps": [
            {"type": "llm", "label": "Close", "agentType": "assistant", "identifier": "a",
             "messages": [{"role": "user", "content": ["Close the PR"]}]}]}}
    ]})
}

#[tokio::test]
async fn a_decision_naming_an_option_by_its_label_routes_by_it() {
    for (decision, then) in [
        ("approve", "Merge the PR"),
        ("Request changes", "Write the feedback"),
        ("reject", "Close the PR"),
    ] {
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("labels", by_labels())]);
        let provider = replay(json!({"agent:assistant": ["done"]}));
        let engine = engine_at(home.path(), provider.clone(), START_MS);
        let view = run(&engine, "labels", None).await;
        assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
        let answered = GateAnswer {
            option: decision.into(),
            input: None,
            result: None,
        };
        let view = answer(&engine, &view.conversation_id, answered).await;
        assert_eq!(view.status, RunStatus::Completed, "{decision}: {view:?}");
        assert_eq!(sent(&provider), [then], "{decision}");
    }
}

#[tokio::test]
async fn a_decision_naming_no_option_and_nothing_in_the_context_is_refused() {
    let mut flow = by_labels();
    flow["steps"][1]["branches"][0]["condition"] = json!("aprove");
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("labels", flow)]);
    let engine = engine_at(home.path(), replay(json!({})), START_MS);
    let Err(e) = engine.prepare("labels", StartFlow::default()) else {
        panic!("a branch that can never be taken is refused at load");
    };
    let text = e.to_string();
    assert!(
        text.contains("steps[1].branches[0].condition") && text.contains("aprove"),
        "{text}"
    );
}
