//! Ports for engines in tests and benchmarks (the `testing` feature): one
//! fixed back end for every agent — still behind a real guard and a ledger
//! kept in memory, as the type of the agent port demands — the unsandboxed
//! [`PythonProcess`], a database of the flows' own ([`LocalStorage`]), a
//! recording event sink ([`RecordedEvents`]), a provider that never answers
//! ([`Hang`]) and the checkpoint-store contract every [`FlowStorage`] passes
//! ([`checkpoint_contract`]). Never part of a shipped build: the app hands
//! the engine its own guarded back ends, sandboxed runner, store and events.

mod contract;

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use maskflow_clock::{Clock, IdGen, StepClock, UlidGen};
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};
use maskflow_privacy::{CallSink, GuardIndex, GuardedProvider, LedgerEntry};
use rusqlite::Connection;

use crate::agents::AgentDef;
use crate::engine::{AgentBackends, FlowCall, FlowPorts};
use crate::error::{self, Error};
use crate::events::{FlowEvent, FlowEvents};
pub use crate::script::PythonProcess;
use crate::store::local;
use crate::{FlowError, FlowStorage};
pub use contract::checkpoint_contract;

/// The file [`LocalStorage`] keeps in a data folder.
pub const LOCAL_DB_FILE: &str = "flows-test.db";

/// How long a [`LocalStorage`] lease lives without a heartbeat (the app's
/// default, so the engine heartbeats as often as it does in the app).
const LEASE_TTL_MS: i64 = 30_000;

/// The flows' own database, with no app around it: `<home>/flows-test.db`
/// holding the flows' tables and a lease table of its own; no backups. The
/// leases are this process's, as the app's are, so a second engine of the
/// same test process may take a run over.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalStorage;

impl LocalStorage {
    /// Another reader of `home`'s database, as a test reads it back.
    pub fn db(home: &Path) -> error::Result<Connection> {
        LocalStorage.open(home, "test")
    }
}

/// This process's lease owner: its pid and the instant it was first asked,
/// so a reused pid is another owner.
fn lease_owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        format!("proc_{}_{nanos}", std::process::id())
    })
}

impl FlowStorage for LocalStorage {
    fn open(&self, home: &Path, _stamp: &str) -> error::Result<Connection> {
        std::fs::create_dir_all(home)
            .map_err(|e| Error::io(format!("creating the data folder {}", home.display()), e))?;
        Ok(local::open(&home.join(LOCAL_DB_FILE))?)
    }

    fn backup_before_run(
        &self,
        _conn: &Connection,
        _home: &Path,
        _run_id: &str,
        _now: &str,
    ) -> error::Result<()> {
        // Backups are the app's (its store keeps them); a test database has none.
        Ok(())
    }

    fn lease_ttl_ms(&self) -> i64 {
        LEASE_TTL_MS
    }

    fn acquire_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> error::Result<()> {
        if local::acquire_lease(conn, resource, lease_owner(), now_ms, now_ms + LEASE_TTL_MS)? {
            Ok(())
        } else {
            let holder = local::lease_holder(conn, resource, now_ms)?.unwrap_or_default();
            Err(Error::Conflict(format!(
                "{resource} is leased by another process ({holder})"
            )))
        }
    }

    fn renew_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> error::Result<()> {
        // A lease lost to another owner is found by its next acquire, as in the app.
        local::renew_lease(conn, resource, lease_owner(), now_ms + LEASE_TTL_MS)?;
        Ok(())
    }

    fn release_lease(&self, conn: &Connection, resource: &str) -> error::Result<()> {
        Ok(local::release_lease(conn, resource, lease_owner())?)
    }

    fn account(&self) -> &str {
        "local"
    }
}

/// An event sink that keeps every event published, in order, and wakes
/// whoever waits for one.
#[derive(Debug, Default)]
pub struct RecordedEvents {
    events: Mutex<Vec<FlowEvent>>,
    published: tokio::sync::Notify,
}

impl RecordedEvents {
    /// Every event so far, in the order published.
    pub fn events(&self) -> Vec<FlowEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The texts of the prompts announced so far (seed 004's `user_turn`s).
    pub fn prompts(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                FlowEvent::Prompt { content, .. } => Some(content),
                _ => None,
            })
            .collect()
    }

    /// The first event so far, or the next one published, that `wanted` accepts.
    pub async fn wait_for(&self, wanted: impl Fn(&FlowEvent) -> bool) -> FlowEvent {
        loop {
            // Made before the look, so a publish between the two still wakes it.
            let next = self.published.notified();
            if let Some(e) = self.events().into_iter().find(|e| wanted(e)) {
                return e;
            }
            next.await;
        }
    }
}

impl FlowEvents for RecordedEvents {
    fn publish(&self, event: FlowEvent) {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
        self.published.notify_waiters();
    }
}

/// Never answers: a step that runs until it is stopped.
#[derive(Debug, Default)]
pub struct Hang;

impl Provider for Hang {
    fn name(&self) -> &str {
        "hang"
    }
    fn complete<'a>(
        &'a self,
        _request: &'a LlmRequest,
        _on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(std::future::pending())
    }
}

/// A ledger kept in memory: every entry it was given, in order.
#[derive(Debug, Default)]
pub struct MemoryLedger(Mutex<Vec<LedgerEntry>>);

impl MemoryLedger {
    /// The entries so far (a call's row once it has finished or was blocked).
    pub fn entries(&self) -> Vec<LedgerEntry> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl CallSink for MemoryLedger {
    fn record(&self, entry: LedgerEntry) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
    }
}

