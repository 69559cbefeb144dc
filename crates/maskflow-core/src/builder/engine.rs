//! The build engine: walks the phase table, asks the profile for prompts
//! and processing, and alone does the I/O — it calls the provider, runs the
//! auto-test in the sandboxed runner, masks the test's error output, and
//! writes every prompt, reply and generated file into the session folder
//! `sessions/<version_id>/iteration-<N>/`. It knows nothing of the
//! database: the service persists the [`BuildState`] it reports.

use std::sync::Arc;

use serde_json::Value;

mod autotest;
mod job;
mod plan_review;
mod session;

use super::gate::{Approver, Decision, GateInput};
use super::profile::{ProcessingResult, ProcessingStatus, Profile, ProfileContext};
use super::table::{Action, Command, Phase, Stage, apply};
use crate::conversation::spec::WorkflowSpec;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, ProviderError};
use maskflow_privacy::{GuardedProvider, guard};
use maskflow_pyenv::{Environments, ProgressSink};
use maskflow_runner::{Limits, Runner};

/// How many failed auto-tests end a build (the first one gets a revision).
pub const MAX_TEST_FAILURES: u32 = 2;

pub use crate::builder::inputs::InputFile;
pub use autotest::column_names;
pub use job::{Asking, BuildJob, BuildState, OnChange, Outcome, TestReport};
pub use session::render;
use session::safe_relative;

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
    /// The output budgets in force (the builder's reply is kept room for).
    pub budgets: maskflow_llm::budget::Budgets,
}

fn fail(state: &mut BuildState, reason: impl Into<String>) -> Command {
    state.reason = Some(reason.into());
    Command::GiveUp
}

