//! The manual back end (seed 001's `ManualAI`): no network at all. A request
//! becomes a [`ManualPrompt`] that the UI shows with a copy button (and an
//! [`ManualEvent::Prompt`] announces); the user pastes the answer from any
//! AI tool, and [`ManualProvider::answer`] resolves the waiting call. The
//! answer is then validated like any other reply. A prompt the user
//! dismisses fails with [`ProviderError::Cancelled`]; a call that is
//! dropped (its request abandoned) withdraws its prompt.
//!
//! Restart-safe (issue 19): with a [`ManualStore`], every prompt is also
//! kept in the database with who waits on it ([`ManualWaiter`], set by
//! [`waiting`]). A process that stops ([`ManualProvider::stopping`], or a
//! crash) leaves its prompts stored; after a restart the app answers such a
//! prompt by storing the answer and restarting its waiter, whose same call
//! (the same text, or for a build the same phase and conversation, see the
//! core's `builder::call`) then gets that answer at once instead of asking
//! again.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use super::call::ManualWaiter;
use super::{
    BoxFuture, ChatMessage, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, call,
};
use maskflow_clock::{Clock, IdGen, format_rfc3339};

/// A prompt waiting for the user to paste an answer.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ManualPrompt {
    /// `mp_…`
    pub id: String,
    /// The role asking: `validator`, `clarifier`, `builder`, `agent:<name>`.
    pub role: String,
    /// The workflow it is for, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_id: Option<String>,
    /// The prompt to copy into an AI tool, in order.
    pub messages: Vec<ChatMessage>,
    /// The JSON schema the answer must match, when one is wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub schema: Option<Value>,
    /// RFC 3339.
    pub created_at: String,
    /// Who waits on the answer, when that is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiter: Option<ManualWaiter>,
    /// Set when the call that asked no longer waits in this process (Maskflow
    /// stopped while it waited): what happened and what an answer does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<ManualInterruption>,
}

/// What became of a prompt whose call was cut off (by a restart).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ManualInterruption {
    /// Whether answering makes the waiting work continue (else only
    /// dismissing it is left).
    pub resumes: bool,
    /// In plain words: what happened, and what answering or dismissing does.
    pub reason: String,
}

/// An answer stored for a prompt whose call was cut off, taken by the
/// waiter's same call after it restarts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The prompt it answered (`mp_…`).
    pub id: String,
    /// The pasted text.
    pub text: String,
}

/// Where prompts are kept across restarts (the app's database). Best effort:
/// a prompt that cannot be stored still waits in memory.
pub trait ManualStore: Send + Sync + std::fmt::Debug {
    /// Keeps a new prompt.
    fn save(&self, prompt: &ManualPrompt) -> Result<(), String>;
    /// Forgets a prompt (answered, dismissed or withdrawn).
    fn remove(&self, id: &str);
    /// Takes (and forgets) the answer given after a restart to a prompt of
    /// the same waiter, role, messages and schema as `prompt`.
    fn take_answer(&self, prompt: &ManualPrompt) -> Option<StoredAnswer>;
}

/// What the manual back end announces (the app turns it into its wire event).
#[derive(Clone, Debug, PartialEq)]
pub enum ManualEvent {
    /// A prompt waits for the user to paste an answer.
    Prompt(ManualPrompt),
    /// A prompt was answered, dismissed or abandoned.
    Closed {
        /// `mp_…`
        id: String,
        /// `answered`, `dismissed` or `abandoned`.
        reason: String,
    },
}

/// Where the manual back end announces its prompts: it is handed one, so it
/// need not know the app's event bus.
pub trait ManualEvents: Send + Sync + std::fmt::Debug {
    /// Announces `event`; never blocks.
    fn publish(&self, event: ManualEvent);
}

/// Why an answer could not be given.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManualError {
    /// No prompt with this id is waiting (answered, dismissed, or never made).
    #[error("no manual prompt {0} is waiting for an answer")]
    NotFound(String),
    /// The pasted answer is empty.
    #[error("the answer is empty; paste the AI tool's reply")]
    Empty,
}

