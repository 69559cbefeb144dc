//! The profile contract (seed 001): a profile builds prompts and processes
//! replies for one kind of build, purely — strings and structs in, a
//! [`ProcessingResult`] with a [`WritePlan`] out. It never reads or writes
//! files, calls a provider or changes the build's state; the engine does.
//! A new kind of build is a new file implementing [`Profile`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::spec::WorkflowSpec;
use maskflow_llm::{ChatMessage, LlmRequest};

/// One file a profile asks the engine to write, relative to the
/// iteration's `code/` folder (a file name or a relative path).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct WriteOp {
    /// Relative path, e.g. `script.py`.
    pub path: String,
    /// The file's contents.
    pub content: String,
}

/// The files a profile asks the engine to write.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct WritePlan {
    /// In order.
    pub writes: Vec<WriteOp>,
}

/// Whether processing found a usable result.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProcessingStatus {
    /// Usable.
    Success,
    /// Not usable (the metadata says why).
    Failed,
}

/// What a profile returns from processing a reply or a test report.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ProcessingResult {
    /// Usable or not.
    pub status: ProcessingStatus,
    /// Files for the engine to write.
    pub write_plan: Option<WritePlan>,
    /// Phase-specific data (the parsed workflow, a verdict, a reason).
    pub metadata: Value,
}

/// What a profile knows about the build (gathered by the engine). Only
/// masked or LLM-written material: the prompts are built from it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileContext {
    /// The approved, masked extracts.
    pub extracts: Value,
    /// The conversation so far.
    pub history: Vec<ChatMessage>,
    /// The workflow of the previous iteration, when revising.
    pub previous: Option<WorkflowSpec>,
    /// Why a revision is needed: a masked test failure or a reviewer's feedback.
    pub feedback: Option<String>,
    /// 1-based.
    pub iteration: u32,
    /// The user's house rules (all sections; the profile picks what applies).
    pub house_rules: crate::conversation::house_rules::HouseRules,
    /// The workflow as it stands when an edit or a repair starts from one.
    pub current: Option<WorkflowSpec>,
    /// The input files' sizes and the run's limits, for the builder.
    pub sizes: Option<crate::conversation::sizes::RunSizes>,
    /// Whether the run being repaired was stopped at the memory limit.
    pub out_of_memory: bool,
    /// How the prompt is cut when it is short of room (`None`: in full).
    pub compact: Option<crate::conversation::prompts::Compact>,
}

/// The outcome of the auto-test, as the profile sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TestOutcome {
    /// Whether the script ran and exited 0.
    pub passed: bool,
    /// How the run ended, in words (no data).
    pub summary: String,
    /// The error output, already masked.
    pub masked_error: String,
    /// The outputs' names (no contents).
    pub output_names: Vec<String>,
    /// Which uploaded files fed each input.
    pub inputs: std::collections::BTreeMap<String, Vec<String>>,
    /// The output tables' shapes in words (counts only, see
    /// [`crate::builder::output_shape`]); `None` when no output is a table.
    pub output_shape: Option<String>,
}

/// A kind of build.
pub trait Profile: Send + Sync + std::fmt::Debug {
    /// The profile's key, e.g. `"script-builder"`.
    fn key(&self) -> &'static str;

    /// The first prompt.
    fn generation_prompt(&self, ctx: &ProfileContext) -> LlmRequest;

    /// Processes the builder's reply; `Failed` with `metadata.reason` when
    /// it cannot be used (the engine asks once more with that reason).
    fn process_generation(&self, ctx: &ProfileContext, reply: &str) -> ProcessingResult;

    /// Judges the auto-test: `metadata.verdict` is `"pass"` or `"fail"`,
    /// `metadata.feedback` what a revision must fix, `metadata.note` the
    /// review note the engine writes to `review-verdict.md`.
    fn process_review(&self, ctx: &ProfileContext, test: &TestOutcome) -> ProcessingResult;

    /// The revision prompt (`ctx.previous` and `ctx.feedback` are set).
    fn revision_prompt(&self, ctx: &ProfileContext) -> LlmRequest;

    /// Processes the revised reply (as [`Profile::process_generation`]).
    fn process_revision(&self, ctx: &ProfileContext, reply: &str) -> ProcessingResult {
        self.process_generation(ctx, reply)
    }

    /// The message that sends an unusable reply back once.
    fn repair_prompt(&self, reason: &str) -> String {
        crate::conversation::prompts::repair_prompt(reason)
    }
}
