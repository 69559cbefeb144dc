//! The conversation service both shells call: workflows, their versions and
//! the validator → clarifier → builder conversation (seed 000).
//!
//! Every status change goes through [`crate::versions::apply`] inside one
//! SQLite transaction. One call at a time may change a workflow: a second
//! concurrent call gets [`CoreError::Conflict`] at once. Building runs in
//! the background on the tokio runtime; the service owns all I/O (database,
//! providers, stored files), prompts and reply checks stay pure.

mod backups;
mod budgets;
mod builds;
mod cancel;
mod deletes;
mod environments;
mod flow_scripts;
mod flows;
mod isolation;
mod leases;
mod llm;
mod outputs;
mod python;
mod restore;
mod runs;
mod storage;
mod types;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, Transaction};
use serde_json::Value;
use tokio::sync::broadcast;

pub use backups::{BackupsView, RestoreReply};
pub use budgets::BUDGETS_SETTING;
pub use builds::{BuildView, GateChoice, GateRequest, SessionFile, SessionIteration};
pub use cancel::CancelReply;
pub use deletes::{CONFIRM_TTL_MS, DeleteReply};
pub use environments::{EnvironmentEntry, EnvironmentsView};
pub use isolation::{IsolationInput, IsolationView};
pub use llm::{MAX_LEDGER_PAGE, ProviderSource};
pub use python::{PythonInput, PythonView};
pub use runs::{RunInputs, RunView};
pub use storage::{Cleared, StorageInput, StorageKind, StorageUse, StorageView};
pub use types::{
    CreateWorkflow, CreatedVersion, ExtractInput, MessageReply, MessageView, SendMessage,
    UploadedFile, VersionSummary, VersionView, WorkflowPatch, WorkflowSummary, WorkflowView,
};

use crate::error::{CoreError, Result};
use crate::events::{Event, EventBus};
use crate::ids::{Clock, IdGen, SystemClock, UlidGen, format_rfc3339};
use crate::prompts;
use crate::providers::{ChatMessage, ChatRole, Role, Roles, ask_json};
use crate::spec::{Clarification, Feasibility, WorkflowSpec};
use crate::store::leases::LeaseOwner;
use crate::store::{self, FileRow, MessageRow, VersionRow, WorkflowRow};
use crate::versions::{self, Status, VersionEvent};

/// Longest accepted chat message, in characters.
pub const MAX_MESSAGE_CHARS: usize = 20_000;
/// Most extracts (files) one workflow may start with.
pub const MAX_FILES: usize = 50;
/// What the assistant says when building starts.
pub const BUILDING_MESSAGE: &str = "Got it! Building your workflow now...";
/// The failure reason of a build that was cut off by the process ending.
pub const INTERRUPTED: &str = "interrupted";

/// What the service needs to start. Every shell opens it with
/// [`ServiceConfig::from_settings`]: each LLM call's back end comes from the
/// stored settings, unless an explicit override (`--replay`,
/// `MASKFLOW_REPLAY`) is given with [`ServiceConfig::overriding`].
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
    pub keys: Arc<dyn crate::keys::Credentials>,
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
            keys: Arc::new(crate::keys::KeyringCredentials::default()),
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
    busy: Mutex<HashSet<String>>,
    events: EventBus,
    llm: llm::LlmState,
    flows: crate::flows::FlowEngine,
    /// The runner of the Python setting it was made for (remade when it changes).
    runner: Mutex<Option<(Option<PathBuf>, Arc<crate::runner::Runner>)>>,
    /// Delete confirmations handed out and not yet used.
    confirmations: Mutex<deletes::Confirmations>,
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

/// What the conversation does next for a message.
enum Step {
    Validate,
    Clarify,
}

