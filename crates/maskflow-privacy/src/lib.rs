//! Privacy: the egress guard ([`guard`]) and the ledger ([`ledger`]), joined
//! as one [`Provider`] decorator, [`GuardedProvider`], that wraps any back
//! end. Every request is checked against the version's raw values before it
//! leaves — a match fails with [`ProviderError::PrivacyBlocked`] and nothing
//! is sent — and every request, sent or blocked, is recorded in the ledger,
//! written ahead: a sent request's row exists before it is sent.
//!
//! It must never depend on the store, the app (maskflow-core) or a shell: it
//! uses only the back ends (`maskflow-llm`), the extractors and the clock
//! (checked by `scripts/structure.py`). The ledger is written through the
//! [`CallSink`] its caller hands it, not by SQL here.

#![deny(missing_docs)]

pub mod categories;
pub mod extracts;
pub mod guard;
pub mod keys;
pub mod ledger;
pub mod names;
pub mod words;

use std::sync::{Arc, Mutex};

use maskflow_clock::{Clock, IdGen, format_rfc3339};
use maskflow_llm::call::{self, CallRecord, ManualWaiter};
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

pub use guard::{GuardIndex, GuardMatch, Verdict};
pub use ledger::{CallOutcome, CallSink, LedgerEntry};

/// A provider behind the guard and the ledger.
#[derive(Debug, Clone)]
pub struct GuardedProvider {
    inner: Arc<dyn Provider>,
    guard: Arc<GuardIndex>,
    allowed: Vec<String>,
    sink: Arc<dyn CallSink>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    workflow_id: Option<String>,
    /// Indexes checked besides `guard` (a flow run's working folder).
    also: Vec<Arc<GuardIndex>>,
    /// The flow run and step the calls are for.
    flow_step: Option<(String, String)>,
    /// Which call this is, handed to the back end (a manual prompt is
    /// stored with it).
    tag: Option<call::CallTag>,
    /// Who waits on a manual prompt of these calls, handed to the back end.
    waiter: Option<ManualWaiter>,
}

impl GuardedProvider {
    /// Wraps `inner`: requests are checked against `guard` (the tokens of
    /// `allowed` texts pass) and recorded through `sink`.
    pub fn new(
        inner: Arc<dyn Provider>,
        guard: Arc<GuardIndex>,
        sink: Arc<dyn CallSink>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGen>,
    ) -> Self {
        Self {
            inner,
            guard,
            allowed: Vec::new(),
            sink,
            clock,
            ids,
            workflow_id: None,
            also: Vec::new(),
            flow_step: None,
            tag: None,
            waiter: None,
        }
    }

    /// A manual prompt of these calls is waited on by `waiter` (a build),
    /// so an answer given after a restart reaches it.
    pub fn waited_on_by(mut self, waiter: ManualWaiter) -> Self {
        self.waiter = Some(waiter);
        self
    }

    /// Its calls are the call `tag` (see [`call::CallTag`]).
    pub fn tagged(mut self, tag: call::CallTag) -> Self {
        self.tag = Some(tag);
        self
    }

    /// Requests are checked against `index` too (a match in either blocks).
    pub fn also_checking(mut self, index: Arc<GuardIndex>) -> Self {
        self.also.push(index);
        self
    }

    /// Calls are made by step `step` of flow run `run_id` (recorded in the
    /// ledger); the run waits on their manual prompts.
    pub fn for_flow_step(mut self, run_id: String, step: String) -> Self {
        self.waiter = Some(ManualWaiter::FlowRun {
            run_id: run_id.clone(),
        });
        self.flow_step = Some((run_id, step));
        self
    }

