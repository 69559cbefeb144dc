//! Asking an agent.

use super::*;
use announce::with_prompt;

/// One request to an agent: who is asked, what they are told, and whether
/// the exchange joins their conversation.
pub(super) struct AgentAsk<'a> {
    /// The agent's type.
    pub agent: &'a str,
    /// Which conversation of that agent (with `keep_history`).
    pub identifier: &'a str,
    /// The step's messages.
    pub messages: Vec<ChatMessage>,
    /// The postcondition error of the previous attempt, on a retry.
    pub feedback: Option<&'a str>,
    /// Whether the agent sees, and keeps, its conversation's history.
    pub keep_history: bool,
    /// A foreach item's variable name and (masked) value, for the task context.
    pub item: Option<(String, Value)>,
}

impl FlowEngine {
    /// An `llm` or `command` step: an inline prompt, or one of the agent's commands.
    pub(super) async fn exec_agent(&self, run: &Loaded, cur: usize, st: &RunState) -> StepResult {
        let node = &run.program.nodes[cur];
        let mut next = st.clone();
        let pctx = self.prompt_context(run, st);
        let (agent, identifier, msgs) = match &node.op {
            Op::Llm(s) => (
                s.agent_type.as_str(),
                s.identifier.as_str(),
                render_messages(&s.messages, &pctx),
            ),
            Op::Command(s) => {
                let key = format!("{}/{}", s.agent_type, s.command_name);
                let cmd = run.snapshot.commands.get(&key).ok_or_else(|| {
                    failure(format!(
                        "unknown command {:?} of agent {:?}",
                        s.command_name.as_str(),
                        s.agent_type.as_str()
                    ))
                })?;
                (
                    s.agent_type.as_str(),
                    s.identifier.as_str(),
                    render_messages(&cmd.messages, &pctx),
                )
            }
            _ => return Err(failure("not an agent step".to_owned())),
        };
        let feedback = retry_feedback(st, cur);
        let mut msgs = msgs;
        msgs.extend(steer::take_answer(&mut next, cur));
        // Seed 004: the step's prompt is a user turn of the run's transcript.
        let prompt = self.prompt_turn(run, node, None, &msgs, feedback.as_deref());
        let asked = self
            .ask(
                run,
                node,
                &mut next,
                AgentAsk {
                    agent,
                    identifier,
                    messages: msgs,
                    feedback: feedback.as_deref(),
                    keep_history: true,
                    item: None,
                },
            )
            .await;
        let (reply, rows) = match asked {
            Ok(answer) => answer,
            Err(failure) => return with_prompt(Err(failure), prompt),
        };
        let turn = TurnRow {
            role: TurnRole::Assistant,
            content: reply.clone(),
            command: meta(run, node, None),
        };
        with_prompt(self.steer(run, cur, next, &reply, turn, rows), prompt)
    }

    /// A `break` step: asks the agent yes or no and leaves the loop on `breakOn`.
    pub(super) async fn exec_break(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        step: &crate::definition::BreakStep,
        loop_start: usize,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let program = &run.program;
        let mut next = st.clone();
        let msgs = vec![ChatMessage::new(
            ChatRole::User,
            prompt::break_question(step.question.as_str()),
        )];
        let feedback = retry_feedback(st, cur);
        let prompt = self.prompt_turn(run, node, None, &msgs, feedback.as_deref());
        let asked = self
            .ask(
                run,
                node,
                &mut next,
                AgentAsk {
                    agent: step.agent_type.as_str(),
                    identifier: step.identifier.as_str(),
                    messages: msgs,
                    feedback: feedback.as_deref(),
                    keep_history: true,
                    item: None,
                },
            )
            .await;
        let (reply, rows) = match asked {
            Ok(answer) => answer,
            Err(failure) => return with_prompt(Err(failure), prompt),
        };
        let turn = TurnRow {
            role: TurnRole::Assistant,
            content: reply.clone(),
            command: meta(run, node, None),
        };
        let answer = match prompt::parse_break(&reply) {
            Ok(a) => a,
            Err(e) => {
                return Err(StepFailure {
                    error: FlowError::reply(format!("break step {:?}: {e}", node.label)),
                    turns: vec![prompt, turn],
                });
            }
        };
        Self::complete_with(&mut next, node, json!({"answer": answer.as_str()}), false);
        if answer == step.break_on {
            enter(program, &mut next, program.nodes[loop_start].next);
        } else {
            enter(program, &mut next, node.next);
        }
        advance(next, vec![prompt, turn], rows, true)
    }