impl Service {
    /// Opens the store under `config.home` (backing it up before migrations)
    /// and marks builds cut off by a previous process as failed ("interrupted").
    pub fn open(config: ServiceConfig) -> Result<Service> {
        let stamp = format_rfc3339(config.clock.now_ms());
        let conn = store::open(&config.home, &stamp)?;
        let events = EventBus::default();
        let fixed = match &config.providers {
            ProviderSource::Override(roles) => roles.clone(),
            ProviderSource::Settings => Roles::all(Arc::new(crate::providers::Unconfigured)),
        };
        let llm = llm::LlmState::new(
            config.providers,
            config.keys,
            &events,
            config.clock.clone(),
            config.ids.clone(),
        );
        let flows = crate::flows::FlowEngine::open(crate::flows::FlowConfig {
            home: config.home.clone(),
            roles: fixed,
            clock: config.clock.clone(),
            ids: config.ids.clone(),
            events: events.clone(),
            synchronous: crate::flows::Synchronous::Normal,
        })?;
        let service = Service {
            inner: Arc::new(Inner {
                db: Mutex::new(conn),
                home: config.home,
                clock: config.clock,
                ids: config.ids,
                busy: Mutex::new(HashSet::new()),
                events,
                llm,
                flows,
                runner: Mutex::new(None),
                confirmations: Mutex::new(Default::default()),
            }),
        };
        service.reload_providers()?;
        service.apply_budgets();
        service.recover_interrupted_builds()?;
        service.start_housekeeping();
        service
            .inner
            .flows
            .set_agent_backends(Arc::new(llm::ServiceBackends::new(&service)));
        service
            .inner
            .flows
            .set_script_runner(Arc::new(flow_scripts::SandboxedScripts::new(
                service.runner_source(),
                service.inner.home.join("flow-scripts"),
                service.inner.ids.clone(),
                {
                    // Weak: the flow engine is owned by the service it asks.
                    let inner = Arc::downgrade(&service.inner);
                    Box::new(move || match inner.upgrade() {
                        Some(inner) => Service { inner }.run_limits(),
                        None => crate::runner::Limits::default(),
                    })
                },
            )));
        Ok(service)
    }

    /// The data folder.
    pub fn home(&self) -> &Path {
        &self.inner.home
    }

