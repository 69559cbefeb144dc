//! An agent's history as its requests carry it: the engine keeps each
//! running run's conversation tails in memory (issue 29), and they must be
//! what the database holds — every committed message, the last
//! `HISTORY_LIMIT` of them, in order.

use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::support::{START_MS, engine_at, run, write_flows};
use maskflow_flows::HISTORY_LIMIT;
use maskflow_llm::{BoxFuture, ChatMessage, ChatRole, DeltaSink, LlmReply, LlmRequest};
use maskflow_llm::{Provider, ProviderError, Role};

/// Answers the worker `{"n": k}` and records what it was sent; the stopper
/// says "yes" at the `iterations`-th question.
#[derive(Debug)]
struct Recorder {
    iterations: usize,
    worker: Mutex<Vec<Vec<ChatMessage>>>,
    breaks: Mutex<usize>,
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        let text = if request.role == Role::Agent("stopper".into()) {
            let mut n = self.breaks.lock().expect("lock");
            *n += 1;
            if *n >= self.iterations {
                r#"{"answer":"yes"}"#
            } else {
                r#"{"answer":"no"}"#
            }
            .to_owned()
        } else {
            let mut seen = self.worker.lock().expect("lock");
            seen.push(request.messages.clone());
            format!(r#"{{"n":{}}}"#, seen.len())
        };
        Box::pin(async move { Ok(LlmReply { text }) })
    }
}

#[tokio::test]
async fn every_request_carries_the_last_committed_messages_of_its_conversation() {
    let iterations = HISTORY_LIMIT / 2 + 5;
    let home = tempfile::tempdir().expect("tempdir");
    let flow = json!({"steps": [{"type": "startLoop", "steps": [
        {"type": "llm", "agentType": "worker", "identifier": "w",
         "messages": [{"role": "user", "content": ["step {{loop.iteration}}"]}]},
        {"type": "break", "agentType": "stopper", "identifier": "s", "question": "stop?", "breakOn": "yes"}]}]});
    write_flows(home.path(), &[("loop", flow)]);
    let provider = Arc::new(Recorder {
        iterations,
        worker: Mutex::new(Vec::new()),
        breaks: Mutex::new(0),
    });
    let engine = engine_at(home.path(), provider.clone(), START_MS);
    let view = run(&engine, "loop", None).await;
    assert_eq!(
        view.status,
        maskflow_flows::RunStatus::Completed,
        "{:?}",
        view.error
    );
    let seen = provider.worker.lock().expect("lock");
    assert_eq!(seen.len(), iterations);
    let mut committed: Vec<ChatMessage> = Vec::new();
    for (i, messages) in seen.iter().enumerate() {
        let k = i + 1;
        let start = committed.len().saturating_sub(HISTORY_LIMIT);
        let expected = &committed[start..];
        // The system message, the history, then this step's prompt.
        assert_eq!(messages.first().map(|m| m.role), Some(ChatRole::System));
        assert_eq!(&messages[1..messages.len() - 1], expected, "request {k}");
        let prompt = messages.last().expect("prompt");
        assert_eq!(
            (prompt.role, prompt.content.as_str()),
            (ChatRole::User, format!("step {k}").as_str())
        );
        committed.push(prompt.clone());
        committed.push(ChatMessage::new(
            ChatRole::Assistant,
            format!(r#"{{"n":{k}}}"#),
        ));
    }
    assert!(committed.len() > HISTORY_LIMIT, "the window was filled");
}
