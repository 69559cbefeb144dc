//! A single step's retry that was due when the run stopped is shown on the
//! run before anything runs it ("step X will be retried (attempt 2 of 2)"),
//! and resuming runs exactly that retry, with its feedback. The run also
//! lists the steps a resume may start at, in the flow's order.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tokio::sync::Notify;

use crate::support::{START_MS, engine_at, write_flows};
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

/// Replies a failing score first, hangs on the retry (announcing it), then
/// replies a passing score; keeps the last prompt it was sent.
#[derive(Debug, Default)]
struct FailThenHang {
    calls: AtomicUsize,
    hanging: Notify,
    last_prompt: std::sync::Mutex<String>,
}

impl Provider for FailThenHang {
    fn name(&self) -> &str {
        "fail-then-hang"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            if let Some(m) = request.messages.last() {
                *self.last_prompt.lock().expect("lock") = m.content.clone();
            }
            match n {
                1 => Ok(LlmReply {
                    text: r#"{"score": 0}"#.into(),
                }),
                2 => {
                    self.hanging.notify_one();
                    std::future::pending().await
                }
                _ => Ok(LlmReply {
                    text: r#"{"score": 5}"#.into(),
                }),
            }
        })
    }
}

#[tokio::test]
async fn a_due_retry_is_shown_on_the_stopped_run_and_runs_on_resume() {
    let home = tempfile::tempdir().expect("home");
    let flow = json!({"steps": [{"type": "llm", "label": "Score it", "agentType": "a", "identifier": "x",
        "messages": [{"role": "user", "content": ["score"]}],
        "postconditions": [{"check": "output.score > 0", "error": "score must be positive"}]}]});
    write_flows(home.path(), &[("p", flow)]);
    let provider = Arc::new(FailThenHang::default());
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let (started, handle) = engine.prepare("p", StartFlow::default()).expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    provider.hanging.notified().await;

    // While the retry runs, nothing says it is still to come.
    assert_eq!(engine.get_run(&id).expect("view").retry_due, None);
    let view = engine.stop(&id).await.expect("stop");
    assert_eq!(task.await.expect("joined"), RunStatus::Stopped);
    assert_eq!(view.status, RunStatus::Stopped);
    let due = engine
        .get_run(&id)
        .expect("view")
        .retry_due
        .expect("the due retry is shown");
    assert_eq!(
        due.message,
        "step \"Score it\" will be retried (attempt 2 of 2)"
    );
    assert_eq!(
        (
            due.step.as_str(),
            due.step_path.as_slice(),
            due.attempt,
            due.of
        ),
        ("Score it", &[0usize][..], 2, 2)
    );
    assert_eq!(due.feedback, "score must be positive");
    let wire = serde_json::to_value(engine.get_run(&id).expect("view")).expect("json");
    assert_eq!(wire["retryDue"]["message"], due.message.as_str(), "{wire}");
    assert_eq!(
        provider.calls.load(Ordering::SeqCst),
        2,
        "nothing ran it yet"
    );

    let (_, handle) = engine
        .prepare(
            "p",
            StartFlow {
                conversation_id: Some(id.clone()),
                ..StartFlow::default()
            },
        )
        .expect("resume");
    handle.run().await;
    let view = engine.get_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(view.retry_due, None);
    assert_eq!(provider.calls.load(Ordering::SeqCst), 3);
    let prompt = provider.last_prompt.lock().expect("lock").clone();
    assert!(
        prompt.contains("Previous attempt failed: score must be positive"),
        "{prompt}"
    );
}

#[tokio::test]
async fn a_run_lists_the_steps_a_resume_may_start_at() {
    let home = tempfile::tempdir().expect("home");
    let step = |label: &str| {
        json!({"type": "llm", "label": label, "agentType": "a", "identifier": "x",
        "messages": [{"role": "user", "content": ["go"]}]})
    };
    let flow = json!({"steps": [step("First"), {"type": "startLoop", "label": "Loop", "maxIterations": 2,
        "steps": [step("Inner"), {"type": "break", "label": "Done?", "agentType": "a", "identifier": "b",
                                  "question": "Done?", "breakOn": "yes"}]}]});
    write_flows(home.path(), &[("p", flow)]);
    let provider = Arc::new(FailThenHang::default());
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let (started, handle) = engine.prepare("p", StartFlow::default()).expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    provider.hanging.notified().await;
    engine.stop(&id).await.expect("stop");
    assert_eq!(task.await.expect("joined"), RunStatus::Stopped);
    let view = engine.get_run(&id).expect("view");
    let listed: Vec<(Vec<usize>, &str)> = view
        .resume_steps
        .iter()
        .map(|s| (s.step_path.clone(), s.label.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (vec![0], "First"),
            (vec![1], "Loop"),
            (vec![1, 0], "Inner"),
            (vec![1, 1], "Done?")
        ]
    );
    // The innermost one is a path the engine resumes at.
    let (_, _handle) = engine
        .prepare(
            "p",
            StartFlow {
                conversation_id: Some(id.clone()),
                resume_step_path: Some(vec![1, 1]),
                ..StartFlow::default()
            },
        )
        .expect("[1, 1] is accepted");
}