    /// What the guard finds in `request`, in `guard` and the other
    /// indexes, each value judged by the kind of part it is in
    /// ([`GuardIndex::judge_request`]): the values that keep it from being
    /// sent, and those sent with a note.
    fn verdict(&self, request: &LlmRequest) -> Verdict {
        let mut verdict = self.guard.judge_request(request, &self.allowed);
        for index in &self.also {
            if verdict.refused.len() >= guard::MAX_MATCHES {
                break;
            }
            let more = index.judge_request(request, &self.allowed);
            for (mine, theirs) in [
                (&mut verdict.refused, more.refused),
                (&mut verdict.noted, more.noted),
            ] {
                for m in theirs {
                    if !mine.contains(&m) {
                        mine.push(m);
                    }
                }
            }
        }
        verdict.refused.truncate(guard::MAX_MATCHES);
        verdict.noted.truncate(guard::MAX_MATCHES);
        verdict
    }

    /// Calls are about `workflow_id`.
    pub fn for_workflow(mut self, workflow_id: Option<String>) -> Self {
        self.workflow_id = workflow_id;
        self
    }

    /// Texts whose tokens may be sent (text the user confirmed).
    pub fn allowing(mut self, texts: Vec<String>) -> Self {
        self.allowed = texts;
        self
    }

    fn entry(&self, request: &LlmRequest, at: &str) -> LedgerEntry {
        LedgerEntry {
            id: self.ids.next_id("call"),
            created_at: at.to_owned(),
            role: request.role.key(),
            provider: self.inner.name().to_owned(),
            model: self.inner.model().to_owned(),
            workflow_id: self.workflow_id.clone(),
            url: None,
            request_body: String::new(),
            reply: None,
            input_tokens: None,
            output_tokens: None,
            latency_ms: 0,
            outcome: CallOutcome::Ok,
            blocked: false,
            error: None,
            deleted_workflow: None,
            flow_run_id: self.flow_step.as_ref().map(|(run, _)| run.clone()),
            flow_step: self.flow_step.as_ref().map(|(_, step)| step.clone()),
            local: self.inner.is_local(),
            note: None,
        }
    }

    async fn run(
        &self,
        request: &LlmRequest,
        on_delta: DeltaSink<'_>,
    ) -> Result<LlmReply, ProviderError> {
        let started = self.clock.now_ms();
        let at = format_rfc3339(started);
        let verdict = self.verdict(request);
        if !verdict.refused.is_empty() {
            let mut e = self.entry(request, &at);
            let err = ProviderError::PrivacyBlocked(verdict.refused);
            e.outcome = CallOutcome::Blocked;
            e.blocked = true;
            e.error = Some(err.to_string());
            self.sink.record(e);
            return Err(err);
        }
        let record = CallRecord::of_call(
            self.workflow_id.clone(),
            self.tag.clone(),
            self.waiter.clone(),
        );
        // Written ahead: the row exists before anything is sent, marked as
        // stopped until the call ends; if it cannot be written, nothing is sent.
        let mut ahead = self.entry(request, &at);
        ahead.note = verdict.note();
        ahead.request_body = request_text(request);
        ahead.outcome = CallOutcome::Cancelled;
        ahead.error = Some(ledger::IN_FLIGHT.into());
        if let Err(why) = self.sink.begin(&ahead) {
            return Err(ProviderError::Failed {
                provider: self.inner.name().to_owned(),
                message: format!(
                    "the request was not sent: it could not be recorded in the ledger ({why})"
                ),
            });
        }
        // Completes the row even when the caller drops the call half-way.
        let pending = Pending {
            sink: self.sink.clone(),
            clock: self.clock.clone(),
            started,
            record: record.clone(),
            fallback_body: ahead.request_body.clone(),
            entry: Mutex::new(Some(ahead)),
        };
        let result = call::scope(record, self.inner.complete(request, on_delta)).await;
        pending.finish(&result);
        result
    }
}

