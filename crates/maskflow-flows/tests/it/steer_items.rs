//! Foreach items whose agents steer (seed 003, issue 18 point 9): an item's
//! `## Status` FAILED or BLOCKED fails it through its retry contract, then a
//! person decides; ESCALATE or HOLD waits for a person with the agent's
//! reason. The other items go on meanwhile.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{START_MS, answer, engine_at, run, stored_state, write_flows};
use maskflow_flows::*;
use maskflow_llm::ReplayProvider;

/// A reply in seed 003's sections.
fn md(status: &str, summary: &str, next: &str) -> String {
    format!(
        "## Status\n{status}\n\n## Summary\n{summary}\n\n## Output\nwork\n\n## Next Action\n{next}\n"
    )
}

/// A fan-out over two items, then a join.
fn fan() -> Value {
    json!({"input": {"files": ["item-a", "item-b"]}, "steps": [
        {"type": "foreach", "label": "Review", "itemsPath": "input.files", "itemVariable": "file",
         "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                  "messages": [{"role": "user", "content": ["Review {{file}}"]}]}},
        {"type": "join", "id": "all"}
    ]})
}

/// What the items' agent was sent: each request's last message.
fn sent(provider: &ReplayProvider) -> Vec<String> {
    provider
        .requests()
        .iter()
        .map(|r| r.messages.last().expect("message").content.clone())
        .collect()
}

#[tokio::test]
async fn a_failed_item_is_retried_with_the_reason_then_a_person_decides() {
    let failed = md("FAILED", "The file cannot be opened.", "COMPLETE");
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:rev": [
            failed.clone(), failed, {"ok": true, "item": "b"}, {"ok": true, "item": "a"}
        ]}))
        .expect("replay"),
    );
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", fan())]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let v = run(&engine, "fan", None).await;
    assert_eq!(v.status, RunStatus::NeedsAttention, "{v:?}");
    // The item's agent is told how to steer, and its retry why it failed.
    let system = &provider.requests()[0].messages[0].content;
    assert!(system.contains("ESCALATE or HOLD"), "{system}");
    let asked = sent(&provider);
    assert_eq!(asked.len(), 3, "one try, one retry, and item-b: {asked:#?}");
    assert!(
        asked[1].contains(
            "Previous attempt failed: the agent replied FAILED: The file cannot be opened."
        ),
        "{asked:#?}"
    );
    assert_eq!(asked[2], "Review item-b", "the other item went on");
    let pending = v.pending.as_ref().expect("pending");
    assert_eq!(pending["kind"], "attention");
    assert_eq!(pending["reason"], "an agent asked for a person");
    assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
    let error = pending["error"].as_str().unwrap_or("");
    assert!(
        error.contains("item 0: the agent replied FAILED: The file cannot be opened."),
        "{error}"
    );
    assert!(error.contains("1 of 2 items"), "{error}");

    // The person retries it: asked again with the reason, and the run goes on.
    let v = answer(&engine, &v.conversation_id, "retry", None).await;
    assert_eq!(v.status, RunStatus::Completed, "{:?}", v.error);
    let asked = sent(&provider);
    assert_eq!(asked.len(), 4);
    assert!(asked[3].contains("the agent replied FAILED"), "{asked:#?}");
    let all = &stored_state(home.path(), &v.conversation_id).steps["all"];
    assert_eq!(all["succeeded"], 2, "{all}");
}

#[tokio::test]
async fn a_blocked_item_that_succeeds_on_its_retry_needs_nobody() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:rev": [
            md("BLOCKED", "The repository is locked.", "COMPLETE"), {"ok": true}, {"ok": true}
        ]}))
        .expect("replay"),
    );
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", fan())]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let v = run(&engine, "fan", None).await;
    assert_eq!(v.status, RunStatus::Completed, "{:?}", v.error);
    let all = &stored_state(home.path(), &v.conversation_id).steps["all"];
    assert_eq!(all["succeeded"], 2, "{all}");
    assert_eq!(all["retries"], json!({"0": 1}), "{all}");
    assert!(sent(&provider)[1].contains("the agent replied BLOCKED"));
}

#[tokio::test]
async fn escalate_and_hold_wait_for_a_person_with_the_agents_reason() {
    for (next, choice) in [
        ("ESCALATE: legal must sign the NDA", "skip"),
        ("HOLD: legal must sign the NDA", "retry"),
    ] {
        let provider = Arc::new(
            ReplayProvider::from_value(&json!({"agent:rev": [
                md("SUCCESS", "Reviewed.", next), {"ok": true, "item": "b"}, {"ok": true, "item": "a"}
            ]}))
            .expect("replay"),
        );
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("fan", fan())]);
        let engine = engine_at(home.path(), provider.clone(), START_MS);
        let v = run(&engine, "fan", None).await;
        assert_eq!(v.status, RunStatus::NeedsAttention, "{next}: {v:?}");
        assert_eq!(sent(&provider).len(), 2, "{next}: not retried by itself");
        let pending = v.pending.as_ref().expect("pending");
        let error = pending["error"].as_str().unwrap_or("");
        let word = next.split(':').next().unwrap_or("");
        assert!(
            error.contains(&format!(
                "item 0: the agent asks for a person ({word}): legal must sign the NDA"
            )),
            "{error}"
        );
        // The agent's reply is in the transcript as it came.
        assert!(
            v.turns
                .iter()
                .any(|t| t.role == "assistant" && t.content.contains("## Next Action")),
            "{:?}",
            v.turns
        );
        let v = answer(&engine, &v.conversation_id, choice, None).await;
        assert_eq!(v.status, RunStatus::Completed, "{next}: {:?}", v.error);
        let all = &stored_state(home.path(), &v.conversation_id).steps["all"];
        if choice == "skip" {
            assert_eq!(all["succeeded"], 1, "{all}");
            assert_eq!(all["failed"][0]["index"], 0, "{all}");
        } else {
            assert_eq!(sent(&provider).len(), 3);
            assert_eq!(all["succeeded"], 2, "{all}");
        }
    }
}
