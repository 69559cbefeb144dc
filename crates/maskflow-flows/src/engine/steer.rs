//! Agents that steer (seed 003): an agent step's reply acts on its run
//! through [`crate::steer`]'s table — it proceeds (to a suggested stage the
//! step allows), fails the step through its contract, or waits for a person
//! who continues the run, replies to the agent or stops the run. Also the
//! workflow-step layer of the agent's prompt, from the step's definition.

use super::*;
use crate::definition::{Condition, Confidence, Text};
use crate::prompt::StepBrief;
use crate::state::AgentAnswer;
use crate::steer::{self as rules, Decision, MAX_STAGE_FOLLOWS, Policy, Steering};
use crate::turn::GateChoice;

/// The options of a run waiting for a person on an agent's behalf.
pub(super) const PAUSE_OPTIONS: [(&str, bool); 3] =
    [("Continue", false), ("Reply", true), ("Stop", false)];

/// The steering fields of an agent step's definition.
struct Fields<'a> {
    instructions: Option<&'a Text>,
    next_stages: &'a [Text],
    threshold: Option<Confidence>,
    post: &'a [Condition],
}

fn fields_of(step: &Step) -> Option<Fields<'_>> {
    match step {
        Step::Llm(s) => Some(Fields {
            instructions: s.instructions.as_ref(),
            next_stages: &s.next_stages,
            threshold: s.confidence_threshold,
            post: &s.postconditions,
        }),
        Step::Command(s) => Some(Fields {
            instructions: s.instructions.as_ref(),
            next_stages: &s.next_stages,
            threshold: s.confidence_threshold,
            post: &s.postconditions,
        }),
        _ => None,
    }
}

/// The node's agent step as a definition, and whether its reply routes the
/// run (a foreach item's does not: the foreach gathers items; its status
/// and next action steer the item, see [`steer_item`]).
fn agent_step(node: &compile::Node) -> Option<(Step, bool)> {
    match &node.op {
        Op::Llm(s) => Some((Step::Llm(s.clone()), true)),
        Op::Command(s) => Some((Step::Command(s.clone()), true)),
        Op::Foreach(f) => Some(((*f.step).clone(), false)),
        _ => None,
    }
}

/// What the step allows its agent.
fn policy_of(node: &compile::Node) -> Policy {
    let Some((step, true)) = agent_step(node) else {
        return Policy::default();
    };
    let Some(f) = fields_of(&step) else {
        return Policy::default();
    };
    Policy {
        next_stages: f.next_stages.iter().map(Text::to_string).collect(),
        confidence_threshold: f.threshold.map(Confidence::get),
    }
}

/// The workflow-step layer of the node's agent prompt (seed 003's layer 3).
pub(super) fn step_layer(run: &Loaded, node: &compile::Node) -> Option<String> {
    let (step, routes) = agent_step(node)?;
    let f = fields_of(&step)?;
    let described = match &step {
        Step::Command(c) => run
            .snapshot
            .commands
            .get(&format!("{}/{}", c.agent_type, c.command_name))
            .and_then(|cmd| cmd.description.as_ref())
            .map(Text::to_string),
        _ => None,
    };
    let brief = StepBrief {
        instructions: f.instructions.map(Text::to_string).or(described),
        expected: f.post.iter().map(|c| c.error.to_string()).collect(),
        next_stages: if routes {
            f.next_stages.iter().map(Text::to_string).collect()
        } else {
            Vec::new()
        },
        confidence_threshold: f.threshold.map(Confidence::get),
        steers: true,
    };
    prompt::step_instructions(&brief)
}

/// What a foreach item's agent reply does to the item.
pub(super) enum ItemSteer {
    /// The item is done with this output.
    Done(Value),
    /// The item fails through its retry contract; a retry is told this.
    Fail(String),
    /// The item waits for a person, for this reason.
    Ask(String),
}

