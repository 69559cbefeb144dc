//! The flow engine (seeds 002, 003, 004): multi-step flows on disk with
//! loops, branches, fan-out, human gates, contracts and checkpoints that
//! survive a crash.
//!
//! - [`definition`]: the strict schema of both shapes, with JSON-path errors.
//! - [`compile`]: both shapes → one graph program.
//! - [`expr`] and [`template`]: the condition language and `{{path}}`.
//! - [`prompt`]: layered prompts and reply parsers (pure).
//! - [`agents`]: flows, agents and commands read from the data folder.
//! - [`state`]: the run-status table and the checkpointed run state.
//! - [`store`]: the flow tables (migration 4) and the one-transaction step commit.
//! - [`checkpoint`]: checkpoint deltas and the policy that keeps them small.
//! - [`script`]: the "run a script" contract.
//! - [`error`]: [`FlowError`], why a step failed, with a code, and
//!   [`error::Error`], why a call on the flows API failed.
//! - [`turn`]: the typed pending state, turn metadata and roles the engine stores.
//! - [`engine`]: [`FlowEngine`], which alone does I/O: database, providers, scripts.
//!
//! It must never depend on the app (maskflow-core), its store, the network
//! or a shell: it uses the LLM back ends (without their network feature),
//! the privacy guard, the extractors, the clock and the table crate, and
//! reaches the app only through the ports it is handed when it is made
//! ([`FlowStorage`], and [`FlowPorts`]: `AgentBackends`, `ScriptRunner`,
//! [`FlowEvents`]) — checked by `scripts/structure.py`. An agent's back end
//! is a `maskflow_privacy::GuardedProvider` by type, so no engine calls an
//! LLM around the guard and the ledger.

#![deny(missing_docs)]

pub mod agents;
pub mod bundle;
pub mod bundle_seed;
pub mod checkpoint;
pub mod compile;
pub mod definition;
pub mod engine;
pub mod error;
pub mod events;
pub mod expr;
pub mod known_agents;
pub mod mermaid;
pub mod prompt;
pub mod script;
pub mod state;
pub mod steer;
pub mod storage;
pub mod store;
pub mod template;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod turn;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use engine::{
    FlowCall, FlowConfig, FlowDatabase, FlowEngine, FlowPorts, RunHandle, Synchronous,
    prompt_vocabulary,
};
pub use error::{FlowError, FlowErrorCode};
pub use events::{FlowEvent, FlowEvents, ToolPhase};
pub use state::RunStatus;
pub use storage::FlowStorage;

/// Deepest subflow nesting: a run at this depth may not start another subflow.
pub const MAX_SUBFLOW_DEPTH: u32 = 3;
/// How many earlier messages of an agent conversation are sent with each prompt.
pub const HISTORY_LIMIT: usize = 40;

/// One flow of `GET /api/flows`.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlowSummary {
    /// The file stem.
    pub name: String,
    /// The description ("" when missing).
    pub description: String,
    /// The file is invalid and cannot run.
    pub disabled: bool,
    /// Why, when disabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `GET /api/flows`.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlowList {
    /// Sorted by name.
    pub flows: Vec<FlowSummary>,
}

/// `POST /api/flows/{name}/run`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StartFlow {
    /// The folder scripts run in (must exist).
    #[serde(default)]
    pub working_folder: Option<String>,
    /// Resume this run instead of starting a new one.
    #[serde(default, rename = "conversationId")]
    pub conversation_id: Option<String>,
    /// Resume at this step path (zero-based indices through nested `steps`).
    #[serde(default, rename = "resumeStepPath")]
    pub resume_step_path: Option<Vec<i64>>,
}

/// The 202 reply of a run, a resume or an answer.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", ts(rename = "FlowStarted"))]
pub struct Started {
    /// `started` (or `stopped` when an answer stopped the run).
    pub status: String,
    /// The flow.
    pub flow_name: String,
    /// The run (seed 004's flow conversation).
    pub conversation_id: String,
    /// This execution of it.
    pub inflight_id: String,
    /// The back end (or model) of the flow's first agent.
    pub model_id: String,
}

/// One run in a list.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunSummary"))]
pub struct RunSummary {
    /// The run.
    pub conversation_id: String,
    /// The flow.
    pub flow_name: String,
    /// `Flow: <name>` unless renamed.
    pub title: String,
    /// Where it is.
    pub status: RunStatus,
    /// Hidden and frozen.
    pub archived: bool,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Derived, not stored: the status says `running` but no live Maskflow
    /// process runs it (its owner was killed or crashed); resume it directly.
    pub interrupted: bool,
    /// Derived, not stored: the pid of another live Maskflow process that
    /// runs it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_elsewhere_pid: Option<u32>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// `GET /api/flows/{name}/runs`.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunList"))]
pub struct RunList {
    /// Newest first.
    pub runs: Vec<RunSummary>,
}

/// Seed 004's `flags.flow`: what a resume needs.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlowFlags {
    /// The last completed step's path.
    pub step_path: Vec<usize>,
    /// The path of the step that runs next (absent when none is left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_step_path: Option<Vec<usize>>,
    /// Open loops: `{loopStepPath, iteration}`.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub loop_stack: Vec<state::LoopFrame>,
    /// `agentType:identifier` → conversation id.
    pub agent_conversations: BTreeMap<String, String>,
}

