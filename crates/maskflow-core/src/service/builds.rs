//! The service's side of builds: it gathers a [`BuildJob`] from the store,
//! runs the [`Engine`] in the background, persists each [`BuildState`] the
//! engine reports (`version_builds`), publishes build events, resolves a
//! gate the user decides, and serves the session folder for offline review.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Service, VersionView, WorkflowView};
use crate::builder::{
    self, AutoApprove, BuildJob, BuildState, Engine, InputFile, Outcome, TestReport,
    script_builder::ScriptBuilder,
};
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::store::{self, builds as rows};
use crate::versions::Status;
use crate::views::BuildView;
use maskflow_llm::Role;
use maskflow_llm::call::ManualWaiter;
use maskflow_runner::Runner;

/// The settings key of the Python to use (a JSON string path).
pub const PYTHON_SETTING: &str = "python_path";
/// Largest session file served, in bytes.
pub const MAX_SESSION_FILE: u64 = 8 << 20;

/// The user's decision on a pending build gate.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum GateChoice {
    /// Continue with the builder's reply.
    Approve,
    /// Send it back for a revision, with feedback.
    Reject,
}

/// `POST …/gate`'s body.
#[derive(Deserialize, Clone, Debug, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct GateRequest {
    /// `approve` or `reject`.
    pub decision: GateChoice,
    /// What to fix (for a rejection).
    #[serde(default)]
    pub feedback: Option<String>,
    /// Which file feeds which input (input name → file name), answering
    /// the build's `pending_binding`.
    #[serde(default)]
    #[ts(optional)]
    pub bindings: Option<BTreeMap<String, String>>,
    /// The person's edit of a proposed plan they approve (the build's
    /// `pending_plan`); without it the plan is approved as proposed.
    #[serde(default)]
    #[ts(optional)]
    pub plan: Option<String>,
}

/// One file of a session folder.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct SessionFile {
    /// Path inside the iteration folder, e.g. `code/script.py`.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// One iteration of a session folder.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct SessionIteration {
    /// 1-based.
    pub iteration: u32,
    /// Its files, sorted.
    pub files: Vec<SessionFile>,
}

/// The waiter of a version's build: what its manual prompts (and those of
/// the message turns that lead to it) name, so an answer given after a
/// restart reaches the build.
pub(super) fn build_waiter(workflow_id: &str, version_id: &str) -> ManualWaiter {
    ManualWaiter::Build {
        workflow_id: workflow_id.to_owned(),
        version_id: version_id.to_owned(),
    }
}

/// How [`Service::run_build`] drives the engine.
pub(super) enum Drive {
    /// A new build from the conversation.
    Start,
    /// The user decided a pending gate.
    Resume {
        /// Continue (else revise).
        approve: bool,
        /// What to fix, for a rejection.
        feedback: Option<String>,
        /// Which file feeds which input, when the build asked.
        bindings: BTreeMap<String, String>,
        /// The person's edit of the proposed plan.
        plan: Option<String>,
    },
    /// A restored version: test its copied workflow on the real files.
    Retest(Box<crate::conversation::spec::WorkflowSpec>),
    /// Redo the builder's call cut off by a restart (its manual prompt was
    /// answered after the restart), then go on.
    Continue,
    /// A build that failed on its environment: make it and test again.
    RetryEnvironment,
}