/// Steers a foreach item by its agent's reply, as [`FlowEngine::steer`]
/// steers a step, through the same table: FAILED or BLOCKED (or a malformed
/// steering field) fail the item, ESCALATE, HOLD or a confidence under the
/// item step's threshold ask a person. An item cannot route the run: a
/// suggested next stage is ignored.
pub(super) fn steer_item(node: &compile::Node, reply: &str) -> ItemSteer {
    let read = match crate::steer::read_reply(reply) {
        Ok(r) => r,
        Err(e) => {
            return ItemSteer::Fail(format!(
                "{}; reply again in the format asked for",
                e.message
            ));
        }
    };
    let threshold = agent_step(node)
        .and_then(|(step, _)| fields_of(&step).and_then(|f| f.threshold))
        .map(Confidence::get);
    let policy = Policy {
        next_stages: Vec::new(),
        confidence_threshold: threshold,
    };
    match rules::decide(&read.steering, &policy) {
        Decision::Proceed { .. } => ItemSteer::Done(read.output),
        Decision::Fail(feedback) => ItemSteer::Fail(feedback),
        Decision::Ask(why, reason) => ItemSteer::Ask(format!(
            "the agent asks for a person ({}): {reason}",
            why.as_str()
        )),
    }
}

/// The person's answer to this step's agent, as a message to it (and clears it).
pub(super) fn take_answer(next: &mut RunState, cur: usize) -> Option<ChatMessage> {
    let a = next.agent_answer.take_if(|a| a.node == cur)?;
    Some(ChatMessage::new(ChatRole::User, answer_message(&a.text)))
}

fn answer_message(text: &str) -> String {
    format!("A person answered your request: {text}\nCarry on with this step using the answer.")
}

/// The fixed words of the answer message (for the guard's vocabulary).
pub(super) fn take_answer_wording() -> Option<String> {
    Some(answer_message(""))
}

/// Where a stage the step allows leads: its node (counted in `next`), or
/// the step's next with a note.
fn resolve(
    run: &Loaded,
    node: &compile::Node,
    next: &mut RunState,
    (stage, note): (Option<String>, Option<String>),
) -> (Option<usize>, Option<String>) {
    let Some(stage) = stage else {
        return (node.next, note);
    };
    let found = run
        .program
        .nodes
        .iter()
        .position(|n| n.resumable && n.id.as_deref() == Some(stage.as_str()));
    let Some(t) = found else {
        let note =
            format!("The agent suggested the next stage {stage:?}; ignored: no step has that id.");
        return (node.next, Some(note));
    };
    let key = format!("suggested:{:?}->{stage}", node.path);
    let n = next.edge_counts.entry(key).or_insert(0);
    if *n >= MAX_STAGE_FOLLOWS {
        let note = format!(
            "The agent suggested the next stage {stage:?}; ignored: this step sent the run there {MAX_STAGE_FOLLOWS} times already."
        );
        return (node.next, Some(note));
    }
    *n += 1;
    let note = format!("→ {stage} (the agent's suggested next stage)");
    (Some(t), Some(note))
}

fn system_turn(run: &Loaded, node: &compile::Node, content: String) -> TurnRow {
    TurnRow {
        role: TurnRole::System,
        content,
        command: meta(run, node, None),
    }
}

