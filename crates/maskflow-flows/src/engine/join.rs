//! The join that gathers a fan-out, and its fan-in prompt (seed 003): one
//! agent call over the gathered results, whose parsed reply is the join's output.

use super::*;

/// The fan-in message: the join's rendered prompt, then the gathered results
/// as JSON (already masked where they come from local data).
pub(super) fn fan_in_message(prompt: &str, gathered: &Value) -> String {
    let results = serde_json::to_string_pretty(gathered).unwrap_or_else(|_| gathered.to_string());
    format!("{prompt}\n\nThe gathered results of the fan-out (JSON):\n```json\n{results}\n```")
}

/// What a join with a prompt asks its agent: the step, its prompt, the
/// gathered results and whether they hold local values.
struct FanIn<'a> {
    step: &'a crate::definition::JoinStep,
    prompt: &'a str,
    gathered: Value,
    local: bool,
}

impl FlowEngine {
    /// A `join`: gathers the foreach results; failed items fail the run, wait
    /// for an answer or are skipped, as its `onFailure` says. With a `prompt`,
    /// its agent is asked once over the gathered results.
    pub(super) async fn exec_join(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        j: &crate::definition::JoinStep,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let mut next = st.clone();
        let Some(progress) = next.foreach.take() else {
            return Err(failure(format!(
                "join {:?} has no foreach results to gather",
                node.label
            )));
        };
        let failed: Vec<FailedItem> = progress
            .results
            .iter()
            .filter(|(_, r)| !r.ok)
            .map(|(i, r)| FailedItem {
                index: *i,
                error: r.error.clone(),
            })
            .collect();
        let results: Vec<Value> = progress
            .results
            .values()
            .filter(|r| r.ok)
            .map(|r| r.output.clone().unwrap_or(Value::Null))
            .collect();
        let timed_out = progress.timed_out.clone();
        if let Some(f) = super::join_timeout::timeout_failure(node, j, &progress) {
            return Err(f);
        }
        let policy = if st.join_skip_failures {
            JoinPolicy::Skip
        } else {
            j.on_failure.unwrap_or_default()
        };
        next.join_skip_failures = false;
        if !failed.is_empty() {
            let first = failed[0].error.clone().unwrap_or_default();
            let message = format!(
                "{} of {} items failed (first: {first})",
                failed.len(),
                progress.total
            );
            match policy {
                JoinPolicy::Fail => {
                    return Err(failure(format!("join {:?}: {message}", node.label)));
                }
                JoinPolicy::NeedsAttention => {
                    let mut waiting = st.clone();
                    waiting.foreach = Some(progress);
                    let pending = Pending::Join {
                        reason: "items failed".into(),
                        step: node.label.clone(),
                        error: message.clone(),
                        failed,
                        options: ATTENTION_OPTIONS.map(str::to_owned).to_vec(),
                    };
                    let turn = TurnRow {
                        role: TurnRole::System,
                        content: message,
                        command: meta(run, node, None),
                    };
                    return Ok(Outcome::Wait {
                        next: waiting,
                        event: RunEvent::Escalate,
                        pending,
                        turns: vec![turn],
                    });
                }
                JoinPolicy::Skip => {}
            }
        }
        // Failed items' errors are local too (a script's error output).
        let local = st.local.contains("foreach");
        next.local.remove("foreach");
        // Seed 002's `retryCount` of each item that needed a retry, by index.
        let retries: Map<String, Value> = progress
            .results
            .iter()
            .filter(|(_, r)| r.retry_count > 0)
            .map(|(i, r)| (i.to_string(), Value::from(r.retry_count)))
            .collect();
        let mut output = json!({"total": progress.total, "succeeded": results.len(), "results": results, "failed": failed, "retries": retries});
        if !timed_out.is_empty() {
            output["timedOut"] = json!(timed_out);
        }
        let turn = joined_turn(run, node, progress.total, failed.len(), timed_out.len());
        let Some(prompt) = &j.prompt else {
            FlowEngine::complete_with(&mut next, node, output, local);
            enter(&run.program, &mut next, node.next);
            return advance(next, vec![turn], vec![], true);
        };
        let fan = FanIn {
            step: j,
            prompt: prompt.as_str(),
            gathered: output,
            local,
        };
        let (asked, reply, rows) =
            self.fan_in(run, cur, st, &mut next, fan)
                .await
                .map_err(|mut f| {
                    f.turns.insert(0, turn.clone());
                    f
                })?;
        // The agent saw masked data only: its reply is not local.
        FlowEngine::complete_with(&mut next, node, prompt::parse_output(&reply), false);
        let answer = TurnRow {
            role: TurnRole::Assistant,
            content: reply,
            command: meta(run, node, None),
        };
        enter(&run.program, &mut next, node.next);
        advance(next, vec![turn, asked, answer], rows, true)
    }

