//! What a build works on and reports: the job (extracts, conversation,
//! files, folders), the persisted [`BuildState`], the auto-test's
//! [`TestReport`] and how a stretch of the build ended.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::builder::inputs::{BindingQuestion, InputFile};
use crate::builder::table::{Phase, Stage};
use crate::conversation::spec::WorkflowSpec;
use maskflow_llm::ChatMessage;
use maskflow_pyenv::{EnvironmentInfo, Lock, PackageRequest};
use maskflow_runner::RunResult;

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
    /// Whether the last test run was stopped at the memory limit (the
    /// revision is told the limit and the inputs' sizes, issue 43).
    #[serde(default)]
    pub out_of_memory: bool,
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
    /// What this machine is missing for the script's test — Python, or
    /// `uv` for a script that needs packages — with its fix: the build
    /// waits here (the gate is pending while this is set) and goes on once
    /// it is fixed (issue 44). A script of the standard library alone
    /// never waits for `uv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_environment: Option<crate::needs::PreflightItem>,
    /// The pinned package set of the latest script (stored with the version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<Lock>,
    /// Whether the build stopped because its environment or test run could
    /// not be made (uv missing, the index unreachable): the script is not at
    /// fault, so it can be retried as it is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub environment_failed: bool,
    /// Which file the user said feeds which input (input → file name),
    /// where the names could not settle it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bindings: BTreeMap<String, String>,
    /// Inputs waiting for the user to say which file feeds them (the gate
    /// is pending while this is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_binding: Option<Vec<BindingQuestion>>,
    /// The plan the builder proposed, waiting for a person to approve or
    /// edit it (the gate is pending while this is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_plan: Option<String>,
    /// The plan approved (maybe edited), which the builder follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The AI reviewer's reviews so far, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<crate::builder::review::ReviewNote>,
    /// The iteration whose script was reviewed last (0: none).
    #[serde(default)]
    pub reviewed_iteration: u32,
    /// Revisions the reviewer asked for (one at most is made).
    #[serde(default)]
    pub review_revisions: u32,
    /// The plan or review call in flight, so a restart while its manual
    /// prompt waited makes the same call again (which takes the answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asking: Option<Asking>,
}

/// A plan or review call of a build, as its state remembers it while the
/// call is in flight.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Asking {
    /// The planner, making the plan (again, with the person's feedback).
    Plan {
        /// The person's feedback to the plan it replaces.
        feedback: Option<String>,
    },
    /// The AI reviewer, reading the proposed plan.
    PlanReview {
        /// The plan under review.
        proposed: String,
    },
    /// The AI reviewer, reading the iteration's script before its test.
    ScriptReview,
}

impl BuildState {
    /// Whether the build failed on its environment with a script to retry.
    pub fn environment_failed(&self) -> bool {
        self.environment_failed && self.spec.is_some()
    }
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
            out_of_memory: false,
            spec: None,
            report: None,
            reason: None,
            context_reduction: None,
            approved_packages: Vec::new(),
            pending_packages: None,
            pending_environment: None,
            lock: None,
            environment_failed: false,
            bindings: BTreeMap::new(),
            pending_binding: None,
            pending_plan: None,
            plan: None,
            reviews: Vec::new(),
            reviewed_iteration: 0,
            review_revisions: 0,
            asking: None,
        }
    }
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
    /// The user's house rules (seed 001's standards bundle).
    pub house_rules: crate::conversation::house_rules::HouseRules,
    /// The workflow as it stands (the version an edit starts from, else the
    /// approved one): the builder is shown its script, inputs and outputs.
    pub current: Option<WorkflowSpec>,
    /// The workflow's build choices: plan first, AI review, AI approval.
    pub options: crate::builder::options::BuildOptions,
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
