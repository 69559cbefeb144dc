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
