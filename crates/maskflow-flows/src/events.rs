//! What the flow engine announces, and the sink it announces through: the
//! app turns each [`FlowEvent`] into its wire event, so flows need not know
//! the app's event bus.

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

/// Where the engine publishes its [`FlowEvent`]s.
pub trait FlowEvents: Send + Sync + std::fmt::Debug {
    /// Announces `event`; never blocks, nobody listening is fine.
    fn publish(&self, event: FlowEvent);
}
