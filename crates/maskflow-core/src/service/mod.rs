//! The conversation service both shells call: workflows, their versions and
//! the validator → clarifier → builder conversation (seed 000).
//!
//! Every status change goes through [`crate::versions::apply`] inside one
//! SQLite transaction. One call at a time may change a workflow: a second
//! concurrent call gets [`CoreError::Conflict`] at once. Building runs in
//! the background on the tokio runtime; the service owns all I/O (database,
//! providers, stored files), prompts and reply checks stay pure.

mod agents;
mod backends;
mod backups;
mod budgets;
mod build_options;
mod builds;
mod cancel;
mod client_open;
mod clients;
mod clients_files;
mod clients_prompts;
mod conversation;
mod conversations;
mod current;
mod deletes;
mod embedded;
mod environments;
mod extract_pool;
mod flow_liveness;
mod flow_scripts;
mod flows;
mod folder_guard;
mod guard_cache;
mod house_rules;
mod input_hashes;
mod isolation;
mod leases;
mod llm;
mod manual;
mod models;
mod outcomes;
mod outputs;
mod preflight;
mod python;
mod restore;
mod run_checks;
mod run_limits;
mod runs;
mod schedules;
mod schedules_run;
mod schedules_watch;
mod session_state;
pub(crate) mod storage;
mod types;
mod uploads;
mod waiting;
mod watched_files;
mod workflows;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, Transaction};
use serde_json::Value;
use tokio::sync::broadcast;

pub use crate::views::{BuildView, MessageView};
pub use agents::{AgentInput, AgentList, AgentView, MAX_AGENT_PROMPT_CHARS, MAX_MODEL_CHARS};
pub use backends::{Backends, BackendsError, REPLAY_VAR};
pub use backups::{BackupsView, RestoreReply};
pub use budgets::BUDGETS_SETTING;
pub use builds::{GateChoice, GateRequest, SessionFile, SessionIteration};
pub use cancel::CancelReply;
pub use clients::{CLIENT_LEDGER_PAGE, ClientContext, ClientReply, ClientStart};
pub use clients_files::ClientRequestView;
pub use conversations::{ConversationKind, ConversationList, ConversationSummary, NO_FLOW};
pub use current::InterfaceChange;
pub use deletes::{CONFIRM_TTL_MS, DeleteReply};
pub use embedded::{EmbeddedInput, EmbeddedView};
pub use environments::{EnvironmentEntry, EnvironmentsView};
pub use flows::FlowTask;
pub use house_rules::{HouseRulesFile, HouseRulesInput, HouseRulesView};
pub use input_hashes::InputHash;
pub use isolation::{IsolationInput, IsolationView};
pub use llm::{MAX_LEDGER_PAGE, ProviderSource};
pub use models::{
    AddModelFile, CatalogEntry, DownloadView, FirstStartInput, InstalledModel, ModelSource,
    ModelSpeed, ModelsView, PullModel, StartChoice, total_memory,
};
pub use preflight::{
    DISK_FLOOR_BYTES, PreflightAction, PreflightCheck, PreflightItem, PreflightView,
};
pub use python::{PythonInput, PythonView};
pub use run_limits::{RunLimitsInput, RunLimitsView, memory_share};
pub use runs::{RunInputs, RunView};
pub use schedules::{RunTrigger, ScheduleInput, ScheduleView};
pub use storage::{Cleared, StorageInput, StorageKind, StorageUse, StorageView};
pub use types::{
    CategoryChoice, CreateWorkflow, CreatedVersion, DataNote, ExtractInput, MessageReply,
    SendMessage, UploadedFile, VersionSummary, VersionView, WorkflowPatch, WorkflowSummary,
    WorkflowView,
};
pub use waiting::{WaitingItem, WaitingKind, WaitingList};

