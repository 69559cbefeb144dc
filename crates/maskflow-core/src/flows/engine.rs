//! [`FlowEngine`]: starts, runs, stops, resumes and answers flow runs. It
//! alone does the I/O of flows — the database, the providers, scripts — and
//! commits each step (state, transcript turn, agent messages, checkpoint) in
//! one SQLite transaction before the next one starts, so a killed process
//! resumes at the step in flight without losing or repeating a completed one.
//!
//! A run keeps the snapshot it started with (the flow definition, its agents
//! and their commands) in its row. Status moves go through
//! [`super::state::apply`]. Stop cancels the step in flight (dropping its
//! future kills a script); a stop asked by another process is seen through
//! the run's `stop_requested` flag.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::agents::{self, AgentCommand, AgentDef, LoadError};
use super::compile::{self, Op, Program, Target};
use super::definition::{FlowDef, JoinPolicy, MessageDef, Step};
use super::expr;
use super::prompt::{self, TaskContext};
use super::script::{PythonProcess, ScriptRequest, ScriptRunner};
use super::state::{
    self, ForeachProgress, ItemResult, LoopFrame, PendingRetry, RunEvent, RunState, RunStatus,
};
use super::store::{self as fstore, AgentMessageRow, RunRow, StepCommit, TurnRow};
use super::template;
use super::{
    FlowFlags, FlowList, FlowSummary, GateAnswer, HISTORY_LIMIT, MAX_SUBFLOW_DEPTH, RunFlags,
    RunList, RunPatch, RunSummary, RunView, StartFlow, Started, TurnView,
};
use crate::error::{CoreError, Result};
use crate::events::{Event, EventBus};
use crate::ids::{Clock, IdGen, format_rfc3339};
use crate::providers::{ChatMessage, ChatRole, LlmRequest, Provider, Role, Roles};

/// SQLite's `synchronous` setting for the flow connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// WAL + NORMAL: a committed step survives a killed process (not a power cut).
    #[default]
    Normal,
    /// FULL: it survives a power cut too, at a higher cost per step.
    Full,
}

/// What the engine needs.
#[derive(Clone, Debug)]
pub struct FlowConfig {
    /// The data folder (`flows/`, `agents/`, the database, backups).
    pub home: PathBuf,
    /// The agents' back ends until [`FlowEngine::set_agent_backends`] replaces them.
    pub roles: Roles,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Ids.
    pub ids: Arc<dyn IdGen>,
    /// Where turns and statuses are published.
    pub events: EventBus,
    /// Durability of each step's commit.
    pub synchronous: Synchronous,
}

/// Where the engine gets each agent's back end. The service implements it
/// (the agent's own `provider`/`model`, else the settings' roles, behind the
/// privacy guard and the ledger); fixed [`Roles`] serve the engine's own tests.
pub trait AgentBackends: Send + Sync + std::fmt::Debug {
    /// The back end for one call of `agent` (defined by `def`); `authored`
    /// is the run's flow and agent definitions (text the user wrote, not
    /// data). The error says which agent and which setting is wrong.
    fn agent_backend(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
    ) -> std::result::Result<Arc<dyn Provider>, String>;
}

impl AgentBackends for Roles {
    fn agent_backend(
        &self,
        agent: &str,
        _def: &AgentDef,
        _authored: &str,
    ) -> std::result::Result<Arc<dyn Provider>, String> {
        Ok(self.for_role(&Role::Agent(agent.to_owned())).clone())
    }
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
    backends: Mutex<Arc<dyn AgentBackends>>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    events: EventBus,
    scripts: Mutex<Arc<dyn ScriptRunner>>,
    inflight: Mutex<HashMap<String, Inflight>>,
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
        let _ = self.done.send(true);
        self.engine.after_child_finished(&self.run, status);
        status
    }
}

/// How a step ended.
enum Outcome {
    Advance {
        next: RunState,
        turns: Vec<TurnRow>,
        msgs: Vec<AgentMessageRow>,
        check_post: bool,
    },
    Wait {
        next: RunState,
        status: RunStatus,
        pending: Value,
        turns: Vec<TurnRow>,
    },
    Stopped,
}

struct StepFailure {
    message: String,
    turns: Vec<TurnRow>,
}

fn failure(message: impl Into<String>) -> StepFailure {
    StepFailure {
        message: message.into(),
        turns: Vec::new(),
    }
}

/// Moves the cursor to `target`, closing loops the target is not in and
/// opening (at iteration 1) those it is in.
fn enter(program: &Program, state: &mut RunState, target: Option<usize>) {
    state.cursor = target;
    let Some(t) = target else {
        state.loop_stack.clear();
        return;
    };
    let loops = &program.nodes[t].loops;
    let keep = state
        .loop_stack
        .iter()
        .zip(loops)
        .take_while(|(f, l)| f.node == **l)
        .count();
    state.loop_stack.truncate(keep);
    for &l in &loops[keep..] {
        state.loop_stack.push(LoopFrame {
            loop_step_path: program.nodes[l].path.clone(),
            iteration: 1,
            node: l,
        });
    }
}

/// Replaces every value under the local roots with its masked form.
fn mask_local(ctx: &mut Value, local: &std::collections::BTreeSet<String>) {
    fn mask_value(v: &mut Value) {
        match v {
            Value::String(s) => *s = maskflow_extractors::mask::mask(s),
            Value::Number(n) => *v = Value::String(maskflow_extractors::mask::mask(&n.to_string())),
            Value::Array(a) => a.iter_mut().for_each(mask_value),
            Value::Object(o) => o.values_mut().for_each(mask_value),
            Value::Bool(_) | Value::Null => {}
        }
    }
    fn at<'v>(v: &'v mut Value, parts: &[&str]) -> Option<&'v mut Value> {
        match parts.split_first() {
            None => Some(v),
            Some((first, rest)) => at(v.get_mut(*first)?, rest),
        }
    }
    for root in local {
        let parts: Vec<&str> = root.split('.').collect();
        if let Some(v) = at(ctx, &parts) {
            mask_value(v);
        }
    }
}

fn is_local(local: &std::collections::BTreeSet<String>, path: &str) -> bool {
    local.iter().any(|root| {
        path == root
            || path.starts_with(&format!("{root}."))
            || path.starts_with(&format!("{root}["))
    })
}

fn render_messages(messages: &[MessageDef], ctx: &Value) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| {
            let text: Vec<&str> = m.content.iter().map(|t| t.as_str()).collect();
            ChatMessage::new(m.role, template::render(&text.join("\n"), ctx))
        })
        .collect()
}

