//! Agents that steer (seed 003, issue 18 point 9): an agent's `## Status`,
//! `## Next Action`, `confidence` and `suggested_next_stage` act on its run,
//! driven with the replay provider over a real store.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, write_flows};
use maskflow_flows::error::Error;
use maskflow_flows::steer::MAX_STAGE_FOLLOWS;
use maskflow_flows::*;
use maskflow_llm::{ReplayProvider, Role};

struct Env {
    _home: tempfile::TempDir,
    engine: FlowEngine,
    provider: Arc<ReplayProvider>,
}

fn env(replies: Value, flows: &[(&str, Value)]) -> Env {
    let provider = Arc::new(ReplayProvider::from_value(&replies).expect("replay"));
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), flows);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    Env {
        _home: home,
        engine,
        provider,
    }
}

impl Env {
    async fn run(&self, name: &str) -> RunView {
        crate::support::run(&self.engine, name, None).await
    }

    async fn answer(&self, id: &str, option: &str, input: Option<&str>) -> RunView {
        crate::support::answer(&self.engine, id, option, input).await
    }

    /// The requests agent `agent` received, in order.
    fn asked(&self, agent: &str) -> Vec<Vec<String>> {
        self.provider
            .requests()
            .into_iter()
            .filter(|r| r.role == Role::Agent(agent.into()))
            .map(|r| r.messages.into_iter().map(|m| m.content).collect())
            .collect()
    }
}

fn llm(agent: &str, text: &str) -> Value {
    json!({"type": "llm", "agentType": agent, "identifier": "x", "messages": [{"role": "user", "content": [text]}]})
}

/// A reply in seed 003's sections.
fn md(status: &str, summary: &str, next: &str, meta: &str) -> String {
    format!(
        "## Status\n{status}\n\n## Summary\n{summary}\n\n## Output\nwork\n\n## Next Action\n{next}\n\n## Metadata\n```json\n{meta}\n```\n"
    )
}

fn contents(v: &RunView) -> Vec<String> {
    v.turns.iter().map(|t| t.content.clone()).collect()
}

