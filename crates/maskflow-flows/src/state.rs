//! A flow run's durable state: the status table (one declarative state
//! machine: running, waiting, needs_attention, stopped, completed, failed) and
//! the checkpointed [`RunState`] (seed 004's `stepPath`, `loopStack`,
//! `agentConversations`, plus outputs, retry, fan-out and loop counters).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use maskflow_table::{Edge, Table};

/// The checkpoint format written by this version.
pub const FORMAT: u32 = 1;

/// Where a run is.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", ts(rename = "FlowRunStatus"))]
pub enum RunStatus {
    /// A step is being run (or the process running it died; then it can be resumed).
    Running,
    /// Waiting at a human gate (or for a subflow that waits).
    Waiting,
    /// A postcondition failed twice or a join found failures: retry, skip or stop.
    NeedsAttention,
    /// Stopped by the user; can be resumed.
    Stopped,
    /// Finished.
    Completed,
    /// A step failed; can be resumed.
    Failed,
}

impl RunStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Waiting => "waiting",
            RunStatus::NeedsAttention => "needs_attention",
            RunStatus::Stopped => "stopped",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
        }
    }

    /// Parses a stored status.
    pub fn parse(s: &str) -> Option<RunStatus> {
        ALL.iter().copied().find(|st| st.as_str() == s)
    }
}

/// Every status.
pub const ALL: [RunStatus; 6] = [
    RunStatus::Running,
    RunStatus::Waiting,
    RunStatus::NeedsAttention,
    RunStatus::Stopped,
    RunStatus::Completed,
    RunStatus::Failed,
];

/// What happens to a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunEvent {
    /// A step finished; the run goes on.
    StepDone,
    /// A gate was reached.
    Wait,
    /// A failure needs the user.
    Escalate,
    /// The user answered a gate or a needs-attention question.
    Answer,
    /// The user stopped the run.
    Stop,
    /// The last step finished.
    Complete,
    /// A step failed.
    Fail,
    /// The run is resumed (after a stop, a failure, a crash, or from another step path).
    Resume,
}

use RunEvent as E;
use RunStatus as S;

/// The legal moves: (from, event, to).
pub const TRANSITIONS: &[(RunStatus, RunEvent, RunStatus)] = &[
    (S::Running, E::StepDone, S::Running),
    (S::Running, E::Wait, S::Waiting),
    (S::Running, E::Escalate, S::NeedsAttention),
    (S::Running, E::Stop, S::Stopped),
    (S::Running, E::Complete, S::Completed),
    (S::Running, E::Fail, S::Failed),
    (S::Running, E::Resume, S::Running),
    (S::Waiting, E::Answer, S::Running),
    (S::Waiting, E::Stop, S::Stopped),
    (S::Waiting, E::Resume, S::Running),
    (S::NeedsAttention, E::Answer, S::Running),
    (S::NeedsAttention, E::Stop, S::Stopped),
    (S::NeedsAttention, E::Resume, S::Running),
    (S::Stopped, E::Resume, S::Running),
    (S::Failed, E::Resume, S::Running),
    (S::Completed, E::Resume, S::Running),
];

/// A move the table does not allow.
#[derive(thiserror::Error, Debug, Clone, Copy, PartialEq, Eq)]
#[error("a {} flow run cannot {event:?}", from.as_str())]
pub struct InvalidRunTransition {
    /// The status.
    pub from: RunStatus,
    /// The event.
    pub event: RunEvent,
}

/// [`TRANSITIONS`] as a table: its lookup, drawing and walk.
pub const TABLE: Table<RunStatus, RunEvent, RunStatus> = Table::new(TRANSITIONS);

/// The status after `event`, or why it is not allowed.
pub fn apply(from: RunStatus, event: RunEvent) -> Result<RunStatus, InvalidRunTransition> {
    TABLE
        .apply(from, event)
        .ok_or(InvalidRunTransition { from, event })
}

/// The table as a Mermaid state diagram (docs and UI).
pub fn mermaid() -> String {
    TABLE.mermaid(&["[*] --> running".into()], |from, event, to| Edge {
        from: from.as_str().into(),
        to: to.as_str().into(),
        label: format!("{event:?}"),
    })
}

/// One open loop.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LoopFrame {
    /// The `startLoop` step's path.
    pub loop_step_path: Vec<usize>,
    /// 1 on the first pass.
    pub iteration: u32,
    /// The loop's node in the compiled program.
    pub node: usize,
}

/// A postcondition failure waiting for its retry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PendingRetry {
    /// The node.
    pub node: usize,
    /// The failure, sent back as feedback.
    pub error: String,
    /// Attempts that failed.
    pub attempt: u32,
}