    /// The flow engine (seed 004's `/api/flows…`), sharing this service's events.
    pub fn flows(&self) -> &crate::flows::FlowEngine {
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
        if !lock(&self.inner.busy).insert(workflow_id.to_owned()) {
            return Err(CoreError::Conflict(format!(
                "workflow {workflow_id} is already handling a message; wait for its reply"
            )));
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
        // A build paused at a gate waits for the user, across restarts.
        let stuck: Vec<_> = stuck
            .into_iter()
            .filter(|v| !store::builds::is_pending(&tx, &v.id))
            .collect();
        // A build another running Maskflow process is doing is not cut off.
        let mine = LeaseOwner::this_process();
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

    /// Creates a workflow and its first version (`validating`) from the
    /// extracts the user approved and the uploaded files behind them.
    pub fn create_workflow(&self, request: CreateWorkflow) -> Result<CreatedVersion> {
        if request.file_extracts.len() > MAX_FILES || request.file_ids.len() > MAX_FILES {
            return Err(CoreError::InvalidRequest(format!(
                "a workflow can start from at most {MAX_FILES} files"
            )));
        }
        let unique: HashSet<&String> = request.file_ids.iter().collect();
        if unique.len() != request.file_ids.len() {
            return Err(CoreError::InvalidRequest(
                "file_ids lists a file twice".into(),
            ));
        }
        let now = self.now();
        let workflow_id = self.id("wf");
        let version_id = self.id("wv");
        let mut db = self.db();
        let tx = db.transaction()?;
        let mut stored = Vec::new();
        for id in &request.file_ids {
            let file = store::get_file(&tx, id)?.ok_or_else(|| {
                CoreError::InvalidRequest(format!("file_ids: file {id} was not uploaded"))
            })?;
            stored.push(file.extract);
        }
        let given: Vec<Value> = request
            .file_extracts
            .iter()
            .map(|e| serde_json::to_value(&e.0))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| CoreError::InvalidRequest(format!("file_extracts: {e}")))?;
        // The client's extracts are never trusted (#13): with files, the stored
        // ones are used; alone, they must hold only masked samples.
        let extracts: Vec<Value> = if !request.file_ids.is_empty() {
            if !given.is_empty() {
                crate::privacy::extracts::check_against_stored(&stored, &given)
                    .map_err(CoreError::InvalidRequest)?;
            }
            stored
        } else {
            for e in &given {
                crate::privacy::extracts::check_masked(e).map_err(CoreError::InvalidRequest)?;
            }
            given
        };
        if extracts.is_empty() {
            return Err(CoreError::InvalidRequest(
                "file_extracts must list at least one approved extract (or give file_ids)".into(),
            ));
        }
        store::insert_workflow(
            &tx,
            &WorkflowRow {
                id: workflow_id.clone(),
                name: None,
                description: None,
                label: None,
                created_at: now.clone(),
                updated_at: now.clone(),
            },
        )?;
        store::insert_version(
            &tx,
            &VersionRow {
                id: version_id.clone(),
                workflow_id: workflow_id.clone(),
                version: 1,
                status: versions::INITIAL,
                is_active: false,
                file_extracts: Value::Array(extracts),
                fields: None,
                execution: None,
                script: None,
                rejection_reason: None,
                failure_reason: None,
                created_at: now.clone(),
                updated_at: now,
                origin: store::Origin::Created,
                origin_version_id: None,
            },
        )?;
        store::link_files(&tx, &version_id, &request.file_ids)?;
        tx.commit()?;
        drop(db);
        self.publish_status(&workflow_id, &version_id, versions::INITIAL, None);
        Ok(CreatedVersion {
            workflow_id,
            version_id,
            status: versions::INITIAL,
        })
    }

    /// Sends the user's message and routes it by the draft's status (seed
    /// 000): validator, then clarifier, then a background build. A second
    /// call for the same workflow while one runs is a conflict at once.
    pub async fn send_message(&self, workflow_id: &str, content: &str) -> Result<MessageReply> {
        self.send_message_with(workflow_id, content, false).await
    }

    /// [`Service::send_message`]; with `confirm_privacy`, the user chose to
    /// send `content` even though the privacy guard found values from their
    /// files in it (only their own text is let through).
    pub async fn send_message_with(
        &self,
        workflow_id: &str,
        content: &str,
        confirm_privacy: bool,
    ) -> Result<MessageReply> {
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
        let _busy = self.claim(workflow_id)?;
        let (mut version, created) = self.draft_for_message(workflow_id)?;
        if let Some(v) = &created {
            self.publish_status(workflow_id, &v.id, v.status, None);
        }
        let mut history = self.history(workflow_id)?;
        history.push(ChatMessage::new(ChatRole::User, content));
        if confirm_privacy {
            self.confirm_privacy(workflow_id, content)?;
        }

        let mut user_stored = false;
        let step = match version.status {
            Status::Validating => Step::Validate,
            _ => Step::Clarify,
        };
        let mut context_reductions = Vec::new();
        if let Step::Validate = step {
            let llm = self.llm(&Role::Validator, Some(workflow_id), Some(&version.id), None)?;
            let request = self
                .fitted_request(
                    &llm,
                    &Role::Validator,
                    workflow_id,
                    &version.file_extracts,
                    &mut context_reductions,
                    &|e| prompts::validator_request(e, &history),
                )
                .await?;
            let verdict: Feasibility = ask_json(
                &llm,
                request,
                &Feasibility::check,
                &self.delta_sink(workflow_id, Role::Validator),
            )
            .await?;
            let now = self.now();
            let mut db = self.db();
            let tx = db.transaction()?;
            let user = self.add_message(&tx, workflow_id, &version.id, "user", content, &now)?;
            user_stored = true;
            if !verdict.feasible {
                let reason = verdict
                    .reason
                    .map(|r| r.trim().to_owned())
                    .unwrap_or_default();
                version.rejection_reason = Some(reason.clone());
                move_version(&tx, &mut version, VersionEvent::Infeasible, &now)?;
                let reply =
                    self.add_message(&tx, workflow_id, &version.id, "assistant", &reason, &now)?;
                tx.commit()?;
                drop(db);
                self.publish_messages(workflow_id, [user, reply]);
                self.publish_status(
                    workflow_id,
                    &version.id,
                    Status::Rejected,
                    Some(reason.clone()),
                );
                return Ok(MessageReply {
                    status: Status::Rejected,
                    message: reason,
                    context_reductions,
                });
            }
            move_version(&tx, &mut version, VersionEvent::Feasible, &now)?;
            tx.commit()?;
            drop(db);
            self.publish_messages(workflow_id, [user]);
            self.publish_status(workflow_id, &version.id, version.status, None);
        }

        let llm = self.llm(&Role::Clarifier, Some(workflow_id), Some(&version.id), None)?;
        let request = self
            .fitted_request(
                &llm,
                &Role::Clarifier,
                workflow_id,
                &version.file_extracts,
                &mut context_reductions,
                &|e| prompts::clarifier_request(e, &history),
            )
            .await?;
        let verdict: Clarification = ask_json(
            &llm,
            request,
            &Clarification::check,
            &self.delta_sink(workflow_id, Role::Clarifier),
        )
        .await?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let mut published = Vec::new();
        if !user_stored {
            published.push(self.add_message(
                &tx,
                workflow_id,
                &version.id,
                "user",
                content,
                &now,
            )?);
        }
        if version.status == Status::Validated {
            move_version(&tx, &mut version, VersionEvent::StartClarifying, &now)?;
        }
        let reply_text = if verdict.needs_clarification {
            move_version(&tx, &mut version, VersionEvent::AskQuestion, &now)?;
            verdict.question.unwrap_or_default().trim().to_owned()
        } else {
            move_version(&tx, &mut version, VersionEvent::StartBuild, &now)?;
            BUILDING_MESSAGE.to_owned()
        };
        published.push(self.add_message(
            &tx,
            workflow_id,
            &version.id,
            "assistant",
            &reply_text,
            &now,
        )?);
        tx.commit()?;
        drop(db);
        self.publish_messages(workflow_id, published);
        self.publish_status(workflow_id, &version.id, version.status, None);
        if version.status == Status::Building {
            let service = self.clone();
            let (wf, vid) = (workflow_id.to_owned(), version.id.clone());
            tokio::spawn(async move { service.build(wf, vid).await });
        }
        Ok(MessageReply {
            status: version.status,
            message: reply_text,
            context_reductions,
        })
    }

    /// The version a new message works on, creating version N+1 when the
    /// current one is built, failed or approved. Returns it and, when it was
    /// just created, the new version too.
    fn draft_for_message(&self, workflow_id: &str) -> Result<(VersionRow, Option<VersionRow>)> {
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = self.versions_or_404(&tx, workflow_id)?;
        let current = current_of(&all)
            .ok_or_else(|| CoreError::Corrupt(format!("workflow {workflow_id} has no version")))?
            .clone();
        let result = match current.status {
            Status::Validating | Status::Validated | Status::Clarifying => (current, None),
            Status::Building => {
                return Err(CoreError::Conflict(
                    "the workflow is being built; wait until the build finishes".into(),
                ));
            }
            Status::Rejected => {
                return Err(CoreError::Conflict(format!(
                    "this workflow was rejected ({}); start a new workflow",
                    current
                        .rejection_reason
                        .as_deref()
                        .unwrap_or("not feasible")
                )));
            }
            Status::Archived => {
                return Err(CoreError::Archived(current.id));
            }
            Status::PendingUserApproval | Status::Failed | Status::Approved => {
                let next = self.new_version_from(&tx, current, &all, &now)?;
                (next.clone(), Some(next))
            }
        };
        tx.commit()?;
        Ok(result)
    }

    /// Edit (seed 000): `from` moves by the `edit` row of the table and
    /// version N+1 starts in `validated` with the same extracts and files.
    fn new_version_from(
        &self,
        tx: &Transaction<'_>,
        mut from: VersionRow,
        all: &[VersionRow],
        now: &str,
    ) -> Result<VersionRow> {
        if let Some(draft) = all.iter().find(|v| v.status.is_draft() && v.id != from.id) {
            return Err(CoreError::Conflict(format!(
                "version {} is already being drafted; continue that one",
                draft.version
            )));
        }
        move_version(tx, &mut from, VersionEvent::Edit, now)?;
        let next = VersionRow {
            id: self.id("wv"),
            workflow_id: from.workflow_id.clone(),
            version: all.iter().map(|v| v.version).max().unwrap_or(0) + 1,
            status: versions::INITIAL_AFTER_EDIT,
            is_active: false,
            file_extracts: from.file_extracts.clone(),
            fields: None,
            execution: None,
            script: None,
            rejection_reason: None,
            failure_reason: None,
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
            origin: store::Origin::Edited,
            origin_version_id: Some(from.id.clone()),
        };
        store::insert_version(tx, &next)?;
        store::link_files(tx, &next.id, &store::file_ids_of(tx, &from.id)?)?;
        if from.status == Status::Archived {
            self.publish_status(&from.workflow_id, &from.id, from.status, None);
        }
        Ok(next)
    }

    /// The background build: the phase engine (`crate::build`) generates,
    /// tests on the real files and revises, then the version moves to
    /// `pending_user_approval` or `failed`.
    async fn build(self, workflow_id: String, version_id: String) {
        self.run_build(&workflow_id, &version_id, builds::Drive::Start)
            .await;
    }

    fn finish_build(
        &self,
        workflow_id: &str,
        version_id: &str,
        outcome: Result<WorkflowSpec>,
    ) -> Result<()> {
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let Some(mut version) = store::get_version(&tx, version_id)? else {
            return Ok(()); // deleted meanwhile
        };
        if version.status != Status::Building {
            return Ok(());
        }
        let mut published = Vec::new();
        let reason = match outcome {
            Ok(spec) => {
                version.fields = Some(to_json(&spec.fields)?);
                version.execution = Some(to_json(&spec.execution)?);
                version.script = Some(spec.script.clone());
                move_version(&tx, &mut version, VersionEvent::BuildSucceeded, &now)?;
                if let Some(mut wf) = store::get_workflow(&tx, workflow_id)?
                    && wf.name.is_none()
                {
                    wf.name = Some(spec.name.trim().to_owned());
                    wf.description = Some(spec.description.trim().to_owned());
                    wf.updated_at = now.clone();
                    store::update_workflow_meta(&tx, &wf)?;
                }
                let text = format!(
                    "Built \u{201c}{}\u{201d}: {}",
                    spec.name.trim(),
                    spec.description.trim()
                );
                published.push(self.add_message(
                    &tx,
                    workflow_id,
                    version_id,
                    "assistant",
                    &text,
                    &now,
                )?);
                None
            }
            Err(e) => {
                let reason = e.to_string();
                version.failure_reason = Some(reason.clone());
                move_version(&tx, &mut version, VersionEvent::BuildFailed, &now)?;
                Some(reason)
            }
        };
        tx.commit()?;
        drop(db);
        self.publish_messages(workflow_id, published);
        self.publish_status(workflow_id, version_id, version.status, reason);
        Ok(())
    }

    /// Approves a built version: it becomes `approved` and active, and every
    /// other version of the workflow is archived.
    pub fn approve(&self, workflow_id: &str, version_id: &str) -> Result<WorkflowView> {
        self.check_version_of(workflow_id, version_id)?;
        let workflow_id = workflow_id.to_owned();
        let _busy = self.claim(&workflow_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = store::versions_of(&tx, &workflow_id)?;
        let mut target = all
            .iter()
            .find(|v| v.id == version_id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        if target.status == Status::Archived {
            return Err(CoreError::Archived(target.id));
        }
        versions::apply(target.status, VersionEvent::Approve)?;
        let mut archived = Vec::new();
        for other in all
            .iter()
            .filter(|v| v.id != version_id && v.status != Status::Archived)
        {
            let mut other = other.clone();
            other.is_active = false;
            move_version(&tx, &mut other, VersionEvent::Archive, &now)?;
            archived.push(other.id);
        }
        target.is_active = true;
        move_version(&tx, &mut target, VersionEvent::Approve, &now)?;
        tx.commit()?;
        drop(db);
        for id in archived {
            self.publish_status(&workflow_id, &id, Status::Archived, None);
        }
        self.publish_status(&workflow_id, version_id, Status::Approved, None);
        self.get_workflow(&workflow_id)
    }

    /// Edits a version (seed 000's "Edit"): creates version N+1 in
    /// `validated` with the same extracts; the conversation continues.
    pub fn edit(&self, workflow_id: &str, version_id: &str) -> Result<CreatedVersion> {
        self.check_version_of(workflow_id, version_id)?;
        let workflow_id = workflow_id.to_owned();
        let _busy = self.claim(&workflow_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let all = store::versions_of(&tx, &workflow_id)?;
        let from = all
            .iter()
            .find(|v| v.id == version_id)
            .cloned()
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        if from.status == Status::Archived {
            return Err(CoreError::Archived(from.id));
        }
        let next = self.new_version_from(&tx, from, &all, &now)?;
        tx.commit()?;
        drop(db);
        self.publish_status(&workflow_id, &next.id, next.status, None);
        Ok(CreatedVersion {
            workflow_id,
            version_id: next.id,
            status: next.status,
        })
    }

    /// A workflow with its current version, versions and conversation.
    pub fn get_workflow(&self, workflow_id: &str) -> Result<WorkflowView> {
        let db = self.db();
        let w = store::get_workflow(&db, workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        let all = store::versions_of(&db, workflow_id)?;
        let current = current_of(&all)
            .ok_or_else(|| CoreError::Corrupt(format!("workflow {workflow_id} has no version")))?
            .clone();
        let file_ids = store::file_ids_of(&db, &current.id)?;
        let messages = store::messages_of(&db, workflow_id)?
            .into_iter()
            .map(MessageView::from)
            .collect();
        Ok(WorkflowView {
            id: w.id,
            name: w.name,
            description: w.description,
            label: w.label,
            active_version_id: all.iter().find(|v| v.is_active).map(|v| v.id.clone()),
            versions: all
                .iter()
                .map(|v| VersionSummary::within(v, &all))
                .collect(),
            current_version: {
                let mut view = VersionView::from_row(current, file_ids)?;
                self.attach_build(&db, &mut view);
                view
            },
            messages,
            created_at: w.created_at,
            updated_at: w.updated_at,
        })
    }

    /// One version of a workflow in full (any status, archived ones too),
    /// e.g. to compare two versions' scripts.
    pub fn get_version(&self, workflow_id: &str, version_id: &str) -> Result<VersionView> {
        self.check_version_of(workflow_id, version_id)?;
        let db = self.db();
        let row = store::get_version(&db, version_id)?
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        let file_ids = store::file_ids_of(&db, version_id)?;
        let mut view = VersionView::from_row(row, file_ids)?;
        self.attach_build(&db, &mut view);
        Ok(view)
    }

    /// Every workflow, newest first.
    pub fn list_workflows(&self) -> Result<Vec<WorkflowSummary>> {
        let db = self.db();
        let mut out = Vec::new();
        for w in store::list_workflows(&db)? {
            let all = store::versions_of(&db, &w.id)?;
            let Some(current) = current_of(&all) else {
                continue;
            };
            let active = all.iter().find(|v| v.is_active).map(|v| v.id.clone());
            out.push(WorkflowSummary::new(w, current, active));
        }
        Ok(out)
    }

    /// Renames, re-describes or relabels a workflow.
    pub fn update_workflow(&self, workflow_id: &str, patch: WorkflowPatch) -> Result<WorkflowView> {
        let clean = |field: &str, v: Option<String>, allow_empty: bool| -> Result<Option<String>> {
            match v.map(|s| s.trim().to_owned()) {
                Some(s) if s.is_empty() && !allow_empty => Err(CoreError::InvalidRequest(format!(
                    "{field} must not be empty"
                ))),
                Some(s) if s.chars().count() > 2000 => {
                    Err(CoreError::InvalidRequest(format!("{field} is too long")))
                }
                other => Ok(other),
            }
        };
        let name = clean("name", patch.name, false)?;
        let description = clean("description", patch.description, false)?;
        let label = clean("label", patch.label, true)?;
        if name
            .as_ref()
            .is_some_and(|n| n.chars().count() > crate::spec::MAX_NAME_CHARS)
        {
            return Err(CoreError::InvalidRequest(format!(
                "name is longer than {} characters",
                crate::spec::MAX_NAME_CHARS
            )));
        }
        {
            let now = self.now();
            let db = self.db();
            let mut w = store::get_workflow(&db, workflow_id)?
                .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
            if let Some(n) = name {
                w.name = Some(n);
            }
            if let Some(d) = description {
                w.description = Some(d);
            }
            if let Some(l) = label {
                w.label = (!l.is_empty()).then_some(l);
            }
            w.updated_at = now;
            store::update_workflow_meta(&db, &w)?;
        }
        self.get_workflow(workflow_id)
    }

    /// Where to store a new upload: a fresh file id and a path under
    /// `<home>/files/<file_id>/` named after the user's file.
    pub fn new_upload(&self, filename: &str) -> Result<(String, PathBuf)> {
        let id = self.id("file");
        let dir = self.inner.home.join("files").join(&id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| CoreError::io(format!("creating {}", dir.display()), e))?;
        Ok((id, dir.join(safe_filename(filename))))
    }

    /// Extracts an upload written to the path [`Service::new_upload`] gave,
    /// and records it. On failure the stored copy is removed and the error
    /// names the file as the user did.
    pub async fn add_upload(
        &self,
        file_id: &str,
        filename: &str,
        path: PathBuf,
    ) -> Result<UploadedFile> {
        let dir = path.parent().map(Path::to_path_buf);
        let result = self.record_file(file_id, filename, path).await;
        if result.is_err()
            && let Some(d) = &dir
        {
            let _ = std::fs::remove_dir_all(d);
        }
        result
    }

    /// Stores bytes the user picked in a shell that has no path for them (a
    /// file chooser inside the desktop window), then extracts them like an
    /// upload.
    pub async fn add_upload_bytes(&self, filename: &str, bytes: &[u8]) -> Result<UploadedFile> {
        self.ensure_space(
            bytes.len() as u64,
            &format!("the upload {}", safe_filename(filename)),
        )?;
        let (file_id, path) = self.new_upload(filename)?;
        if let Err(e) = std::fs::write(&path, bytes) {
            if let Some(d) = path.parent() {
                let _ = std::fs::remove_dir_all(d);
            }
            return Err(CoreError::io(format!("writing {}", path.display()), e));
        }
        self.add_upload(&file_id, filename, path).await
    }

    /// Extracts a file where it lies on this machine (the desktop app's
    /// dropped files) and records it with its path; nothing is copied or
    /// removed. The path stays local: only the masked extract is returned.
    pub async fn add_local_file(&self, path: PathBuf) -> Result<UploadedFile> {
        let meta = std::fs::metadata(&path)
            .map_err(|e| CoreError::InvalidRequest(format!("{}: {e}", path.display())))?;
        if !meta.is_file() {
            return Err(CoreError::InvalidRequest(format!(
                "{} is not a file",
                path.display()
            )));
        }
        let filename = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file_id = self.id("file");
        self.record_file(&file_id, &filename, path).await
    }

    /// Runs the extractor over `path` (publishing [`Event::ExtractProgress`]
    /// while a large file is counted) and stores the file's row.
    async fn record_file(
        &self,
        file_id: &str,
        filename: &str,
        path: PathBuf,
    ) -> Result<UploadedFile> {
        let display_name = safe_filename(filename);
        let p = path.clone();
        let events = self.inner.events.clone();
        let (id, name) = (file_id.to_owned(), display_name.clone());
        let extracted = tokio::task::spawn_blocking(move || {
            let mut last_percent = u64::MAX;
            let mut progress = |done: u64, total: u64| {
                let percent = done.saturating_mul(100) / total.max(1);
                if percent != last_percent {
                    last_percent = percent;
                    events.publish(Event::ExtractProgress {
                        file_id: id.clone(),
                        filename: name.clone(),
                        done,
                        total,
                    });
                }
            };
            maskflow_extractors::extract_path(
                &p,
                &maskflow_extractors::ExtractOptions::default(),
                &mut |step| progress(step.done, step.total),
            )
        })
        .await
        .map_err(|e| CoreError::Corrupt(format!("the extractor stopped: {e}")))?;
        let mut extract = match extracted {
            Ok(extract) => extract,
            Err(e) => {
                let message = e
                    .to_string()
                    .replace(&path.display().to_string(), &display_name);
                return Err(CoreError::InvalidRequest(message));
            }
        };
        extract.filename = display_name.clone();
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let row = FileRow {
            id: file_id.to_owned(),
            filename: display_name,
            path: path.display().to_string(),
            size_bytes: i64::try_from(size).unwrap_or(i64::MAX),
            extract: to_json(&extract)?,
            created_at: self.now(),
        };
        store::insert_file(&self.db(), &row)?;
        Ok(row.into())
    }

    fn check_version_of(&self, workflow_id: &str, version_id: &str) -> Result<()> {
        let db = self.db();
        if store::get_workflow(&db, workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        match store::get_version(&db, version_id)? {
            Some(v) if v.workflow_id == workflow_id => Ok(()),
            _ => Err(CoreError::not_found("version", version_id)),
        }
    }

    fn versions_or_404(&self, conn: &Connection, workflow_id: &str) -> Result<Vec<VersionRow>> {
        if store::get_workflow(conn, workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        Ok(store::versions_of(conn, workflow_id)?)
    }

    fn history(&self, workflow_id: &str) -> Result<Vec<ChatMessage>> {
        Ok(store::messages_of(&self.db(), workflow_id)?
            .into_iter()
            .map(|m| {
                let role = if m.role == "user" {
                    ChatRole::User
                } else {
                    ChatRole::Assistant
                };
                ChatMessage::new(role, m.content)
            })
            .collect())
    }

    fn add_message(
        &self,
        conn: &Connection,
        workflow_id: &str,
        version_id: &str,
        role: &str,
        content: &str,
        now: &str,
    ) -> Result<MessageView> {
        let row = MessageRow {
            id: self.id("msg"),
            workflow_id: workflow_id.to_owned(),
            version_id: Some(version_id.to_owned()),
            role: role.to_owned(),
            content: content.to_owned(),
            created_at: now.to_owned(),
        };
        store::insert_message(conn, &row)?;
        Ok(row.into())
    }

    fn delta_sink(&self, workflow_id: &str, role: Role) -> impl Fn(&str) + Send + Sync + use<> {
        let events = self.inner.events.clone();
        let workflow_id = workflow_id.to_owned();
        let role = role.key();
        move |delta: &str| {
            events.publish(Event::MessageDelta {
                workflow_id: workflow_id.clone(),
                role: role.clone(),
                delta: delta.to_owned(),
            })
        }
    }

    fn publish_status(
        &self,
        workflow_id: &str,
        version_id: &str,
        status: Status,
        reason: Option<String>,
    ) {
        self.inner.events.publish(Event::StatusChanged {
            workflow_id: workflow_id.to_owned(),
            version_id: version_id.to_owned(),
            status,
            reason,
        });
    }

    fn publish_messages(&self, workflow_id: &str, messages: impl IntoIterator<Item = MessageView>) {
        for message in messages {
            self.inner.events.publish(Event::Message {
                workflow_id: workflow_id.to_owned(),
                message,
            });
        }
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
    let changed = conn.execute(
        "UPDATE workflow_versions SET status = ?2, is_active = ?3, fields = ?4, execution = ?5,
             script = ?6, rejection_reason = ?7, failure_reason = ?8, updated_at = ?9
         WHERE id = ?1 AND status = ?10",
        rusqlite::params![
            v.id,
            v.status.as_str(),
            v.is_active,
            v.fields.as_ref().map(Value::to_string),
            v.execution.as_ref().map(Value::to_string),
            v.script,
            v.rejection_reason,
            v.failure_reason,
            v.updated_at,
            from.as_str(),
        ],
    )?;
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

/// The file's own name without folders or control characters ("upload" when empty).
fn safe_filename(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_control())
        .map(|c| {
            if matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '_'
            } else {
                c
            }
        })
        .take(200)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    if cleaned.is_empty() {
        "upload".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
pub(crate) mod api_client;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod ts_export;