impl Service {
    /// The script runner for the `python_path` setting as it is now (else
    /// `PATH`): a changed setting takes effect on the next run, no restart.
    pub fn runner(&self) -> Arc<Runner> {
        let setting: Option<PathBuf> = store::settings::get(&self.db(), PYTHON_SETTING)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<String>(&v).ok())
            .filter(|s| !s.is_empty())
            .map(PathBuf::from);
        let mut cached = super::lock(&self.inner.runner);
        match &*cached {
            Some((made_for, runner)) if *made_for == setting => runner.clone(),
            _ => {
                let runner = Arc::new(Runner::new(setting.clone()));
                *cached = Some((setting, runner.clone()));
                runner
            }
        }
    }

    /// The build engine for one version; its builder calls go through the
    /// privacy guard and the ledger like every other LLM call.
    fn engine(&self, workflow_id: &str, version_id: &str) -> Result<Engine> {
        let provider = self
            .llm(&Role::Builder, Some(workflow_id), Some(version_id), None)?
            .waited_on_by(build_waiter(workflow_id, version_id));
        // Every back end's replies pass the gates automatically: with the
        // manual back end the reply is what the user just pasted, and asking
        // them to approve it again only stands in their way (#28 point 9).
        let approver: Arc<dyn builder::Approver> = Arc::new(AutoApprove);
        Ok(Engine {
            profile: Arc::new(ScriptBuilder),
            provider,
            approver,
            runner: self.runner(),
            limits: self.run_limits(),
            environments: self.environments(),
            env_progress: self.env_sink(workflow_id, Some(version_id)),
            budgets: self.inner.budgets.clone(),
        })
    }

    fn build_job(&self, workflow_id: &str, version_id: &str) -> Result<BuildJob> {
        let history = self.history(workflow_id)?;
        // Read before taking the database below (it takes it too).
        let house_rules = self.house_rules_bundle()?;
        let options = self.build_options_of(workflow_id)?;
        let db = self.db();
        let version = store::get_version(&db, version_id)?
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        let mut input_files = Vec::new();
        for id in store::file_ids_of(&db, version_id)? {
            if let Some(f) = store::get_file(&db, &id)? {
                input_files.push(InputFile {
                    columns: builder::engine::column_names(&f.extract),
                    filename: f.filename,
                    path: PathBuf::from(f.path),
                });
            }
        }
        let current = super::current::current_spec(&db, &version);
        Ok(BuildJob {
            extracts: version.file_extracts,
            history,
            input_files,
            session_dir: builder::session_dir(self.home(), version_id),
            test_dir: builder::test_dir(self.home(), version_id),
            cancel: Default::default(),
            house_rules,
            current,
            options,
        })
    }

    fn save_build(&self, workflow_id: &str, version_id: &str, state: &BuildState) {
        let row = rows::BuildRow {
            version_id: version_id.to_owned(),
            state: serde_json::to_value(state).unwrap_or_default(),
            test_report: state
                .report
                .as_ref()
                .and_then(|r| serde_json::to_value(r).ok()),
        };
        let now = self.now();
        let _ = rows::put_build(&self.db(), &row, &now);
        self.write_session_state(workflow_id, version_id);
        self.inner.events.publish(Event::BuildChanged {
            workflow_id: workflow_id.to_owned(),
            version_id: version_id.to_owned(),
            build: state.into(),
        });
    }

    /// Runs, resumes or retests the build of a version in `building`, and
    /// moves it to `pending_user_approval` or `failed`.
    pub(super) async fn run_build(&self, workflow_id: &str, version_id: &str, drive: Drive) {
        // Another Maskflow process building this version keeps it; this one
        // leaves it alone (the other's events reach its own windows).
        let _lease = match self.lease(super::leases::build(version_id)) {
            Ok(lease) => lease,
            Err(e) => {
                eprintln!("maskflow: not building {version_id} here: {e}");
                return;
            }
        };
        let registration = self.register_build(workflow_id);
        let job = match self.build_job(workflow_id, version_id) {
            Ok(job) => BuildJob {
                cancel: registration.cancel.flag.clone(),
                ..job
            },
            Err(e) => {
                let _ = self.finish_build(workflow_id, version_id, Err(e));
                return;
            }
        };
        let mut state = rows::get_build(&self.db(), version_id)
            .ok()
            .flatten()
            .and_then(|r| serde_json::from_value(r.state).ok())
            .unwrap_or_default();
        let engine = match self.engine(workflow_id, version_id) {
            Ok(engine) => engine,
            Err(e) => {
                let _ = self.finish_build(workflow_id, version_id, Err(e));
                return;
            }
        };
        let (wf, vid) = (workflow_id.to_owned(), version_id.to_owned());
        let service = self.clone();
        let on = move |s: &BuildState| service.save_build(&wf, &vid, s);
        let driven = async {
            match drive {
                Drive::Start => engine.start(&job, &mut state, &on).await,
                Drive::Resume {
                    approve,
                    feedback,
                    bindings,
                    plan,
                } => {
                    engine
                        .resume(&job, &mut state, approve, feedback, bindings, plan, &on)
                        .await
                }
                Drive::Retest(spec) => engine.retest(&job, &mut state, *spec, &on).await,
                Drive::Continue => engine.continue_call(&job, &mut state, &on).await,
                Drive::RetryEnvironment => engine.retry_environment(&job, &mut state, &on).await,
            }
        };
        // A manual prompt the builder makes names this build (its back end
        // is made for it: `engine`), so an answer given after a restart
        // reaches it.
        let waiter = build_waiter(workflow_id, version_id);
        // A cancel drops the build's future (its LLM request with it) and
        // the runner, watching the same flag, kills the test script.
        let outcome = tokio::select! {
            outcome = driven => outcome,
            () = registration.cancel.notify.notified() => {
                self.forget_prompts(&waiter);
                let reason = super::cancel::CANCELLED_BY_USER.to_owned();
                let _ = self.finish_build(workflow_id, version_id, Err(CoreError::Conflict(reason)));
                return;
            }
        };
        if outcome != Outcome::Paused {
            self.forget_prompts(&waiter);
        }
        let result = match (outcome, state.spec.clone()) {
            (Outcome::Paused, _) => {
                self.notice_build_waiting(workflow_id, version_id, &state);
                return;
            }
            (Outcome::Built, Some(spec)) => {
                match self.store_lock(version_id, state.lock.as_ref()) {
                    Ok(()) => Ok(spec),
                    Err(e) => Err(e),
                }
            }
            (Outcome::Built, None) => {
                Err(CoreError::Conflict("the build produced no workflow".into()))
            }
            (Outcome::Failed, _) => Err(CoreError::Conflict(
                state
                    .reason
                    .clone()
                    .unwrap_or_else(|| "the build failed".into()),
            )),
        };
        let _ = self.finish_build(workflow_id, version_id, result);
    }

    /// Resolves a build gate waiting for the user: approve continues,
    /// reject sends the builder's reply back with `feedback`.
    pub fn resolve_gate(
        &self,
        workflow_id: &str,
        version_id: &str,
        request: GateRequest,
    ) -> Result<WorkflowView> {
        self.check_version_of(workflow_id, version_id)?;
        {
            let db = self.db();
            let v = store::get_version(&db, version_id)?
                .ok_or_else(|| CoreError::not_found("version", version_id))?;
            // A binding question must be answered in full before the gate
            // is taken, so a wrong answer can be corrected.
            let questions = rows::get_build(&db, version_id)?
                .and_then(|r| serde_json::from_value::<BuildState>(r.state).ok())
                .and_then(|s| s.pending_binding);
            if let Some(questions) = questions.filter(|_| v.status == Status::Building)
                && request.decision == GateChoice::Approve
            {
                builder::inputs::check_answers(
                    &questions,
                    request.bindings.as_ref().unwrap_or(&BTreeMap::new()),
                )
                .map_err(CoreError::InvalidRequest)?;
            }
            if let Some(edited) = &request.plan {
                builder::plan::check_edited(edited).map_err(CoreError::InvalidRequest)?;
            }
            if v.status != Status::Building || !rows::take_pending_gate(&db, version_id)? {
                return Err(CoreError::Conflict(format!(
                    "version {version_id} has no build gate waiting for a decision"
                )));
            }
        }
        let service = self.clone();
        let (wf, vid) = (workflow_id.to_owned(), version_id.to_owned());
        let drive = Drive::Resume {
            approve: request.decision == GateChoice::Approve,
            feedback: request.feedback,
            bindings: request.bindings.unwrap_or_default(),
            plan: request.plan,
        };
        tokio::spawn(async move { service.run_build(&wf, &vid, drive).await });
        self.get_workflow(workflow_id)
    }

    /// Adds the build's position and test report to a version view.
    pub(super) fn attach_build(&self, conn: &rusqlite::Connection, view: &mut VersionView) {
        if let Ok(Some(row)) = rows::get_build(conn, &view.id) {
            view.build = serde_json::from_value::<BuildState>(row.state)
                .ok()
                .map(|s| BuildView::from(&s));
            view.test_report = row
                .test_report
                .and_then(|r| serde_json::from_value::<TestReport>(r).ok());
        }
        self.attach_interface_change(conn, view);
        self.attach_input_hashes(conn, view);
    }

    /// The iterations of a version's session folder and their files.
    pub fn sessions(&self, workflow_id: &str, version_id: &str) -> Result<Vec<SessionIteration>> {
        self.check_version_of(workflow_id, version_id)?;
        let dir = builder::session_dir(self.home(), version_id);
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(out);
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(n) = name.strip_prefix("iteration-").and_then(|n| n.parse().ok()) else {
                continue;
            };
            let mut files = Vec::new();
            let mut stack = vec![e.path()];
            while let Some(d) = stack.pop() {
                for f in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                    let p = f.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if let Ok(rel) = p.strip_prefix(e.path()) {
                        files.push(SessionFile {
                            path: rel
                                .components()
                                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                                .collect::<Vec<_>>()
                                .join("/"),
                            size: f.metadata().map(|m| m.len()).unwrap_or(0),
                        });
                    }
                }
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
            out.push(SessionIteration {
                iteration: n,
                files,
            });
        }
        out.sort_by_key(|i| i.iteration);
        Ok(out)
    }

    /// The text of one session file.
    pub fn session_file(
        &self,
        workflow_id: &str,
        version_id: &str,
        iteration: u32,
        path: &str,
    ) -> Result<String> {
        self.check_version_of(workflow_id, version_id)?;
        let plain = path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains('\\'));
        if !plain {
            return Err(CoreError::InvalidRequest(format!(
                "{path:?} is not a plain relative path"
            )));
        }
        let file = builder::session_dir(self.home(), version_id)
            .join(format!("iteration-{iteration}"))
            .join(path);
        let meta =
            std::fs::metadata(&file).map_err(|_| CoreError::not_found("session file", path))?;
        if !meta.is_file() {
            return Err(CoreError::not_found("session file", path));
        }
        if meta.len() > MAX_SESSION_FILE {
            return Err(CoreError::InvalidRequest(format!(
                "{path} is larger than {MAX_SESSION_FILE} bytes"
            )));
        }
        let bytes = std::fs::read(&file)
            .map_err(|e| CoreError::io(format!("reading {}", file.display()), e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