/// A person's answer to an agent step that waited for one (seed 003's ESCALATE or HOLD).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AgentAnswer {
    /// The agent step's node.
    pub node: usize,
    /// What the person wrote.
    pub text: String,
}

/// One foreach item's result.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ItemResult {
    /// Whether it succeeded.
    pub ok: bool,
    /// Its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Retries started so far (seed 002's `retryCount`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_count: u32,
    /// A retry that is due and has not finished: seen on resume, it is
    /// shown to the person instead of being run silently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<ItemRetry>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A foreach item's retry that is due.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ItemRetry {
    /// What the retry is told (a failed postcondition's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// A person chose to retry it after the run had stopped with it due.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
    /// The item's agent failed it or asked for a person (rather than its
    /// retries running out on their own): what the wait says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_agent: bool,
}

/// A fan-out in progress (or finished, until its join reads it).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ForeachProgress {
    /// The foreach node.
    pub node: usize,
    /// How many items.
    pub total: usize,
    /// Finished items by index.
    pub results: BTreeMap<usize, ItemResult>,
    /// When its first item started (the engine's clock, ms): a join's
    /// `timeoutSeconds` counts from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// Items the join's timeout cut off (not started, or not done, in time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timed_out: Vec<usize>,
}

/// Everything needed to resume a run, committed after every step.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct RunState {
    /// [`FORMAT`].
    pub format: u32,
    /// The node to run next (`None`: nothing left).
    pub cursor: Option<usize>,
    /// The last completed step's path.
    pub step_path: Vec<usize>,
    /// Open loops, outermost first.
    pub loop_stack: Vec<LoopFrame>,
    /// `agentType:identifier` → conversation id.
    pub agent_conversations: BTreeMap<String, String>,
    /// conversation id → agent, to refuse a conversation used by another agent.
    pub conversation_agents: BTreeMap<String, String>,
    /// `input.*`
    pub input: Map<String, Value>,
    /// The last step's output.
    pub output: Value,
    /// Outputs of steps with an id.
    pub steps: Map<String, Value>,
    /// Context roots holding values computed from local data (masked before any prompt).
    pub local: BTreeSet<String>,
    /// Times each guarded branch was taken.
    pub edge_counts: BTreeMap<String, u32>,
    /// A postcondition retry in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_retry: Option<PendingRetry>,
    /// A fan-out in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreach: Option<ForeachProgress>,
    /// The next join keeps going with the items that succeeded (the user chose skip).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub join_skip_failures: bool,
    /// The subflow run in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child: Option<String>,
    /// The last gate decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<Value>,
    /// A person's answer to an agent that asked for one, told to it when its step runs again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_answer: Option<AgentAnswer>,
    /// Steps completed so far.
    pub steps_done: u64,
    /// Each step the run has completed, with when (seed 002's
    /// `completedSteps`), in the order they first completed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed_steps: Vec<CompletedStep>,
}

/// A step a run has completed: its path and label, when it last completed
/// (RFC 3339) and how many times (a loop's steps repeat).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompletedStep {
    /// Seed 004's step path.
    pub step_path: Vec<usize>,
    /// The step's label.
    pub label: String,
    /// When it last completed (RFC 3339).
    pub completed_at: String,
    /// How many times it completed.
    pub times: u32,
}

impl RunState {
    /// Records that the step at `path` completed at `at`: one row per step,
    /// so the list stays as long as the flow however often a loop runs.
    pub fn complete_step(&mut self, path: &[usize], label: &str, at: &str) {
        match self
            .completed_steps
            .iter_mut()
            .find(|c| c.step_path == path)
        {
            Some(c) => {
                c.completed_at = at.to_owned();
                c.times = c.times.saturating_add(1);
            }
            None => self.completed_steps.push(CompletedStep {
                step_path: path.to_vec(),
                label: label.to_owned(),
                completed_at: at.to_owned(),
                times: 1,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_legal_and_nothing_else() {
        let events = [
            E::StepDone,
            E::Wait,
            E::Escalate,
            E::Answer,
            E::Stop,
            E::Complete,
            E::Fail,
            E::Resume,
        ];
        // The walk also refuses a (status, event) pair listed twice.
        let walk = TABLE.walk(&ALL, &events, apply).expect("the table walks");
        assert_eq!(walk.rows, TRANSITIONS.len());
        for (from, event, err) in &walk.refused {
            assert_eq!(
                *err,
                InvalidRunTransition {
                    from: *from,
                    event: *event
                }
            );
            assert!(err.to_string().contains(from.as_str()));
        }
        assert_eq!(walk.rows + walk.refused.len(), ALL.len() * events.len());
        for s in ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
        }
        assert!(mermaid().contains("running --> waiting: Wait"));
        assert!(mermaid().starts_with("stateDiagram-v2\n    [*] --> running\n"));
    }
}
