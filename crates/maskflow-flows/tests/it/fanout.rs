//! Fan-out retries (issue 18, point 8): foreach items retried up to their
//! step's limit with a `retryCount` each, kept in the checkpoint, and a
//! retry due at a resume (after a stop or a dead process) shown to the
//! person.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, run, stored_state, wire, write_flows};
use maskflow_flows::*;
use maskflow_llm::{
    BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, ReplayProvider,
};

async fn answer(engine: &FlowEngine, id: &str, option: &str) -> RunView {
    let (_, handle) = engine
        .prepare_answer(
            id,
            GateAnswer {
                option: option.into(),
                input: None,
                result: None,
            },
        )
        .expect("answer");
    handle.expect("runs on").run().await;
    engine.get_run(id).expect("view")
}

/// What a [`Scripted`] call does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Act {
    Ok,
    Fail,
    Hang,
}

/// Replies per item (`item-<x>` in the request), by how many times that
/// item was asked: `plan(item, call)` with `call` counted from 1.
#[derive(Debug)]
struct Scripted {
    plan: fn(&str, usize) -> Act,
    calls: Mutex<HashMap<String, usize>>,
    entered_hang: tokio::sync::Notify,
}

impl Scripted {
    fn new(plan: fn(&str, usize) -> Act) -> Arc<Self> {
        Arc::new(Self {
            plan,
            calls: Mutex::new(HashMap::new()),
            entered_hang: tokio::sync::Notify::new(),
        })
    }

    fn calls(&self, item: &str) -> usize {
        self.calls
            .lock()
            .expect("lock")
            .get(item)
            .copied()
            .unwrap_or(0)
    }
}

fn item_of(request: &LlmRequest) -> String {
    let text = request.messages.last().map_or("", |m| m.content.as_str());
    text.find("item-").map_or_else(String::new, |at| {
        text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '-')
            .collect()
    })
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let item = item_of(request);
            let call = {
                let mut calls = self.calls.lock().expect("lock");
                let n = calls.entry(item.clone()).or_insert(0);
                *n += 1;
                *n
            };
            match (self.plan)(&item, call) {
                Act::Ok => Ok(LlmReply {
                    text: format!("{{\"ok\": true, \"item\": \"{item}\"}}"),
                }),
                Act::Fail => Err(ProviderError::Unconfigured {
                    role: format!("test back end down for {item}"),
                }),
                Act::Hang => {
                    self.entered_hang.notify_one();
                    std::future::pending().await
                }
            }
        })
    }
}