impl Engine {
    /// Runs a new build from the start until it ends or pauses.
    pub async fn start(&self, job: &BuildJob, state: &mut BuildState, on: OnChange<'_>) -> Outcome {
        *state = BuildState::default();
        if job.options.plan {
            return self.start_planned(job, state, None, on).await;
        }
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

    /// Retries a build that failed on its environment (see
    /// [`BuildState::environment_failed`]) with the script and requirements
    /// it holds: the environment is made and the test runs again in the
    /// same iteration; the builder is asked only if that test then fails.
    pub async fn retry_environment(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        on: OnChange<'_>,
    ) -> Outcome {
        if !state.environment_failed() {
            state.reason = Some("this build did not fail on its environment".into());
            state.phase = Phase::Failed;
            state.stage = None;
            on(state);
            return Outcome::Failed;
        }
        state.phase = Phase::Init;
        state.stage = None;
        state.reason = None;
        state.environment_failed = false;
        state.pending_gate = false;
        state.pending_packages = None;
        state.pending_environment = None;
        self.drive(job, state, Command::Retest, on).await
    }

    /// Continues a build cut off while the builder's (or the planner's, or
    /// the reviewer's) call was in flight (a restart while a manual prompt
    /// waited): the same call is made again from the persisted state, then
    /// the build moves on as usual.
    pub async fn continue_call(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        on: OnChange<'_>,
    ) -> Outcome {
        if !state.pending_gate
            && let Some(asking) = state.asking.take()
        {
            return self.continue_asking(job, state, asking, on).await;
        }
        let in_call = matches!(
            (state.phase, state.stage),
            (Phase::Generate | Phase::Revise, Some(Stage::Response))
        );
        if !in_call || state.pending_gate {
            state.reason = Some(format!(
                "the build cannot continue a builder call from {:?}/{:?}",
                state.phase, state.stage
            ));
            state.phase = Phase::Failed;
            state.stage = None;
            on(state);
            return Outcome::Failed;
        }
        let command = match self.call_builder(job, state).await {
            Ok(content) => match self.gate(state, Stage::Response, content).await {
                Some(c) => c,
                None => return self.pause(state, on),
            },
            Err(reason) => fail(state, reason),
        };
        self.drive(job, state, command, on).await
    }

    /// Resolves the pending gate with a person's decision and continues;
    /// `bindings` answers a pending question of which file feeds which
    /// input, `plan` is the person's edit of a proposed plan they approve.
    #[allow(clippy::too_many_arguments)] // the gate's whole answer, as the request has it
    pub async fn resume(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
        approve: bool,
        feedback: Option<String>,
        bindings: std::collections::BTreeMap<String, String>,
        plan: Option<String>,
        on: OnChange<'_>,
    ) -> Outcome {
        state.pending_gate = false;
        if let Some(proposed) = state.pending_plan.take() {
            return self
                .resume_plan(job, state, proposed, (approve, feedback, plan), on)
                .await;
        }
        if let Some(questions) = state.pending_binding.take() {
            let answered = super::inputs::check_answers(&questions, &bindings);
            if !approve || answered.is_err() {
                let why = answered.err().unwrap_or_else(|| "you stopped it".into());
                state.reason = Some(format!(
                    "the build needs to know which of your files feeds which input, and could not tell by their names ({why}); \
                     send a message naming the file for each input to retry"
                ));
                return self.drive(job, state, Command::GiveUp, on).await;
            }
            state.bindings.extend(bindings);
            on(state);
            let Some(command) = self.test_step(job, state).await else {
                return self.pause(state, on);
            };
            return self.drive(job, state, command, on).await;
        }
        if let Some(missing) = state.pending_environment.take() {
            if !approve {
                state.reason = Some(format!(
                    "you stopped the build while it waited for what this machine is missing: {}{}; \
                     once it is fixed, retry the build (its script is kept)",
                    missing.detail,
                    missing
                        .fix
                        .as_deref()
                        .map(|f| format!(" (fix: {f})"))
                        .unwrap_or_default()
                ));
                state.environment_failed = true;
                return self.drive(job, state, Command::GiveUp, on).await;
            }
            // Checked again: still missing, the build waits again.
            on(state);
            let Some(command) = self.test_step(job, state).await else {
                return self.pause(state, on);
            };
            return self.drive(job, state, command, on).await;
        }
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
                Action::RunTest => match self.review_before_test(job, state, on).await {
                    plan_review::Reviewed::Revise => Command::Reject,
                    plan_review::Reviewed::Test => match self.test_step(job, state).await {
                        Some(c) => c,
                        None => return self.pause(state, on),
                    },
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
        // The approved plan goes with the conversation, as the person's words.
        let mut history = job.history.clone();
        if let Some(plan) = &state.plan {
            history.push(super::plan::approved_message(plan));
        }
        ProfileContext {
            extracts: job.extracts.clone(),
            history,
            previous: state.spec.clone(),
            feedback: state.feedback.clone(),
            iteration: state.iteration,
            house_rules: job.house_rules.clone(),
            current: job.current.clone(),
            sizes: Some(self.sizes(job)),
            out_of_memory: state.out_of_memory,
            compact: None,
        }
    }

    /// The input files' sizes as they are on disk now, and the limits the
    /// test run gets.
    fn sizes(&self, job: &BuildJob) -> crate::conversation::sizes::RunSizes {
        let bytes = job
            .input_files
            .iter()
            .filter_map(|f| Some((f.filename.clone(), std::fs::metadata(&f.path).ok()?.len())))
            .collect();
        crate::conversation::sizes::RunSizes {
            bytes,
            limits: self.limits.clone(),
        }
    }

    /// The builder's prompt, its extracts reduced to fit the model's
    /// context window (what was left out goes into `state`); refused with
    /// the numbers when it cannot fit.
    async fn request(&self, job: &BuildJob, state: &mut BuildState) -> Result<LlmRequest, String> {
        let window = self.provider.context_window().await;
        let budget = self.budgets.max_tokens(&maskflow_llm::Role::Builder, None);
        // Short of room, the sizes go, the packages are named in a line,
        // and the schema's written copy goes where the back end gives the
        // model the schema itself.
        let native = self.provider.takes_schema();
        let mut optional = vec![crate::fit::SIZES_LEFT_OUT, crate::fit::PACKAGES_LEFT_OUT];
        if native {
            optional.push(crate::fit::SCHEMA_LEFT_OUT);
        }
        let build = |extracts: &Value, full: bool| {
            let mut ctx = self.context(job, state);
            ctx.extracts = extracts.clone();
            if !full {
                ctx.sizes = None;
                ctx.compact = Some(crate::conversation::prompts::Compact {
                    schema_by_reference: native,
                });
            }
            if state.phase == Phase::Generate {
                self.profile.generation_prompt(&ctx)
            } else {
                self.profile.revision_prompt(&ctx)
            }
        };
        let (request, reduction) = crate::fit::fit_request_with(
            &job.extracts,
            window,
            budget,
            self.provider.model(),
            &optional,
            &build,
        )
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
        // The call's identity, fixed before its repair: a manual prompt of
        // it answered after a restart goes to this call only (`call`).
        let tag = super::call::builder(
            state.phase,
            state.iteration,
            state.feedback.as_deref(),
            state.spec.as_ref(),
        );
        let tagged = self.provider.clone().tagged(tag.for_the_call());
        let mut attempt = 0;
        let (reply, result) = loop {
            attempt += 1;
            // A revision and the second try are Maskflow's own repairs:
            // nobody can confirm them, so a block says what to do instead.
            let automatic = state.phase != Phase::Generate || attempt > 1;
            let reply = tagged
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
}
