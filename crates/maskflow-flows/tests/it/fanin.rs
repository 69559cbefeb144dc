//! Fan-in (issue 18, point 10): a join's prompt asked once over the gathered
//! results, with local values masked — seed 003's PR Review example, imported
//! from its Mermaid text verbatim, routed on the join's `output.score`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, engine_on, run, stored_state, wire, write_flows};
use maskflow_flows::testing::RecordedEvents;
use maskflow_flows::*;
use maskflow_llm::ReplayProvider;

const PR_REVIEW: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review.mmd");

/// Seed 003's PR Review example, imported from its Mermaid text verbatim.
fn pr_review() -> Value {
    let def = maskflow_flows::mermaid::import(PR_REVIEW).expect("imports");
    serde_json::to_value(def).expect("json")
}

#[tokio::test]
async fn the_pr_review_routes_on_the_score_of_the_joins_reply() {
    let flow = pr_review();
    let d = flow["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["id"] == "D")
        .expect("D");
    assert_eq!(d["type"], "join");
    assert!(
        d["prompt"]
            .as_str()
            .unwrap_or("")
            .starts_with("Aggregate all file reviews")
    );
    for (score, then, last) in [
        (92, "Generate approval comment", "Merged"),
        (35, "Generate constructive feedback", "Closed"),
    ] {
        let provider = Arc::new(
            ReplayProvider::from_value(&json!({"agent:assistant": [
                {"title": "Fix parser"},
                {"files": [{"path": "src/a.rs"}, {"path": "src/b.rs"}]},
                {"score": 95, "issues": []},
                {"score": 40, "issues": [{"severity": "high", "line": 3, "message": "unchecked index"}]},
                {"score": score, "summary": "overall", "criticalIssues": [], "warnings": []},
                if score >= 80 { json!("Nice work.") } else { json!({"shouldRetry": false}) },
                last
            ]}))
            .expect("replay"),
        );
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("pr", flow.clone())]);
        let engine = engine_at(home.path(), provider.clone(), START_MS);
        let view = run(&engine, "pr", None).await;
        assert_eq!(
            view.status,
            RunStatus::Completed,
            "{score}: {:?}",
            view.error
        );
        let sent: Vec<String> = provider
            .requests()
            .iter()
            .map(|r| r.messages.last().expect("message").content.clone())
            .collect();
        assert_eq!(sent.len(), 7, "{sent:#?}");
        // Exactly one call for the join, over both reviews.
        let fan_in: Vec<&String> = sent
            .iter()
            .filter(|m| m.starts_with("Aggregate all file reviews"))
            .collect();
        assert_eq!(fan_in.len(), 1);
        assert!(
            fan_in[0].contains("unchecked index") && fan_in[0].contains("\"score\": 95"),
            "{}",
            fan_in[0]
        );
        assert!(sent[5].starts_with(then), "{score}: {}", sent[5]);
        let other = if score >= 80 {
            "Generate constructive feedback"
        } else {
            "Generate approval comment"
        };
        assert!(!sent.iter().any(|m| m.starts_with(other)), "{score}");
        let st = stored_state(home.path(), &view.conversation_id);
        assert_eq!(st.steps["D"]["score"], score);
        assert_eq!(view.turns.last().expect("turn").content, last);
    }
}

#[tokio::test]
async fn a_middling_score_waits_for_the_human_review() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:assistant": [
            {"title": "t"}, {"files": [{"path": "a.rs"}]}, {"score": 60}, {"score": 60, "summary": "so-so"}
        ]}))
        .expect("replay"),
    );
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("pr", pr_review())]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "pr", None).await;
    assert_eq!(view.status, RunStatus::Waiting);
    assert_eq!(view.pending.as_ref().expect("gate")["kind"], "gate");
}

#[test]
fn mermaid_keeps_the_joins_prompt_both_ways() {
    let def = maskflow_flows::mermaid::import(PR_REVIEW).expect("imports");
    let text = maskflow_flows::mermaid::export(&def);
    assert!(text.contains("Aggregate all file reviews"), "{text}");
    assert_eq!(maskflow_flows::mermaid::import(&text).expect("again"), def);
    // A join with a prompt names the agent that answers it.
    let bad = json!({"steps": [
        {"type": "foreach", "itemsPath": "input.x", "itemVariable": "x",
         "step": {"type": "llm", "agentType": "a", "identifier": "i", "messages": [{"role": "user", "content": ["hi"]}]}},
        {"type": "join", "prompt": "Sum up."}
    ]});
    let e = maskflow_flows::definition::from_value(&bad).expect_err("refused");
    assert!(e.to_string().contains("agentType"), "{e}");
}

#[tokio::test]
async fn the_fan_in_prompt_masks_local_results() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:judge": [{"score": 70}]})).expect("replay"),
    );
    let flow = json!({"input": {"files": ["people.txt"]}, "steps": [
        {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file",
         "step": {"type": "script", "path": "owner.py", "args": ["{{file}}"]}},
        {"type": "join", "id": "sum", "prompt": "Score the owners.", "agentType": "judge", "identifier": "j"}
    ]});
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("local", flow)]);
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("people.txt"), "Jane Doe\n").expect("write");
    std::fs::write(
        work.join("owner.py"),
        "import json, sys\nprint(json.dumps({'owner': open(sys.argv[1]).read().strip()}))\n",
    )
    .expect("write");
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "local", Some(&work)).await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    let sent = provider.requests();
    assert_eq!(sent.len(), 1);
    let text = &sent[0].messages.last().expect("message").content;
    assert!(text.starts_with("Score the owners."), "{text}");
    assert!(!text.contains("Jane Doe"), "{text}");
    assert!(text.contains("aaaa aaa"), "{text}");
    assert_eq!(
        stored_state(home.path(), &view.conversation_id).steps["sum"]["score"],
        70
    );
}