/// `flags` of a run.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunFlags"))]
pub struct RunFlags {
    /// The resume state.
    pub flow: FlowFlags,
}

/// One transcript turn.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TurnView {
    /// `assistant`, `user` or `system`.
    pub role: String,
    /// The text.
    pub content: String,
    /// RFC 3339.
    pub created_at: String,
    /// The step it belongs to (seed 004's `command`).
    pub command: turn::StepMeta,
    /// Seed 003's `suggested_tags` of an agent's reply (none for other turns).
    pub suggested_tags: Vec<String>,
}

impl TurnView {
    /// The view of a stored turn: an agent's reply also shows the tags it
    /// suggested (seed 003's `suggested_tags`, in its JSON or `## Metadata`).
    pub fn of(role: &str, content: String, created_at: String, command: turn::StepMeta) -> Self {
        let agent = command.place().is_some_and(|p| p.agent_type.is_some());
        let suggested_tags = if role == "assistant" && agent {
            prompt::parse_output(&content)
                .get("suggested_tags")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        Self {
            role: role.to_owned(),
            content,
            created_at,
            command,
            suggested_tags,
        }
    }
}

/// `GET /api/flow-runs/{conversationId}`.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunView"))]
pub struct RunView {
    /// The run.
    pub conversation_id: String,
    /// The flow.
    pub flow_name: String,
    /// Title.
    pub title: String,
    /// Where it is.
    pub status: RunStatus,
    /// Hidden and frozen.
    pub archived: bool,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Derived, not stored: the status says `running` but no live Maskflow
    /// process runs it (its owner was killed or crashed); resume it directly.
    pub interrupted: bool,
    /// Derived, not stored: the pid of another live Maskflow process that
    /// runs it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_elsewhere_pid: Option<u32>,
    /// The resume state.
    pub flags: RunFlags,
    /// The transcript.
    pub turns: Vec<TurnView>,
    /// What a waiting run asks: `{kind: "gate", prompt, context, options}` or
    /// `{kind: "attention", error, options: ["retry", "skip", "stop"]}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub pending: Option<Value>,
    /// The run that started this one as a subflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The folder its scripts run in, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub working_folder: Option<String>,
    /// A single step's retry that runs first when the run goes on (it
    /// stopped, failed or was interrupted with the retry due).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub retry_due: Option<RetryDue>,
    /// The steps a resume may start at (`resumeStepPath`), in the flow's order.
    pub resume_steps: Vec<ResumeStep>,
    /// What a resume starts from (seed 002's `ResumeContext`): the steps
    /// done with their times, the last step's output, a fan-out's counts.
    pub resume: ResumeContext,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// What a run that goes on starts from (seed 002's `ResumeContext`).
#[derive(Serialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResumeContext {
    /// The steps completed, with when and how often, in the order they first completed.
    pub completed_steps: Vec<state::CompletedStep>,
    /// The last step's output (`null` before the first step); held back
    /// (and `lastOutputLocal` set) when it holds the user's local data.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub last_output: Value,
    /// The last output came from local data and is shown in the transcript only.
    pub last_output_local: bool,
    /// The fan-out in progress or waiting for its join, if any.
    pub fan_out: Option<FanOutSummary>,
}

/// A fan-out's counts on resume: how many items, done, failed and to run.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FanOutSummary {
    /// The foreach step's label.
    pub step: String,
    /// Its step path.
    pub step_path: Vec<usize>,
    /// Items in all.
    pub total: usize,
    /// Items that succeeded.
    pub completed: usize,
    /// Items that failed (those whose retry is due among them).
    pub failed: usize,
    /// Items still to run (timed-out ones aside).
    pub remaining: usize,
}

/// A step of a run's flow that a resume may start at.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResumeStep {
    /// Seed 004's step path, the `resumeStepPath` that starts there.
    pub step_path: Vec<usize>,
    /// The step's label.
    pub label: String,
}

/// A single step's retry that is due: shown before the run goes on and runs it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RetryDue {
    /// The step's label.
    pub step: String,
    /// Its step path.
    pub step_path: Vec<usize>,
    /// The attempt the retry will be (2 for the first retry).
    pub attempt: u32,
    /// The attempts the step gets before it asks the person.
    pub of: u32,
    /// What the retry is told (the failed check's message).
    pub feedback: String,
    /// `step "X" will be retried (attempt n of m)`.
    pub message: String,
}

/// `POST /api/flow-runs/{conversationId}/gate`.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GateAnswer {
    /// The option's label, i.e. the person's decision (or `retry`, `skip`,
    /// `stop` for a run that needs attention); `decision` is accepted too.
    #[serde(alias = "decision")]
    pub option: String,
    /// Text, for options that require it.
    #[serde(default)]
    pub input: Option<String>,
    /// The person's result (text or JSON), which later steps read like an
    /// agent's output (`output.result`, and an object's own keys).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    #[cfg_attr(feature = "ts", ts(optional, type = "unknown"))]
    pub result: Option<Value>,
}

/// `PATCH /api/flow-runs/{conversationId}`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunPatch"))]
pub struct RunPatch {
    /// New title.
    #[serde(default)]
    pub title: Option<String>,
    /// Archive or unarchive.
    #[serde(default)]
    pub archived: Option<bool>,
}