type Waiter = oneshot::Sender<Result<String, ProviderError>>;

/// The manual back end. Shared: the service keeps one and hands it to every
/// role that is set to manual.
#[derive(Debug)]
pub struct ManualProvider {
    pending: Mutex<BTreeMap<String, (ManualPrompt, Waiter)>>,
    events: Arc<dyn ManualEvents>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    store: Mutex<Option<Arc<dyn ManualStore>>>,
    /// Set when the process stops: calls dropped from now on keep their
    /// stored prompts for the next start.
    stopping: AtomicBool,
}

/// Withdraws a prompt whose call was dropped.
struct Withdraw<'a> {
    provider: &'a ManualProvider,
    id: String,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.provider.lock().remove(&self.id).is_some() {
            if !self.provider.stopping.load(Ordering::SeqCst)
                && let Some(store) = self.provider.store()
            {
                store.remove(&self.id);
            }
            self.provider.events.publish(ManualEvent::Closed {
                id: self.id.clone(),
                reason: "abandoned".into(),
            });
        }
    }
}

impl ManualProvider {
    /// A manual back end announcing prompts on `events`.
    pub fn new(events: Arc<dyn ManualEvents>, clock: Arc<dyn Clock>, ids: Arc<dyn IdGen>) -> Self {
        Self {
            pending: Mutex::new(BTreeMap::new()),
            events,
            clock,
            ids,
            store: Mutex::new(None),
            stopping: AtomicBool::new(false),
        }
    }

    /// Keeps prompts in `store` too, so they outlive this process.
    pub fn set_store(&self, store: Arc<dyn ManualStore>) {
        *self.store.lock().unwrap_or_else(|e| e.into_inner()) = Some(store);
    }

