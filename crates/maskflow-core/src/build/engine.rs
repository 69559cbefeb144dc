//! The build engine: walks the phase table, asks the profile for prompts
//! and processing, and alone does the I/O — it calls the provider, runs the
//! auto-test in the sandboxed runner, masks the test's error output, and
//! writes every prompt, reply and generated file into the session folder
//! `sessions/<version_id>/iteration-<N>/`. It knows nothing of the
//! database: the service persists the [`BuildState`] it reports.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::gate::{Approver, Decision, GateInput};
use super::mask::{Allowlist, mask_error};
use super::profile::{ProcessingResult, ProcessingStatus, Profile, ProfileContext, TestOutcome};
use super::table::{Action, Command, Phase, Stage, apply};
use crate::privacy::{GuardedProvider, guard};
use crate::providers::{ChatMessage, ChatRole, LlmRequest, Provider, ProviderError};
use crate::pyenv::{
    EnvironmentInfo, Environments, Lock, PackageRequest, ProgressSink, dist_name, outside_curated,
};
use crate::runner::{InputValue, Limits, RunRequest, RunResult, Runner};
use crate::spec::{FieldType, WorkflowSpec};

/// How many failed auto-tests end a build (the first one gets a revision).
pub const MAX_TEST_FAILURES: u32 = 2;

/// Where a build is, persisted by the service between steps and pauses.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BuildState {
    /// The phase.
    pub phase: Phase,
    /// The stage (none when terminal or not started).
    pub stage: Option<Stage>,
    /// 1-based iteration (0 before the start).
    pub iteration: u32,
    /// Whether a gate waits for a person.
    pub pending_gate: bool,
    /// Failed auto-tests so far.
    pub test_failures: u32,
    /// What the next revision must fix (masked or LLM/user-written).
    pub feedback: Option<String>,
    /// The latest usable workflow.
    pub spec: Option<WorkflowSpec>,
    /// The latest test report.
    pub report: Option<TestReport>,
    /// Why the build failed.
    pub reason: Option<String>,
    /// What the builder's last prompt left out of the extracts to fit the
    /// model's context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_reduction: Option<crate::fit::ContextReduction>,
    /// Packages outside the curated set the user approved for this build.
    #[serde(default)]
    pub approved_packages: Vec<String>,
    /// Packages outside the curated set waiting for the user's approval
    /// (the gate is pending while this is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_packages: Option<Vec<PackageRequest>>,
    /// The pinned package set of the latest script (stored with the version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<Lock>,
}

impl Default for BuildState {
    fn default() -> Self {
        Self {
            phase: Phase::Init,
            stage: None,
            iteration: 0,
            pending_gate: false,
            test_failures: 0,
            feedback: None,
            spec: None,
            report: None,
            reason: None,
            context_reduction: None,
            approved_packages: Vec::new(),
            pending_packages: None,
            lock: None,
        }
    }
}

/// One of the version's real input files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// The user's name for it.
    pub filename: String,
    /// The stored copy (local only).
    pub path: PathBuf,
}

/// Everything a build works from.
#[derive(Clone, Debug)]
pub struct BuildJob {
    /// The approved, masked extracts.
    pub extracts: Value,
    /// The conversation.
    pub history: Vec<ChatMessage>,
    /// The real files the auto-test runs on.
    pub input_files: Vec<InputFile>,
    /// `sessions/<version_id>/`.
    pub session_dir: PathBuf,
    /// Where the auto-test's working folders go.
    pub test_dir: PathBuf,
    /// Set when the user cancels the build: the auto-test's script is killed.
    pub cancel: Arc<AtomicBool>,
}

/// What the auto-test did (local only: it holds real output).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
pub struct TestReport {
    /// `passed`, `failed` or `skipped` (no input files to test on).
    pub status: String,
    /// In words.
    pub message: String,
    /// The iteration tested.
    pub iteration: u32,
    /// Which input files each field got.
    pub inputs: BTreeMap<String, Vec<String>>,
    /// The run, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunResult>,
    /// The Python environment it ran in (none: the plain interpreter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<EnvironmentInfo>,
}

