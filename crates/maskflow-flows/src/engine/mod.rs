//! [`FlowEngine`]: starts, runs, stops, resumes and answers flow runs. It
//! alone does the I/O of flows — the database, the providers, scripts — and
//! commits each step (state, transcript turn, agent messages, checkpoint) in
//! one SQLite transaction before the next one starts, so a killed process
//! resumes at the step in flight without losing or repeating a completed one.
//!
//! A run keeps the snapshot it started with (the flow definition, its agents
//! and their commands) in its row. Status moves go through
//! [`super::state::apply`]. Stop cancels the step in flight (dropping its
//! future kills a script): each run driven here has a stop signal (a
//! `watch`) that [`FlowEngine::stop`] raises at once; a stop asked by another
//! process sets the run's `stop_requested` flag, which the lease heartbeat
//! reads and turns into the same signal.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::agents::{self, AgentCommand, AgentDef, LoadError};
use super::checkpoint::CheckpointPolicy;
use super::compile::{self, Op, Program, Target};
use super::definition::{FlowDef, JoinPolicy, MessageDef, Step};
use super::error::FlowError;
use super::events::{FlowEvent, FlowEvents, ToolPhase};
use super::expr;
use super::prompt::{self, TaskContext};
use super::script::{ScriptRequest, ScriptRunner};
use super::state::{
    self, ForeachProgress, ItemResult, ItemRetry, LoopFrame, PendingRetry, RunEvent, RunState,
    RunStatus,
};
use super::storage::FlowStorage;
use super::store::{self as fstore, AgentMessageRow, RunRow, StepCommit, TurnRow};
use super::template;
use super::turn::{
    ATTENTION_OPTIONS, FailedItem, GateChoice, Pending, StepMeta, StepPlace, TurnRole,
};
use super::{
    FanOutSummary, FlowFlags, FlowList, FlowSummary, GateAnswer, HISTORY_LIMIT, MAX_SUBFLOW_DEPTH,
    ResumeContext, ResumeStep, RetryDue, RunFlags, RunList, RunPatch, RunSummary, RunView,
    StartFlow, Started, TurnView,
};
use crate::error::{Error, Result};
use maskflow_clock::{Clock, IdGen, format_rfc3339};
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, Role};
use maskflow_privacy::GuardedProvider;

mod agent;
mod announce;
mod answer;
mod attempts;
mod context;
mod drive;
mod foreach;
mod join;
mod join_timeout;
mod lease;
mod query;
mod record;
mod retries;
mod script;
mod staging;
mod start;
mod steer;
mod step;
mod stop;
mod subflow;

use agent::AgentAsk;
pub use context::prompt_vocabulary;
use context::{is_local, mask_local, meta, render_messages, template_uses_local};
use drive::{Outcome, StepFailure, enter, failure};
use record::StatusMove;
use retries::{answer_due_retries, due_retries, steered_wait};
use start::Launch;
use step::{StepResult, advance};
use stop::StopSignal;
use subflow::ChildResult;

/// SQLite's `synchronous` setting for the flow connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// WAL + NORMAL: a committed step survives a killed process (not a power cut).
    #[default]
    Normal,
    /// FULL: it survives a power cut too, at a higher cost per step.
    Full,
}

/// What the engine needs besides its ports.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// The data folder (`flows/`, `agents/`, the database, backups).
    pub home: PathBuf,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Ids.
    pub ids: Arc<dyn IdGen>,
    /// The app's database: opening it, backups, leases, the account.
    pub storage: Arc<dyn FlowStorage>,
    /// Durability of each step's commit.
    pub synchronous: Synchronous,
    /// How checkpoints are written and pruned ([`CheckpointPolicy::default`] unless tuned).
    pub checkpoints: CheckpointPolicy,
}

/// The engine's ports to the world outside it, handed over when it is made
/// and never replaced: an engine has no default for any of them, so none
/// runs with an unguarded back end or an unsandboxed interpreter.
#[derive(Clone, Debug)]
pub struct FlowPorts {
    /// Where agents get their (guarded) back ends.
    pub agents: Arc<dyn AgentBackends>,
    /// Runs `script` steps (the app's sandboxed runner).
    pub scripts: Arc<dyn ScriptRunner>,
    /// Where turns and statuses are published.
    pub events: Arc<dyn FlowEvents>,
}