fn fan(max_retries: Option<u32>, on_failure: Option<&str>) -> Value {
    let mut each = json!({"type": "foreach", "itemsPath": "input.files", "itemVariable": "file",
        "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                 "messages": [{"role": "user", "content": ["Review {{file}}"]}]}});
    if let Some(n) = max_retries {
        each["maxRetries"] = json!(n);
    }
    let mut join = json!({"type": "join", "id": "all"});
    if let Some(p) = on_failure {
        join["onFailure"] = json!(p);
    }
    json!({"input": {"files": ["item-a", "item-b", "item-c"]}, "steps": [each, join]})
}

#[tokio::test]
async fn an_item_that_fails_once_is_retried_and_keeps_its_retry_count() {
    let provider = Scripted::new(|item, call| {
        if item == "item-b" && call == 1 {
            Act::Fail
        } else {
            Act::Ok
        }
    });
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", fan(None, None))]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "fan", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    assert_eq!(provider.calls("item-a"), 1);
    assert_eq!(provider.calls("item-b"), 2, "item-b is retried once");
    assert_eq!(provider.calls("item-c"), 1);
    let all = &stored_state(home.path(), &view.conversation_id).steps["all"];
    assert_eq!(all["succeeded"], 3);
    assert_eq!(all["retries"], json!({"1": 1}), "{all}");
    // One reply turn per item, the retried one with its successful reply;
    // each attempt's prompt is a user turn (seed 004), item-b's twice.
    let items: Vec<&str> = view
        .turns
        .iter()
        .filter(|t| t.role == "assistant" && wire(&t.command)["itemIndex"].is_u64())
        .map(|t| t.content.as_str())
        .collect();
    assert_eq!(items.len(), 3, "{items:?}");
    let prompts: Vec<(u64, &str)> = view
        .turns
        .iter()
        .filter(|t| t.role == "user")
        .map(|t| {
            (
                wire(&t.command)["itemIndex"].as_u64().unwrap_or(99),
                t.content.as_str(),
            )
        })
        .collect();
    assert_eq!(prompts.len(), 4, "{prompts:?}");
    for (i, item) in ["item-a", "item-b", "item-c"].iter().enumerate() {
        let of: Vec<_> = prompts.iter().filter(|(x, _)| *x == i as u64).collect();
        assert_eq!(of.len(), if i == 1 { 2 } else { 1 }, "{prompts:?}");
        assert!(
            of.iter().all(|(_, c)| *c == format!("Review {item}")),
            "{prompts:?}"
        );
    }
    assert!(items.iter().any(|t| t.contains("\"item\": \"item-b\"")));
}

#[tokio::test]
async fn an_item_that_always_fails_exhausts_its_retries_and_the_join_decides() {
    let provider = Scripted::new(|item, _| if item == "item-b" { Act::Fail } else { Act::Ok });
    let home = tempfile::tempdir().expect("tempdir");
    // Counted as failed (not asked about one by one), the join's onFailure decides.
    let mut fail = fan(Some(2), None);
    fail["steps"][1]["onExhausted"] = json!("fail");
    write_flows(
        home.path(),
        &[
            ("fail", fail),
            ("ask", fan(Some(2), Some("needsAttention"))),
        ],
    );
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "fail", None).await;
    assert_eq!(view.status, RunStatus::Failed);
    assert_eq!(provider.calls("item-b"), 3, "one try and two retries");
    let error = view.error.as_deref().unwrap_or("");
    assert!(error.contains("1 of 3 items failed"), "{error}");
    assert!(error.contains("test back end down for item-b"), "{error}");
    assert!(
        view.turns
            .iter()
            .any(|t| t.content.contains("(after 2 retries)")),
        "{:?}",
        view.turns
    );
    // With needsAttention the join asks, naming the failed item.
    let view = run(&engine, "ask", None).await;
    assert_eq!(view.status, RunStatus::NeedsAttention);
    assert_eq!(provider.calls("item-b"), 6);
    let pending = view.pending.as_ref().expect("pending");
    assert_eq!(pending["kind"], "join");
    assert_eq!(pending["failed"][0]["index"], 1);
    let st = stored_state(home.path(), &view.conversation_id);
    let b = &st.foreach.as_ref().expect("fan-out kept").results[&1];
    assert_eq!((b.ok, b.retry_count, b.retry.is_none()), (false, 2, true));
}

#[tokio::test]
async fn a_failed_postcondition_is_retried_with_feedback_up_to_the_limit() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({"agent:rev": [
            {"ok": false}, {"ok": false}, {"ok": false}, {"ok": true}
        ]}))
        .expect("replay"),
    );
    let mut flow = fan(Some(3), None);
    flow["input"]["files"] = json!(["item-a"]);
    flow["steps"][0]["step"]["postconditions"] =
        json!([{"check": "output.ok === true", "error": "say ok"}]);
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("post", flow)]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "post", None).await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    let sent = provider.requests();
    assert_eq!(sent.len(), 4);
    // The first attempt is told what is required (the workflow-step layer)
    // but not that anything failed; each retry is told why the last failed.
    assert!(
        !sent[0]
            .messages
            .iter()
            .any(|m| m.content.contains("Previous attempt failed"))
    );
    for retry in &sent[1..] {
        let last = retry.messages.last().expect("message");
        assert!(
            last.content.contains("Previous attempt failed") && last.content.contains("say ok"),
            "{:?}",
            retry.messages
        );
    }
    let all = &stored_state(home.path(), &view.conversation_id).steps["all"];
    assert_eq!(all["retries"], json!({"0": 3}));
}

