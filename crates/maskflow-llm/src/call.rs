//! The context of one outbound LLM call, carried as a tokio task-local so
//! the privacy guard's `GuardedProvider` decorator (in maskflow-privacy) can learn what a back
//! end really sent (the exact body, token counts) without changing the
//! [`super::Provider`] trait. Back ends call [`record_request`] and
//! [`record_usage`]; outside a call scope those calls do nothing. The
//! guard also hands the back end the call's [`CallTag`] ([`tag`]) and who
//! waits on its manual prompt ([`waiter`]), which it was given explicitly by
//! whoever made the call: one context per call, not one per concern.

use std::future::Future;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

tokio::task_local! {
    static CALL: Arc<CallRecord>;
}

/// What one call sent and got, filled in by the back end.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The exact body of the last HTTP request sent.
    pub body: Option<String>,
    /// Where it was sent.
    pub url: Option<String>,
    /// Prompt tokens, when the server said.
    pub input_tokens: Option<i64>,
    /// Reply tokens, when the server said.
    pub output_tokens: Option<i64>,
    /// How many HTTP attempts were made (retries included).
    pub attempts: u32,
    /// Every body sent, in order (a structured-output fallback sends more
    /// than one).
    pub bodies: Vec<String>,
}

/// Which call a manual prompt answers, as its caller named it: the call's
/// identity within its waiter (e.g. `validator:<sha256>`) and, for a
/// conversation call, the user's message the turn goes on with (JSON, the
/// app's own shape). An answer given after a restart goes only to a later
/// call with the same tag.
#[derive(Debug, Clone, PartialEq)]
pub struct CallTag {
    /// The call's identity within its waiter.
    pub key: String,
    /// For a conversation call, the user's message.
    pub turn: Option<serde_json::Value>,
}

/// Who waits on a manual prompt, so an answer given after a restart can
/// reach the work that asked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ManualWaiter {
    /// A call of a version's build: the request check, the clarifier or the builder.
    Build {
        /// `wf_…`
        workflow_id: String,
        /// `ver_…`
        version_id: String,
    },
    /// The step in flight of a flow run.
    FlowRun {
        /// The run's id.
        run_id: String,
    },
}

/// One call's context: who asked, which call it is, and what the back end
/// recorded.
#[derive(Debug, Default)]
pub struct CallRecord {
    /// The workflow the call is for, when there is one.
    pub workflow_id: Option<String>,
    /// The call, when its caller said.
    pub tag: Option<CallTag>,
    /// Who waits on the manual prompt the call makes (a build, a flow run).
    pub waiter: Option<ManualWaiter>,
    recorded: Mutex<Recorded>,
}

impl CallRecord {
    /// A record for a call about `workflow_id`.
    pub fn new(workflow_id: Option<String>) -> Arc<Self> {
        Self::of_call(workflow_id, None, None)
    }

    /// A record for the call `tag` about `workflow_id`, its manual prompt
    /// waited on by `waiter`.
    pub fn of_call(
        workflow_id: Option<String>,
        tag: Option<CallTag>,
        waiter: Option<ManualWaiter>,
    ) -> Arc<Self> {
        Arc::new(Self {
            workflow_id,
            tag,
            waiter,
            recorded: Mutex::new(Recorded::default()),
        })
    }

    /// What was recorded so far.
    pub fn recorded(&self) -> Recorded {
        self.recorded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Runs `f` with `record` as the current call.
pub async fn scope<F: Future>(record: Arc<CallRecord>, f: F) -> F::Output {
    CALL.scope(record, f).await
}

fn with(f: impl FnOnce(&mut Recorded)) {
    let _ = CALL.try_with(|c| f(&mut c.recorded.lock().unwrap_or_else(|e| e.into_inner())));
}

/// Records an HTTP request about to be sent (each attempt).
pub fn record_request(url: &str, body: &str) {
    with(|r| {
        r.url = Some(url.to_owned());
        r.body = Some(body.to_owned());
        r.bodies.push(body.to_owned());
        r.attempts += 1;
    });
}

/// Records token counts (either may be unknown).
pub fn record_usage(input: Option<i64>, output: Option<i64>) {
    with(|r| {
        if input.is_some() {
            r.input_tokens = input;
        }
        if output.is_some() {
            r.output_tokens = output;
        }
    });
}

/// The workflow of the current call, if any.
pub fn workflow_id() -> Option<String> {
    CALL.try_with(|c| c.workflow_id.clone()).ok().flatten()
}

/// The tag of the current call, if its caller gave one.
pub fn tag() -> Option<CallTag> {
    CALL.try_with(|c| c.tag.clone()).ok().flatten()
}

/// Who waits on the current call's manual prompt, if its caller said.
pub fn waiter() -> Option<ManualWaiter> {
    CALL.try_with(|c| c.waiter.clone()).ok().flatten()
}