use crate::conversation::prompts;
use crate::conversation::spec::{Clarification, Feasibility, WorkflowSpec};
use crate::error::{CoreError, Result};
use crate::events::{Event, EventBus};
use crate::store::leases::LeaseOwner;
use crate::store::{self, FileRow, MessageRow, VersionRow, WorkflowRow};
use crate::versions::{self, Status, VersionEvent};
use maskflow_clock::{Clock, IdGen, SystemClock, UlidGen, format_rfc3339};
use maskflow_llm::{ChatMessage, ChatRole, Role, Roles, ask_json};

/// Longest accepted chat message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;

/// The user's message trimmed, refused when empty or too long.
fn checked_content(content: &str) -> Result<&str> {
    let content = content.trim();
    if content.is_empty() {
        return Err(CoreError::InvalidRequest(
            "content must not be empty".into(),
        ));
    }
    if content.chars().count() > MAX_MESSAGE_CHARS {
        return Err(CoreError::InvalidRequest(format!(
            "content is longer than {MAX_MESSAGE_CHARS} characters"
        )));
    }
    Ok(content)
}

/// Most extracts (files) one workflow may start with.
pub const MAX_FILES: usize = 50;
/// What the assistant says when building starts.
pub const BUILDING_MESSAGE: &str = "Got it! Building your workflow now...";
/// The failure reason of a build that was cut off by the process ending.
pub const INTERRUPTED: &str = "interrupted";

/// What the service needs to start. Every shell opens it with
/// [`ServiceConfig::with_backends`]: each LLM call's back end comes from the
/// stored settings, unless an explicit override (`--replay`,
/// `MASKFLOW_REPLAY`) is given as a [`Backends`].
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The data folder (database, backups, uploaded files).
    pub home: PathBuf,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// The id source.
    pub ids: Arc<dyn IdGen>,
    /// Where the back ends come from: the settings, or an explicit override.
    pub providers: ProviderSource,
    /// Where API keys are kept (the system keyring by default).
    pub keys: Arc<dyn maskflow_llm::keys::Credentials>,
}

impl ServiceConfig {
    /// A configuration whose calls use the stored LLM settings (manual
    /// until the user sets something else), with the real clock and ULID ids.
    pub fn from_settings(home: impl Into<PathBuf>) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        Self {
            home: home.into(),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            providers: ProviderSource::Settings,
            keys: Arc::new(maskflow_llm::keys::KeyringCredentials::default()),
        }
    }

    /// Every call answered by `roles` instead of the settings (a replay
    /// file given explicitly, tests).
    pub fn overriding(mut self, roles: Roles) -> Self {
        self.providers = ProviderSource::Override(roles);
        self
    }
}

/// The service. Cheap to clone; clones share everything.
#[derive(Clone, Debug)]
pub struct Service {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    db: Mutex<Connection>,
    home: PathBuf,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGen>,
    /// The workflows handling a call now, each with the signal that stops
    /// it when it can be stopped: the one claim that keeps a workflow to
    /// one message at a time in this service (leases do it across processes).
    busy: Mutex<HashMap<String, Option<Arc<tokio::sync::Notify>>>>,
    /// The builds running in this service, by workflow (what a cancel stops).
    builds: Mutex<cancel::Builds>,
    /// Agent files are written one at a time (a create's "does it exist"
    /// and its write are one step).
    agent_writes: Mutex<()>,
    /// Who holds this service's leases and asked its stored manual prompts.
    owner: LeaseOwner,
    /// The output budgets in force, handed to every back end built.
    budgets: maskflow_llm::budget::Budgets,
    events: EventBus,
    llm: llm::LlmState,
    flows: maskflow_flows::FlowEngine,
    /// The runner of the Python setting it was made for (remade when it changes).
    runner: Mutex<Option<(Option<PathBuf>, Arc<maskflow_runner::Runner>)>>,
    /// The last preflight that found everything, and when (see [`Service::recent_preflight`]).
    ready_preflight: Mutex<Option<(std::time::Instant, preflight::PreflightView)>>,
    /// Delete confirmations handed out and not yet used.
    confirmations: Mutex<deletes::Confirmations>,
    /// Where uploads are read: off the async workers, a bounded few at once.
    extract_pool: extract_pool::ExtractPool,
    /// Model downloads in progress (issue 32).
    models: models::Downloads,
}

