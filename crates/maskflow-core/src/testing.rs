//! Fake providers and clocks for tests, shared instead of written by hand in
//! each test binary. Built for this crate's own tests and, with the `testing`
//! feature, for the tests of the crates above it; never in a release build.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use maskflow_clock::{Clock, SystemClock};
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, Role};

/// Holds each call until released, to keep a message in flight: notifies
/// `entered` when a call arrives, waits for `release`, then replies
/// `{"feasible": true}` to the validator and asks "Which column?" otherwise.
#[derive(Debug, Default)]
pub struct Gate {
    /// Lets one held call go on.
    pub release: tokio::sync::Notify,
    /// Notified when a call arrives.
    pub entered: tokio::sync::Notify,
}

impl Provider for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            self.entered.notify_one();
            self.release.notified().await;
            let text = match request.role {
                Role::Validator => json!({"feasible": true}),
                _ => json!({"needs_clarification": true, "question": "Which column?"}),
            };
            Ok(LlmReply {
                text: text.to_string(),
            })
        })
    }
}

/// Passes every call to another provider while posing as a different kind of
/// back end: a manual one (a person answers), or one whose model has a given
/// context window.
#[derive(Debug)]
pub struct Posing {
    inner: Arc<dyn Provider>,
    name: &'static str,
    manual: bool,
    window: Option<u32>,
}

impl Posing {
    /// `inner`, posing as the manual back end.
    pub fn manual(inner: Arc<dyn Provider>) -> Self {
        Self {
            inner,
            name: "manual-test",
            manual: true,
            window: None,
        }
    }

    /// `inner`, posing as a model with a context window of `tokens`.
    pub fn windowed(inner: Arc<dyn Provider>, tokens: u32) -> Self {
        Self {
            inner,
            name: "windowed-test",
            manual: false,
            window: Some(tokens),
        }
    }
}

impl Provider for Posing {
    fn name(&self) -> &str {
        self.name
    }
    fn context_window(&self) -> BoxFuture<'_, Option<u32>> {
        match self.window {
            Some(w) => Box::pin(async move { Some(w) }),
            None => self.inner.context_window(),
        }
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        self.inner.complete(request, on_delta)
    }
    fn is_manual(&self) -> bool {
        self.manual || self.inner.is_manual()
    }
    // A model with a window is posed as one a server runs, asked natively.
    fn takes_schema(&self) -> bool {
        self.window.is_some() || self.inner.takes_schema()
    }
}

/// A clock that stands still until a test moves it.
#[derive(Debug, Default)]
pub struct HandClock(AtomicU64);

impl HandClock {
    /// A clock showing `ms` milliseconds since the epoch.
    pub fn at(ms: u64) -> Self {
        Self(AtomicU64::new(ms))
    }

    /// Shows `ms` from now on.
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Moves the clock on by `ms`.
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// The wall clock moved on by a settable amount: hours pass in a test while
/// times stay close to the files' real ones.
#[derive(Debug, Default)]
pub struct OffsetClock(AtomicU64);

impl OffsetClock {
    /// Moves the clock on by `ms` more.
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets how far ahead of the wall clock it is.
    pub fn set_offset(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for OffsetClock {
    fn now_ms(&self) -> u64 {
        SystemClock.now_ms() + self.0.load(Ordering::SeqCst)
    }
}