/// How a build (or a stretch of it) ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Built and tested: the version can wait for the user's approval.
    Built,
    /// Given up; `state.reason` says why.
    Failed,
    /// A gate waits for a person; resume with [`Engine::resume`].
    Paused,
}

/// Called with the state after every move.
pub type OnChange<'a> = &'a (dyn Fn(&BuildState) + Send + Sync);

/// The engine of one build.
#[derive(Debug, Clone)]
pub struct Engine {
    /// The kind of build.
    pub profile: Arc<dyn Profile>,
    /// The builder's back end: only ever behind the privacy guard and the
    /// ledger (the engine cannot hold a raw back end).
    pub provider: GuardedProvider,
    /// The gate after each piece of content.
    pub approver: Arc<dyn Approver>,
    /// The sandboxed runner.
    pub runner: Arc<Runner>,
    /// The auto-test's limits.
    pub limits: Limits,
    /// The managed Python environments the auto-test runs in.
    pub environments: Environments,
    /// Where an environment install's progress goes.
    pub env_progress: ProgressSink,
}

/// What the auto-test step came to.
enum Tested {
    /// It ran (or was skipped): the report.
    Report(Box<TestReport>),
    /// Packages outside the curated set wait for the user's approval.
    NeedsApproval,
}

fn fail(state: &mut BuildState, reason: impl Into<String>) -> Command {
    state.reason = Some(reason.into());
    Command::GiveUp
}

impl Engine {
    /// Runs a new build from the start until it ends or pauses.
    pub async fn start(&self, job: &BuildJob, state: &mut BuildState, on: OnChange<'_>) -> Outcome {
        *state = BuildState::default();
        self.drive(job, state, Command::Start, on).await
    }

    /// Tests an existing workflow (a restored version's script, fields and
    /// execution) on the real files, as a build's review does; a failed test
    /// goes to the builder for a revision like any other.
    pub async fn retest(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        spec: WorkflowSpec,
        on: OnChange<'_>,
    ) -> Outcome {
        *state = BuildState {
            iteration: 1,
            ..BuildState::default()
        };
        // The session folder shows the script under test, as after a generation.
        if let Err(e) = self.write(job, state, "code/script.py", &spec.script) {
            state.reason = Some(e);
            state.phase = Phase::Failed;
            on(state);
            return Outcome::Failed;
        }
        state.spec = Some(spec);
        self.drive(job, state, Command::Retest, on).await
    }

    /// Resolves the pending gate with a person's decision and continues.
    pub async fn resume(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        approve: bool,
        feedback: Option<String>,
        on: OnChange<'_>,
    ) -> Outcome {
        state.pending_gate = false;
        if let Some(pending) = state.pending_packages.take() {
            let names: Vec<String> = pending.into_iter().map(|p| p.name).collect();
            if !approve {
                state.reason = Some(format!(
                    "you did not approve the Python package(s) {} the script asked for, so the build stopped \
                     (a package is code that would run on your data); edit the request to retry without them",
                    names.join(", ")
                ));
                return self.drive(job, state, Command::GiveUp, on).await;
            }
            state.approved_packages.extend(names);
            on(state);
            let Some(command) = self.test_step(job, state).await else {
                return self.pause(state, on);
            };
            return self.drive(job, state, command, on).await;
        }
        let command = if approve {
            Command::Approve
        } else {
            state.feedback = Some(
                feedback
                    .filter(|f| !f.trim().is_empty())
                    .unwrap_or_else(|| "The user rejected this version; improve it.".into()),
            );
            Command::Reject
        };
        self.drive(job, state, command, on).await
    }