/// The request as the ledger shows it when the back end sends no HTTP body
/// (replay, manual): its role, messages and schema as JSON.
fn request_text(request: &LlmRequest) -> String {
    /// The same text `json!({role, messages, schema})` gives (keys in
    /// order), written straight from the request rather than through a
    /// `Value` copy of every message: it is made for every call.
    #[derive(serde::Serialize)]
    struct Body<'a> {
        messages: Vec<Message<'a>>,
        role: String,
        schema: &'a Option<serde_json::Value>,
    }
    /// A message with its keys sorted, as a `Value` writes them.
    #[derive(serde::Serialize)]
    struct Message<'a> {
        content: &'a str,
        role: maskflow_llm::ChatRole,
    }
    serde_json::to_string(&Body {
        messages: request
            .messages
            .iter()
            .map(|m| Message {
                content: &m.content,
                role: m.role,
            })
            .collect(),
        role: request.role.key(),
        schema: &request.schema,
    })
    .unwrap_or_default()
}

struct Pending {
    sink: Arc<dyn CallSink>,
    clock: Arc<dyn Clock>,
    started: u64,
    record: Arc<CallRecord>,
    fallback_body: String,
    entry: Mutex<Option<LedgerEntry>>,
}

impl Pending {
    fn take(&self) -> Option<LedgerEntry> {
        let mut e = self
            .entry
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let r = self.record.recorded();
        e.url = r.url;
        e.request_body = r.body.unwrap_or_else(|| self.fallback_body.clone());
        e.input_tokens = r.input_tokens;
        e.output_tokens = r.output_tokens;
        e.latency_ms =
            i64::try_from(self.clock.now_ms().saturating_sub(self.started)).unwrap_or(i64::MAX);
        Some(e)
    }

    fn finish(&self, result: &Result<LlmReply, ProviderError>) {
        if let Some(mut e) = self.take() {
            match result {
                Ok(reply) => {
                    e.outcome = CallOutcome::Ok;
                    e.error = None;
                    e.reply = Some(reply.text.clone());
                }
                Err(err) => {
                    e.outcome = if matches!(err, ProviderError::Cancelled { .. }) {
                        CallOutcome::Cancelled
                    } else {
                        CallOutcome::Error
                    };
                    e.error = Some(err.to_string());
                }
            }
            self.sink.finish(e);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut e) = self.take() {
            e.outcome = CallOutcome::Cancelled;
            e.error = Some(ledger::IN_FLIGHT.into());
            self.sink.finish(e);
        }
    }
}