/// Which run and step make an agent call: the ledger records them, and the
/// guard also checks the call against the files of the run's working folder
/// (what its `script` steps can read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowCall {
    /// The run (`flow_…`).
    pub run_id: String,
    /// Its flow.
    pub flow_name: String,
    /// The step, as people name it: its label and path (`summarize [2, 0]`).
    pub step: String,
    /// The folder the run's scripts read and write, if it has one.
    pub working_folder: Option<PathBuf>,
}

impl FlowCall {
    /// No call at all: a back end asked only for its model's name (no run,
    /// no step, no folder to index).
    pub fn naming_only() -> Self {
        Self {
            run_id: String::new(),
            flow_name: String::new(),
            step: String::new(),
            working_folder: None,
        }
    }
}

/// Where the engine gets each agent's back end. The service implements it
/// (the agent's own `provider`/`model`, else the settings' roles); the
/// `testing` feature's `FixedBackends` serves tests.
///
/// Egress by type: a back end is a [`GuardedProvider`], not an
/// `Arc<dyn Provider>`, and the only way to make one
/// ([`GuardedProvider::new`]) takes the guard index every request is
/// checked against and the ledger every request is written to first. So an
/// engine cannot be handed a back end that skips the guard or the ledger:
/// such a port does not compile.
///
/// ```compile_fail,E0053
/// use std::sync::Arc;
/// use maskflow_flows::agents::AgentDef;
/// use maskflow_flows::engine::{AgentBackends, FlowCall};
/// use maskflow_flows::FlowError;
/// use maskflow_llm::{Provider, Roles, Role};
///
/// #[derive(Debug)]
/// struct Raw(Roles);
///
/// impl AgentBackends for Raw {
///     fn agent_backend(
///         &self,
///         agent: &str,
///         _def: &AgentDef,
///         _authored: &str,
///         _call: &FlowCall,
///     ) -> Result<Arc<dyn Provider>, FlowError> {
///         Ok(self.0.for_role(&Role::Agent(agent.to_owned())).clone())
///     }
/// }
/// ```
pub trait AgentBackends: Send + Sync + std::fmt::Debug {
    /// The back end for one call of `agent` (defined by `def`) made by
    /// `call`, behind the guard and the ledger; `authored` is the run's flow
    /// and agent definitions (text the user wrote, not data). The error says
    /// which agent and which setting is wrong.
    fn agent_backend(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
        call: &FlowCall,
    ) -> std::result::Result<GuardedProvider, FlowError>;
}

/// The engine. Cheap to clone; clones share everything.
#[derive(Clone, Debug)]
pub struct FlowEngine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inflight {
    inflight_id: String,
    cancel: watch::Sender<bool>,
    done: watch::Receiver<bool>,
}

#[derive(Debug)]
struct Inner {
    home: PathBuf,
    db: Mutex<Connection>,
    backends: Arc<dyn AgentBackends>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    events: Arc<dyn FlowEvents>,
    storage: Arc<dyn FlowStorage>,
    scripts: Arc<dyn ScriptRunner>,
    inflight: Mutex<HashMap<String, Inflight>>,
    /// The stop signal of each run driven here, subflow runs included.
    stops: Mutex<HashMap<String, watch::Sender<bool>>>,
    checkpoints: Mutex<record::Checkpoints>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a run runs: kept in its row so a changed file does not change it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Snapshot {
    flow: FlowDef,
    #[serde(default)]
    agents: BTreeMap<String, AgentDef>,
    /// `agent/command` → command.
    #[serde(default)]
    commands: BTreeMap<String, AgentCommand>,
}

#[derive(Debug)]
struct Loaded {
    id: String,
    flow_name: String,
    program: Program,
    snapshot: Snapshot,
    depth: u32,
    working_folder: Option<PathBuf>,
    parent_id: Option<String>,
    /// The words of the run's flow and agent definitions: object keys of
    /// local values that are among them stay readable in prompts.
    authored: BTreeSet<String>,
    /// The run's snapshot as JSON: text the user wrote, allowed past the
    /// privacy guard as is.
    authored_text: String,
}

/// The engine's connection to `<home>/maskflow.db`, opened and migrated
/// through [`FlowStorage::open`] before the engine is made.
#[derive(Debug)]
pub struct FlowDatabase(Connection);

impl FlowDatabase {
    /// Opens (and migrates) the database of `config.home`, with the
    /// configured durability.
    pub fn open(config: &FlowConfig) -> Result<FlowDatabase> {
        let stamp = format_rfc3339(config.clock.now_ms());
        let conn = config.storage.open(&config.home, &stamp)?;
        let sync = match config.synchronous {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", sync)?;
        Ok(FlowDatabase(conn))
    }
}

/// A prepared run: [`RunHandle::run`] drives it to its end (or a gate, a stop…).
#[derive(Debug)]
pub struct RunHandle {
    engine: FlowEngine,
    run: Arc<Loaded>,
    state: RunState,
    cancel: watch::Receiver<bool>,
    done: watch::Sender<bool>,
}

impl RunHandle {
    /// The run's id.
    pub fn conversation_id(&self) -> &str {
        &self.run.id
    }