    async fn drive(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        mut command: Command,
        on: OnChange<'_>,
    ) -> Outcome {
        loop {
            let (phase, stage, action) = match apply(state.phase, state.stage, command) {
                Ok(next) => next,
                Err(e) => {
                    state.reason = Some(e.to_string());
                    state.phase = Phase::Failed;
                    state.stage = None;
                    on(state);
                    return Outcome::Failed;
                }
            };
            state.phase = phase;
            state.stage = stage;
            match action {
                Action::CreateGenerationPrompt => state.iteration = 1,
                Action::CreateRevisionPrompt => state.iteration += 1,
                _ => {}
            }
            on(state);
            command = match action {
                Action::CreateGenerationPrompt | Action::CreateRevisionPrompt => {
                    let name = if phase == Phase::Generate {
                        "generation"
                    } else {
                        "revision"
                    };
                    let prompt = self.request(job, state).await;
                    on(state);
                    let written = prompt.and_then(|request| {
                        let text = render(&request);
                        self.write(job, state, &format!("{name}-prompt.md"), &text)
                            .map(|()| text)
                    });
                    match written {
                        Err(e) => fail(state, e),
                        Ok(text) => match self.gate(state, Stage::Prompt, text).await {
                            Some(c) => c,
                            None => return self.pause(state, on),
                        },
                    }
                }
                Action::CallBuilder => match self.call_builder(job, state).await {
                    Ok(content) => match self.gate(state, Stage::Response, content).await {
                        Some(c) => c,
                        None => return self.pause(state, on),
                    },
                    Err(reason) => fail(state, reason),
                },
                Action::RunTest => match self.test_step(job, state).await {
                    Some(c) => c,
                    None => return self.pause(state, on),
                },
                Action::JudgeTest => self.judge(job, state),
                Action::Finish => {
                    state.pending_gate = false;
                    on(state);
                    return Outcome::Built;
                }
                Action::FailBuild => {
                    if state.reason.is_none() {
                        state.reason = Some("the build was stopped".into());
                    }
                    on(state);
                    return Outcome::Failed;
                }
            };
        }
    }

    fn pause(&self, state: &mut BuildState, on: OnChange<'_>) -> Outcome {
        state.pending_gate = true;
        on(state);
        Outcome::Paused
    }

    fn context(&self, job: &BuildJob, state: &BuildState) -> ProfileContext {
        ProfileContext {
            extracts: job.extracts.clone(),
            history: job.history.clone(),
            previous: state.spec.clone(),
            feedback: state.feedback.clone(),
            iteration: state.iteration,
        }
    }

    /// The builder's prompt, its extracts reduced to fit the model's
    /// context window (what was left out goes into `state`); refused with
    /// the numbers when it cannot fit.
    async fn request(&self, job: &BuildJob, state: &mut BuildState) -> Result<LlmRequest, String> {
        let window = self.provider.context_window().await;
        let budget = crate::providers::budget::max_tokens(&crate::providers::Role::Builder, None);
        let build = |extracts: &Value| {
            let mut ctx = self.context(job, state);
            ctx.extracts = extracts.clone();
            if state.phase == Phase::Generate {
                self.profile.generation_prompt(&ctx)
            } else {
                self.profile.revision_prompt(&ctx)
            }
        };
        let (request, reduction) =
            crate::fit::fit_request(&job.extracts, window, budget, self.provider.model(), &build)
                .map_err(|e| e.to_string())?;
        state.context_reduction = reduction;
        Ok(request)
    }

    /// `Some(command)` from the gate's decision, `None` when it is pending.
    async fn gate(&self, state: &mut BuildState, stage: Stage, content: String) -> Option<Command> {
        let input = GateInput {
            phase: state.phase,
            stage,
            content,
        };
        let result = self.approver.evaluate(&input).await;
        match result.decision {
            Decision::Approved => Some(Command::Approve),
            Decision::Rejected => {
                state.feedback = result.feedback;
                Some(Command::Reject)
            }
            Decision::Pending => None,
        }
    }

