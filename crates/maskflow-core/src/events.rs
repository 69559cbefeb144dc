//! Events the service publishes while it works (status changes, streamed
//! message text), so shells can push them to the UI instead of polling.

use serde::Serialize;
use tokio::sync::broadcast;

use crate::flows::{FlowEvent, FlowEvents};
use crate::providers::manual::{ManualEvent, ManualEvents};
use crate::versions::Status;
use crate::views::{BuildView, MessageView};

/// How many events a slow subscriber may fall behind before it misses some.
pub const CAPACITY: usize = 1024;

/// Something that happened.
#[derive(Serialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(optional_fields)]
pub enum Event {
    /// A version's status changed.
    StatusChanged {
        /// The workflow.
        workflow_id: String,
        /// The version.
        version_id: String,
        /// Its new status.
        status: Status,
        /// Why, for `rejected` and `failed`.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A piece of an LLM reply as it streams in.
    MessageDelta {
        /// The workflow.
        workflow_id: String,
        /// Which role is replying: `validator`, `clarifier`, `builder`.
        role: String,
        /// The new text.
        delta: String,
    },
    /// A message was added to a conversation.
    Message {
        /// The workflow.
        workflow_id: String,
        /// The message.
        message: MessageView,
    },
    /// Progress of reading a large file (the exact row count), in bytes.
    ExtractProgress {
        /// The upload's id (`file_…`).
        file_id: String,
        /// The file's name.
        filename: String,
        /// Bytes read so far.
        #[ts(type = "number")]
        done: u64,
        /// The file's size in bytes.
        #[ts(type = "number")]
        total: u64,
    },
    /// A flow run's transcript turn was committed.
    FlowTurn {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// The turn, with its step metadata.
        turn: crate::flows::TurnView,
    },
    /// A flow run's status changed (seed 004's `turn_final` for stopped, failed, completed).
    FlowStatus {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// Its new status.
        status: crate::flows::RunStatus,
        /// Why, when failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A piece of a flow agent's reply as it streams in.
    FlowDelta {
        /// The run.
        conversation_id: String,
        /// The new text.
        delta: String,
    },
    /// A role's prompt left part of the extracts out to fit the model's
    /// context window (the builder's also shows in its `BuildChanged`).
    ContextReduced {
        /// The workflow.
        workflow_id: String,
        /// What was left out, and the numbers.
        reduction: crate::fit::ContextReduction,
    },
    /// A workflow was deleted.
    WorkflowDeleted {
        /// The workflow.
        workflow_id: String,
    },
    /// A version's build moved (phase, stage, iteration, a gate waiting).
    BuildChanged {
        /// The workflow.
        workflow_id: String,
        /// The version being built.
        version_id: String,
        /// Its build's position.
        build: BuildView,
    },
    /// A run of a workflow started or ended.
    RunChanged {
        /// The workflow.
        workflow_id: String,
        /// The run.
        run_id: String,
        /// `running`, or how it ended.
        status: String,
    },
    /// A Python environment is being made (a line of progress, or its end).
    EnvironmentProgress {
        /// The workflow whose build or run needs it.
        #[serde(skip_serializing_if = "Option::is_none")]
        workflow_id: Option<String>,
        /// The version being built, when it is a build.
        #[serde(skip_serializing_if = "Option::is_none")]
        version_id: Option<String>,
        /// `resolving`, `creating`, `installing`, `ready` or `failed`.
        stage: String,
        /// What happens, in words (uv's own lines).
        message: String,
    },
    /// The manual back end waits for the user to paste an answer.
    ManualPrompt {
        /// The prompt to show.
        prompt: crate::providers::manual::ManualPrompt,
    },
    /// A manual prompt was answered, dismissed or abandoned.
    ManualPromptClosed {
        /// `mp_…`
        id: String,
        /// `answered`, `dismissed` or `abandoned`.
        reason: String,
    },
    /// An LLM call is about to be sent (its ledger row is written ahead);
    /// the `ledger_entry` event says how it ended.
    LlmCallStarted {
        /// `call_…`, the ledger row's id.
        id: String,
        /// The role asking: `validator`, `builder`, `agent:<name>`…
        role: String,
        /// The model asked.
        model: String,
        /// The workflow, when the call is for one.
        #[serde(skip_serializing_if = "Option::is_none")]
        workflow_id: Option<String>,
    },
    /// An outbound LLM request was recorded in the ledger.
    LedgerEntry {
        /// The ledger row.
        entry: crate::privacy::ledger::LedgerEntry,
    },
}

/// The sending side of the event stream.
#[derive(Clone, Debug)]
pub struct EventBus {
    tx: broadcast::Sender<Event>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(CAPACITY).0,
        }
    }
}

impl EventBus {
    /// Publishes an event; nobody listening is fine.
    pub fn publish(&self, event: Event) {
        let _ = self.tx.send(event);
    }

    /// A new receiver of every later event.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.tx.subscribe()
    }
}

/// The manual back end announces through the bus: its events become the wire
/// `ManualPrompt` and `ManualPromptClosed`.
impl ManualEvents for EventBus {
    fn publish(&self, event: ManualEvent) {
        let event = match event {
            ManualEvent::Prompt(prompt) => Event::ManualPrompt { prompt },
            ManualEvent::Closed { id, reason } => Event::ManualPromptClosed { id, reason },
        };
        let _ = self.tx.send(event);
    }
}

/// The flow engine announces through the bus: its events become the wire
/// `FlowTurn`, `FlowStatus` and `FlowDelta`.
impl FlowEvents for EventBus {
    fn publish(&self, event: FlowEvent) {
        let event = match event {
            FlowEvent::Turn {
                conversation_id,
                flow_name,
                turn,
            } => Event::FlowTurn {
                conversation_id,
                flow_name,
                turn,
            },
            FlowEvent::Status {
                conversation_id,
                flow_name,
                status,
                error,
            } => Event::FlowStatus {
                conversation_id,
                flow_name,
                status,
                error,
            },
            FlowEvent::Delta {
                conversation_id,
                delta,
            } => Event::FlowDelta {
                conversation_id,
                delta,
            },
        };
        let _ = self.tx.send(event);
    }
}