#[tokio::test]
async fn complete_continues_and_the_prompt_has_the_workflow_step_layer() {
    let mut step = llm("a", "Draft it.");
    step["label"] = json!("Draft");
    step["instructions"] = json!("Summarise the contract for the buyer.");
    step["postconditions"] =
        json!([{"check": "output.summary != null", "error": "a summary is required"}]);
    let env = env(
        json!({"agent:a": [md("SUCCESS", "Summarised.", "COMPLETE", "{\"confidence\": 0.9}")], "agent:b": ["next"]}),
        &[("f", json!({"steps": [step, llm("b", "Go on.")]}))],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    let system = &env.asked("a")[0][0];
    let layer = system
        .find("## Workflow Step: Draft\nSummarise the contract for the buyer.")
        .expect("the workflow-step layer");
    assert!(
        system[layer..].contains("- a summary is required"),
        "{system}"
    );
    assert!(system[layer..].contains("ESCALATE or HOLD"), "{system}");
    assert!(layer < system.find("## Task Context").expect("task layer"));
    // A step without instructions still tells its agent how to steer.
    assert!(env.asked("b")[0][0].contains("## Workflow Step: llm\nIf you cannot do this step"));
}

#[tokio::test]
async fn failed_retries_with_the_reason_then_needs_attention() {
    let failed = md("FAILED", "The file cannot be opened.", "COMPLETE", "{}");
    let env = env(
        json!({"agent:a": [failed.clone(), failed], "agent:b": ["after"]}),
        &[(
            "f",
            json!({"steps": [llm("a", "Read it."), llm("b", "Go on.")]}),
        )],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::NeedsAttention, "{v:?}");
    let retry = env.asked("a")[1].clone();
    assert!(
        retry.last().expect("feedback").contains(
            "Previous attempt failed: the agent replied FAILED: The file cannot be opened."
        ),
        "{retry:?}"
    );
    let pending = v.pending.as_ref().expect("pending");
    assert_eq!(pending["kind"], "attention");
    assert_eq!(pending["reason"], "agent status");
    assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
    assert!(pending["error"].as_str().unwrap_or("").contains("FAILED"));
    let v = env.answer(&v.conversation_id, "skip", None).await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(contents(&v).last().map(String::as_str), Some("after"));
}

#[tokio::test]
async fn blocked_fails_the_step_and_the_retry_that_succeeds_goes_on() {
    let env = env(
        json!({"agent:a": [
            md("BLOCKED", "No access to the share.", "CONTINUE", "{}"),
            md("SUCCESS", "Read it.", "CONTINUE", "{}")
        ], "agent:b": ["after"]}),
        &[(
            "f",
            json!({"steps": [{"id": "r", "type": "llm", "agentType": "a", "identifier": "x", "messages": [{"role": "user", "content": ["Read."]}]}, llm("b", "Got {{steps.r.summary}}")]}),
        )],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert!(
        contents(&v)
            .iter()
            .any(|c| c.contains("failed: the agent replied BLOCKED: No access to the share.")),
        "{:?}",
        contents(&v)
    );
    assert_eq!(
        env.asked("b")[0].last().map(String::as_str),
        Some("Got Read it.")
    );
}

#[tokio::test]
async fn escalate_waits_with_the_reason_and_resumes_after_the_answer() {
    let env = env(
        json!({"agent:a": [
            md("SUCCESS", "Drafted.", "ESCALATE: Legal must approve clause 4.", "{}"),
            md("SUCCESS", "Final.", "COMPLETE", "{}")
        ], "agent:b": ["after"]}),
        &[(
            "f",
            json!({"steps": [{"id": "d", "type": "llm", "label": "Draft", "agentType": "a", "identifier": "x", "messages": [{"role": "user", "content": ["Draft."]}]}, llm("b", "Got {{steps.d.summary}}")]}),
        )],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Waiting, "{v:?}");
    let pending = v.pending.clone().expect("pending");
    assert_eq!(pending["kind"], "gate");
    let prompt = pending["prompt"].as_str().unwrap_or("");
    assert!(
        prompt.contains("(ESCALATE): Legal must approve clause 4."),
        "{prompt}"
    );
    assert_eq!(pending["context"]["nextAction"], "ESCALATE");
    assert_eq!(
        pending["options"],
        json!([{"label": "Continue", "requiresInput": false}, {"label": "Reply", "requiresInput": true}, {"label": "Stop", "requiresInput": false}])
    );
    assert!(contents(&v).iter().any(|c| c == prompt));
    let id = v.conversation_id.clone();
    let no_text = env.engine.prepare_answer(
        &id,
        GateAnswer {
            option: "Reply".into(),
            input: None,
            result: None,
        },
    );
    assert!(matches!(no_text, Err(Error::InvalidRequest(m)) if m.contains("requires input")));
    let odd = env.engine.prepare_answer(
        &id,
        GateAnswer {
            option: "maybe".into(),
            input: None,
            result: None,
        },
    );
    assert!(matches!(odd, Err(Error::InvalidRequest(m)) if m.contains("Continue, Reply or Stop")));
    let v = env.answer(&id, "Reply", Some("Legal approved it.")).await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    let again = &env.asked("a")[1];
    assert!(
        again
            .iter()
            .any(|m| m.contains("A person answered your request: Legal approved it.")),
        "{again:?}"
    );
    // The agent sees its own escalation in its conversation.
    assert!(
        again
            .iter()
            .any(|m| m.contains("Legal must approve clause 4."))
    );
    assert_eq!(
        env.asked("b")[0].last().map(String::as_str),
        Some("Got Final.")
    );
    assert!(contents(&v).contains(&"Reply: Legal approved it.".to_owned()));
}

#[tokio::test]
async fn hold_waits_then_continue_takes_the_reply_and_stop_stops() {
    let hold = md(
        "PARTIAL",
        "Half done.",
        "HOLD\nWaiting for the Q3 figures.",
        "{}",
    );
    let env = env(
        json!({"agent:a": [hold.clone(), hold], "agent:b": ["after"]}),
        &[(
            "f",
            json!({"steps": [{"id": "h", "type": "llm", "agentType": "a", "identifier": "x", "messages": [{"role": "user", "content": ["Do."]}]}, llm("b", "Got {{steps.h.summary}}")]}),
        )],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Waiting, "{v:?}");
    let prompt = v.pending.as_ref().expect("pending")["prompt"].clone();
    assert!(
        prompt
            .as_str()
            .unwrap_or("")
            .contains("(HOLD): Waiting for the Q3 figures."),
        "{prompt}"
    );
    let v = env.answer(&v.conversation_id, "continue", None).await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(
        env.asked("b")[0].last().map(String::as_str),
        Some("Got Half done.")
    );
    assert_eq!(env.asked("a").len(), 1);
    assert_eq!(contents(&v).last().map(String::as_str), Some("after"));
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Waiting);
    let v = env.answer(&v.conversation_id, "Stop", None).await;
    assert_eq!(v.status, RunStatus::Stopped);
}

#[tokio::test]
async fn a_reply_under_the_confidence_threshold_asks_a_person() {
    let mut step = llm("a", "Score it.");
    step["confidenceThreshold"] = json!(0.7);
    let env = env(
        json!({"agent:a": [{"score": 40, "confidence": 0.4}, {"score": 90, "confidence": 0.9}]}),
        &[("f", json!({"steps": [step.clone()]}))],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Waiting, "{v:?}");
    let pending = v.pending.as_ref().expect("pending");
    let prompt = pending["prompt"].as_str().unwrap_or("");
    assert!(
        prompt.contains(
            "(low confidence): the agent's confidence 0.4 is below the step's threshold 0.7"
        ),
        "{prompt}"
    );
    assert_eq!(pending["context"]["output"]["score"], 40);
    assert!(env.asked("a")[0][0].contains("below 0.7 a person reviews"));
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    // A threshold outside 0 to 1 is refused when the flow is read.
    step["confidenceThreshold"] = json!(70);
    let bad = maskflow_flows::definition::from_value(&json!({"steps": [step]}))
        .expect_err("out of range");
    assert!(
        bad.to_string().contains("70 is not between 0 and 1"),
        "{bad}"
    );
}

#[tokio::test]
async fn a_suggested_stage_is_followed_when_allowed_and_ignored_with_a_note_otherwise() {
    let steps = |first: &str| {
        let mut s = llm(first, "Triage.");
        s["nextStages"] = json!(["review"]);
        json!({"steps": [
            s,
            {"id": "draft", "type": "llm", "agentType": format!("{first}_draft"), "identifier": "x", "messages": [{"role": "user", "content": ["Draft."]}]},
            {"id": "review", "type": "llm", "agentType": format!("{first}_review"), "identifier": "x", "messages": [{"role": "user", "content": ["Review."]}]}
        ]})
    };
    let env = env(
        json!({
            "agent:ok": [{"summary": "easy", "suggested_next_stage": "review"}], "agent:ok_review": ["reviewed"], "agent:ok_draft": ["unused"],
            "agent:no": [md("SUCCESS", "s", "CONTINUE", "{\"suggested_next_stage\": \"draft\"}")], "agent:no_draft": ["drafted"], "agent:no_review": ["reviewed"]
        }),
        &[("ok", steps("ok")), ("no", steps("no"))],
    );
    let v = env.run("ok").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(env.provider.remaining(&Role::Agent("ok_draft".into())), 1);
    assert!(contents(&v).contains(&"→ review (the agent's suggested next stage)".to_owned()));
    assert!(env.asked("ok")[0][0].contains("one of review"));
    let v = env.run("no").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(
        contents(&v),
        [
            "Triage.".to_owned(),
            md(
                "SUCCESS",
                "s",
                "CONTINUE",
                "{\"suggested_next_stage\": \"draft\"}"
            ),
            "The agent suggested the next stage \"draft\"; ignored: the step allows review."
                .to_owned(),
            "Draft.".to_owned(),
            "drafted".to_owned(),
            "Review.".to_owned(),
            "reviewed".to_owned()
        ]
    );
}

#[tokio::test]
async fn a_malformed_reply_fails_the_step_clearly_and_never_panics() {
    let bad = "## Status\nMAYBE\n\n## Output\nsomething";
    let env = env(
        json!({"agent:a": [bad, {"confidence": "high"}], "agent:c": ["", "   "]}),
        &[
            ("f", json!({"steps": [llm("a", "Do.")]})),
            ("g", json!({"steps": [llm("c", "Do.")]})),
        ],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::NeedsAttention, "{v:?}");
    let turns = contents(&v);
    assert!(
        turns.iter().any(|c| c.contains(
            "the agent's ## Status is \"MAYBE\"; expected one of SUCCESS, PARTIAL, BLOCKED, FAILED"
        )),
        "{turns:?}"
    );
    let error = v.pending.as_ref().expect("pending")["error"].clone();
    assert!(
        error
            .as_str()
            .unwrap_or("")
            .contains("the agent's confidence is \"high\"; expected a number from 0 to 1"),
        "{error}"
    );
    // Empty replies carry no steering: the step completes with empty text.
    let v = env.run("g").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
}

#[tokio::test]
async fn a_suggested_stage_cannot_loop_a_run_forever_and_must_exist() {
    let mut again = llm("a", "Try.");
    again["id"] = json!("try");
    again["nextStages"] = json!(["try"]);
    let replies: Vec<Value> = (0..=MAX_STAGE_FOLLOWS)
        .map(|i| json!({"attempt": i, "suggested_next_stage": "try"}))
        .collect();
    let mut unknown = llm("a", "Try.");
    unknown["nextStages"] = json!(["nowhere"]);
    let env = env(
        json!({"agent:a": replies, "agent:b": ["after"]}),
        &[
            ("f", json!({"steps": [again, llm("b", "Go on.")]})),
            ("u", json!({"steps": [unknown]})),
        ],
    );
    let v = env.run("f").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(env.asked("a").len() as u32, MAX_STAGE_FOLLOWS + 1);
    let note = format!("ignored: this step sent the run there {MAX_STAGE_FOLLOWS} times already.");
    assert!(
        contents(&v).iter().any(|c| c.ends_with(&note)),
        "{:?}",
        contents(&v)
    );
    assert_eq!(contents(&v).last().map(String::as_str), Some("after"));
    let refused = env.engine.prepare("u", StartFlow::default());
    assert!(
        matches!(&refused, Err(Error::InvalidRequest(m)) if m.contains("lists the next stage \"nowhere\", but no step has that id")),
        "{:?}",
        refused.err()
    );
}

/// Seed 003's `suggested_tags` of an agent's reply are shown on its turn.
#[tokio::test]
async fn an_agents_suggested_tags_are_on_its_turn() {
    let home = tempfile::tempdir().expect("tempdir");
    let flow = serde_json::json!({"steps": [
        {"type": "llm", "label": "Triage", "agentType": "rev", "identifier": "r",
         "messages": [{"role": "user", "content": ["Triage the ticket."]}]}]});
    crate::support::write_flows(home.path(), &[("tags", flow)]);
    let provider = std::sync::Arc::new(
        maskflow_llm::ReplayProvider::from_value(&serde_json::json!({"agent:rev": [
            {"answer": "refund", "suggested_tags": ["billing", "urgent"]}
        ]}))
        .expect("replay"),
    );
    let engine = crate::support::engine_at(home.path(), provider, crate::support::START_MS);
    let view = crate::support::run(&engine, "tags", None).await;
    assert_eq!(
        view.status,
        maskflow_flows::RunStatus::Completed,
        "{view:?}"
    );
    let tagged: Vec<(&str, &[String])> = view
        .turns
        .iter()
        .map(|t| (t.role.as_str(), t.suggested_tags.as_slice()))
        .collect();
    assert_eq!(
        tagged,
        [
            ("user", &[][..]),
            (
                "assistant",
                &["billing".to_owned(), "urgent".to_owned()][..]
            )
        ],
        "{view:?}"
    );
}