    async fn call_builder(&self, job: &BuildJob, state: &mut BuildState) -> Result<String, String> {
        let name = if state.phase == Phase::Generate {
            "generation"
        } else {
            "revision"
        };
        let mut request = self.request(job, state).await?;
        let ctx = self.context(job, state);
        let process = |reply: &str| -> ProcessingResult {
            if state.phase == Phase::Generate {
                self.profile.process_generation(&ctx, reply)
            } else {
                self.profile.process_revision(&ctx, reply)
            }
        };
        let mut attempt = 0;
        let (reply, result) = loop {
            attempt += 1;
            // A revision and the second try are Maskflow's own repairs:
            // nobody can confirm them, so a block says what to do instead.
            let automatic = state.phase != Phase::Generate || attempt > 1;
            let reply = self
                .provider
                .complete(&request, &|_| {})
                .await
                .map_err(|e| match e {
                    ProviderError::PrivacyBlocked(m) if automatic => {
                        guard::blocked_repair_message(&m)
                    }
                    e => e.to_string(),
                })?
                .text;
            let file = if attempt == 1 {
                format!("{name}-response.md")
            } else {
                format!("{name}-response-repair.md")
            };
            self.write(job, state, &file, &reply)?;
            let result = process(&reply);
            if result.status == ProcessingStatus::Success {
                break (reply, result);
            }
            let reason = result.metadata["reason"]
                .as_str()
                .unwrap_or("unusable reply")
                .to_owned();
            if attempt >= 2 {
                return Err(format!(
                    "the builder gave an unusable reply twice: {reason}"
                ));
            }
            request
                .messages
                .push(ChatMessage::new(ChatRole::Assistant, reply));
            request.messages.push(ChatMessage::new(
                ChatRole::User,
                self.profile.repair_prompt(&reason),
            ));
        };
        if let Some(plan) = &result.write_plan {
            for op in &plan.writes {
                let rel = safe_relative(&op.path).ok_or_else(|| {
                    format!("the profile asked to write outside code/: {}", op.path)
                })?;
                self.write(job, state, &format!("code/{rel}"), &op.content)?;
            }
        }
        let spec: WorkflowSpec = serde_json::from_value(result.metadata["spec"].clone())
            .map_err(|e| format!("the profile returned no workflow: {e}"))?;
        state.spec = Some(spec);
        Ok(reply)
    }

    /// The auto-test: `None` when packages wait for the user's approval.
    async fn test_step(&self, job: &BuildJob, state: &mut BuildState) -> Option<Command> {
        match self.run_test(job, state).await {
            Ok(Tested::Report(report)) => {
                state.report = Some(*report);
                Some(Command::Approve)
            }
            Ok(Tested::NeedsApproval) => None,
            Err(reason) => Some(fail(state, reason)),
        }
    }