    fn store(&self) -> Option<Arc<dyn ManualStore>> {
        self.store.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The process is stopping: calls dropped from now on leave their
    /// prompts stored, to be shown again after the restart.
    pub fn stopping(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Whether prompt `id` waits in this process.
    pub fn is_waiting(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Announces that a stored prompt of an earlier process was closed.
    pub fn announce_closed(&self, id: &str, reason: &str) {
        self.events.publish(ManualEvent::Closed {
            id: id.to_owned(),
            reason: reason.to_owned(),
        });
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, (ManualPrompt, Waiter)>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The prompts waiting for an answer, oldest first.
    pub fn pending(&self) -> Vec<ManualPrompt> {
        self.lock().values().map(|(p, _)| p.clone()).collect()
    }

    /// Gives the pasted `text` as the answer to prompt `id`.
    pub fn answer(&self, id: &str, text: &str) -> Result<(), ManualError> {
        if text.trim().is_empty() {
            return Err(ManualError::Empty);
        }
        let (_, waiter) = self
            .lock()
            .remove(id)
            .ok_or_else(|| ManualError::NotFound(id.to_owned()))?;
        if let Some(store) = self.store() {
            store.remove(id);
        }
        let _ = waiter.send(Ok(text.to_owned()));
        self.events.publish(ManualEvent::Closed {
            id: id.to_owned(),
            reason: "answered".into(),
        });
        Ok(())
    }

    /// Dismisses prompt `id`: its call fails as cancelled.
    pub fn dismiss(&self, id: &str) -> Result<(), ManualError> {
        let (_, waiter) = self
            .lock()
            .remove(id)
            .ok_or_else(|| ManualError::NotFound(id.to_owned()))?;
        if let Some(store) = self.store() {
            store.remove(id);
        }
        let _ = waiter.send(Err(ProviderError::Cancelled {
            provider: "manual".into(),
            reason: "the user dismissed the prompt".into(),
        }));
        self.events.publish(ManualEvent::Closed {
            id: id.to_owned(),
            reason: "dismissed".into(),
        });
        Ok(())
    }

    async fn run(
        &self,
        request: &LlmRequest,
        on_delta: DeltaSink<'_>,
    ) -> Result<LlmReply, ProviderError> {
        let prompt = ManualPrompt {
            id: self.ids.next_id("mp"),
            role: request.role.key(),
            workflow_id: call::workflow_id(),
            messages: request.messages.clone(),
            schema: request.schema.clone(),
            created_at: format_rfc3339(self.clock.now_ms()),
            waiter: call::waiter(),
            interrupted: None,
        };
        let store = self.store();
        if let Some(store) = &store {
            // Answered after a restart: the same call gets that answer.
            if prompt.waiter.is_some()
                && let Some(stored) = store.take_answer(&prompt)
            {
                self.announce_closed(&stored.id, "answered");
                on_delta(&stored.text);
                return Ok(LlmReply { text: stored.text });
            }
            if let Err(e) = store.save(&prompt) {
                eprintln!(
                    "maskflow: manual prompt {} is not stored and will not outlive a restart: {e}",
                    prompt.id
                );
            }
        }
        let (tx, rx) = oneshot::channel();
        let id = prompt.id.clone();
        self.lock().insert(id.clone(), (prompt.clone(), tx));
        let _withdraw = Withdraw {
            provider: self,
            id: id.clone(),
        };
        self.events.publish(ManualEvent::Prompt(prompt));
        let text = rx.await.map_err(|_| ProviderError::Cancelled {
            provider: "manual".into(),
            reason: "the prompt was withdrawn".into(),
        })??;
        on_delta(&text);
        Ok(LlmReply { text })
    }
}

impl Provider for ManualProvider {
    fn name(&self) -> &str {
        "manual"
    }

    fn is_manual(&self) -> bool {
        true
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
    use std::future::Future;

    use super::*;
    use crate::{ChatRole, Role};
    use maskflow_clock::{StepClock, UlidGen};

    use tokio::sync::broadcast;

    impl ManualEvents for broadcast::Sender<ManualEvent> {
        fn publish(&self, event: ManualEvent) {
            let _ = self.send(event);
        }
    }

    fn provider() -> (Arc<ManualProvider>, broadcast::Receiver<ManualEvent>) {
        let clock: Arc<dyn Clock> = Arc::new(StepClock::new(1_700_000_000_000));
        let (tx, rx) = broadcast::channel(16);
        let p = Arc::new(ManualProvider::new(
            Arc::new(tx),
            clock.clone(),
            Arc::new(UlidGen::new(clock)),
        ));
        (p, rx)
    }

    fn request() -> LlmRequest {
        LlmRequest {
            role: Role::Clarifier,
            messages: vec![ChatMessage::new(ChatRole::User, "hi")],
            schema: None,
        }
    }

    async fn wait_for_prompt(rx: &mut broadcast::Receiver<ManualEvent>) -> ManualPrompt {
        loop {
            if let Ok(ManualEvent::Prompt(prompt)) = rx.recv().await {
                return prompt;
            }
        }
    }

    #[tokio::test]
    async fn an_answer_resolves_the_waiting_call() {
        let (p, mut rx) = provider();
        let q = p.clone();
        let call = tokio::spawn(async move { q.complete(&request(), &|_| {}).await });
        let prompt = wait_for_prompt(&mut rx).await;
        assert_eq!(prompt.role, "clarifier");
        assert_eq!(p.pending().len(), 1);
        assert_eq!(p.answer(&prompt.id, "  "), Err(ManualError::Empty));
        p.answer(&prompt.id, "the answer").expect("answer");
        let reply = call.await.expect("join").expect("reply");
        assert_eq!(reply.text, "the answer");
        assert!(p.pending().is_empty());
        assert_eq!(
            p.answer(&prompt.id, "again"),
            Err(ManualError::NotFound(prompt.id.clone()))
        );
    }

    #[tokio::test]
    async fn a_dismissed_prompt_fails_as_cancelled_and_a_dropped_call_withdraws_it() {
        let (p, mut rx) = provider();
        let q = p.clone();
        let call = tokio::spawn(async move { q.complete(&request(), &|_| {}).await });
        let prompt = wait_for_prompt(&mut rx).await;
        p.dismiss(&prompt.id).expect("dismiss");
        let err = call.await.expect("join").expect_err("cancelled");
        assert!(matches!(err, ProviderError::Cancelled { .. }), "{err}");

        let q = p.clone();
        let call = tokio::spawn(async move { q.complete(&request(), &|_| {}).await });
        let prompt = wait_for_prompt(&mut rx).await;
        call.abort();
        let _ = call.await;
        assert!(p.pending().is_empty());
        assert_eq!(
            p.answer(&prompt.id, "late"),
            Err(ManualError::NotFound(prompt.id))
        );
    }

    /// The call of `f`, its manual prompt waited on by `waiter` (as the
    /// privacy guard scopes a call it was given a waiter for).
    async fn waiting<F: Future>(waiter: ManualWaiter, f: F) -> F::Output {
        call::scope(call::CallRecord::of_call(None, None, Some(waiter)), f).await
    }

    /// A store in memory, as the app's database would keep prompts.
    #[derive(Debug, Default)]
    struct Memory {
        rows: Mutex<BTreeMap<String, (ManualPrompt, Option<String>)>>,
    }

    impl ManualStore for Memory {
        fn save(&self, prompt: &ManualPrompt) -> Result<(), String> {
            let mut rows = self.rows.lock().expect("rows");
            rows.insert(prompt.id.clone(), (prompt.clone(), None));
            Ok(())
        }
        fn remove(&self, id: &str) {
            self.rows.lock().expect("rows").remove(id);
        }
        fn take_answer(&self, prompt: &ManualPrompt) -> Option<StoredAnswer> {
            let mut rows = self.rows.lock().expect("rows");
            let id = rows.iter().find_map(|(id, (p, a))| {
                (a.is_some() && p.waiter == prompt.waiter && p.messages == prompt.messages)
                    .then(|| id.clone())
            })?;
            let (_, text) = rows.remove(&id)?;
            Some(StoredAnswer { id, text: text? })
        }
    }

    #[tokio::test]
    async fn a_stopping_process_keeps_its_prompt_and_the_restarted_call_takes_the_stored_answer() {
        let store = Arc::new(Memory::default());
        let waiter = ManualWaiter::FlowRun {
            run_id: "run_1".into(),
        };
        let (p, mut rx) = provider();
        p.set_store(store.clone());
        let q = p.clone();
        let w = waiter.clone();
        let call = tokio::spawn(async move { waiting(w, q.complete(&request(), &|_| {})).await });
        let prompt = wait_for_prompt(&mut rx).await;
        assert_eq!(prompt.waiter, Some(waiter.clone()));
        assert_eq!(store.rows.lock().expect("rows").len(), 1);
        // The process stops: the dropped call leaves the prompt stored.
        p.stopping();
        call.abort();
        let _ = call.await;
        assert!(p.pending().is_empty());
        assert_eq!(
            store.rows.lock().expect("rows").len(),
            1,
            "kept for the restart"
        );

        // After the restart the answer is stored, and the waiter's identical call takes it.
        store
            .rows
            .lock()
            .expect("rows")
            .get_mut(&prompt.id)
            .expect("row")
            .1 = Some("the stored answer".into());
        let (p2, _rx2) = provider();
        p2.set_store(store.clone());
        let reply = waiting(waiter, p2.complete(&request(), &|_| {}))
            .await
            .expect("reply");
        assert_eq!(reply.text, "the stored answer");
        assert!(store.rows.lock().expect("rows").is_empty());
        assert!(p2.pending().is_empty(), "nothing was asked again");

        // Without a waiter nothing is taken: the call asks, and a dropped
        // call in a running process withdraws its stored prompt.
        let q = p2.clone();
        let call = tokio::spawn(async move { q.complete(&request(), &|_| {}).await });
        tokio::task::yield_now().await;
        while p2.pending().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(store.rows.lock().expect("rows").len(), 1);
        call.abort();
        let _ = call.await;
        assert!(store.rows.lock().expect("rows").is_empty());
    }
}
