//! What the flow engine announces, and the sink it announces through: the
//! app turns each [`FlowEvent`] into its wire event, so flows need not know
//! the app's event bus. Seed 004's WebSocket contract (`user_turn`,
//! `assistant_delta`, `tool_event`, `turn_final`) is made from these.

use serde_json::Value;

use super::turn::StepMeta;
use super::{RunStatus, TurnView};

/// One announcement of the flow engine.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowEvent {
    /// A run's transcript turn was committed.
    Turn {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// The turn, with its step metadata.
        turn: TurnView,
    },
    /// A step's prompt is being sent to its agent (seed 004's `user_turn`).
    Prompt {
        /// The run.
        conversation_id: String,
        /// The prompt's text as sent (masked where the step's data is).
        content: String,
        /// RFC 3339.
        created_at: String,
        /// The step metadata, as the turns carry it.
        command: StepMeta,
    },
    /// A script step started or ended (seed 004's `tool_event`).
    Tool {
        /// The run.
        conversation_id: String,
        /// `tool-request` or `tool-result`.
        phase: ToolPhase,
        /// One id per call, the same on its request and its result.
        call_id: String,
        /// The step's label.
        name: String,
        /// What the script was given (on the request) or produced (on the result).
        payload: Value,
    },
    /// A run's status changed.
    Status {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// Its new status.
        status: RunStatus,
        /// Why, when failed.
        error: Option<String>,
    },
    /// A piece of an agent's reply as it streams in.
    Delta {
        /// The run.
        conversation_id: String,
        /// The new text.
        delta: String,
    },
}

/// Which half of a tool call a [`FlowEvent::Tool`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolPhase {
    /// The call starts.
    Request,
    /// The call ended (its output, or its error).
    Result,
}

impl FlowEvent {
    /// The run the event belongs to.
    pub fn conversation_id(&self) -> &str {
        match self {
            FlowEvent::Turn {
                conversation_id, ..
            }
            | FlowEvent::Prompt {
                conversation_id, ..
            }
            | FlowEvent::Tool {
                conversation_id, ..
            }
            | FlowEvent::Status {
                conversation_id, ..
            }
            | FlowEvent::Delta {
                conversation_id, ..
            } => conversation_id,
        }
    }
}

/// Where the engine publishes its [`FlowEvent`]s.
pub trait FlowEvents: Send + Sync + std::fmt::Debug {
    /// Announces `event`; never blocks, nobody listening is fine.
    fn publish(&self, event: FlowEvent);

    /// Announces `event` of the run whose step `inflight_id` is in flight
    /// (seed 004's `inflightId`); sinks that do not need it just publish.
    fn publish_in_flight(&self, event: FlowEvent, inflight_id: Option<String>) {
        let _ = inflight_id;
        self.publish(event);
    }
}
