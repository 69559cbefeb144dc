//! Ports for engines in tests and benchmarks (the `testing` feature): one
//! fixed back end for every agent — still behind a real guard and a ledger
//! kept in memory, as the type of the agent port demands — and the
//! unsandboxed [`PythonProcess`]. Never part of a shipped build: the app
//! hands the engine its own guarded back ends and its sandboxed runner.

use std::sync::{Arc, Mutex};

use maskflow_clock::{Clock, IdGen, StepClock, UlidGen};
use maskflow_llm::Provider;
use maskflow_privacy::{CallSink, GuardIndex, GuardedProvider, LedgerEntry};

use crate::FlowError;
use crate::agents::AgentDef;
use crate::engine::{AgentBackends, FlowCall, FlowPorts};
use crate::events::FlowEvents;
pub use crate::script::PythonProcess;

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