    /// Runs until the run completes, fails, waits or is stopped; returns its status.
    pub async fn run(mut self) -> RunStatus {
        let status = self
            .engine
            .drive(self.run.clone(), self.state, &mut self.cancel)
            .await;
        self.engine.release(&self.run.id);
        self.engine.forget_chain(&self.run.id);
        let _ = self.done.send(true);
        self.engine.after_child_finished(&self.run, status);
        status
    }
}

impl FlowEngine {
    /// Opens the engine over `<home>/maskflow.db` (migrating it if needed),
    /// with its ports.
    pub fn open(config: FlowConfig, ports: FlowPorts) -> Result<FlowEngine> {
        let db = FlowDatabase::open(&config)?;
        Ok(FlowEngine::new(config, db, ports))
    }

    /// The engine over a database already opened for `config`: an app that
    /// owns the engine and serves its ports makes it inside its own
    /// `Arc::new_cyclic`, where nothing may fail.
    pub fn new(config: FlowConfig, db: FlowDatabase, ports: FlowPorts) -> FlowEngine {
        let sink = ports.events;
        FlowEngine {
            inner: Arc::new_cyclic(|engine| Inner {
                home: config.home,
                db: Mutex::new(db.0),
                backends: ports.agents,
                clock: config.clock,
                ids: config.ids,
                events: Arc::new(announce::Stamped {
                    sink,
                    engine: engine.clone(),
                }),
                storage: config.storage,
                scripts: ports.scripts,
                inflight: Mutex::new(HashMap::new()),
                stops: Mutex::new(HashMap::new()),
                checkpoints: Mutex::new(record::Checkpoints::new(config.checkpoints)),
            }),
        }
    }

    /// Whether any run is in flight in this process (a database restore waits).
    pub fn any_in_flight(&self) -> bool {
        !lock(&self.inner.inflight).is_empty()
    }

    fn agent_backend(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
        call: &FlowCall,
    ) -> std::result::Result<GuardedProvider, FlowError> {
        self.inner
            .backends
            .agent_backend(agent, def, authored, call)
    }

    fn now(&self) -> String {
        format_rfc3339(self.inner.clock.now_ms())
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        lock(&self.inner.db)
    }

    /// The data folder (flows, agents).
    pub fn home(&self) -> &Path {
        &self.inner.home
    }

    /// Now, RFC 3339, from the injected clock.
    pub fn now_rfc3339(&self) -> String {
        format_rfc3339(self.inner.clock.now_ms())
    }

    /// A flow read from disk (for Mermaid export and bundles).
    pub fn load_definition(&self, name: &str) -> Result<FlowDef> {
        agents::load_flow(&self.inner.home, name).map_err(load_error)
    }

    /// Every flow on disk, re-read now.
    pub fn list(&self) -> Result<FlowList> {
        let entries = agents::list_flows(&self.inner.home)
            .map_err(|e| Error::InvalidRequest(e.to_string()))?;
        Ok(FlowList {
            flows: entries
                .into_iter()
                .map(|e| FlowSummary {
                    name: e.name,
                    description: e.description,
                    disabled: e.flow.is_err(),
                    error: e.flow.err().map(|err| err.to_string()),
                })
                .collect(),
        })
    }

    /// A flow's definition as JSON (re-read now).
    pub fn definition(&self, name: &str) -> Result<Value> {
        let def = agents::load_flow(&self.inner.home, name).map_err(load_error)?;
        serde_json::to_value(def).map_err(|e| Error::Corrupt(e.to_string()))
    }
}

/// A loader error in the engine's words: a missing file is not found, a refused one invalid.
pub(crate) fn load_error(e: LoadError) -> Error {
    match e {
        LoadError::Missing { what, name, .. } => Error::NotFound { what, id: name },
        LoadError::BadName { what, name } => Error::NotFound { what, id: name },
        LoadError::Invalid { .. } => Error::InvalidRequest(format!("the flow is disabled: {e}")),
        LoadError::Unreadable { .. } => Error::InvalidRequest(e.to_string()),
    }
}
