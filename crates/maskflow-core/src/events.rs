//! Events the service publishes while it works (status changes, streamed
//! message text), so shells can push them to the UI instead of polling.

use serde::Serialize;
use tokio::sync::broadcast;

use crate::versions::Status;
use crate::views::{BuildView, MessageView};
use maskflow_flows::{FlowEvent, FlowEvents, ToolPhase};
use maskflow_llm::manual::{ManualEvent, ManualEvents};

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
        /// Waiting for other uploads' extractions to finish before this
        /// one starts (only extractions up to the cores run at once).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        waiting: bool,
    },
    /// A flow run's transcript turn was committed.
    FlowTurn {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// The turn, with its step metadata.
        turn: maskflow_flows::TurnView,
    },
    /// A flow run's status changed, waiting ones included (the UI's run
    /// list and gate panel need those; seed 004's `turn_final` says the ends).
    FlowStatus {
        /// The run.
        conversation_id: String,
        /// The flow.
        flow_name: String,
        /// Its new status.
        status: maskflow_flows::RunStatus,
        /// Why, when failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Seed 004: a flow step's prompt was sent to its agent.
    UserTurn {
        /// The run.
        #[serde(rename = "conversationId")]
        conversation_id: String,
        /// The run's step in flight.
        #[serde(rename = "inflightId", skip_serializing_if = "Option::is_none")]
        inflight_id: Option<String>,
        /// The prompt's text.
        content: String,
        /// RFC 3339.
        #[serde(rename = "createdAt")]
        created_at: String,
        /// The step metadata, as the flow's turns carry it.
        command: maskflow_flows::turn::StepMeta,
    },
    /// Seed 004: a piece of a flow agent's reply as it streams in.
    AssistantDelta {
        /// The run.
        #[serde(rename = "conversationId")]
        conversation_id: String,
        /// The run's step in flight.
        #[serde(rename = "inflightId", skip_serializing_if = "Option::is_none")]
        inflight_id: Option<String>,
        /// The new text.
        delta: String,
    },
    /// Seed 004: a flow's script step (a tool call) started or ended.
    ToolEvent {
        /// The run.
        #[serde(rename = "conversationId")]
        conversation_id: String,
        /// The run's step in flight.
        #[serde(rename = "inflightId", skip_serializing_if = "Option::is_none")]
        inflight_id: Option<String>,
        /// The call's request or result.
        event: ToolCall,
    },
    /// Seed 004: a flow run ended (stopped, failed or completed).
    TurnFinal {
        /// The run.
        #[serde(rename = "conversationId")]
        conversation_id: String,
        /// The run's step in flight when it ended.
        #[serde(rename = "inflightId", skip_serializing_if = "Option::is_none")]
        inflight_id: Option<String>,
        /// How it ended.
        status: FinalStatus,
        /// Why, when failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
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
    /// A schedule fired (issue 41, point 4): how it went, so a refused or
    /// failed firing can be told to the user, who is not watching.
    ScheduleRan {
        /// The schedule (`sch_…`).
        schedule_id: String,
        /// Its name.
        name: String,
        /// Its run, when one started.
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// `succeeded`, `refused` (the file differs from the approved
        /// one; nothing ran), `needs_look`, or how the run failed.
        status: String,
        /// Why, when it did not succeed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Whether the outputs it placed last are now stale.
        stale: bool,
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
        prompt: maskflow_llm::manual::ManualPrompt,
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
        /// The flow run, when a flow's agent asks (such events come on the
        /// socket only to a client that asks for them: seed 004's types only).
        #[serde(skip_serializing_if = "Option::is_none")]
        flow_run_id: Option<String>,
    },
    /// An outbound LLM request was recorded in the ledger.
    LedgerEntry {
        /// The ledger row.
        entry: maskflow_privacy::ledger::LedgerEntry,
    },
    /// A model download moved: `downloading` (with bytes), `verifying`,
    /// `measuring`, `ready`, `failed` or `cancelled` (with why).
    ModelProgress {
        /// The model's name.
        name: String,
        /// Where it is.
        stage: String,
        /// Bytes so far.
        #[ts(type = "number")]
        done: u64,
        /// Bytes in all, when known.
        #[ts(type = "number | null")]
        total: Option<u64>,
        /// What happened, in words (empty while downloading).
        message: String,
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

/// How a flow run ended, in seed 004's `turn_final`.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum FinalStatus {
    /// A person stopped it (`cancel_inflight`, or the stop call).
    Stopped,
    /// A step failed.
    Failed,
    /// It ran to its end.
    Completed,
}

impl FinalStatus {
    /// The end `status` is, or `None` while the run goes on or waits.
    pub fn of(status: maskflow_flows::RunStatus) -> Option<FinalStatus> {
        use maskflow_flows::RunStatus;
        match status {
            RunStatus::Stopped => Some(FinalStatus::Stopped),
            RunStatus::Failed => Some(FinalStatus::Failed),
            RunStatus::Completed => Some(FinalStatus::Completed),
            RunStatus::Running | RunStatus::Waiting | RunStatus::NeedsAttention => None,
        }
    }
}

/// One half of a tool call in seed 004's `tool_event`.
#[derive(Serialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToolCall {
    /// The call starts.
    ToolRequest {
        /// Shared by the request and its result.
        #[serde(rename = "callId")]
        call_id: String,
        /// The step's label.
        name: String,
        /// What the call is given (`{script}`).
        #[ts(type = "unknown")]
        #[schema(value_type = Object)]
        parameters: serde_json::Value,
    },
    /// The call ended.
    ToolResult {
        /// Shared by the request and its result.
        #[serde(rename = "callId")]
        call_id: String,
        /// The step's label.
        name: String,
        /// Its output, or `{error}`.
        #[ts(type = "unknown")]
        #[schema(value_type = Object)]
        result: serde_json::Value,
    },
}

/// The flow engine announces through the bus: committed turns and every
/// status as `flow_turn` and `flow_status`, and seed 004's `user_turn`,
/// `assistant_delta`, `tool_event` and `turn_final` (a run's end).
impl FlowEvents for EventBus {
    fn publish(&self, event: FlowEvent) {
        self.publish_in_flight(event, None);
    }

    fn publish_in_flight(&self, event: FlowEvent, inflight_id: Option<String>) {
        for event in wire_events(event, inflight_id) {
            let _ = self.tx.send(event);
        }
    }
}

/// The wire events one flow announcement becomes.
fn wire_events(event: FlowEvent, inflight_id: Option<String>) -> Vec<Event> {
    match event {
        FlowEvent::Turn {
            conversation_id,
            flow_name,
            turn,
        } => vec![Event::FlowTurn {
            conversation_id,
            flow_name,
            turn,
        }],
        FlowEvent::Prompt {
            conversation_id,
            content,
            created_at,
            command,
        } => vec![Event::UserTurn {
            conversation_id,
            inflight_id,
            content,
            created_at,
            command,
        }],
        FlowEvent::Delta {
            conversation_id,
            delta,
        } => vec![Event::AssistantDelta {
            conversation_id,
            inflight_id,
            delta,
        }],
        FlowEvent::Tool {
            conversation_id,
            phase,
            call_id,
            name,
            payload,
        } => {
            let event = match phase {
                ToolPhase::Request => ToolCall::ToolRequest {
                    call_id,
                    name,
                    parameters: payload,
                },
                ToolPhase::Result => ToolCall::ToolResult {
                    call_id,
                    name,
                    result: payload,
                },
            };
            vec![Event::ToolEvent {
                conversation_id,
                inflight_id,
                event,
            }]
        }
        FlowEvent::Status {
            conversation_id,
            flow_name,
            status,
            error,
        } => {
            let end = FinalStatus::of(status).map(|status| Event::TurnFinal {
                conversation_id: conversation_id.clone(),
                inflight_id,
                status,
                error: error.clone(),
            });
            let mut events = vec![Event::FlowStatus {
                conversation_id,
                flow_name,
                status,
                error,
            }];
            events.extend(end);
            events
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_flows::RunStatus;
    use serde_json::json;

    fn wire(event: FlowEvent, inflight: Option<&str>) -> Vec<serde_json::Value> {
        wire_events(event, inflight.map(str::to_owned))
            .iter()
            .map(|e| serde_json::to_value(e).expect("serialises"))
            .collect()
    }

    fn status(status: RunStatus, error: Option<&str>) -> FlowEvent {
        FlowEvent::Status {
            conversation_id: "flow_1".into(),
            flow_name: "demo".into(),
            status,
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn a_run_that_ends_says_turn_final_with_the_seeds_status_words() {
        for (run, word) in [
            (RunStatus::Completed, "completed"),
            (RunStatus::Stopped, "stopped"),
            (RunStatus::Failed, "failed"),
        ] {
            let events = wire(status(run, None), Some("inf_1"));
            assert_eq!(events.len(), 2, "{events:?}");
            assert_eq!(events[0]["type"], "flow_status");
            assert_eq!(
                events[1],
                json!({"type": "turn_final", "conversationId": "flow_1", "inflightId": "inf_1", "status": word})
            );
        }
        let failed = wire(status(RunStatus::Failed, Some("no reply")), None);
        assert_eq!(
            failed[1],
            json!({"type": "turn_final", "conversationId": "flow_1", "status": "failed", "error": "no reply"})
        );
    }

    #[test]
    fn a_run_that_waits_or_runs_has_no_turn_final() {
        for run in [
            RunStatus::Running,
            RunStatus::Waiting,
            RunStatus::NeedsAttention,
        ] {
            let events = wire(status(run, None), Some("inf_1"));
            assert_eq!(events.len(), 1);
            assert_eq!(events[0]["type"], "flow_status");
        }
    }

    #[test]
    fn prompts_deltas_and_tool_calls_keep_the_seeds_field_names() {
        let prompt = FlowEvent::Prompt {
            conversation_id: "flow_1".into(),
            content: "Summarise".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            command: maskflow_flows::turn::StepMeta::step(maskflow_flows::turn::StepPlace {
                step_index: 0,
                total_steps: 2,
                loop_depth: 0,
                agent_type: Some("writer".into()),
                identifier: None,
                label: "Summarise".into(),
                step_path: vec![0],
                depth: 0,
                item_index: None,
            }),
        };
        assert_eq!(
            wire(prompt, Some("inf_1")),
            vec![json!({
                "type": "user_turn", "conversationId": "flow_1", "inflightId": "inf_1",
                "content": "Summarise", "createdAt": "2026-01-01T00:00:00Z",
                "command": {"name": "flow", "stepIndex": 0, "totalSteps": 2, "loopDepth": 0,
                            "agentType": "writer", "identifier": null, "label": "Summarise",
                            "stepPath": [0], "depth": 0}
            })]
        );
        let delta = FlowEvent::Delta {
            conversation_id: "flow_1".into(),
            delta: "Hel".into(),
        };
        assert_eq!(
            wire(delta, Some("inf_1")),
            vec![
                json!({"type": "assistant_delta", "conversationId": "flow_1", "inflightId": "inf_1", "delta": "Hel"})
            ]
        );
        for (phase, kind, key) in [
            (ToolPhase::Request, "tool-request", "parameters"),
            (ToolPhase::Result, "tool-result", "result"),
        ] {
            let tool = FlowEvent::Tool {
                conversation_id: "flow_1".into(),
                phase,
                call_id: "call_1".into(),
                name: "Count rows".into(),
                payload: json!({"rows": 3}),
            };
            let mut event = json!({"type": kind, "callId": "call_1", "name": "Count rows"});
            event[key] = json!({"rows": 3});
            assert_eq!(
                wire(tool, Some("inf_1")),
                vec![
                    json!({"type": "tool_event", "conversationId": "flow_1", "inflightId": "inf_1", "event": event})
                ]
            );
        }
    }
}
