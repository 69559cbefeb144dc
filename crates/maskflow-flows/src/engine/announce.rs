//! Stamps each announcement with its run's step in flight (seed 004's
//! `inflightId`), so every publishing place need not look it up.

use std::sync::Weak;

use super::*;

/// The engine's sink: looks the run's inflight id up, then hands the event on.
#[derive(Debug)]
pub(super) struct Stamped {
    pub(super) sink: Arc<dyn FlowEvents>,
    pub(super) engine: Weak<Inner>,
}

impl FlowEvents for Stamped {
    fn publish(&self, event: FlowEvent) {
        // Never called under the in-flight lock: publishing sites hold no engine lock.
        let inflight = self.engine.upgrade().and_then(|inner| {
            lock(&inner.inflight)
                .get(event.conversation_id())
                .map(|f| f.inflight_id.clone())
        });
        self.sink.publish_in_flight(event, inflight);
    }
}

impl FlowEngine {
    /// Seed 004's `user_turn`: the step's prompt as it leaves for the agent
    /// (the user's messages, and the retry feedback when there is some) is
    /// announced, and returned as the transcript's user turn to commit.
    /// `item` is the index of a foreach item whose prompt it is.
    pub(super) fn prompt_turn(
        &self,
        run: &Loaded,
        node: &compile::Node,
        item: Option<usize>,
        msgs: &[ChatMessage],
        feedback: Option<&str>,
    ) -> TurnRow {
        let mut parts: Vec<String> = msgs
            .iter()
            .filter(|m| m.role == ChatRole::User)
            .map(|m| m.content.clone())
            .collect();
        if let Some(f) = feedback {
            parts.push(format!("Previous attempt failed: {f}"));
        }
        let turn = TurnRow {
            role: TurnRole::User,
            content: parts.join("\n\n"),
            command: meta(run, node, item),
        };
        self.inner.events.publish(FlowEvent::Prompt {
            conversation_id: run.id.clone(),
            content: turn.content.clone(),
            created_at: self.now(),
            command: turn.command.clone(),
        });
        turn
    }

    /// Seed 004's `tool_event`: a script step's call starts or ends.
    pub(super) fn announce_tool(
        &self,
        run: &Loaded,
        node: &compile::Node,
        phase: ToolPhase,
        call_id: &str,
        payload: Value,
    ) {
        self.inner.events.publish(FlowEvent::Tool {
            conversation_id: run.id.clone(),
            phase,
            call_id: call_id.to_owned(),
            name: node.label.clone(),
            payload,
        });
    }
}

/// Puts the step's prompt turn before whatever turns the step committed (a
/// stopped step commits nothing, its prompt included).
pub(super) fn with_prompt(result: StepResult, prompt: TurnRow) -> StepResult {
    let first = |turns: &mut Vec<TurnRow>| turns.insert(0, prompt);
    match result {
        Ok(mut outcome) => {
            match &mut outcome {
                Outcome::Advance { turns, .. }
                | Outcome::Wait { turns, .. }
                | Outcome::AskPerson { turns, .. }
                | Outcome::Rejected { turns, .. } => first(turns),
                Outcome::Stopped => {}
            }
            Ok(outcome)
        }
        Err(mut failure) => {
            first(&mut failure.turns);
            Err(failure)
        }
    }
}