#[tokio::test]
async fn a_resume_with_a_retry_due_asks_the_person_first() {
    for choice in ["retry", "skip"] {
        let home = tempfile::tempdir().expect("tempdir");
        write_flows(home.path(), &[("fan", fan(None, Some("fail")))]);
        // The first process: item-b fails, and its retry hangs until the process dies.
        let first = Scripted::new(|item, call| match (item, call) {
            ("item-b", 1) => Act::Fail,
            ("item-b", _) => Act::Hang,
            _ => Act::Ok,
        });
        let engine = engine_at(home.path(), first.clone(), START_MS);
        let (started, handle) = engine
            .prepare("fan", StartFlow::default())
            .expect("prepare");
        let id = started.conversation_id.clone();
        let task = tokio::spawn(handle.run());
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            first.entered_hang.notified(),
        )
        .await
        .expect("the retry starts");
        task.abort();
        assert!(task.await.is_err(), "the process died mid-retry");
        drop(engine);
        let st = stored_state(home.path(), &id);
        let b = &st
            .foreach
            .as_ref()
            .expect("fan-out in the checkpoint")
            .results[&1];
        assert_eq!(b.retry_count, 1);
        assert!(b.retry.is_some(), "the retry is due in the checkpoint");
        assert!(
            !st.foreach
                .as_ref()
                .expect("fan-out")
                .results
                .contains_key(&2)
        );

        // The restarted process: resuming shows the due retry instead of running it.
        let second = Scripted::new(|_, _| Act::Ok);
        let engine = engine_at(home.path(), second.clone(), START_MS + 3_600_000);
        let request = StartFlow {
            conversation_id: Some(id.clone()),
            ..StartFlow::default()
        };
        let (_, handle) = engine.prepare("fan", request).expect("resume");
        assert_eq!(handle.run().await, RunStatus::NeedsAttention);
        let view = engine.get_run(&id).expect("view");
        let pending = view.pending.as_ref().expect("pending");
        assert_eq!(pending["kind"], "attention");
        assert_eq!(pending["reason"], "retry pending");
        let error = pending["error"].as_str().unwrap_or("");
        assert!(error.contains("item 1: retry 1 of 1"), "{error}");
        assert!(error.contains("test back end down for item-b"), "{error}");
        assert_eq!(pending["options"], json!(["retry", "skip", "stop"]));
        assert_eq!(second.calls("item-b"), 0, "nothing was retried silently");
        assert_eq!(second.calls("item-c"), 0);

        let view = answer(&engine, &id, choice).await;
        assert_eq!(
            view.status,
            RunStatus::Completed,
            "{choice}: {:?}",
            view.error
        );
        let all = &stored_state(home.path(), &id).steps["all"];
        assert_eq!(second.calls("item-c"), 1);
        if choice == "retry" {
            assert_eq!(second.calls("item-b"), 1);
            assert_eq!(all["succeeded"], 3);
            assert_eq!(all["retries"], json!({"1": 1}));
        } else {
            assert_eq!(second.calls("item-b"), 0);
            assert_eq!(all["succeeded"], 2);
            assert_eq!(all["failed"][0]["index"], 1);
        }
    }
}

#[tokio::test]
async fn a_stop_mid_retry_keeps_the_finished_items_and_the_due_retry() {
    let provider = Scripted::new(|item, call| match (item, call) {
        ("item-b", 1) => Act::Fail,
        ("item-b", 2) => Act::Hang,
        _ => Act::Ok,
    });
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", fan(None, None))]);
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let (started, handle) = engine
        .prepare("fan", StartFlow::default())
        .expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        provider.entered_hang.notified(),
    )
    .await
    .expect("the retry starts");
    let view = engine.stop(&id).await.expect("stop");
    assert_eq!(task.await.expect("joined"), RunStatus::Stopped);
    assert_eq!(view.status, RunStatus::Stopped);
    let st = stored_state(home.path(), &id);
    let results = &st.foreach.as_ref().expect("the fan-out is kept").results;
    assert!(results[&0].ok, "the finished item is kept");
    assert!(results[&1].retry.is_some(), "the retry is still due");

    let request = StartFlow {
        conversation_id: Some(id.clone()),
        ..StartFlow::default()
    };
    let (_, handle) = engine.prepare("fan", request).expect("resume");
    assert_eq!(handle.run().await, RunStatus::NeedsAttention);
    assert_eq!(
        provider.calls("item-a"),
        1,
        "the finished item is not run again"
    );
    assert_eq!(provider.calls("item-b"), 2);
    let view = answer(&engine, &id, "retry").await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    assert_eq!(provider.calls("item-a"), 1);
    assert_eq!(provider.calls("item-b"), 3);
    let all = &stored_state(home.path(), &id).steps["all"];
    assert_eq!(all["retries"], json!({"1": 1}));
}