    /// Resolves the script's requirements into a lock (kept in the state)
    /// and, when packages outside the curated set are not approved yet,
    /// lists them for approval. `Ok(None)`: nothing to install.
    async fn lock_requirements(
        &self,
        spec: &WorkflowSpec,
        state: &mut BuildState,
    ) -> Result<Option<Lock>, String> {
        let requirements: Vec<String> = spec
            .execution
            .requirements
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        if requirements.is_empty() {
            state.lock = None;
            return Ok(None);
        }
        let lock = match state.lock.clone() {
            Some(lock) if lock.requirements == requirements => lock,
            _ => {
                let (runner, envs, sink) = (
                    self.runner.clone(),
                    self.environments.clone(),
                    self.env_progress.clone(),
                );
                let reqs = requirements.clone();
                tokio::task::spawn_blocking(move || {
                    let base = runner.python().map_err(|e| e.to_string())?;
                    envs.resolve(&base, &reqs, &*sink.0)
                        .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| format!("resolving the packages stopped: {e}"))??
            }
        };
        state.lock = Some(lock.clone());
        let approved: Vec<String> = state
            .approved_packages
            .iter()
            .map(|a| dist_name(a))
            .collect();
        let base = self.runner.python().ok();
        let mut pending: Vec<PackageRequest> = Vec::new();
        for name in outside_curated(&requirements)
            .into_iter()
            .filter(|r| !approved.contains(&dist_name(r)))
        {
            let version = lock.version_of(&name);
            let size = match (&version, &base) {
                (Some(v), Some(base)) => {
                    crate::pyenv::sizes::download_size(&dist_name(&name), v, base).await
                }
                _ => None,
            };
            pending.push(PackageRequest {
                name,
                version,
                size,
            });
        }
        if !pending.is_empty() {
            state.pending_packages = Some(pending);
        }
        Ok(Some(lock))
    }

    async fn run_test(&self, job: &BuildJob, state: &mut BuildState) -> Result<Tested, String> {
        let spec = state.spec.clone().ok_or("there is no script to test")?;
        let (inputs, names) = bind_test_inputs(&spec, &job.input_files);
        let lock = self.lock_requirements(&spec, state).await?;
        if state.pending_packages.is_some() {
            return Ok(Tested::NeedsApproval);
        }
        let report = if job.input_files.is_empty() {
            TestReport {
                status: "skipped".into(),
                message: "not tested: the version has no stored input files to test on".into(),
                iteration: state.iteration,
                inputs: names,
                run: None,
                environment: None,
            }
        } else {
            let request = RunRequest {
                script: spec.script.clone(),
                inputs,
                requirements: spec.execution.requirements.clone(),
                workdir: job.test_dir.join(format!("iteration-{}", state.iteration)),
                limits: self.limits.clone(),
                shared_folders: Vec::new(),
            };
            let (runner, envs, sink, cancel) = (
                self.runner.clone(),
                self.environments.clone(),
                self.env_progress.clone(),
                job.cancel.clone(),
            );
            let (run, environment) = tokio::task::spawn_blocking(move || {
                let _ = std::fs::remove_dir_all(&request.workdir);
                let base = runner.python().map_err(|e| e.to_string())?;
                let (python, env) = match &lock {
                    Some(lock) => {
                        let (python, mut info) = envs
                            .ensure(&base, lock, &*sink.0)
                            .map_err(|e| e.to_string())?;
                        info.size = crate::runner::folder_size(&envs.root().join(&info.id));
                        (python, Some(info))
                    }
                    None => (base, None),
                };
                runner
                    .run_with(&python, &request, &cancel)
                    .map(|run| (run, env))
                    .map_err(|e| format!("the script could not be tested: {e}"))
            })
            .await
            .map_err(|e| format!("the test run stopped: {e}"))??;
            TestReport {
                status: if run.succeeded() { "passed" } else { "failed" }.into(),
                message: format!("ran on the real input files: {}", run.message),
                iteration: state.iteration,
                inputs: names,
                run: Some(run),
                environment,
            }
        };
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        self.write(job, state, "test-report.json", &json)?;
        self.write(job, state, "review-report.md", &render_report(&report))?;
        Ok(Tested::Report(Box::new(report)))
    }

    fn judge(&self, job: &BuildJob, state: &mut BuildState) -> Command {
        let Some(report) = state.report.clone() else {
            return fail(state, "no test report");
        };
        let workdir = job
            .test_dir
            .join(format!("iteration-{}", state.iteration))
            .canonicalize()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let (passed, summary, masked) = match &report.run {
            None => (true, report.message.clone(), String::new()),
            Some(run) => {
                let script = state.spec.as_ref().map(|s| s.script.as_str()).unwrap_or("");
                let allow = Allowlist::new(script, &column_names(&job.extracts));
                let mut masked = mask_error(&run.stderr, &workdir, &allow);
                if masked.trim().is_empty() {
                    masked = mask_error(&run.stdout, &workdir, &allow);
                }
                (run.succeeded(), run.message.clone(), masked)
            }
        };
        let test = TestOutcome {
            passed,
            summary: summary.clone(),
            masked_error: masked,
            output_names: report
                .run
                .as_ref()
                .map(|r| r.outputs.iter().map(|o| o.name.clone()).collect())
                .unwrap_or_default(),
        };
        let result = self
            .profile
            .process_review(&self.context(job, state), &test);
        if let Some(note) = result.metadata["note"].as_str()
            && let Err(e) = self.write(job, state, "review-verdict.md", note)
        {
            return fail(state, e);
        }
        if result.metadata["verdict"] == "pass" {
            state.feedback = None;
            return Command::Pass;
        }
        state.test_failures += 1;
        state.feedback = result.metadata["feedback"].as_str().map(str::to_owned);
        if state.test_failures >= MAX_TEST_FAILURES {
            let reason = format!(
                "the script failed its test on your files {} times; last: {summary}",
                state.test_failures
            );
            return fail(state, reason);
        }
        Command::Fail
    }

    fn write(
        &self,
        job: &BuildJob,
        state: &BuildState,
        name: &str,
        text: &str,
    ) -> Result<(), String> {
        let path = job
            .session_dir
            .join(format!("iteration-{}", state.iteration.max(1)))
            .join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))
    }
}