/// Every agent answered by one back end, behind the guard `guard` (empty
/// unless [`FixedBackends::guarding`]) and a [`MemoryLedger`].
#[derive(Debug, Clone)]
pub struct FixedBackends {
    provider: Arc<dyn Provider>,
    guard: Arc<GuardIndex>,
    ledger: Arc<MemoryLedger>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
}

impl FixedBackends {
    /// `provider` for every agent, with an empty guard. The ledger's times
    /// and ids come from a clock of its own, so the engine's clock ticks
    /// only for the engine.
    pub fn new(provider: Arc<dyn Provider>) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(StepClock::new(0));
        Self {
            provider,
            guard: Arc::new(GuardIndex::new()),
            ledger: Arc::new(MemoryLedger::default()),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
        }
    }

    /// Requests are checked against `guard`.
    pub fn guarding(mut self, guard: Arc<GuardIndex>) -> Self {
        self.guard = guard;
        self
    }

    /// The ledger every call is written to.
    pub fn ledger(&self) -> Arc<MemoryLedger> {
        self.ledger.clone()
    }
}

impl AgentBackends for FixedBackends {
    fn agent_backend(
        &self,
        _agent: &str,
        _def: &AgentDef,
        authored: &str,
        call: &FlowCall,
    ) -> Result<GuardedProvider, FlowError> {
        let guarded = GuardedProvider::new(
            self.provider.clone(),
            self.guard.clone(),
            self.ledger.clone(),
            self.clock.clone(),
            self.ids.clone(),
        )
        .allowing(vec![authored.to_owned()]);
        Ok(if call.run_id.is_empty() {
            guarded
        } else {
            guarded.for_flow_step(call.run_id.clone(), call.step.clone())
        })
    }
}

/// The ports of a test engine: `provider` for every agent (behind an empty
/// guard and a [`MemoryLedger`]), the unsandboxed `python3`, `events`.
pub fn ports(provider: Arc<dyn Provider>, events: Arc<dyn FlowEvents>) -> FlowPorts {
    ports_with(FixedBackends::new(provider), events)
}

/// [`ports`] with back ends of the caller's (a guard, a ledger to read).
pub fn ports_with(backends: FixedBackends, events: Arc<dyn FlowEvents>) -> FlowPorts {
    FlowPorts {
        agents: Arc::new(backends),
        scripts: Arc::new(PythonProcess::default()),
        events,
    }
}

#[cfg(test)]
mod tests {
    use maskflow_llm::{
        BoxFuture, ChatMessage, ChatRole, DeltaSink, LlmReply, LlmRequest, ProviderError, Role,
    };
    use maskflow_privacy::guard::DEFAULT_MAX_BYTES;

    use super::*;

    /// Answers "ok" to everything.
    #[derive(Debug)]
    struct Echo;

    impl Provider for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn complete<'a>(
            &'a self,
            _request: &'a LlmRequest,
            _on_delta: DeltaSink<'a>,
        ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
            Box::pin(async { Ok(LlmReply { text: "ok".into() }) })
        }
    }

    fn ask(text: &str) -> LlmRequest {
        LlmRequest {
            role: Role::Agent("a".into()),
            messages: vec![ChatMessage::new(ChatRole::User, text)],
            schema: None,
        }
    }

    #[tokio::test]
    async fn recorded_events_keep_their_order_and_wake_a_waiter() {
        let events = Arc::new(RecordedEvents::default());
        let delta = |d: &str| FlowEvent::Delta {
            conversation_id: "flow_1".into(),
            delta: d.into(),
        };
        events.publish(delta("a"));
        let waiting = events.clone();
        let waiter = tokio::spawn(async move {
            waiting
                .wait_for(|e| matches!(e, FlowEvent::Delta { delta, .. } if delta == "b"))
                .await
        });
        tokio::task::yield_now().await;
        events.publish(delta("b"));
        assert_eq!(waiter.await.expect("the waiter ends"), delta("b"));
        assert_eq!(events.events(), [delta("a"), delta("b")]);
        // An event already published is found at once.
        let first = events
            .wait_for(|e| matches!(e, FlowEvent::Delta { .. }))
            .await;
        assert_eq!(first, delta("a"));
    }

    #[tokio::test]
    async fn even_the_test_back_ends_are_guarded_and_ledgered() {
        let dir = tempfile::tempdir().expect("tmp");
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, "name,city\nZebulon Okonkwo,Lagos\n").expect("csv");
        let mut index = GuardIndex::new();
        index.add_file(&csv, "people.csv", DEFAULT_MAX_BYTES);
        let backends = FixedBackends::new(Arc::new(Echo)).guarding(Arc::new(index));
        let call = FlowCall {
            run_id: "flow_1".into(),
            flow_name: "f".into(),
            step: "write [1]".into(),
            working_folder: None,
        };
        let provider = backends
            .agent_backend("a", &AgentDef::default(), "", &call)
            .expect("a back end");
        let err = provider
            .complete(&ask("Write to Zebulon Okonkwo"), &|_| {})
            .await
            .expect_err("blocked");
        assert!(matches!(err, ProviderError::PrivacyBlocked(_)), "{err}");
        let reply = provider
            .complete(&ask("Write to the customer"), &|_| {})
            .await
            .expect("an ordinary prompt goes through");
        assert_eq!(reply.text, "ok");
        let rows = backends.ledger().entries();
        let outcomes: Vec<&str> = rows.iter().map(|r| r.outcome.as_str()).collect();
        assert_eq!(outcomes, ["blocked", "ok"]);
        assert!(
            rows.iter()
                .all(|r| r.flow_step.as_deref() == Some("write [1]"))
        );
    }
}