    /// Sends one agent request; returns the reply and the messages to store.
    pub(super) async fn ask(
        &self,
        run: &Loaded,
        node: &compile::Node,
        next: &mut RunState,
        asked: AgentAsk<'_>,
    ) -> std::result::Result<(String, Vec<AgentMessageRow>), StepFailure> {
        let AgentAsk {
            agent,
            identifier,
            messages: msgs,
            feedback,
            keep_history,
            item,
        } = asked;
        let def = run.snapshot.agents.get(agent).cloned().unwrap_or_default();
        let history = if keep_history {
            let key = format!("{agent}:{identifier}");
            let conv = match next.agent_conversations.get(&key) {
                Some(c) => c.clone(),
                None => {
                    let c = self.inner.ids.next_id("conv");
                    next.agent_conversations.insert(key, c.clone());
                    next.conversation_agents.insert(c.clone(), agent.to_owned());
                    c
                }
            };
            let h = self.conversation_tail(&run.id, &conv).map_err(|e| {
                FlowError::store(format!("could not read the agent conversation: {e}"))
            })?;
            Some((conv, h))
        } else {
            None
        };
        let task = TaskContext {
            flow: run.flow_name.clone(),
            step: node.label.clone(),
            iterations: next.loop_stack.iter().map(|f| f.iteration).collect(),
            item,
        };
        let layer = steer::step_layer(run, node);
        let system = prompt::system_message(
            def.prompt.as_ref().map(|p| p.as_str()),
            layer.as_deref(),
            &task,
        );
        let empty = Vec::new();
        let request = LlmRequest {
            role: Role::Agent(agent.to_owned()),
            messages: prompt::assemble(
                system,
                history.as_ref().map_or(&empty, |(_, h)| h),
                msgs.clone(),
                feedback,
            ),
            schema: None,
        };
        let call = FlowCall {
            run_id: run.id.clone(),
            flow_name: run.flow_name.clone(),
            step: step_name(node),
            working_folder: run.working_folder.clone(),
        };
        let provider = self.agent_backend(agent, &def, &run.authored_text, &call)?;
        let events = self.inner.events.clone();
        let conversation_id = run.id.clone();
        let sink = move |d: &str| {
            events.publish(FlowEvent::Delta {
                conversation_id: conversation_id.clone(),
                delta: d.to_owned(),
            })
        };
        let reply = provider
            .complete(&request, &sink)
            .await
            .map_err(|e| match e {
                maskflow_llm::ProviderError::PrivacyBlocked(found) => {
                    let values: Vec<String> = found
                        .iter()
                        .map(|m| format!("{} (from {})", m.masked, m.source))
                        .collect();
                    FlowError::privacy(format!(
                        "step {:?}: the privacy guard refused the prompt for agent {agent:?}: \
                         it holds values from your files: {}. Nothing left your machine. \
                         Change what the step sends (or the files its scripts read), then \
                         retry, skip or stop",
                        node.label,
                        values.join(", ")
                    ))
                }
                e => FlowError::agent(format!("agent {agent:?} failed: {e}")),
            })?;
        let mut rows = Vec::new();
        if let Some((conv, _)) = history {
            let mut sent = msgs;
            if let Some(f) = feedback {
                sent.push(ChatMessage::new(
                    ChatRole::User,
                    format!("Previous attempt failed: {f}"),
                ));
            }
            sent.push(ChatMessage::new(ChatRole::Assistant, reply.text.clone()));
            rows = sent
                .into_iter()
                .map(|message| AgentMessageRow {
                    conversation_id: conv.clone(),
                    agent: agent.to_owned(),
                    message,
                })
                .collect();
        }
        Ok((reply.text, rows))
    }
}

/// A step as people name it in the ledger: its label and path.
pub(super) fn step_name(node: &compile::Node) -> String {
    format!("{} {:?}", node.label, node.path)
}

/// The postcondition error of the previous attempt at `cur`, told to the agent on a retry.
fn retry_feedback(st: &RunState, cur: usize) -> Option<String> {
    st.pending_retry
        .as_ref()
        .filter(|p| p.node == cur)
        .map(|p| p.error.clone())
}