impl Provider for GuardedProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn is_manual(&self) -> bool {
        self.inner.is_manual()
    }

    fn is_local(&self) -> bool {
        self.inner.is_local()
    }

    // A probe carries no text of the user's: it only asks the back end
    // where it is and which models it serves.
    fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        self.inner.probe()
    }

    fn context_window(&self) -> BoxFuture<'_, Option<u32>> {
        self.inner.context_window()
    }

    fn takes_schema(&self) -> bool {
        self.inner.takes_schema()
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(self.run(request, on_delta))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use maskflow_clock::{StepClock, UlidGen};
    use maskflow_llm::{ChatMessage, ChatRole, Role};

    /// The ledger's request text is what the `json!` form it replaced gave.
    #[test]
    fn request_text_is_the_json_of_role_messages_and_schema() {
        for schema in [None, Some(serde_json::json!({"type": "object"}))] {
            let request = LlmRequest {
                role: Role::Agent("a \"b\"".into()),
                messages: vec![ChatMessage::new(ChatRole::User, "q\n\u{e9}")],
                schema,
            };
            let old = serde_json::json!({"role": request.role.key(),
                "messages": request.messages, "schema": request.schema});
            assert_eq!(request_text(&request), old.to_string());
        }
    }

    /// Records what the ledger was told, in order.
    #[derive(Debug, Default)]
    struct Log {
        events: Mutex<Vec<String>>,
        refuse: bool,
    }

    impl CallSink for Log {
        fn record(&self, e: LedgerEntry) {
            lock(&self.events).push(format!("record {}", e.outcome.as_str()));
        }
        fn begin(&self, e: &LedgerEntry) -> Result<(), String> {
            lock(&self.events).push(format!("begin {}", e.outcome.as_str()));
            if self.refuse {
                Err("disk full".into())
            } else {
                Ok(())
            }
        }
        fn finish(&self, e: LedgerEntry) {
            lock(&self.events).push(format!("finish {}", e.outcome.as_str()));
        }
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A back end that notes it was called, and can hang.
    #[derive(Debug, Default)]
    struct Backend {
        called: AtomicBool,
        hang: bool,
        /// The call's tag, as the back end saw it while answering.
        seen_tag: Mutex<Option<call::CallTag>>,
        /// Who waits on the call's prompt, as the back end saw it.
        seen_waiter: Mutex<Option<ManualWaiter>>,
    }

    impl Provider for Backend {
        fn name(&self) -> &str {
            "test"
        }
        fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
            Box::pin(async { Ok("reached test-server; models: m1".to_owned()) })
        }
        fn complete<'a>(
            &'a self,
            _request: &'a LlmRequest,
            _on_delta: DeltaSink<'a>,
        ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
            self.called.store(true, Ordering::SeqCst);
            let hang = self.hang;
            Box::pin(async move {
                *lock(&self.seen_tag) = call::tag();
                *lock(&self.seen_waiter) = call::waiter();
                if hang {
                    std::future::pending::<()>().await;
                }
                Ok(LlmReply { text: "ok".into() })
            })
        }
    }

    fn guarded(backend: Arc<Backend>, log: Arc<Log>) -> GuardedProvider {
        GuardedProvider::new(
            backend,
            Arc::new(GuardIndex::new()),
            log,
            Arc::new(StepClock::new(0)),
            Arc::new(UlidGen::new(Arc::new(StepClock::new(0)))),
        )
    }

    fn request() -> LlmRequest {
        LlmRequest {
            role: Role::Builder,
            messages: vec![ChatMessage::new(ChatRole::User, "hello")],
            schema: None,
        }
    }

    #[tokio::test]
    async fn a_probe_reaches_the_back_end_and_records_nothing() {
        let log = Arc::new(Log::default());
        let line = guarded(Arc::new(Backend::default()), log.clone())
            .probe()
            .await
            .expect("probe");
        assert_eq!(line, "reached test-server; models: m1");
        assert!(lock(&log.events).is_empty());
    }

    #[tokio::test]
    async fn the_row_is_written_before_the_request_and_completed_after() {
        let log = Arc::new(Log::default());
        let backend = Arc::new(Backend::default());
        guarded(backend.clone(), log.clone())
            .complete(&request(), &|_| {})
            .await
            .expect("reply");
        assert!(backend.called.load(Ordering::SeqCst));
        assert_eq!(*lock(&log.events), ["begin cancelled", "finish ok"]);
    }

    #[tokio::test]
    async fn the_back_end_sees_the_tag_the_caller_gave_for_that_call_only() {
        let log = Arc::new(Log::default());
        let backend = Arc::new(Backend::default());
        let tag = call::CallTag {
            key: "builder:generate:1:ab".into(),
            turn: None,
        };
        let untagged = guarded(backend.clone(), log.clone());
        untagged
            .clone()
            .tagged(tag.clone())
            .complete(&request(), &|_| {})
            .await
            .expect("reply");
        assert_eq!(*lock(&backend.seen_tag), Some(tag));
        assert_eq!(call::tag(), None, "outside the call");
        untagged.complete(&request(), &|_| {}).await.expect("reply");
        assert_eq!(*lock(&backend.seen_tag), None);
        assert_eq!(*lock(&backend.seen_waiter), None);
    }

    #[tokio::test]
    async fn the_back_end_sees_who_waits_on_the_call() {
        let log = Arc::new(Log::default());
        let backend = Arc::new(Backend::default());
        let build = ManualWaiter::Build {
            workflow_id: "wf_1".into(),
            version_id: "wv_1".into(),
        };
        guarded(backend.clone(), log.clone())
            .waited_on_by(build.clone())
            .complete(&request(), &|_| {})
            .await
            .expect("reply");
        assert_eq!(*lock(&backend.seen_waiter), Some(build));
        // A flow step's calls are waited on by its run, even from a task
        // of their own (a fan-out's items): the provider carries it.
        let step = guarded(backend.clone(), log).for_flow_step("fr_1".into(), "draft".into());
        tokio::spawn(async move { step.complete(&request(), &|_| {}).await })
            .await
            .expect("join")
            .expect("reply");
        assert_eq!(
            *lock(&backend.seen_waiter),
            Some(ManualWaiter::FlowRun {
                run_id: "fr_1".into()
            })
        );
        assert_eq!(call::waiter(), None, "outside the call");
    }

    #[tokio::test]
    async fn nothing_is_sent_when_the_row_cannot_be_written() {
        let log = Arc::new(Log {
            refuse: true,
            ..Log::default()
        });
        let backend = Arc::new(Backend::default());
        let err = guarded(backend.clone(), log.clone())
            .complete(&request(), &|_| {})
            .await
            .expect_err("refused");
        assert!(
            err.to_string()
                .contains("could not be recorded in the ledger"),
            "{err}"
        );
        assert!(
            !backend.called.load(Ordering::SeqCst),
            "the back end was called"
        );
    }

    /// Keeps every entry it is given.
    #[derive(Debug, Default)]
    struct Rows(Mutex<Vec<LedgerEntry>>);

    impl CallSink for Rows {
        fn record(&self, e: LedgerEntry) {
            lock(&self.0).push(e);
        }
    }

    #[tokio::test]
    async fn a_second_index_blocks_too_and_the_row_names_the_flow_step() {
        let dir = tempfile::tempdir().expect("tmp");
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, "name,city\nJohn Okonkwo,Lagos\nMary Brown,Leeds\n").expect("csv");
        let mut folder = GuardIndex::new();
        folder.add_file(&csv, "people.csv", guard::DEFAULT_MAX_BYTES);
        let rows = Arc::new(Rows::default());
        let backend = Arc::new(Backend::default());
        let provider = GuardedProvider::new(
            backend.clone(),
            Arc::new(GuardIndex::new()),
            rows.clone(),
            Arc::new(StepClock::new(0)),
            Arc::new(UlidGen::new(Arc::new(StepClock::new(0)))),
        )
        .also_checking(Arc::new(folder))
        .for_flow_step("flow_1".into(), "summarize [1]".into());
        let mut leaky = request();
        leaky.messages[0].content = "Row: John Okonkwo, Lagos".into();
        let err = provider
            .complete(&leaky, &|_| {})
            .await
            .expect_err("blocked");
        assert!(matches!(err, ProviderError::PrivacyBlocked(_)), "{err}");
        assert!(err.to_string().contains("Aaaa Aaaaaaa"), "{err}");
        assert!(!backend.called.load(Ordering::SeqCst), "nothing was sent");
        provider
            .complete(&request(), &|_| {})
            .await
            .expect("an ordinary request goes through");
        let rows = lock(&rows.0);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].outcome, CallOutcome::Blocked);
        for row in rows.iter() {
            assert_eq!(row.flow_run_id.as_deref(), Some("flow_1"));
            assert_eq!(row.flow_step.as_deref(), Some("summarize [1]"));
        }
    }

    #[tokio::test]
    async fn a_dropped_call_leaves_its_row_marked_cancelled() {
        let log = Arc::new(Log::default());
        let backend = Arc::new(Backend {
            hang: true,
            ..Backend::default()
        });
        let provider = guarded(backend, log.clone());
        let req = request();
        let call = provider.complete(&req, &|_| {});
        let _ = tokio::time::timeout(std::time::Duration::from_millis(10), call).await;
        assert_eq!(*lock(&log.events), ["begin cancelled", "finish cancelled"]);
    }
}