#[tokio::test]
async fn item_prompts_and_the_fan_in_prompt_are_user_turns_and_announced() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({
            "agent:rev": [{"score": 90}, {"score": 40}],
            "agent:judge": [{"score": 65}]
        }))
        .expect("replay"),
    );
    let flow = json!({"input": {"files": ["a.rs", "b.rs"]}, "steps": [
        {"type": "foreach", "label": "Review", "itemsPath": "input.files", "itemVariable": "file",
         "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                  "messages": [{"role": "user", "content": ["Review {{file}} ({{index}} of {{total}})."]}]}},
        {"type": "join", "id": "sum", "label": "Sum", "prompt": "Sum the scores.",
         "agentType": "judge", "identifier": "j"}
    ]});
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", flow)]);
    let events = Arc::new(RecordedEvents::default());
    let engine = engine_on(home.path(), provider, START_MS, events.clone());
    let view = run(&engine, "fan", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    let turns: Vec<(&str, &str, Value)> = view
        .turns
        .iter()
        .map(|t| (t.role.as_str(), t.content.as_str(), wire(&t.command)))
        .collect();
    // Each item's prompt, with its index, before its reply.
    for (i, file) in ["a.rs", "b.rs"].iter().enumerate() {
        let asked = format!("Review {file} ({i} of 2).");
        let at = turns
            .iter()
            .position(|(r, c, _)| *r == "user" && *c == asked)
            .unwrap_or_else(|| panic!("no prompt turn for {file}: {turns:#?}"));
        assert_eq!(turns[at].2["itemIndex"], i, "{turns:#?}");
        assert_eq!(turns[at].2["label"], "Review");
        let reply = turns[at + 1..]
            .iter()
            .find(|(_, _, m)| m["itemIndex"] == i)
            .expect("the item's reply");
        assert_eq!(reply.0, "assistant", "{turns:#?}");
    }
    // The join's fan-in prompt, after its gathering turn and before its answer.
    let n = turns.len();
    assert_eq!(turns[n - 3].0, "system", "{turns:#?}");
    assert_eq!(turns[n - 2].0, "user", "{turns:#?}");
    assert!(turns[n - 2].1.starts_with("Sum the scores."), "{turns:#?}");
    assert!(turns[n - 2].1.contains("\"score\": 40"), "{turns:#?}");
    assert_eq!(turns[n - 2].2["label"], "Sum");
    assert_eq!(turns[n - 1].0, "assistant");
    // Each of the three prompts was announced (the app's seed 004 `user_turn`).
    let announced = events.prompts();
    assert_eq!(announced.len(), 3, "{announced:#?}");
    for (_, c, _) in turns.iter().filter(|(r, _, _)| *r == "user") {
        assert!(announced.iter().any(|a| a == c), "{c} not announced");
    }
}

/// Issue 26, break 10: the fan-in prompt after a fan-out whose script items
/// all failed, their error output holding a row of a working-folder file.
#[tokio::test]
async fn failed_script_items_errors_reach_the_fan_in_prompt_masked() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:judge": [{"score": 0}]})).expect("replay"),
    );
    let flow = json!({"input": {"files": ["people.txt", "people.txt"]}, "steps": [
        {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "maxRetries": 0,
         "step": {"type": "script", "path": "fail.py", "args": ["{{file}}"]}},
        {"type": "join", "onFailure": "skip", "prompt": "Why did they fail?", "agentType": "judge", "identifier": "j"}
    ]});
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("errors", flow)]);
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(work.join("people.txt"), "Zebulon Okonkwo\n").expect("write");
    std::fs::write(
        work.join("fail.py"),
        "import sys\nsys.exit('bad row: ' + open(sys.argv[1]).read().strip())\n",
    )
    .expect("write");
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "errors", Some(&work)).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    let sent = provider.requests();
    assert_eq!(sent.len(), 1);
    let text = &sent[0].messages.last().expect("message").content;
    assert!(
        text.contains("aaaaaaa aaaaaaa"),
        "the errors went, masked: {text}"
    );
    assert!(!text.contains("Okonkwo"), "{text}");
}

/// Issue 26, break 10: a fan-out over subflows whose child runs a script;
/// the children's outputs are local to the join's prompt.
#[tokio::test]
async fn a_fan_out_over_subflows_that_run_scripts_is_masked_in_the_fan_in_prompt() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:judge": [{"score": 50}]})).expect("replay"),
    );
    let child = json!({"steps": [{"type": "script", "path": "owner.py"}]});
    let parent = json!({"input": {"runs": [1, 2]}, "steps": [
        {"type": "foreach", "itemsPath": "input.runs", "itemVariable": "n",
         "step": {"type": "subflow", "flow": "child"}},
        {"type": "join", "prompt": "Score the owners.", "agentType": "judge", "identifier": "j"}
    ]});
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("child", child), ("parent", parent)]);
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(
        work.join("owner.py"),
        "import json\nprint(json.dumps({'owner': 'Zebulon Okonkwo', 'Marisol Quarrington': 1}))\n",
    )
    .expect("write");
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "parent", Some(&work)).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    let text = &provider.requests()[0]
        .messages
        .last()
        .expect("message")
        .content
        .clone();
    for raw in ["Okonkwo", "Zebulon", "Quarrington"] {
        assert!(!text.contains(raw), "{raw} in {text}");
    }
    assert!(text.contains("aaaaaaa aaaaaaa"), "{text}");
}