    /// Asks the join's agent its prompt, rendered with `output` set to the
    /// gathered results, which also follow the prompt as JSON. Local values
    /// are masked first; the call goes through the agents' back ends (the
    /// privacy guard and the ledger) like every agent step. Its prompt is
    /// the run's user turn (seed 004), returned first; a failure carries it.
    async fn fan_in(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        next: &mut RunState,
        fan: FanIn<'_>,
    ) -> std::result::Result<(TurnRow, String, Vec<AgentMessageRow>), StepFailure> {
        let FanIn {
            step: j,
            prompt,
            gathered,
            local,
        } = fan;
        let node = &run.program.nodes[cur];
        let mut shown = json!({ "v": gathered });
        if local {
            let v = ["v".to_owned()].into_iter().collect();
            mask_local(&mut shown, &v, &run.authored);
        }
        let shown = shown["v"].take();
        let mut pctx = self.prompt_context(run, st);
        if let Value::Object(m) = &mut pctx {
            m.insert("output".into(), shown.clone());
        }
        let text = fan_in_message(&template::render(prompt, &pctx), &shown);
        let msgs = vec![ChatMessage::new(ChatRole::User, text)];
        let (Some(agent), Some(identifier)) = (&j.agent_type, &j.identifier) else {
            return Err(failure(format!(
                "join {:?} has a prompt but no agentType and identifier to ask it",
                node.label
            )));
        };
        // The postcondition error of the previous attempt, on a retry.
        let feedback = st
            .pending_retry
            .as_ref()
            .filter(|p| p.node == cur)
            .map(|p| p.error.clone());
        let asked = self.prompt_turn(run, node, None, &msgs, feedback.as_deref());
        let replied = self
            .ask(
                run,
                node,
                next,
                AgentAsk {
                    agent: agent.as_str(),
                    identifier: identifier.as_str(),
                    messages: msgs,
                    feedback: feedback.as_deref(),
                    keep_history: true,
                    item: None,
                },
            )
            .await;
        match replied {
            Ok((reply, rows)) => Ok((asked, reply, rows)),
            Err(mut f) => {
                f.turns.insert(0, asked);
                Err(f)
            }
        }
    }
}

/// The system turn saying how many of a join's `total` items it gathered
/// (`failed` failed, `late` timed out).
fn joined_turn(
    run: &Loaded,
    node: &compile::Node,
    total: usize,
    failed: usize,
    late: usize,
) -> TurnRow {
    let late_note = if late > 0 {
        format!(", {late} timed out")
    } else {
        String::new()
    };
    TurnRow {
        role: TurnRole::System,
        content: format!(
            "Joined {} of {total} items ({failed} failed{late_note})",
            total - failed - late
        ),
        command: meta(run, node, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fan_in_message_carries_the_prompt_and_the_results() {
        let m = fan_in_message("Aggregate.", &json!({"results": [{"score": 90}]}));
        assert!(m.starts_with("Aggregate.\n\n"), "{m}");
        assert!(m.contains("\"score\": 90"), "{m}");
        assert!(m.trim_end().ends_with("```"), "{m}");
    }
}