impl FlowEngine {
    /// What an agent step's reply does to the run.
    pub(super) fn steer(
        &self,
        run: &Loaded,
        cur: usize,
        mut next: RunState,
        reply: &str,
        turn: TurnRow,
        msgs: Vec<AgentMessageRow>,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let read = match crate::steer::read_reply(reply) {
            Ok(r) => r,
            Err(e) => {
                return Ok(Outcome::Rejected {
                    next,
                    turns: vec![turn],
                    msgs,
                    feedback: format!("{}; reply again in the format asked for", e.message),
                });
            }
        };
        match rules::decide(&read.steering, &policy_of(node)) {
            Decision::Proceed { stage, note } => {
                Self::complete_with(&mut next, node, read.output, false);
                let mut turns = vec![turn];
                let (target, note) = resolve(run, node, &mut next, (stage, note));
                turns.extend(note.map(|n| system_turn(run, node, n)));
                enter(&run.program, &mut next, target);
                advance(next, turns, msgs, true)
            }
            Decision::Fail(feedback) => Ok(Outcome::Rejected {
                next,
                turns: vec![turn],
                msgs,
                feedback,
            }),
            Decision::Ask(why, reason) => {
                // The reply is shown and kept; the step completes only when the person continues.
                next.output = read.output.clone();
                next.local.remove("output");
                let prompt_text = format!(
                    "Step {:?} asks for a person ({}): {reason}",
                    node.label,
                    why.as_str()
                );
                let pending = Pending::Gate {
                    prompt: prompt_text.clone(),
                    context: shown(&read.steering, &read.output),
                    step_path: node.path.clone(),
                    options: PAUSE_OPTIONS
                        .iter()
                        .map(|(label, requires_input)| GateChoice {
                            label: (*label).to_owned(),
                            requires_input: *requires_input,
                        })
                        .collect(),
                };
                let turns = vec![turn, system_turn(run, node, prompt_text)];
                Ok(Outcome::AskPerson {
                    next,
                    pending,
                    turns,
                    msgs,
                })
            }
        }
    }
}

/// What the person sees beside the agent's question.
fn shown(s: &Steering, output: &Value) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(g) = s.status {
        m.insert("status".into(), json!(rules::word(g)));
    }
    if let Some(g) = s.next_action {
        m.insert("nextAction".into(), json!(rules::word(g)));
    }
    if let Some(c) = s.confidence {
        m.insert("confidence".into(), json!(c));
    }
    if let Some(st) = &s.suggested_next_stage {
        m.insert("suggestedNextStage".into(), json!(st));
    }
    // Seed 003's sections: their summary and output; a JSON reply: all of it.
    match (output.get("summary"), output.get("output")) {
        (Some(sum), Some(out)) if s.status.is_some() || s.next_action.is_some() => {
            m.insert("summary".into(), sum.clone());
            m.insert("output".into(), out.clone());
        }
        _ => {
            m.insert("output".into(), output.clone());
        }
    }
    m
}

/// The answer to an agent that asked for a person: `Continue` completes the
/// step with its reply, `Reply` runs it again with the person's text, `Stop`
/// stops the run (true).
pub(super) fn answer_pause(
    run: &Loaded,
    cur: usize,
    next: &mut RunState,
    option: &str,
    input: Option<String>,
) -> Result<(Vec<TurnRow>, bool)> {
    let node = &run.program.nodes[cur];
    let user = |content: String| TurnRow {
        role: TurnRole::User,
        content,
        command: meta(run, node, None),
    };
    match option.to_ascii_lowercase().as_str() {
        "continue" => {
            let output = next.output.clone();
            next.pending_retry = None;
            FlowEngine::complete_with(next, node, output.clone(), false);
            let steering = rules::steering_of(&output, false).unwrap_or_default();
            let route = rules::route(&steering, &policy_of(node));
            let (target, note) = resolve(run, node, next, route);
            enter(&run.program, next, target);
            let mut turns = vec![user("Continue".into())];
            turns.extend(note.map(|n| system_turn(run, node, n)));
            Ok((turns, false))
        }
        "reply" => {
            let text = input
                .ok_or_else(|| Error::InvalidRequest("option \"Reply\" requires input".into()))?;
            // The person has stepped in: the agent starts afresh from the answer.
            next.pending_retry = None;
            next.agent_answer = Some(AgentAnswer {
                node: cur,
                text: text.clone(),
            });
            Ok((vec![user(format!("Reply: {text}"))], false))
        }
        "stop" => Ok((vec![user("Stop".into())], true)),
        _ => Err(Error::InvalidRequest(format!(
            "an agent's question takes Continue, Reply or Stop, not {option:?}"
        ))),
    }
}

/// Whether the node is an agent step (its waiting gate is an agent's question).
pub(super) fn is_agent(node: &compile::Node) -> bool {
    matches!(node.op, Op::Llm(_) | Op::Command(_))
}
