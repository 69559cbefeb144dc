//! A fan-out item whose retries ran out makes the run wait for a person
//! (retry the item, skip it, or stop the run) instead of failing it, by
//! default (seed 002: one retry with feedback, then a person) as with
//! `onExhausted: "ask"`; answered over the usual answer path. `"fail"` and
//! an `onFailure` of the join's own opt out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{START_MS, answer, engine_at, run, write_flows};
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

/// A reviewer that finds `bad.txt` not ok until the test fixes it.
#[derive(Debug, Default)]
struct Reviewer {
    fixed: AtomicBool,
    asked: Mutex<Vec<String>>,
}

impl Reviewer {
    fn asked(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

impl Provider for Reviewer {
    fn name(&self) -> &str {
        "reviewer"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            // A retry's feedback is a message of its own: read them all.
            let prompt = request
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            if let Ok(mut a) = self.asked.lock() {
                a.push(prompt.clone());
            }
            let ok = !prompt.contains("bad.txt") || self.fixed.load(Ordering::SeqCst);
            Ok(LlmReply {
                text: json!({ "ok": ok }).to_string(),
            })
        })
    }
}

fn flow(join: Value) -> Value {
    json!({"input": {"files": ["a.txt", "bad.txt", "c.txt"]}, "steps": [
        {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "maxRetries": 1,
         "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                  "messages": [{"role": "user", "content": ["Review {{file}}"]}],
                  "postconditions": [{"check": "output.ok === true", "error": "the review is not ok"}]}},
        join
    ]})
}

fn reviewed_bad(reviewer: &Reviewer) -> usize {
    reviewer
        .asked()
        .iter()
        .filter(|p| p.contains("bad.txt"))
        .count()
}

fn joined(view: &RunView) -> Vec<String> {
    view.turns
        .iter()
        .filter(|t| t.role == "system" && t.content.starts_with("Joined"))
        .map(|t| t.content.clone())
        .collect()
}

#[tokio::test]
async fn an_exhausted_item_asks_a_person_who_retries_it() {
    let home = tempfile::tempdir().expect("tempdir");
    let ask = json!({"type": "join", "id": "all", "onExhausted": "ask"});
    write_flows(home.path(), &[("fan", flow(ask))]);
    let reviewer = Arc::new(Reviewer::default());
    let engine = engine_at(home.path(), reviewer.clone(), START_MS);
    let view = run(&engine, "fan", None).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    // One try and its one retry, and the other items went on.
    assert_eq!(reviewed_bad(&reviewer), 2);
    assert_eq!(reviewer.asked().len(), 4);
    let pending = serde_json::to_value(view.pending.as_ref().expect("pending")).expect("json");
    assert_eq!(pending["kind"], "attention");
    assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
    assert_eq!(
        pending["reason"],
        "items failed past their retries or asked for a person"
    );
    let error = pending["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("1 of 3 items need a person") && error.contains("item 1:"),
        "{error}"
    );

    // The person fixes what was wrong and retries the item: the run ends.
    reviewer.fixed.store(true, Ordering::SeqCst);
    let id = view.conversation_id.clone();
    let view = answer(&engine, &id, "retry", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(reviewed_bad(&reviewer), 3);
    assert_eq!(joined(&view), ["Joined 3 of 3 items (0 failed)"]);
}

#[tokio::test]
async fn an_exhausted_item_a_person_skips_is_left_out_of_the_join() {
    let home = tempfile::tempdir().expect("tempdir");
    let ask = json!({"type": "join", "id": "all", "onExhausted": "ask"});
    write_flows(home.path(), &[("fan", flow(ask))]);
    let reviewer = Arc::new(Reviewer::default());
    let engine = engine_at(home.path(), reviewer.clone(), START_MS);
    let view = run(&engine, "fan", None).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    let view = answer(&engine, &view.conversation_id, "skip", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(
        reviewed_bad(&reviewer),
        2,
        "a skipped item is not tried again"
    );
    assert_eq!(joined(&view), ["Joined 2 of 3 items (1 failed)"]);

    // Stopping is the third choice: the run ends stopped, nothing more runs.
    let again = run(&engine, "fan", None).await;
    assert_eq!(again.status, RunStatus::NeedsAttention, "{again:?}");
    let stopped = answer(&engine, &again.conversation_id, "stop", None).await;
    assert_eq!(stopped.status, RunStatus::Stopped, "{stopped:?}");
    assert!(joined(&stopped).is_empty());
}

/// The first run of `join` over the fan-out, with the reviewer and the number
/// of times `bad.txt` was reviewed.
async fn first_run(join: Value) -> (RunView, usize) {
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", flow(join))]);
    let reviewer = Arc::new(Reviewer::default());
    let engine = engine_at(home.path(), reviewer.clone(), START_MS);
    let view = run(&engine, "fan", None).await;
    (view, reviewed_bad(&reviewer))
}

#[tokio::test]
async fn without_on_exhausted_an_exhausted_item_asks_a_person() {
    let (view, reviewed) = first_run(json!({"type": "join", "id": "all"})).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    assert_eq!(reviewed, 2, "one try and its one retry with feedback");
    let pending = serde_json::to_value(view.pending.as_ref().expect("pending")).expect("json");
    assert_eq!(pending["kind"], "attention");
    assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
    assert_eq!(
        pending["reason"],
        "items failed past their retries or asked for a person"
    );
}

#[tokio::test]
async fn on_exhausted_fail_opts_out_and_the_item_fails_the_run() {
    let join = json!({"type": "join", "id": "all", "onExhausted": "fail"});
    let (view, reviewed) = first_run(join).await;
    assert_eq!(view.status, RunStatus::Failed, "{view:?}");
    assert_eq!(reviewed, 2);
}

#[tokio::test]
async fn a_join_that_skips_failed_items_is_not_asked_about_them() {
    let join = json!({"type": "join", "id": "all", "onFailure": "skip"});
    let (view, reviewed) = first_run(join).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(reviewed, 2);
    assert_eq!(joined(&view), ["Joined 2 of 3 items (1 failed)"]);
}

/// Seed 002's `ResumeContext` in the run's view: the fan-out's counts while
/// it waits, then the steps completed with their times and the last output.
#[tokio::test]
async fn the_view_says_what_a_resume_starts_from() {
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(
        home.path(),
        &[("fan", flow(json!({"type": "join", "id": "all"})))],
    );
    let reviewer = Arc::new(Reviewer::default());
    let engine = engine_at(home.path(), reviewer.clone(), START_MS);
    let view = run(&engine, "fan", None).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    let fan = serde_json::to_value(&view.resume.fan_out).expect("json");
    assert_eq!(
        fan,
        json!({"step": "foreach", "stepPath": [0], "total": 3, "completed": 2, "failed": 1, "remaining": 0}),
        "{view:?}"
    );
    assert!(view.resume.completed_steps.is_empty(), "{view:?}");

    reviewer.fixed.store(true, Ordering::SeqCst);
    let view = answer(&engine, &view.conversation_id, "retry", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    let done: Vec<(Vec<usize>, u32)> = view
        .resume
        .completed_steps
        .iter()
        .map(|c| (c.step_path.clone(), c.times))
        .collect();
    assert_eq!(done, [(vec![0], 1), (vec![1], 1)], "{view:?}");
    assert!(
        view.resume
            .completed_steps
            .iter()
            .all(|c| c.completed_at.ends_with('Z') && !c.label.is_empty()),
        "{view:?}"
    );
    assert_eq!(view.resume.last_output["succeeded"], 3, "{view:?}");
    assert!(!view.resume.last_output_local);
}
