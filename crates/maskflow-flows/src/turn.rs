//! The typed forms of what the engine stores as JSON: [`Pending`] (what a
//! waiting run waits for, `flow_runs.pending`), [`StepMeta`] (a turn's
//! `command`) and [`TurnRole`]. Their serde shapes are the JSON the engine
//! has always written, so stored runs and turns read back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The choices of a run that needs attention.
pub const ATTENTION_OPTIONS: [&str; 3] = ["retry", "skip", "stop"];

/// What a waiting run waits for.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Pending {
    /// A gate: a person picks one of its options.
    Gate {
        /// The gate's prompt, rendered.
        #[serde(default)]
        prompt: String,
        /// The values the gate shows, by path.
        #[serde(default)]
        context: Map<String, Value>,
        /// The gate's step path.
        #[serde(default, rename = "stepPath")]
        step_path: Vec<usize>,
        /// Its options.
        #[serde(default)]
        options: Vec<GateChoice>,
    },
    /// A step failed its postcondition twice: retry, skip or stop.
    Attention {
        /// Why (`postcondition`).
        #[serde(default)]
        reason: String,
        /// The step's label.
        #[serde(default)]
        step: String,
        /// The step's path.
        #[serde(default, rename = "stepPath")]
        step_path: Vec<usize>,
        /// What failed.
        #[serde(default)]
        error: String,
        /// [`ATTENTION_OPTIONS`].
        #[serde(default)]
        options: Vec<String>,
    },
    /// A join whose items failed: retry them, skip them or stop.
    Join {
        /// Why (`items failed`).
        #[serde(default)]
        reason: String,
        /// The join's label.
        #[serde(default)]
        step: String,
        /// How many failed, and the first error.
        #[serde(default)]
        error: String,
        /// The failed items.
        #[serde(default)]
        failed: Vec<FailedItem>,
        /// [`ATTENTION_OPTIONS`].
        #[serde(default)]
        options: Vec<String>,
    },
    /// A subflow run that waits itself.
    Subflow {
        /// The child run.
        #[serde(rename = "conversationId")]
        conversation_id: String,
    },
}

impl Pending {
    /// The child run a run waits for, when it waits for a subflow.
    pub fn child(&self) -> Option<&str> {
        match self {
            Pending::Subflow { conversation_id } => Some(conversation_id),
            _ => None,
        }
    }
}

/// One option of a waiting gate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GateChoice {
    /// The option's label.
    pub label: String,
    /// Whether it needs text.
    #[serde(default, rename = "requiresInput")]
    pub requires_input: bool,
}

/// A foreach item that failed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FailedItem {
    /// Its position in the items.
    pub index: usize,
    /// Why.
    pub error: Option<String>,
}

/// Who speaks a transcript turn.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TurnRole {
    /// An agent, a script or a subflow answered.
    Assistant,
    /// A person answered a gate.
    User,
    /// The engine: a decision, a gate's prompt, a failure.
    System,
}

impl TurnRole {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnRole::Assistant => "assistant",
            TurnRole::User => "user",
            TurnRole::System => "system",
        }
    }
}

/// Seed 004's turn metadata (a turn's `command`): `{name: "flow"}`, with the
/// step's place when the turn belongs to a step.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum StepMeta {
    /// A turn of one step.
    Step {
        /// Always `flow`.
        name: String,
        /// Where the step sits.
        #[serde(flatten)]
        #[cfg_attr(feature = "ts", ts(flatten))]
        place: StepPlace,
    },
    /// A turn of the run as a whole.
    Flow {
        /// Always `flow`.
        name: String,
    },
}

impl StepMeta {
    /// A turn of the run as a whole.
    pub fn flow() -> Self {
        StepMeta::Flow {
            name: "flow".into(),
        }
    }

    /// Where the turn's step sits, if it belongs to one.
    pub fn place(&self) -> Option<&StepPlace> {
        match self {
            StepMeta::Step { place, .. } => Some(place),
            StepMeta::Flow { .. } => None,
        }
    }

    /// A turn of the step at `place`.
    pub fn step(place: StepPlace) -> Self {
        StepMeta::Step {
            name: "flow".into(),
            place,
        }
    }
}

/// Where in the flow a turn's step sits.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StepPlace {
    /// Its index in its list.
    pub step_index: usize,
    /// The length of that list.
    pub total_steps: usize,
    /// How many loops it sits in.
    pub loop_depth: usize,
    /// The agent it asks, if any.
    pub agent_type: Option<String>,
    /// The agent conversation's identifier, if any.
    pub identifier: Option<String>,
    /// Its label.
    pub label: String,
    /// Its path.
    pub step_path: Vec<usize>,
    /// The run's subflow depth.
    pub depth: u32,
    /// The foreach item, for an item's turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_index: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Rows written before these types existed read back, and write the same JSON.
    #[test]
    fn old_shapes_read_back_and_round_trip() {
        let rows = [
            json!({"kind": "gate", "prompt": "Ship?", "context": {"output": 1}, "stepPath": [2],
                   "options": [{"label": "Yes", "requiresInput": false}, {"label": "Edit", "requiresInput": true}]}),
            json!({"kind": "attention", "reason": "postcondition", "step": "write", "stepPath": [0, 1],
                   "error": "postcondition of step \"write\" failed: short", "options": ["retry", "skip", "stop"]}),
            json!({"kind": "join", "reason": "items failed", "step": "gather", "error": "1 of 2 items failed (first: x)",
                   "failed": [{"index": 1, "error": "x"}], "options": ["retry", "skip", "stop"]}),
            json!({"kind": "subflow", "conversationId": "flow_child"}),
        ];
        for row in rows {
            let p: Pending = serde_json::from_value(row.clone()).expect("reads");
            assert_eq!(serde_json::to_value(&p).expect("writes"), row);
        }
        let full = json!({"name": "flow", "stepIndex": 0, "totalSteps": 3, "loopDepth": 1,
            "agentType": null, "identifier": null, "label": "Decide", "stepPath": [1, 0], "depth": 0});
        let item = json!({"name": "flow", "stepIndex": 0, "totalSteps": 1, "loopDepth": 0,
            "agentType": "writer", "identifier": "w", "label": "each", "stepPath": [0], "depth": 1, "itemIndex": 2});
        for row in [json!({"name": "flow"}), full, item] {
            let m: StepMeta = serde_json::from_value(row.clone()).expect("reads");
            assert_eq!(serde_json::to_value(&m).expect("writes"), row);
        }
        assert_eq!(
            serde_json::from_value::<StepMeta>(json!({"name": "flow"})).expect("reads"),
            StepMeta::flow()
        );
        for role in [TurnRole::Assistant, TurnRole::User, TurnRole::System] {
            assert_eq!(
                serde_json::to_value(role).expect("writes"),
                json!(role.as_str())
            );
        }
    }
}