/// A plain relative path (no `..`, not absolute), with `/` separators.
fn safe_relative(path: &str) -> Option<String> {
    let p = Path::new(path);
    let mut parts = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Binds the version's files to the workflow's file fields for the
/// auto-test: `file` fields take the files in order; a `files` field takes
/// the rest. Other fields get their first option (choices) or nothing.
pub fn bind_test_inputs(
    spec: &WorkflowSpec,
    files: &[InputFile],
) -> (BTreeMap<String, InputValue>, BTreeMap<String, Vec<String>>) {
    let mut inputs = BTreeMap::new();
    let mut names = BTreeMap::new();
    let mut next = 0;
    for f in spec
        .fields
        .iter()
        .filter(|f| f.field_type == FieldType::File)
    {
        if let Some(file) = files.get(next) {
            inputs.insert(f.name.clone(), InputValue::File(file.path.clone()));
            names.insert(f.name.clone(), vec![file.filename.clone()]);
            next += 1;
        }
    }
    if let Some(f) = spec
        .fields
        .iter()
        .find(|f| f.field_type == FieldType::Files)
    {
        let rest = &files[next.min(files.len())..];
        inputs.insert(
            f.name.clone(),
            InputValue::Files(rest.iter().map(|r| r.path.clone()).collect()),
        );
        names.insert(
            f.name.clone(),
            rest.iter().map(|r| r.filename.clone()).collect(),
        );
    }
    for f in &spec.fields {
        if f.field_type == FieldType::Choice
            && let Some(first) = f.options.as_ref().and_then(|o| o.first())
        {
            inputs.insert(
                f.name.clone(),
                InputValue::Value(Value::String(first.clone())),
            );
        }
    }
    (inputs, names)
}

/// The column names of the approved extracts (every file, sheet and
/// table): the extractors' header decisions, so a file without a header
/// gives none. They may appear in repair feedback as themselves.
pub fn column_names(extracts: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => {
                for (k, x) in o {
                    if k == "columns"
                        && let Value::Array(names) = x
                    {
                        out.extend(names.iter().filter_map(|n| n.as_str()).map(str::to_owned));
                    } else {
                        walk(x, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(extracts, &mut out);
    out.sort();
    out.dedup();
    out
}

/// A prompt as Markdown, one section per message.
pub fn render(request: &LlmRequest) -> String {
    let mut out = String::new();
    for m in &request.messages {
        let who = match m.role {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        out.push_str(&format!("## {who}\n\n{}\n\n", m.content));
    }
    out
}

fn render_report(report: &TestReport) -> String {
    let mut out = format!(
        "# Test report (iteration {})\n\n**{}** — {}\n\n",
        report.iteration, report.status, report.message
    );
    for (field, files) in &report.inputs {
        out.push_str(&format!("- `{field}`: {}\n", files.join(", ")));
    }
    if let Some(env) = &report.environment {
        out.push_str(&format!(
            "\nPython {} environment `{}` ({} bytes): {}\n",
            env.python,
            env.id,
            env.size,
            env.packages.join(", ")
        ));
    }
    if let Some(run) = &report.run {
        out.push_str(&format!(
            "\nExit status: {:?}, {} ms\n\n",
            run.exit_code, run.duration_ms
        ));
        for o in &run.outputs {
            out.push_str(&format!("- output `{}`: {} bytes", o.name, o.size));
            if let Some(n) = o.row_count {
                out.push_str(&format!(", {n} rows"));
            }
            out.push('\n');
        }
        if !run.stderr.is_empty() {
            out.push_str(&format!("\n```\n{}\n```\n", run.stderr));
        }
    }
    out
}