impl FlowEngine {
    /// Opens the engine over `<home>/maskflow.db` (migrating it if needed).
    pub fn open(config: FlowConfig) -> Result<FlowEngine> {
        let stamp = format_rfc3339(config.clock.now_ms());
        let conn = crate::store::open(&config.home, &stamp)?;
        let sync = match config.synchronous {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", sync)?;
        Ok(FlowEngine {
            inner: Arc::new(Inner {
                home: config.home,
                db: Mutex::new(conn),
                backends: Mutex::new(Arc::new(config.roles)),
                clock: config.clock,
                ids: config.ids,
                events: config.events,
                scripts: Mutex::new(Arc::new(PythonProcess::default())),
                inflight: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Whether any run is in flight in this process (a database restore waits).
    pub fn any_in_flight(&self) -> bool {
        !lock(&self.inner.inflight).is_empty()
    }

    /// Replaces where agents get their back ends (the service's settings).
    pub fn set_agent_backends(&self, backends: Arc<dyn AgentBackends>) {
        *lock(&self.inner.backends) = backends;
    }

    fn agent_backend(
        &self,
        agent: &str,
        def: &AgentDef,
        authored: &str,
    ) -> std::result::Result<Arc<dyn Provider>, String> {
        let backends = lock(&self.inner.backends).clone();
        backends.agent_backend(agent, def, authored)
    }

    /// Replaces the script runner (e.g. with the sandboxed one).
    pub fn set_script_runner(&self, runner: Arc<dyn ScriptRunner>) {
        *lock(&self.inner.scripts) = runner;
    }

    /// A receiver of every later event.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.inner.events.subscribe()
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
            .map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
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
        serde_json::to_value(def).map_err(|e| CoreError::Corrupt(e.to_string()))
    }

    /// Starts (or resumes) a run in the background; see [`FlowEngine::prepare`].
    pub fn start(&self, name: &str, request: StartFlow) -> Result<Started> {
        let (started, handle) = self.prepare(name, request)?;
        tokio::spawn(handle.run());
        Ok(started)
    }

    /// Checks a run request, records the run (new, or resumed) and returns a
    /// handle that drives it.
    pub fn prepare(&self, name: &str, request: StartFlow) -> Result<(Started, RunHandle)> {
        if request.resume_step_path.is_some() && request.conversation_id.is_none() {
            return Err(CoreError::InvalidRequest(
                "resumeStepPath needs the conversationId of the run to resume".into(),
            ));
        }
        let working_folder = match request.working_folder.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(w) => {
                let p = PathBuf::from(w);
                if !p.is_dir() {
                    return Err(CoreError::InvalidRequest(format!(
                        "working_folder {w:?} is not an existing folder"
                    )));
                }
                Some(p)
            }
        };
        let now = self.now();
        let (run, state) = match &request.conversation_id {
            Some(id) => self.prepare_resume(
                name,
                id,
                request.resume_step_path.as_deref(),
                working_folder,
                &now,
            )?,
            None => self.prepare_new(name, working_folder, &now)?,
        };
        crate::store::backups::take(
            &self.db(),
            &self.inner.home,
            crate::store::backups::Reason::PreFlowRun,
            Some(&run.id),
            &now,
        )?;
        let model_id = self.model_id(&run.snapshot);
        let inflight_id = self.inner.ids.next_id("inf");
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        {
            let map = lock(&self.inner.inflight);
            if map.contains_key(&run.id) {
                return Err(CoreError::RunInProgress(run.id.clone()));
            }
            drop(map);
            // Not under the in-flight lock: the lease takes the database lock.
            self.take_lease(&run.id)?;
            let mut map = lock(&self.inner.inflight);
            if map.contains_key(&run.id) {
                return Err(CoreError::RunInProgress(run.id.clone()));
            }
            map.insert(
                run.id.clone(),
                Inflight {
                    inflight_id: inflight_id.clone(),
                    cancel: cancel_tx,
                    done: done_rx,
                },
            );
        }
        self.publish_status(&run, RunStatus::Running, None);
        let started = Started {
            status: "started".into(),
            flow_name: run.flow_name.clone(),
            conversation_id: run.id.clone(),
            inflight_id,
            model_id,
        };
        Ok((
            started,
            RunHandle {
                engine: self.clone(),
                run: Arc::new(run),
                state,
                cancel: cancel_rx,
                done: done_tx,
            },
        ))
    }

    fn model_id(&self, snap: &Snapshot) -> String {
        match snap.agents.iter().next() {
            Some((_, def)) if def.model.is_some() => def
                .model
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_default(),
            Some((name, def)) => match self.agent_backend(name, def, "") {
                Ok(p) if !p.model().is_empty() => p.model().to_owned(),
                Ok(p) => p.name().to_owned(),
                Err(_) => String::new(),
            },
            None => String::new(),
        }
    }

    fn snapshot_of(&self, flow: FlowDef) -> Result<Snapshot> {
        let mut snap = Snapshot {
            flow,
            agents: BTreeMap::new(),
            commands: BTreeMap::new(),
        };
        let mut steps: Vec<&Step> = Vec::new();
        fn walk<'a>(list: &'a [Step], out: &mut Vec<&'a Step>) {
            for s in list {
                out.push(s);
                match s {
                    Step::StartLoop(l) => walk(&l.steps, out),
                    Step::Decision(d) => {
                        for b in &d.branches {
                            if let Some(st) = &b.steps {
                                walk(st, out);
                            }
                        }
                        if let Some(st) = d.default.as_ref().and_then(|d| d.steps.as_ref()) {
                            walk(st, out);
                        }
                    }
                    Step::Foreach(f) => walk(std::slice::from_ref(&f.step), out),
                    _ => {}
                }
            }
        }
        let flow = snap.flow.clone();
        walk(
            flow.steps
                .as_deref()
                .or(flow.nodes.as_deref())
                .unwrap_or(&[]),
            &mut steps,
        );
        for step in steps {
            if let Some((agent, _)) = step.agent() {
                if !snap.agents.contains_key(agent.as_str()) {
                    let def = agents::load_agent(&self.inner.home, agent.as_str())
                        .map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
                    snap.agents.insert(agent.to_string(), def);
                }
                if let Step::Command(c) = step {
                    let key = format!("{}/{}", c.agent_type, c.command_name);
                    if let std::collections::btree_map::Entry::Vacant(slot) =
                        snap.commands.entry(key)
                    {
                        let cmd = agents::load_command(
                            &self.inner.home,
                            c.agent_type.as_str(),
                            c.command_name.as_str(),
                        )
                        .map_err(|e| match e {
                            LoadError::Missing { .. } => CoreError::InvalidRequest(format!(
                                "unknown command {:?} of agent {:?}: {e}",
                                c.command_name.as_str(),
                                c.agent_type.as_str()
                            )),
                            other => CoreError::InvalidRequest(other.to_string()),
                        })?;
                        slot.insert(cmd);
                    }
                }
            }
        }
        Ok(snap)
    }

    fn load(&self, row: &RunRow) -> Result<Loaded> {
        let snapshot: Snapshot = serde_json::from_value(row.definition.clone())
            .map_err(|e| CoreError::Corrupt(format!("flow run {}: {e}", row.id)))?;
        let program =
            compile::compile(&snapshot.flow).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        Ok(Loaded {
            id: row.id.clone(),
            flow_name: row.flow_name.clone(),
            program,
            snapshot,
            depth: row.depth,
            working_folder: row.working_folder.as_ref().map(PathBuf::from),
            parent_id: row.parent_id.clone(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn new_row(
        &self,
        name: &str,
        snapshot: &Snapshot,
        program: &Program,
        input: Map<String, Value>,
        working_folder: Option<&Path>,
        parent: Option<(&str, u32)>,
        now: &str,
    ) -> Result<RunRow> {
        let mut st = RunState {
            format: state::FORMAT,
            input,
            output: Value::Null,
            ..RunState::default()
        };
        if let Some(defaults) = &snapshot.flow.input {
            for (k, v) in defaults {
                st.input.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        enter(program, &mut st, program.start);
        Ok(RunRow {
            id: self.inner.ids.next_id("flow"),
            flow_name: name.to_owned(),
            title: format!("Flow: {name}"),
            status: RunStatus::Running,
            definition: serde_json::to_value(snapshot)
                .map_err(|e| CoreError::Corrupt(e.to_string()))?,
            state: st,
            pending: None,
            error: None,
            working_folder: working_folder.map(|p| p.display().to_string()),
            archived: false,
            stop_requested: false,
            parent_id: parent.map(|(p, _)| p.to_owned()),
            depth: parent.map_or(0, |(_, d)| d),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        })
    }

    fn prepare_new(
        &self,
        name: &str,
        working_folder: Option<PathBuf>,
        now: &str,
    ) -> Result<(Loaded, RunState)> {
        let def = agents::load_flow(&self.inner.home, name).map_err(load_error)?;
        let snapshot = self.snapshot_of(def)?;
        let program = compile::compile(&snapshot.flow)
            .map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
        let row = self.new_row(
            name,
            &snapshot,
            &program,
            Map::new(),
            working_folder.as_deref(),
            None,
            now,
        )?;
        fstore::insert_run(&self.db(), &row)?;
        let state = row.state.clone();
        Ok((self.load(&row)?, state))
    }

    fn prepare_resume(
        &self,
        name: &str,
        id: &str,
        path: Option<&[i64]>,
        working_folder: Option<PathBuf>,
        now: &str,
    ) -> Result<(Loaded, RunState)> {
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| CoreError::not_found("flow run", id))?;
        if row.flow_name != name {
            return Err(CoreError::InvalidRequest(format!(
                "run {id} belongs to flow {:?}, not {name:?}",
                row.flow_name
            )));
        }
        if row.archived {
            return Err(CoreError::Archived(format!("flow run {id}")));
        }
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(CoreError::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        let mut loaded = self.load(&row)?;
        if working_folder.is_some() {
            loaded.working_folder = working_folder;
        }
        let mut st = row.state.clone();
        match path {
            Some(p) => {
                let node = resolve_path(&loaded.program, p)?;
                enter(&loaded.program, &mut st, Some(node));
                st.pending_retry = None;
                st.child = None;
            }
            None => match row.status {
                RunStatus::Completed => {
                    return Err(CoreError::InvalidRequest(format!(
                        "run {id} has completed; give resumeStepPath to run again from a step"
                    )));
                }
                RunStatus::Waiting | RunStatus::NeedsAttention => {
                    return Err(CoreError::Conflict(format!(
                        "run {id} is waiting for an answer; answer it with POST /api/flow-runs/{id}/gate"
                    )));
                }
                _ => {}
            },
        }
        for (key, conv) in &st.agent_conversations {
            let wanted = key.split(':').next().unwrap_or_default();
            let owner = match st.conversation_agents.get(conv) {
                Some(a) => Some(a.clone()),
                None => fstore::conversation_agent(&self.db(), conv)?,
            };
            let stored_owner = fstore::conversation_agent(&self.db(), conv)?;
            for o in [owner, stored_owner].into_iter().flatten() {
                if o != wanted {
                    return Err(CoreError::AgentMismatch(format!(
                        "conversation {conv} stored for {key:?} belongs to agent {o:?}, not {wanted:?}"
                    )));
                }
            }
        }
        state::apply(row.status, RunEvent::Resume)
            .map_err(|e| CoreError::Conflict(e.to_string()))?;
        {
            let mut db = self.db();
            fstore::set_stop_requested(&db, id, false)?;
            fstore::commit_step(
                &mut db,
                &StepCommit {
                    run_id: id,
                    status: RunStatus::Running,
                    state: &st,
                    pending: None,
                    error: None,
                    turns: &[],
                    agent_messages: &[],
                    now,
                },
            )?;
            if let Some(w) = &loaded.working_folder {
                db.execute(
                    "UPDATE flow_runs SET working_folder = ?2 WHERE id = ?1",
                    rusqlite::params![id, w.display().to_string()],
                )?;
            }
        }
        Ok((loaded, st))
    }

    fn release(&self, id: &str) {
        lock(&self.inner.inflight).remove(id);
        let owner = crate::store::leases::LeaseOwner::this_process();
        let _ = crate::store::leases::release(&self.db(), &lease_name(id), &owner);
    }

    /// Takes this process's lease on a flow run (refused while another
    /// Maskflow process runs it) and renews it while the run is in this
    /// engine's in-flight map.
    fn take_lease(&self, id: &str) -> Result<()> {
        use crate::store::leases;
        let owner = leases::LeaseOwner::this_process();
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        leases::acquire(
            &self.db(),
            &lease_name(id),
            &owner,
            now,
            leases::DEFAULT_TTL_MS,
        )?;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let engine = self.clone();
            let id = id.to_owned();
            rt.spawn(async move {
                let every = std::time::Duration::from_millis(leases::DEFAULT_TTL_MS as u64 / 3);
                loop {
                    tokio::time::sleep(every).await;
                    if !lock(&engine.inner.inflight).contains_key(&id) {
                        break;
                    }
                    let now = i64::try_from(engine.inner.clock.now_ms()).unwrap_or(i64::MAX);
                    let db = engine.db();
                    let _ = leases::heartbeat(
                        &db,
                        &lease_name(&id),
                        &owner,
                        now,
                        leases::DEFAULT_TTL_MS,
                    );
                }
            });
        }
        Ok(())
    }

    /// Refuses when another Maskflow process holds a live lease on the run;
    /// checked before any state is written (the lease is taken at start).
    fn check_lease(&self, id: &str) -> Result<()> {
        use crate::store::leases;
        let owner = leases::LeaseOwner::this_process();
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let db = self.db();
        // Acquire-then-release is the one atomic test, and it clears a dead
        // owner's lease on the way.
        leases::acquire(&db, &lease_name(id), &owner, now, leases::DEFAULT_TTL_MS)?;
        leases::release(&db, &lease_name(id), &owner)
    }

    /// The runs of a flow, newest first.
    pub fn runs(&self, name: &str) -> Result<RunList> {
        let rows = fstore::runs_of(&self.db(), name)?;
        Ok(RunList {
            runs: rows
                .into_iter()
                .map(|r| RunSummary {
                    conversation_id: r.id,
                    flow_name: r.flow_name,
                    title: r.title,
                    status: r.status,
                    archived: r.archived,
                    error: r.error,
                    created_at: r.created_at,
                    updated_at: r.updated_at,
                })
                .collect(),
        })
    }

    /// A run with its resume state and transcript.
    pub fn get_run(&self, id: &str) -> Result<RunView> {
        let db = self.db();
        let row = fstore::get_run(&db, id)?.ok_or_else(|| CoreError::not_found("flow run", id))?;
        let turns = fstore::turns_of(&db, id)?;
        drop(db);
        let next_step_path = match serde_json::from_value::<Snapshot>(row.definition.clone()) {
            Ok(snap) => compile::compile(&snap.flow).ok().and_then(|p| {
                row.state
                    .cursor
                    .and_then(|c| p.nodes.get(c).map(|n| n.path.clone()))
            }),
            Err(_) => None,
        };
        Ok(RunView {
            conversation_id: row.id,
            flow_name: row.flow_name,
            title: row.title,
            status: row.status,
            archived: row.archived,
            error: row.error,
            flags: RunFlags {
                flow: FlowFlags {
                    step_path: row.state.step_path.clone(),
                    next_step_path,
                    loop_stack: row.state.loop_stack.clone(),
                    agent_conversations: row.state.agent_conversations.clone(),
                },
            },
            turns: turns
                .into_iter()
                .map(|t| TurnView {
                    role: t.role,
                    content: t.content,
                    created_at: t.created_at,
                    command: t.command,
                })
                .collect(),
            pending: row.pending,
            parent_id: row.parent_id,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }

    /// Renames or (un)archives a run.
    pub fn patch(&self, id: &str, patch: RunPatch) -> Result<RunView> {
        let now = self.now();
        {
            let db = self.db();
            let row =
                fstore::get_run(&db, id)?.ok_or_else(|| CoreError::not_found("flow run", id))?;
            let title = match patch.title.as_deref().map(str::trim) {
                Some("") => {
                    return Err(CoreError::InvalidRequest("title must not be empty".into()));
                }
                Some(t) if t.chars().count() > 200 => {
                    return Err(CoreError::InvalidRequest(
                        "title is longer than 200 characters".into(),
                    ));
                }
                Some(t) => t.to_owned(),
                None => row.title.clone(),
            };
            let archived = patch.archived.unwrap_or(row.archived);
            if archived && !row.archived && lock(&self.inner.inflight).contains_key(id) {
                return Err(CoreError::RunInProgress(id.to_owned()));
            }
            fstore::update_meta(&db, id, &title, archived, &now)?;
        }
        self.get_run(id)
    }

    /// Deletes a run (not while it runs, here or in another process).
    pub fn delete(&self, id: &str) -> Result<()> {
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(CoreError::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        if !fstore::delete_run(&self.db(), id)? {
            return Err(CoreError::not_found("flow run", id));
        }
        Ok(())
    }

    /// Stops a run: cancels the step in flight and records `stopped`.
    pub async fn stop(&self, id: &str) -> Result<RunView> {
        let local = lock(&self.inner.inflight).get(id).map(|f| {
            let _ = f.cancel.send(true);
            f.done.clone()
        });
        if let Some(mut done) = local {
            let _ = tokio::time::timeout(Duration::from_secs(30), done.wait_for(|d| *d)).await;
            return self.get_run(id);
        }
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| CoreError::not_found("flow run", id))?;
        match row.status {
            RunStatus::Waiting | RunStatus::NeedsAttention => {
                self.record_status(
                    &row.id,
                    &row.flow_name,
                    RunStatus::Stopped,
                    &row.state,
                    None,
                    None,
                    vec![],
                )?;
            }
            RunStatus::Running => {
                // Perhaps another process runs it: ask, then wait for it to notice.
                fstore::set_stop_requested(&self.db(), id, true)?;
                for _ in 0..20 {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let now = fstore::get_run(&self.db(), id)?.map(|r| r.status);
                    if now != Some(RunStatus::Running) {
                        return self.get_run(id);
                    }
                }
                // Nobody runs it (its process died): record the stop here.
                let row = fstore::get_run(&self.db(), id)?
                    .ok_or_else(|| CoreError::not_found("flow run", id))?;
                self.record_status(
                    &row.id,
                    &row.flow_name,
                    RunStatus::Stopped,
                    &row.state,
                    None,
                    None,
                    vec![],
                )?;
            }
            other => {
                return Err(CoreError::Conflict(format!(
                    "run {id} is {} and cannot be stopped",
                    other.as_str()
                )));
            }
        }
        self.get_run(id)
    }

    /// Answers the gate a run waits at, or a run that needs attention
    /// (`retry`, `skip`, `stop`), and carries on in the background.
    pub fn answer(&self, id: &str, answer: GateAnswer) -> Result<Started> {
        let (started, handle) = self.prepare_answer(id, answer)?;
        if let Some(h) = handle {
            tokio::spawn(h.run());
        }
        Ok(started)
    }

    /// Like [`FlowEngine::answer`], returning the handle instead of spawning it.
    pub fn prepare_answer(
        &self,
        id: &str,
        answer: GateAnswer,
    ) -> Result<(Started, Option<RunHandle>)> {
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| CoreError::not_found("flow run", id))?;
        if row.archived {
            return Err(CoreError::Archived(format!("flow run {id}")));
        }
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(CoreError::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        let run = self.load(&row)?;
        let option = answer.option.trim().to_owned();
        let input = answer
            .input
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let mut next = row.state.clone();
        let cursor = next
            .cursor
            .ok_or_else(|| CoreError::Conflict(format!("run {id} has no step waiting")))?;
        let node = &run.program.nodes[cursor];
        let kind = row
            .pending
            .as_ref()
            .and_then(|p| p.get("kind"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut turns = Vec::new();
        let mut stop = false;
        match (row.status, kind) {
            (RunStatus::Waiting, "gate") => {
                let Op::Gate { step, targets } = &node.op else {
                    return Err(CoreError::Corrupt(format!(
                        "run {id} waits at a step that is not a gate"
                    )));
                };
                let Some(i) = step
                    .options
                    .iter()
                    .position(|o| o.label.as_str().eq_ignore_ascii_case(&option))
                else {
                    let labels: Vec<&str> = step.options.iter().map(|o| o.label.as_str()).collect();
                    return Err(CoreError::InvalidRequest(format!(
                        "option {option:?} is not one of {labels:?}"
                    )));
                };
                let chosen = &step.options[i];
                if chosen.requires_input && input.is_none() {
                    return Err(CoreError::InvalidRequest(format!(
                        "option {:?} requires input",
                        chosen.label.as_str()
                    )));
                }
                let decision = json!({"option": chosen.label.as_str(), "input": input});
                next.output = decision.clone();
                next.local.remove("output");
                next.gate = Some(decision.clone());
                if let Some(sid) = &node.id {
                    next.steps.insert(sid.clone(), decision);
                    next.local.remove(&format!("steps.{sid}"));
                }
                next.step_path = node.path.clone();
                next.steps_done += 1;
                let target = match &targets[i] {
                    Target::Continue => node.next,
                    Target::End => None,
                    Target::Node(n) => Some(*n),
                };
                enter(&run.program, &mut next, target);
                let content = match &input {
                    Some(t) => format!("{}: {t}", chosen.label),
                    None => chosen.label.to_string(),
                };
                turns.push(TurnRow {
                    role: "user",
                    content,
                    command: meta(&run, node, None),
                });
            }
            (RunStatus::NeedsAttention, _) => {
                let choice = option.to_ascii_lowercase();
                match choice.as_str() {
                    "retry" => {
                        next.pending_retry = None;
                        if kind == "join"
                            && let Some(p) = next.foreach.as_mut()
                        {
                            p.results.retain(|_, r| r.ok);
                            let fnode = p.node;
                            enter(&run.program, &mut next, Some(fnode));
                        }
                    }
                    "skip" => {
                        next.pending_retry = None;
                        if kind == "join" {
                            next.join_skip_failures = true;
                        } else {
                            next.step_path = node.path.clone();
                            enter(&run.program, &mut next, node.next);
                        }
                    }
                    "stop" => stop = true,
                    _ => {
                        return Err(CoreError::InvalidRequest(format!(
                            "a run that needs attention takes retry, skip or stop, not {option:?}"
                        )));
                    }
                }
                turns.push(TurnRow {
                    role: "user",
                    content: choice,
                    command: meta(&run, node, None),
                });
            }
            (RunStatus::Waiting, "subflow") => {
                let child = row
                    .pending
                    .as_ref()
                    .and_then(|p| p.get("conversationId"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return Err(CoreError::Conflict(format!(
                    "run {id} waits for its subflow; answer run {child} instead"
                )));
            }
            (status, _) => {
                return Err(CoreError::Conflict(format!(
                    "run {id} is {} and is not waiting for an answer",
                    status.as_str()
                )));
            }
        }
        if stop {
            self.record_status(
                &run.id,
                &run.flow_name,
                RunStatus::Stopped,
                &next,
                None,
                None,
                turns,
            )?;
            let started = Started {
                status: "stopped".into(),
                flow_name: run.flow_name.clone(),
                conversation_id: run.id.clone(),
                inflight_id: String::new(),
                model_id: self.model_id(&run.snapshot),
            };
            return Ok((started, None));
        }
        state::apply(row.status, RunEvent::Answer)
            .map_err(|e| CoreError::Conflict(e.to_string()))?;
        self.record_status(
            &run.id,
            &run.flow_name,
            RunStatus::Running,
            &next,
            None,
            None,
            turns,
        )?;
        let inflight_id = self.inner.ids.next_id("inf");
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        self.take_lease(&run.id)?;
        lock(&self.inner.inflight).insert(
            run.id.clone(),
            Inflight {
                inflight_id: inflight_id.clone(),
                cancel: cancel_tx,
                done: done_rx,
            },
        );
        let started = Started {
            status: "started".into(),
            flow_name: run.flow_name.clone(),
            conversation_id: run.id.clone(),
            inflight_id,
            model_id: self.model_id(&run.snapshot),
        };
        Ok((
            started,
            Some(RunHandle {
                engine: self.clone(),
                run: Arc::new(run),
                state: next,
                cancel: cancel_rx,
                done: done_tx,
            }),
        ))
    }

    /// Seed 004's `cancel_inflight` (sent over the WebSocket): stops run
    /// `conversation_id` as [`FlowEngine::stop`] does — the step in flight
    /// is cancelled, `stopped` recorded with the last completed step kept
    /// for resuming. With `inflight_id`, only when that is the run in
    /// flight here: a stale id (an earlier run, another process) is refused.
    pub async fn cancel_inflight(
        &self,
        conversation_id: &str,
        inflight_id: Option<&str>,
    ) -> Result<RunView> {
        if let Some(wanted) = inflight_id {
            match self.inflight_id(conversation_id) {
                Some(current) if current == wanted => {}
                Some(current) => {
                    return Err(CoreError::Conflict(format!(
                        "run {conversation_id} is in flight as {current}, not {wanted}"
                    )));
                }
                None => {
                    return Err(CoreError::Conflict(format!(
                        "run {conversation_id} has no step in flight here (inflight {wanted} has ended)"
                    )));
                }
            }
        }
        self.stop(conversation_id).await
    }

    /// The inflight id of a running run in this process.
    pub fn inflight_id(&self, id: &str) -> Option<String> {
        lock(&self.inner.inflight)
            .get(id)
            .map(|f| f.inflight_id.clone())
    }

    #[allow(clippy::too_many_arguments)]
    fn record_status(
        &self,
        id: &str,
        flow_name: &str,
        status: RunStatus,
        st: &RunState,
        pending: Option<&Value>,
        error: Option<&str>,
        turns: Vec<TurnRow>,
    ) -> Result<()> {
        let now = self.now();
        let ids = {
            let mut db = self.db();
            fstore::commit_step(
                &mut db,
                &StepCommit {
                    run_id: id,
                    status,
                    state: st,
                    pending,
                    error,
                    turns: &turns,
                    agent_messages: &[],
                    now: &now,
                },
            )?
        };
        self.publish_turns(id, flow_name, &turns, &ids, &now);
        self.inner.events.publish(Event::FlowStatus {
            conversation_id: id.to_owned(),
            flow_name: flow_name.to_owned(),
            status,
            error: error.map(str::to_owned),
        });
        Ok(())
    }

    fn publish_status(&self, run: &Loaded, status: RunStatus, error: Option<String>) {
        self.inner.events.publish(Event::FlowStatus {
            conversation_id: run.id.clone(),
            flow_name: run.flow_name.clone(),
            status,
            error,
        });
    }

    fn publish_turns(&self, id: &str, flow_name: &str, turns: &[TurnRow], _ids: &[i64], now: &str) {
        for t in turns {
            self.inner.events.publish(Event::FlowTurn {
                conversation_id: id.to_owned(),
                flow_name: flow_name.to_owned(),
                turn: TurnView {
                    role: t.role.to_owned(),
                    content: t.content.clone(),
                    created_at: now.to_owned(),
                    command: t.command.clone(),
                },
            });
        }
    }

    /// Commits one step; a database failure is returned as the message to fail the run with.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &self,
        run: &Loaded,
        status: RunStatus,
        st: &RunState,
        pending: Option<&Value>,
        error: Option<&str>,
        turns: &[TurnRow],
        msgs: &[AgentMessageRow],
    ) -> std::result::Result<(), String> {
        let now = self.now();
        let ids = {
            let mut db = self.db();
            fstore::commit_step(
                &mut db,
                &StepCommit {
                    run_id: &run.id,
                    status,
                    state: st,
                    pending,
                    error,
                    turns,
                    agent_messages: msgs,
                    now: &now,
                },
            )
            .map_err(|e| format!("could not save the step: {e}"))?
        };
        self.publish_turns(&run.id, &run.flow_name, turns, &ids, &now);
        if status != RunStatus::Running {
            self.publish_status(run, status, error.map(str::to_owned));
        }
        Ok(())
    }

    fn stop_flag(&self, id: &str) -> bool {
        fstore::stop_requested(&self.db(), id).unwrap_or(false)
    }

    async fn cancelled(&self, id: &str, cancel: &mut watch::Receiver<bool>) {
        loop {
            if *cancel.borrow() {
                return;
            }
            tokio::select! {
                r = cancel.changed() => {
                    if r.is_err() {
                        // The sender is gone: nobody can stop this run in-process any more.
                        std::future::pending::<()>().await;
                    }
                }
                _ = tokio::time::sleep(Duration::from_millis(250)) => {
                    if self.stop_flag(id) {
                        return;
                    }
                }
            }
        }
    }

    fn end(
        &self,
        run: &Loaded,
        st: &RunState,
        status: RunStatus,
        error: Option<String>,
        turns: Vec<TurnRow>,
    ) -> RunStatus {
        let pending = None;
        if let Err(e) = self.commit(run, status, st, pending, error.as_deref(), &turns, &[]) {
            eprintln!("maskflow flows: run {}: {e}", run.id);
            return RunStatus::Failed;
        }
        if status == RunStatus::Stopped {
            let _ = fstore::set_stop_requested(&self.db(), &run.id, false);
        }
        status
    }

    fn fail(
        &self,
        run: &Loaded,
        st: &RunState,
        node: Option<usize>,
        message: String,
        mut turns: Vec<TurnRow>,
    ) -> RunStatus {
        let command = node.map_or_else(
            || json!({"name": "flow"}),
            |n| meta(run, &run.program.nodes[n], None),
        );
        turns.push(TurnRow {
            role: "system",
            content: format!("Failed: {message}"),
            command,
        });
        self.end(run, st, RunStatus::Failed, Some(message), turns)
    }

    fn context(&self, run: &Loaded, st: &RunState) -> Value {
        let iterations: Vec<u32> = st.loop_stack.iter().map(|f| f.iteration).collect();
        json!({
            "input": st.input,
            "output": st.output,
            "steps": st.steps,
            "gate": st.gate,
            "loop": {
                "iteration": iterations.last().copied().unwrap_or(0),
                "iterations": iterations,
                "depth": iterations.len(),
            },
            "flow": {"name": run.flow_name, "depth": run.depth},
        })
    }

    fn drive<'a>(
        &'a self,
        run: Arc<Loaded>,
        mut st: RunState,
        cancel: &'a mut watch::Receiver<bool>,
    ) -> crate::providers::BoxFuture<'a, RunStatus> {
        Box::pin(async move {
            loop {
                if *cancel.borrow() || self.stop_flag(&run.id) {
                    return self.end(&run, &st, RunStatus::Stopped, None, vec![]);
                }
                let Some(cur) = st.cursor else {
                    return self.end(&run, &st, RunStatus::Completed, None, vec![]);
                };
                let node = &run.program.nodes[cur];
                if !node.pre.is_empty() {
                    let ctx = self.context(&run, &st);
                    if let Some(c) = node.pre.iter().find(|c| !c.check.eval(&ctx)) {
                        return self.fail(
                            &run,
                            &st,
                            Some(cur),
                            format!("precondition of step {:?} failed: {}", node.label, c.error),
                            vec![],
                        );
                    }
                }
                let mut step_cancel = cancel.clone();
                let result = tokio::select! {
                    r = self.exec(run.clone(), cur, &st, &mut step_cancel) => r,
                    _ = self.cancelled(&run.id, cancel) => {
                        return self.end(&run, &st, RunStatus::Stopped, None, vec![]);
                    }
                };
                match result {
                    Err(f) => return self.fail(&run, &st, Some(cur), f.message, f.turns),
                    Ok(Outcome::Stopped) => {
                        return self.end(&run, &st, RunStatus::Stopped, None, vec![]);
                    }
                    Ok(Outcome::Wait {
                        next,
                        status,
                        pending,
                        turns,
                    }) => {
                        if let Err(e) =
                            self.commit(&run, status, &next, Some(&pending), None, &turns, &[])
                        {
                            return self.fail(&run, &st, Some(cur), e, vec![]);
                        }
                        return status;
                    }
                    Ok(Outcome::Advance {
                        mut next,
                        mut turns,
                        msgs,
                        check_post,
                    }) => {
                        if check_post && !node.post.is_empty() {
                            let ctx = self.context(&run, &next);
                            if let Some(c) = node.post.iter().find(|c| !c.check.eval(&ctx)) {
                                let error = format!(
                                    "postcondition of step {:?} failed: {}",
                                    node.label, c.error
                                );
                                let mut retry = st.clone();
                                retry.agent_conversations = next.agent_conversations.clone();
                                retry.conversation_agents = next.conversation_agents.clone();
                                let attempt = st
                                    .pending_retry
                                    .as_ref()
                                    .filter(|p| p.node == cur)
                                    .map_or(0, |p| p.attempt);
                                retry.pending_retry = Some(PendingRetry {
                                    node: cur,
                                    error: c.error.to_string(),
                                    attempt: attempt + 1,
                                });
                                turns.push(TurnRow {
                                    role: "system",
                                    content: error.clone(),
                                    command: meta(&run, node, None),
                                });
                                if attempt == 0 {
                                    if let Err(e) = self.commit(
                                        &run,
                                        RunStatus::Running,
                                        &retry,
                                        None,
                                        None,
                                        &turns,
                                        &msgs,
                                    ) {
                                        return self.fail(&run, &st, Some(cur), e, vec![]);
                                    }
                                    st = retry;
                                    continue;
                                }
                                let pending = json!({
                                    "kind": "attention",
                                    "reason": "postcondition",
                                    "step": node.label,
                                    "stepPath": node.path,
                                    "error": error,
                                    "options": ["retry", "skip", "stop"],
                                });
                                if let Err(e) = self.commit(
                                    &run,
                                    RunStatus::NeedsAttention,
                                    &retry,
                                    Some(&pending),
                                    None,
                                    &turns,
                                    &msgs,
                                ) {
                                    return self.fail(&run, &st, Some(cur), e, vec![]);
                                }
                                return RunStatus::NeedsAttention;
                            }
                        }
                        next.pending_retry = None;
                        if let Err(e) =
                            self.commit(&run, RunStatus::Running, &next, None, None, &turns, &msgs)
                        {
                            return self.fail(&run, &st, Some(cur), e, vec![]);
                        }
                        st = next;
                    }
                }
            }
        })
    }

    /// Marks `next` as having completed `node` with `output`.
    fn complete_with(next: &mut RunState, node: &compile::Node, output: Value, local: bool) {
        next.output = output.clone();
        if local {
            next.local.insert("output".into());
        } else {
            next.local.remove("output");
        }
        if let Some(id) = &node.id {
            next.steps.insert(id.clone(), output);
            let key = format!("steps.{id}");
            if local {
                next.local.insert(key);
            } else {
                next.local.remove(&key);
            }
        }
        next.step_path = node.path.clone();
        next.steps_done += 1;
    }

    async fn exec(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        st: &RunState,
        cancel: &mut watch::Receiver<bool>,
    ) -> std::result::Result<Outcome, StepFailure> {
        let node = &run.program.nodes[cur];
        let program = &run.program;
        let mut next = st.clone();
        let feedback = st
            .pending_retry
            .as_ref()
            .filter(|p| p.node == cur)
            .map(|p| p.error.clone());
        let advance = |next: RunState, turns, msgs, check_post| {
            Ok(Outcome::Advance {
                next,
                turns,
                msgs,
                check_post,
            })
        };
        match &node.op {
            op @ (Op::Llm(_) | Op::Command(_)) => {
                // Both ask an agent: an inline prompt, or one of the agent's commands.
                let pctx = self.prompt_context(&run, st);
                let (agent, identifier, msgs) = match op {
                    Op::Llm(s) => (
                        s.agent_type.as_str(),
                        s.identifier.as_str(),
                        render_messages(&s.messages, &pctx),
                    ),
                    Op::Command(s) => {
                        let key = format!("{}/{}", s.agent_type, s.command_name);
                        let cmd = run.snapshot.commands.get(&key).ok_or_else(|| {
                            failure(format!(
                                "unknown command {:?} of agent {:?}",
                                s.command_name.as_str(),
                                s.agent_type.as_str()
                            ))
                        })?;
                        (
                            s.agent_type.as_str(),
                            s.identifier.as_str(),
                            render_messages(&cmd.messages, &pctx),
                        )
                    }
                    _ => return Err(failure("not an agent step".to_owned())),
                };
                let (reply, rows) = self
                    .ask(
                        &run,
                        node,
                        &mut next,
                        agent,
                        identifier,
                        msgs,
                        feedback.as_deref(),
                        true,
                        None,
                    )
                    .await?;
                Self::complete_with(&mut next, node, prompt::parse_output(&reply), false);
                let turn = TurnRow {
                    role: "assistant",
                    content: reply,
                    command: meta(&run, node, None),
                };
                enter(program, &mut next, node.next);
                advance(next, vec![turn], rows, true)
            }
            Op::Break { step, loop_start } => {
                let msgs = vec![ChatMessage::new(
                    ChatRole::User,
                    prompt::break_question(step.question.as_str()),
                )];
                let (reply, rows) = self
                    .ask(
                        &run,
                        node,
                        &mut next,
                        step.agent_type.as_str(),
                        step.identifier.as_str(),
                        msgs,
                        feedback.as_deref(),
                        true,
                        None,
                    )
                    .await?;
                let turn = TurnRow {
                    role: "assistant",
                    content: reply.clone(),
                    command: meta(&run, node, None),
                };
                let answer = match prompt::parse_break(&reply) {
                    Ok(a) => a,
                    Err(e) => {
                        return Err(StepFailure {
                            message: format!("break step {:?}: {e}", node.label),
                            turns: vec![turn],
                        });
                    }
                };
                Self::complete_with(&mut next, node, json!({"answer": answer.as_str()}), false);
                if answer == step.break_on {
                    enter(program, &mut next, program.nodes[*loop_start].next);
                } else {
                    enter(program, &mut next, node.next);
                }
                advance(next, vec![turn], rows, true)
            }
            Op::LoopStart { body, .. } => {
                next.step_path = node.path.clone();
                next.steps_done += 1;
                enter(program, &mut next, Some(*body));
                advance(next, vec![], vec![], false)
            }
            Op::LoopEnd { start } => {
                let (max, body) = match &program.nodes[*start].op {
                    Op::LoopStart {
                        max_iterations,
                        body,
                    } => (*max_iterations, *body),
                    _ => return Err(failure("a loop end points at a step that is not a loop")),
                };
                let Some(frame) = next.loop_stack.last_mut().filter(|f| f.node == *start) else {
                    return Err(failure(format!(
                        "loop {:?} is not open",
                        program.nodes[*start].label
                    )));
                };
                frame.iteration += 1;
                if let Some(m) = max
                    && frame.iteration > m
                {
                    return Err(failure(format!(
                        "loop {:?} reached maxIterations ({m}) without a break",
                        program.nodes[*start].label
                    )));
                }
                next.steps_done += 1;
                next.cursor = Some(body);
                advance(next, vec![], vec![], false)
            }
            Op::Decision { branches, default } => {
                let ctx = self.context(&run, st);
                let mut chosen = None;
                for (i, b) in branches.iter().enumerate() {
                    if b.condition.eval(&ctx) {
                        if let Some(m) = b.max_iterations {
                            let n = next.edge_counts.entry(b.key.clone()).or_insert(0);
                            *n += 1;
                            if *n > m {
                                return Err(failure(format!(
                                    "decision {:?}: branch {:?} was taken more than its maxIterations ({m})",
                                    node.label, b.source
                                )));
                            }
                        }
                        chosen = Some((format!("branch {}: {}", i + 1, b.source), b.target));
                        break;
                    }
                }
                let (why, target) = match (chosen, default) {
                    (Some(c), _) => c,
                    (None, Some(t)) => ("default".to_owned(), *t),
                    (None, None) => {
                        return Err(failure(format!(
                            "decision {:?}: no branch matched and it has no default",
                            node.label
                        )));
                    }
                };
                next.step_path = node.path.clone();
                next.steps_done += 1;
                enter(program, &mut next, target);
                let turn = TurnRow {
                    role: "system",
                    content: format!("→ {why}"),
                    command: meta(&run, node, None),
                };
                advance(next, vec![turn], vec![], true)
            }
            Op::Gate { step, .. } => {
                let ctx = self.context(&run, st);
                let mut shown = Map::new();
                for c in &step.context {
                    let v = expr::parse_path(c.as_str())
                        .ok()
                        .and_then(|p| expr::lookup(&ctx, &p))
                        .unwrap_or(Value::Null);
                    shown.insert(c.to_string(), v);
                }
                let prompt_text = template::render(step.prompt.as_str(), &ctx);
                let pending = json!({
                    "kind": "gate",
                    "prompt": prompt_text,
                    "context": shown,
                    "stepPath": node.path,
                    "options": step.options.iter().map(|o| json!({"label": o.label.as_str(), "requiresInput": o.requires_input})).collect::<Vec<_>>(),
                });
                let turn = TurnRow {
                    role: "system",
                    content: prompt_text,
                    command: meta(&run, node, None),
                };
                Ok(Outcome::Wait {
                    next,
                    status: RunStatus::Waiting,
                    pending,
                    turns: vec![turn],
                })
            }
            Op::Script(s) => {
                let ctx = self.context(&run, st);
                let output = self.run_script(&run, s, &ctx).await.map_err(failure)?;
                let content = output
                    .get("stdout")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .unwrap_or_else(|| output.to_string());
                Self::complete_with(&mut next, node, output, true);
                enter(program, &mut next, node.next);
                let turn = TurnRow {
                    role: "assistant",
                    content,
                    command: meta(&run, node, None),
                };
                advance(next, vec![turn], vec![], true)
            }
            Op::Subflow(s) => {
                let ctx = self.context(&run, st);
                let local_input = s
                    .input
                    .values()
                    .any(|v| template_uses_local(v.as_str(), &st.local));
                let child = match &st.child {
                    Some(c) => c.clone(),
                    None => {
                        let id = self
                            .create_child(&run, s.flow.as_str(), &s.input, &ctx, local_input)
                            .map_err(failure)?;
                        next.child = Some(id.clone());
                        let mut partial = st.clone();
                        partial.child = Some(id.clone());
                        self.commit(&run, RunStatus::Running, &partial, None, None, &[], &[])
                            .map_err(failure)?;
                        id
                    }
                };
                let result = self.run_child(&child, cancel).await;
                match result {
                    ChildResult::Done(output, local) => {
                        next.child = None;
                        let turn = TurnRow {
                            role: "assistant",
                            content: output.to_string(),
                            command: meta(&run, node, None),
                        };
                        Self::complete_with(&mut next, node, output, local);
                        enter(program, &mut next, node.next);
                        advance(next, vec![turn], vec![], true)
                    }
                    ChildResult::Failed(e) => {
                        next.child = None;
                        Err(failure(format!(
                            "subflow {:?} failed: {e}",
                            s.flow.as_str()
                        )))
                    }
                    ChildResult::Stopped => Ok(Outcome::Stopped),
                    ChildResult::Waiting => Ok(Outcome::Wait {
                        next,
                        status: RunStatus::Waiting,
                        pending: json!({"kind": "subflow", "conversationId": child}),
                        turns: vec![],
                    }),
                }
            }
            Op::Foreach(f) => self.foreach(run.clone(), cur, st, f, cancel).await,
            Op::Join(j) => {
                let Some(progress) = next.foreach.take() else {
                    return Err(failure(format!(
                        "join {:?} has no foreach results to gather",
                        node.label
                    )));
                };
                let failed: Vec<Value> = progress
                    .results
                    .iter()
                    .filter(|(_, r)| !r.ok)
                    .map(|(i, r)| json!({"index": i, "error": r.error}))
                    .collect();
                let results: Vec<Value> = progress
                    .results
                    .values()
                    .filter(|r| r.ok)
                    .map(|r| r.output.clone().unwrap_or(Value::Null))
                    .collect();
                let policy = if st.join_skip_failures {
                    JoinPolicy::Skip
                } else {
                    j.on_failure.unwrap_or_default()
                };
                next.join_skip_failures = false;
                if !failed.is_empty() {
                    let first = failed[0]
                        .get("error")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    let message = format!(
                        "{} of {} items failed (first: {first})",
                        failed.len(),
                        progress.total
                    );
                    match policy {
                        JoinPolicy::Fail => {
                            return Err(failure(format!("join {:?}: {message}", node.label)));
                        }
                        JoinPolicy::NeedsAttention => {
                            let mut waiting = st.clone();
                            waiting.foreach = Some(progress);
                            let pending = json!({"kind": "join", "reason": "items failed", "step": node.label, "error": message, "failed": failed, "options": ["retry", "skip", "stop"]});
                            let turn = TurnRow {
                                role: "system",
                                content: message,
                                command: meta(&run, node, None),
                            };
                            return Ok(Outcome::Wait {
                                next: waiting,
                                status: RunStatus::NeedsAttention,
                                pending,
                                turns: vec![turn],
                            });
                        }
                        JoinPolicy::Skip => {}
                    }
                }
                let local = progress.results.values().any(|r| r.ok) && st.local.contains("foreach");
                next.local.remove("foreach");
                let output = json!({"total": progress.total, "succeeded": results.len(), "results": results, "failed": failed});
                let turn = TurnRow {
                    role: "system",
                    content: format!(
                        "Joined {} of {} items ({} failed)",
                        progress.total - failed.len(),
                        progress.total,
                        failed.len()
                    ),
                    command: meta(&run, node, None),
                };
                Self::complete_with(&mut next, node, output, local);
                enter(program, &mut next, node.next);
                advance(next, vec![turn], vec![], true)
            }
        }
    }

    fn prompt_context(&self, run: &Loaded, st: &RunState) -> Value {
        let mut ctx = self.context(run, st);
        mask_local(&mut ctx, &st.local);
        ctx
    }

    /// Sends one agent request; returns the reply and the messages to store.
    #[allow(clippy::too_many_arguments)]
    async fn ask(
        &self,
        run: &Loaded,
        node: &compile::Node,
        next: &mut RunState,
        agent: &str,
        identifier: &str,
        msgs: Vec<ChatMessage>,
        feedback: Option<&str>,
        keep_history: bool,
        item: Option<(String, Value)>,
    ) -> std::result::Result<(String, Vec<AgentMessageRow>), StepFailure> {
        let def = run.snapshot.agents.get(agent).cloned().unwrap_or_default();
        let history = if keep_history {
            let key = format!("{agent}:{identifier}");
            let conv = match next.agent_conversations.get(&key) {
                Some(c) => c.clone(),
                None => {
                    let c = self.inner.ids.next_id("conv");
                    next.agent_conversations.insert(key, c.clone());
                    next.conversation_agents.insert(c.clone(), agent.to_owned());
                    c
                }
            };
            let (h, _) = fstore::conversation_tail(&self.db(), &conv, HISTORY_LIMIT)
                .map_err(|e| failure(format!("could not read the agent conversation: {e}")))?;
            Some((conv, h))
        } else {
            None
        };
        let task = TaskContext {
            flow: run.flow_name.clone(),
            step: node.label.clone(),
            iterations: next.loop_stack.iter().map(|f| f.iteration).collect(),
            item,
        };
        let system = prompt::system_message(def.prompt.as_ref().map(|p| p.as_str()), None, &task);
        let empty = Vec::new();
        let request = LlmRequest {
            role: Role::Agent(agent.to_owned()),
            messages: prompt::assemble(
                system,
                history.as_ref().map_or(&empty, |(_, h)| h),
                msgs.clone(),
                feedback,
            ),
            schema: None,
        };
        let authored = serde_json::to_string(&run.snapshot).unwrap_or_default();
        let provider = self
            .agent_backend(agent, &def, &authored)
            .map_err(failure)?;
        let events = self.inner.events.clone();
        let conversation_id = run.id.clone();
        let sink = move |d: &str| {
            events.publish(Event::FlowDelta {
                conversation_id: conversation_id.clone(),
                delta: d.to_owned(),
            })
        };
        let reply = provider
            .complete(&request, &sink)
            .await
            .map_err(|e| failure(format!("agent {agent:?} failed: {e}")))?;
        let mut rows = Vec::new();
        if let Some((conv, _)) = history {
            let mut sent = msgs;
            if let Some(f) = feedback {
                sent.push(ChatMessage::new(
                    ChatRole::User,
                    format!("Previous attempt failed: {f}"),
                ));
            }
            sent.push(ChatMessage::new(ChatRole::Assistant, reply.text.clone()));
            rows = sent
                .into_iter()
                .map(|message| AgentMessageRow {
                    conversation_id: conv.clone(),
                    agent: agent.to_owned(),
                    message,
                })
                .collect();
        }
        Ok((reply.text, rows))
    }

    async fn run_script(
        &self,
        run: &Loaded,
        s: &super::definition::ScriptStep,
        ctx: &Value,
    ) -> std::result::Result<Value, String> {
        let file = match (&s.path, &s.workflow) {
            (Some(p), _) => {
                let p = PathBuf::from(p.as_str());
                match (&run.working_folder, p.is_absolute()) {
                    (Some(w), false) => w.join(p),
                    _ => p,
                }
            }
            (None, Some(wf)) => {
                let script: Option<String> = self
                    .db()
                    .query_row(
                        "SELECT script FROM workflow_versions WHERE workflow_id = ?1 AND is_active = 1",
                        [wf.as_str()],
                        |r| r.get(0),
                    )
                    .map_err(|_| format!("workflow {wf} has no approved version"))?;
                let script = script
                    .ok_or_else(|| format!("workflow {wf}'s approved version has no script"))?;
                let dir = self.inner.home.join("flow-scripts").join(&run.id);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| format!("creating {}: {e}", dir.display()))?;
                let file = dir.join(format!("{wf}.py"));
                std::fs::write(&file, script)
                    .map_err(|e| format!("writing {}: {e}", file.display()))?;
                file
            }
            (None, None) => return Err("a script step needs a workflow or a path".into()),
        };
        let request = ScriptRequest {
            file,
            args: s
                .args
                .iter()
                .map(|a| template::render(a.as_str(), ctx))
                .collect(),
            working_folder: run.working_folder.clone(),
            timeout: Duration::from_secs(u64::from(s.timeout_seconds.unwrap_or(300))),
        };
        let runner = lock(&self.inner.scripts).clone();
        let out = runner.run(&request).await.map_err(|e| e.to_string())?;
        if out.exit_code != Some(0) {
            let tail: String = out
                .stderr
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            return Err(format!(
                "the script exited with {}: {tail}",
                out.exit_code
                    .map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"))
            ));
        }
        Ok(match serde_json::from_str::<Value>(out.stdout.trim()) {
            Ok(v @ Value::Object(_)) => v,
            _ => json!({"stdout": out.stdout, "exitCode": 0}),
        })
    }

    fn create_child(
        &self,
        run: &Loaded,
        flow: &str,
        mapping: &BTreeMap<String, super::definition::Text>,
        ctx: &Value,
        local: bool,
    ) -> std::result::Result<String, String> {
        let depth = run.depth + 1;
        if depth > MAX_SUBFLOW_DEPTH {
            return Err(format!(
                "the subflow depth limit ({MAX_SUBFLOW_DEPTH}) is reached: flow {:?} at depth {} cannot start {flow:?}",
                run.flow_name, run.depth
            ));
        }
        let def = agents::load_flow(&self.inner.home, flow).map_err(|e| e.to_string())?;
        let snapshot = self.snapshot_of(def).map_err(|e| e.to_string())?;
        let program = compile::compile(&snapshot.flow).map_err(|e| e.to_string())?;
        let mut input = Map::new();
        for (k, v) in mapping {
            let text = v.as_str();
            let value = if text.contains("{{") {
                Value::String(template::render(text, ctx))
            } else {
                match expr::parse_path(text) {
                    Ok(p) => expr::lookup(ctx, &p).unwrap_or(Value::Null),
                    Err(_) => Value::String(text.to_owned()),
                }
            };
            input.insert(k.clone(), value);
        }
        let now = self.now();
        let mut row = self
            .new_row(
                flow,
                &snapshot,
                &program,
                input,
                run.working_folder.as_deref(),
                Some((&run.id, depth)),
                &now,
            )
            .map_err(|e| e.to_string())?;
        if local {
            row.state.local.insert("input".into());
        }
        fstore::insert_run(&self.db(), &row).map_err(|e| e.to_string())?;
        Ok(row.id)
    }

    async fn run_child(&self, child: &str, cancel: &mut watch::Receiver<bool>) -> ChildResult {
        let row = match fstore::get_run(&self.db(), child) {
            Ok(Some(r)) => r,
            Ok(None) => return ChildResult::Failed(format!("subflow run {child} is gone")),
            Err(e) => return ChildResult::Failed(e.to_string()),
        };
        let status = match row.status {
            RunStatus::Completed => RunStatus::Completed,
            RunStatus::Waiting | RunStatus::NeedsAttention => return ChildResult::Waiting,
            _ => {
                let loaded = match self.load(&row) {
                    Ok(l) => Arc::new(l),
                    Err(e) => return ChildResult::Failed(e.to_string()),
                };
                let mut st = row.state.clone();
                if row.status == RunStatus::Failed {
                    return ChildResult::Failed(row.error.unwrap_or_default());
                }
                st.format = state::FORMAT;
                self.drive(loaded, st, cancel).await
            }
        };
        match status {
            RunStatus::Completed => match fstore::get_run(&self.db(), child) {
                Ok(Some(r)) => {
                    ChildResult::Done(r.state.output.clone(), r.state.local.contains("output"))
                }
                _ => ChildResult::Failed(format!("subflow run {child} is gone")),
            },
            RunStatus::Failed => ChildResult::Failed(
                fstore::get_run(&self.db(), child)
                    .ok()
                    .flatten()
                    .and_then(|r| r.error)
                    .unwrap_or_default(),
            ),
            RunStatus::Stopped => ChildResult::Stopped,
            RunStatus::Waiting | RunStatus::NeedsAttention => ChildResult::Waiting,
            RunStatus::Running => ChildResult::Failed("subflow ended while running".into()),
        }
    }

    /// A subflow run that finished after an answer wakes its waiting parent.
    fn after_child_finished(&self, run: &Loaded, status: RunStatus) {
        let Some(parent) = &run.parent_id else { return };
        if !matches!(status, RunStatus::Completed | RunStatus::Failed) {
            return;
        }
        let Ok(Some(row)) = fstore::get_run(&self.db(), parent) else {
            return;
        };
        let waits = row.status == RunStatus::Waiting
            && row
                .pending
                .as_ref()
                .and_then(|p| p.get("conversationId"))
                .and_then(Value::as_str)
                == Some(run.id.as_str());
        if !waits || lock(&self.inner.inflight).contains_key(parent) {
            return;
        }
        let Ok(loaded) = self.load(&row) else { return };
        if self
            .record_status(
                &row.id,
                &row.flow_name,
                RunStatus::Running,
                &row.state,
                None,
                None,
                vec![],
            )
            .is_err()
        {
            return;
        }
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        lock(&self.inner.inflight).insert(
            row.id.clone(),
            Inflight {
                inflight_id: self.inner.ids.next_id("inf"),
                cancel: cancel_tx,
                done: done_rx,
            },
        );
        let handle = RunHandle {
            engine: self.clone(),
            run: Arc::new(loaded),
            state: row.state,
            cancel: cancel_rx,
            done: done_tx,
        };
        tokio::spawn(handle.run());
    }

    async fn foreach(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        st: &RunState,
        f: &super::definition::ForeachStep,
        cancel: &mut watch::Receiver<bool>,
    ) -> std::result::Result<Outcome, StepFailure> {
        let node = &run.program.nodes[cur];
        let ctx = self.context(&run, st);
        let path = expr::parse_path(f.items_path.as_str()).map_err(|e| failure(e.to_string()))?;
        let items = match expr::lookup(&ctx, &path) {
            Some(Value::Array(a)) => a,
            other => {
                return Err(failure(format!(
                    "foreach {:?}: {} is not an array (it is {})",
                    node.label,
                    f.items_path,
                    other.map_or_else(
                        || "missing".to_owned(),
                        |v| v.to_string().chars().take(60).collect()
                    )
                )));
            }
        };
        let max = f.max_items.unwrap_or(super::definition::DEFAULT_MAX_ITEMS) as usize;
        if items.len() > max {
            return Err(failure(format!(
                "foreach {:?}: {} items is more than maxItems ({max})",
                node.label,
                items.len()
            )));
        }
        let local_items = is_local(&st.local, f.items_path.as_str());
        let mut progress = match &st.foreach {
            Some(p) if p.node == cur && p.total == items.len() => p.clone(),
            _ => ForeachProgress {
                node: cur,
                total: items.len(),
                results: BTreeMap::new(),
            },
        };
        let concurrency = f.concurrency.unwrap_or(1).max(1) as usize;
        let mut todo: Vec<usize> = (0..items.len())
            .filter(|i| !progress.results.contains_key(i))
            .collect();
        todo.reverse();
        let mut set = tokio::task::JoinSet::new();
        let base = Arc::new(ctx);
        let items = Arc::new(items);
        let spawn = |set: &mut tokio::task::JoinSet<(usize, ItemResult, TurnRow)>, index: usize| {
            let engine = self.clone();
            let run = run.clone();
            let base = base.clone();
            let items = items.clone();
            let step = (*f.step).clone();
            let var = f.item_variable.to_string();
            let mut item_cancel = cancel.clone();
            set.spawn(async move {
                let item = items.get(index).cloned().unwrap_or(Value::Null);
                engine
                    .run_item(
                        run,
                        cur,
                        &step,
                        &var,
                        index,
                        item,
                        local_items,
                        &base,
                        &mut item_cancel,
                    )
                    .await
            });
        };
        while set.len() < concurrency {
            let Some(i) = todo.pop() else { break };
            spawn(&mut set, i);
        }
        while let Some(joined) = set.join_next().await {
            let (index, result, turn) = match joined {
                Ok(r) => r,
                Err(e) => return Err(failure(format!("a foreach item stopped unexpectedly: {e}"))),
            };
            progress.results.insert(index, result);
            let mut partial = st.clone();
            partial.foreach = Some(progress.clone());
            self.commit(&run, RunStatus::Running, &partial, None, None, &[turn], &[])
                .map_err(failure)?;
            if let Some(i) = todo.pop() {
                spawn(&mut set, i);
            }
        }
        let mut next = st.clone();
        let ok = progress.results.values().filter(|r| r.ok).count();
        let output =
            json!({"total": progress.total, "succeeded": ok, "failed": progress.total - ok});
        next.foreach = Some(progress);
        if local_items || matches!(*f.step, Step::Script(_)) {
            next.local.insert("foreach".into());
        }
        next.step_path = node.path.clone();
        next.steps_done += 1;
        next.output = output;
        enter(&run.program, &mut next, node.next);
        Ok(Outcome::Advance {
            next,
            turns: vec![],
            msgs: vec![],
            check_post: false,
        })
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_item(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        step: &Step,
        var: &str,
        index: usize,
        item: Value,
        local: bool,
        base: &Value,
        cancel: &mut watch::Receiver<bool>,
    ) -> (usize, ItemResult, TurnRow) {
        let node = &run.program.nodes[cur];
        let mut ctx = base.clone();
        if let Value::Object(m) = &mut ctx {
            m.insert(var.to_owned(), item.clone());
            m.insert("index".into(), Value::from(index));
        }
        let mut pctx = ctx.clone();
        if let Value::Object(m) = &mut pctx {
            m.remove("output");
            m.remove("steps");
        }
        let mut masked_item = item.clone();
        if local {
            let mut set = std::collections::BTreeSet::new();
            set.insert(var.to_owned());
            mask_local(&mut pctx, &set);
            let mut wrapper = json!({ "v": masked_item });
            mask_local(&mut wrapper, &["v".to_owned()].into_iter().collect());
            masked_item = wrapper["v"].take();
        }
        let post: Vec<compile::Contract> = step
            .common()
            .postconditions
            .iter()
            .filter_map(|c| {
                expr::parse(c.check.as_str())
                    .ok()
                    .map(|check| compile::Contract {
                        check,
                        error: c.error.to_string(),
                    })
            })
            .collect();
        let mut feedback: Option<String> = None;
        let mut last = (String::new(), Err(String::new()));
        for _attempt in 0..2 {
            let mut scratch = RunState::default();
            let attempt: std::result::Result<(String, Value), String> = match step {
                Step::Llm(s) => {
                    let msgs = render_messages(&s.messages, &pctx);
                    self.ask(
                        &run,
                        node,
                        &mut scratch,
                        s.agent_type.as_str(),
                        s.identifier.as_str(),
                        msgs,
                        feedback.as_deref(),
                        false,
                        Some((var.to_owned(), masked_item.clone())),
                    )
                    .await
                    .map(|(r, _)| (r.clone(), prompt::parse_output(&r)))
                    .map_err(|f| f.message)
                }
                Step::Command(s) => match run
                    .snapshot
                    .commands
                    .get(&format!("{}/{}", s.agent_type, s.command_name))
                {
                    Some(cmd) => {
                        let msgs = render_messages(&cmd.messages, &pctx);
                        self.ask(
                            &run,
                            node,
                            &mut scratch,
                            s.agent_type.as_str(),
                            s.identifier.as_str(),
                            msgs,
                            feedback.as_deref(),
                            false,
                            Some((var.to_owned(), masked_item.clone())),
                        )
                        .await
                        .map(|(r, _)| (r.clone(), prompt::parse_output(&r)))
                        .map_err(|f| f.message)
                    }
                    None => Err(format!("unknown command {:?}", s.command_name.as_str())),
                },
                Step::Script(s) => self
                    .run_script(&run, s, &ctx)
                    .await
                    .map(|v| (v.to_string(), v)),
                Step::Subflow(s) => {
                    match self.create_child(&run, s.flow.as_str(), &s.input, &ctx, local) {
                        Ok(child) => match self.run_child(&child, cancel).await {
                            ChildResult::Done(v, _) => Ok((v.to_string(), v)),
                            ChildResult::Failed(e) => Err(e),
                            ChildResult::Stopped => Err("stopped".into()),
                            ChildResult::Waiting => {
                                Err("a subflow run per item cannot wait at a gate".into())
                            }
                        },
                        Err(e) => Err(e),
                    }
                }
                _ => Err("a foreach item must be an llm, command, script or subflow step".into()),
            };
            match attempt {
                Err(e) => {
                    last = (e.clone(), Err(e));
                    break;
                }
                Ok((text, output)) => {
                    let mut check = ctx.clone();
                    if let Value::Object(m) = &mut check {
                        m.insert("output".into(), output.clone());
                    }
                    match post.iter().find(|c| !c.check.eval(&check)) {
                        None => {
                            last = (text, Ok(output));
                            break;
                        }
                        Some(c) => {
                            feedback = Some(c.error.clone());
                            last = (text, Err(format!("postcondition failed: {}", c.error)));
                        }
                    }
                }
            }
        }
        let mut command = meta(&run, node, Some(index));
        if let Value::Object(m) = &mut command {
            m.insert("itemIndex".into(), Value::from(index));
        }
        let (text, result) = last;
        let (result, content) = match result {
            Ok(output) => (
                ItemResult {
                    ok: true,
                    output: Some(output),
                    error: None,
                },
                text,
            ),
            Err(e) => (
                ItemResult {
                    ok: false,
                    output: None,
                    error: Some(e.clone()),
                },
                if text.is_empty() || text == e {
                    format!("Failed: {e}")
                } else {
                    format!("{text}\nFailed: {e}")
                },
            ),
        };
        (
            index,
            result,
            TurnRow {
                role: "assistant",
                content,
                command,
            },
        )
    }
}

enum ChildResult {
    Done(Value, bool),
    Failed(String),
    Stopped,
    Waiting,
}

fn template_uses_local(text: &str, local: &std::collections::BTreeSet<String>) -> bool {
    let mut rest = text;
    while let Some(s) = rest.find("{{") {
        let after = &rest[s + 2..];
        let Some(e) = after.find("}}") else { break };
        if is_local(local, after[..e].trim()) {
            return true;
        }
        rest = &after[e + 2..];
    }
    is_local(local, text.trim())
}

/// Seed 004's turn metadata.
fn meta(run: &Loaded, node: &compile::Node, item: Option<usize>) -> Value {
    let (agent, identifier) = match &node.op {
        Op::Llm(s) => (
            Some(s.agent_type.to_string()),
            Some(s.identifier.to_string()),
        ),
        Op::Command(s) => (
            Some(s.agent_type.to_string()),
            Some(s.identifier.to_string()),
        ),
        Op::Break { step, .. } => (
            Some(step.agent_type.to_string()),
            Some(step.identifier.to_string()),
        ),
        Op::Foreach(f) => match &*f.step {
            Step::Llm(s) => (
                Some(s.agent_type.to_string()),
                Some(s.identifier.to_string()),
            ),
            Step::Command(s) => (
                Some(s.agent_type.to_string()),
                Some(s.identifier.to_string()),
            ),
            _ => (None, None),
        },
        _ => (None, None),
    };
    let _ = item;
    json!({
        "name": "flow",
        "stepIndex": node.step_index,
        "totalSteps": node.total_steps,
        "loopDepth": node.loops.len(),
        "agentType": agent,
        "identifier": identifier,
        "label": node.label,
        "stepPath": node.path,
        "depth": run.depth,
    })
}

fn load_error(e: LoadError) -> CoreError {
    match e {
        LoadError::Missing { what, name, .. } => CoreError::NotFound { what, id: name },
        LoadError::BadName { what, name } => CoreError::NotFound { what, id: name },
        LoadError::Invalid { .. } => {
            CoreError::InvalidRequest(format!("the flow is disabled: {e}"))
        }
        LoadError::Unreadable { .. } => CoreError::InvalidRequest(e.to_string()),
    }
}

/// Validates a `resumeStepPath` against the program.
fn resolve_path(program: &Program, path: &[i64]) -> Result<usize> {
    if path.is_empty() {
        return Err(CoreError::InvalidRequest(
            "resumeStepPath must not be empty".into(),
        ));
    }
    let mut p = Vec::with_capacity(path.len());
    for (depth, &i) in path.iter().enumerate() {
        let Ok(i) = usize::try_from(i) else {
            return Err(CoreError::InvalidRequest(format!(
                "resumeStepPath[{depth}] is negative ({i})"
            )));
        };
        p.push(i);
    }
    program.resumable_at(&p).ok_or_else(|| {
        CoreError::InvalidRequest(format!(
            "resumeStepPath {path:?} does not name a step of this flow"
        ))
    })
}

#[cfg(test)]
mod tests;

/// The lease resource of a flow run.
fn lease_name(id: &str) -> String {
    format!("flow_run:{id}")
}