/// Marks a workflow busy until dropped.
struct BusyGuard {
    inner: Arc<Inner>,
    workflow_id: String,
    /// The same claim for other Maskflow processes on this data folder.
    _lease: leases::LeaseGuard,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        lock(&self.inner.busy).remove(&self.workflow_id);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Service {
    /// Opens the store under `config.home` (backing it up before migrations)
    /// and marks builds cut off by a previous process as failed ("interrupted").
    pub fn open(config: ServiceConfig) -> Result<Service> {
        let stamp = format_rfc3339(config.clock.now_ms());
        let conn = store::open(&config.home, &stamp)?;
        let events = EventBus::default();
        let owner = LeaseOwner::new_in_this_process();
        let budgets = maskflow_llm::budget::Budgets::default();
        let llm = llm::LlmState::new(
            config.providers,
            config.keys,
            &events,
            config.clock.clone(),
            config.ids.clone(),
        );
        let flow_config = maskflow_flows::FlowConfig {
            home: config.home.clone(),
            clock: config.clock.clone(),
            ids: config.ids.clone(),
            storage: Arc::new(crate::store::flow_storage::StoreFlowStorage::new(
                owner.clone(),
            )),
            synchronous: maskflow_flows::Synchronous::Normal,
            checkpoints: storage::stored_checkpoint_policy(&conn),
        };
        let flow_db = maskflow_flows::FlowDatabase::open(&flow_config)?;
        // The engine's ports are the service's (guarded back ends, the
        // sandboxed runner, its events), made before the engine: weak, as
        // the engine lives inside the service.
        let inner = Arc::new_cyclic(|inner| Inner {
            flows: maskflow_flows::FlowEngine::new(
                flow_config,
                flow_db,
                flows::ports(inner, &config.home, &config.ids, &events),
            ),
            db: Mutex::new(conn),
            home: config.home,
            clock: config.clock,
            ids: config.ids,
            busy: Mutex::new(HashMap::new()),
            builds: Mutex::new(HashMap::new()),
            agent_writes: Mutex::new(()),
            owner,
            budgets,
            events,
            llm,
            runner: Mutex::new(None),
            ready_preflight: Mutex::new(None),
            confirmations: Mutex::new(Default::default()),
            extract_pool: extract_pool::ExtractPool::sized_from_cores(),
            models: Default::default(),
        });
        let service = Service { inner };
        service
            .llm_manual()
            .set_store(Arc::new(manual::PromptStore::new(&service)));
        service.reload_providers()?;
        service.apply_budgets();
        service.recover_interrupted_builds()?;
        service.start_housekeeping();
        Ok(service)
    }

    /// The data folder.
    pub fn home(&self) -> &Path {
        &self.inner.home
    }

    /// The flow engine (seed 004's `/api/flows…`), sharing this service's events.
    pub fn flows(&self) -> &maskflow_flows::FlowEngine {
        &self.inner.flows
    }

    /// A receiver of every later [`Event`].
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    fn now(&self) -> String {
        format_rfc3339(self.inner.clock.now_ms())
    }

    fn id(&self, prefix: &str) -> String {
        self.inner.ids.next_id(prefix)
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        lock(&self.inner.db)
    }

    fn claim(&self, workflow_id: &str) -> Result<BusyGuard> {
        self.claim_with(workflow_id, None)
    }

    /// Claims `workflow_id` for one call (a `Conflict` while it handles
    /// another, here or in another process); `cancel`, when given, is what
    /// [`Service::cancel_message`] wakes to stop the call.
    fn claim_with(
        &self,
        workflow_id: &str,
        cancel: Option<Arc<tokio::sync::Notify>>,
    ) -> Result<BusyGuard> {
        {
            let mut busy = lock(&self.inner.busy);
            if busy.contains_key(workflow_id) {
                return Err(CoreError::Conflict(format!(
                    "workflow {workflow_id} is already handling a message; wait for its reply"
                )));
            }
            busy.insert(workflow_id.to_owned(), cancel);
        }
        let lease = match self.lease(leases::workflow(workflow_id)) {
            Ok(lease) => lease,
            Err(e) => {
                lock(&self.inner.busy).remove(workflow_id);
                return Err(e);
            }
        };
        Ok(BusyGuard {
            inner: self.inner.clone(),
            workflow_id: workflow_id.to_owned(),
            _lease: lease,
        })
    }

    fn recover_interrupted_builds(&self) -> Result<()> {
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let stuck = store::versions_in(&tx, Status::Building)?;
        // A build paused at a gate, or at a manual prompt that was stored,
        // waits for the user, across restarts.
        let stuck: Vec<_> = stuck
            .into_iter()
            .filter(|v| !store::builds::is_pending(&tx, &v.id))
            .filter(|v| !Service::build_has_stored_prompt(&tx, &v.workflow_id, &v.id))
            .collect();
        // A build another running Maskflow process is doing is not cut off.
        let mine = self.inner.owner.clone();
        let now_ms = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let mut stuck_here = Vec::new();
        for v in stuck {
            if store::leases::held_elsewhere(&tx, &leases::build(&v.id), &mine, now_ms)?.is_none() {
                stuck_here.push(v);
            }
        }
        let stuck = stuck_here;
        for mut v in stuck.iter().cloned() {
            v.failure_reason = Some(INTERRUPTED.into());
            move_version(&tx, &mut v, VersionEvent::BuildFailed, &now)?;
        }
        let mut cut_runs = 0;
        for run_id in store::builds::running_runs(&tx)? {
            if store::leases::held_elsewhere(&tx, &leases::run(&run_id), &mine, now_ms)?.is_none() {
                store::builds::interrupt_run(&tx, &run_id, &now)?;
                cut_runs += 1;
            }
        }
        tx.commit()?;
        drop(db);
        if cut_runs > 0 {
            eprintln!(
                "maskflow: {cut_runs} workflow run(s) cut off by a previous process marked as errors"
            );
        }
        for v in stuck {
            self.publish_status(
                &v.workflow_id,
                &v.id,
                Status::Failed,
                Some(INTERRUPTED.into()),
            );
        }
        Ok(())
    }
}

/// Moves `v` by `event` through the status table and writes it back, only if
/// the stored status is still the one read (else a conflict).
fn move_version(
    conn: &Connection,
    v: &mut VersionRow,
    event: VersionEvent,
    now: &str,
) -> Result<()> {
    let from = v.status;
    v.status = versions::apply(from, event)?;
    v.updated_at = now.to_owned();
    let changed = store::transitions::update_version_if(conn, v, from)?;
    if changed != 1 {
        return Err(CoreError::Conflict(format!(
            "version {} changed meanwhile; reload and try again",
            v.id
        )));
    }
    Ok(())
}

/// The version a workflow shows: its draft, else its active version, else its latest.
fn current_of(all: &[VersionRow]) -> Option<&VersionRow> {
    all.iter()
        .find(|v| v.status.is_draft())
        .or_else(|| all.iter().find(|v| v.is_active))
        .or_else(|| all.iter().max_by_key(|v| v.version))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| CoreError::Corrupt(e.to_string()))
}

#[cfg(test)]
pub(crate) mod api_client;
#[cfg(test)]
mod categories_tests;
#[cfg(test)]
mod clients_tests;
#[cfg(test)]
mod flow_privacy_tests;
mod join_overlap;
#[cfg(test)]
mod names_tests;
#[cfg(test)]
mod outcomes_tests;
#[cfg(test)]
mod schedules_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod told_tests;
#[cfg(test)]
mod ts_export;

// The flow editor (issue 31, point 1).
pub mod flow_editor;
pub use flow_editor::{
    EditorAgent, FlowCheck, FlowDraft, FlowEditorOptions, FlowMessage, FlowSave, FlowSaved,
    FlowSource,
};
#[cfg(test)]
mod flow_editor_tests;

// Exports in seed 003's shape (issue 31, point 6).
pub mod flow_export;
pub use flow_export::ExportQuery;
