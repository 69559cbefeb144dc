//! Fan-out over items, with per-item retries (seed 002's `retryCount`).

use super::attempts::{Attempted, Steered, Todo, record_attempt, todo_of};
use super::join_timeout::{join_deadline, time_out, timed_out_turn};
use super::*;

/// One foreach item: the variable it is bound to, its index and its value.
struct Item<'a> {
    var: &'a str,
    index: usize,
    value: Value,
}

/// What every attempt at one foreach item needs.
struct ItemCall<'a> {
    run: &'a Loaded,
    node: &'a compile::Node,
    step: &'a Step,
    var: &'a str,
    /// The item's index among the items.
    index: usize,
    /// The item as agents see it (masked when it is local).
    masked_item: Value,
    /// The prompt context (without `output` and `steps`, local values masked).
    pctx: Value,
    /// The expression context, with the item and its index.
    ctx: Value,
    local: bool,
}

impl<'a> ItemCall<'a> {
    /// The contexts of item `item` at `index`, over the step's context `base`.
    fn new(
        run: &'a Loaded,
        cur: usize,
        step: &'a Step,
        item: Item<'a>,
        local: bool,
        base: &Value,
    ) -> Self {
        let Item {
            var,
            index,
            value: item,
        } = item;
        let mut ctx = base.clone();
        if let Value::Object(m) = &mut ctx {
            m.insert(var.to_owned(), item.clone());
            m.insert("index".into(), Value::from(index));
        }
        let mut pctx = ctx.clone();
        if let Value::Object(m) = &mut pctx {
            m.remove("output");
            m.remove("steps");
        }
        let mut masked_item = item;
        if local {
            let mut set = std::collections::BTreeSet::new();
            set.insert(var.to_owned());
            mask_local(&mut pctx, &set, &run.authored);
            let mut wrapper = json!({ "v": masked_item });
            let v = ["v".to_owned()].into_iter().collect();
            mask_local(&mut wrapper, &v, &run.authored);
            masked_item = wrapper["v"].take();
        }
        ItemCall {
            run,
            node: &run.program.nodes[cur],
            step,
            var,
            index,
            masked_item,
            pctx,
            ctx,
            local,
        }
    }
}

/// The items a foreach fans out over, within its `maxItems`.
fn items_of(
    ctx: &Value,
    f: &crate::definition::ForeachStep,
    node: &compile::Node,
) -> std::result::Result<Vec<Value>, StepFailure> {
    let path = expr::parse_path(f.items_path.as_str()).map_err(|e| failure(e.to_string()))?;
    let items = match expr::lookup(ctx, &path) {
        Some(Value::Array(a)) => a,
        other => {
            return Err(failure(format!(
                "foreach {:?}: {} is not an array (it is {})",
                node.label,
                f.items_path,
                other.map_or_else(
                    || "missing".to_owned(),
                    |v| v.to_string().chars().take(60).collect()
                )
            )));
        }
    };
    let max = f.max_items.unwrap_or(crate::definition::DEFAULT_MAX_ITEMS) as usize;
    if items.len() > max {
        return Err(failure(format!(
            "foreach {:?}: {} items is more than maxItems ({max})",
            node.label,
            items.len()
        )));
    }
    Ok(items)
}

/// The fan-out done: its counts as the step's output, its progress kept for
/// the join, and `turns` (a timeout's note) in the transcript.
fn fanned_out(
    run: &Loaded,
    node: &compile::Node,
    st: &RunState,
    progress: ForeachProgress,
    local: bool,
    turns: Vec<TurnRow>,
) -> Outcome {
    let mut next = st.clone();
    let ok = progress.results.values().filter(|r| r.ok).count();
    let late = progress.timed_out.len();
    let mut output =
        json!({"total": progress.total, "succeeded": ok, "failed": progress.total - ok - late});
    if late > 0 {
        output["timedOut"] = json!(late);
    }
    next.foreach = Some(progress);
    if local {
        next.local.insert("foreach".into());
    }
    next.step_path = node.path.clone();
    next.steps_done += 1;
    next.output = output;
    enter(&run.program, &mut next, node.next);
    Outcome::Advance {
        next,
        turns,
        msgs: vec![],
        check_post: false,
    }
}

impl FlowEngine {
    /// A `foreach`: runs its step per item, a few at a time, retrying failed
    /// items up to `maxRetries`; each result is committed as it comes.
    pub(super) async fn foreach(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        st: &RunState,
        f: &crate::definition::ForeachStep,
        cancel: &mut watch::Receiver<bool>,
    ) -> std::result::Result<Outcome, StepFailure> {
        let node = &run.program.nodes[cur];
        let ctx = self.context(&run, st);
        let items = items_of(&ctx, f, node)?;
        let local_items = is_local(&st.local, f.items_path.as_str());
        let mut progress = match &st.foreach {
            Some(p) if p.node == cur && p.total == items.len() => p.clone(),
            _ => ForeachProgress {
                node: cur,
                total: items.len(),
                results: BTreeMap::new(),
                started_ms: None,
                timed_out: Vec::new(),
            },
        };
        let limit = f
            .max_retries
            .unwrap_or(crate::definition::DEFAULT_ITEM_RETRIES);
        if let Some(wait) = due_retries(&run, node, st, progress.clone(), limit) {
            return Ok(wait);
        }
        let concurrency = f.concurrency.unwrap_or(1).max(1) as usize;
        let deadline = join_deadline(&run, node, &mut progress, self.inner.clock.now_ms());
        let (mut todo, approved) = todo_of(&mut progress);
        if approved {
            let mut partial = st.clone();
            partial.foreach = Some(progress.clone());
            self.commit(&run, StatusMove::on(RunEvent::StepDone), &partial, &[], &[])?;
        }
        let mut set = tokio::task::JoinSet::new();
        // Seed 003: an item's prompt sees `{{index}}` (from 0) and `{{total}}`.
        let mut ctx = ctx;
        if let Value::Object(m) = &mut ctx {
            m.insert("total".into(), Value::from(items.len()));
        }
        let base = Arc::new(ctx);
        let items = Arc::new(items);
        let spawn = |set: &mut tokio::task::JoinSet<Attempted>,
                     (index, retries, feedback): Todo| {
            let engine = self.clone();
            let run = run.clone();
            let base = base.clone();
            let items = items.clone();
            let step = (*f.step).clone();
            let var = f.item_variable.to_string();
            let mut item_cancel = cancel.clone();
            // The item's manual prompts name the run, as the step's do
            // (issue 19): its back end is made for the run's step.
            set.spawn(async move {
                let item = Item {
                    var: &var,
                    index,
                    value: items.get(index).cloned().unwrap_or(Value::Null),
                };
                let call = ItemCall::new(&run, cur, &step, item, local_items, &base);
                engine
                    .run_item(&call, retries, feedback.as_deref(), &mut item_cancel)
                    .await
            });
        };
        // Items running now, by index (a join's timeout stops them).
        let mut running = BTreeSet::new();
        let mut ended: Vec<TurnRow> = Vec::new();
        loop {
            if deadline.is_some_and(|d| self.inner.clock.now_ms() >= d) {
                set.abort_all();
                while set.join_next().await.is_some() {}
                time_out(&mut progress, &mut todo, &running);
                ended.push(timed_out_turn(&run, node, &progress));
                break;
            }
            while set.len() < concurrency {
                let Some(t) = todo.pop() else { break };
                running.insert(t.0);
                spawn(&mut set, t);
            }
            let joined = match deadline {
                // Wakes when the time is up even if an item hangs.
                Some(d) => {
                    let left = d.saturating_sub(self.inner.clock.now_ms());
                    tokio::select! {
                        j = set.join_next() => j,
                        () = tokio::time::sleep(Duration::from_millis(left)) => continue,
                    }
                }
                None => set.join_next().await,
            };
            let Some(joined) = joined else { break };
            let a = match joined {
                Ok(a) => a,
                Err(e) => return Err(failure(format!("a foreach item stopped unexpectedly: {e}"))),
            };
            running.remove(&a.index);
            let (turns, retry) = record_attempt(&run, node, &mut progress, a, limit);
            todo.extend(retry);
            let mut partial = st.clone();
            partial.foreach = Some(progress.clone());
            self.commit(
                &run,
                StatusMove::on(RunEvent::StepDone),
                &partial,
                &turns,
                &[],
            )?;
        }
        if let Some(wait) = steered_wait(&run, node, st, &progress) {
            return Ok(wait);
        }
        // A subflow item may run scripts: its output is treated as local.
        let local = local_items || matches!(*f.step, Step::Script(_) | Step::Subflow(_));
        Ok(fanned_out(&run, node, st, progress, local, ended))
    }

    /// One attempt at an item after `retry_count` retries, with its
    /// postconditions: the reply text, the output or why it failed, and the
    /// feedback a retry gets (a failed postcondition's message; other
    /// failures are retried without one).
    async fn run_item(
        &self,
        call: &ItemCall<'_>,
        retry_count: u32,
        feedback: Option<&str>,
        cancel: &mut watch::Receiver<bool>,
    ) -> Attempted {
        let mut prompt = None;
        let attempted = self.attempt_item(call, feedback, &mut prompt, cancel).await;
        let (steered, (text, result, feedback)) = match attempted {
            // An agent item (it sent a prompt): its reply steers it.
            Ok((text, _)) if prompt.is_some() => match steer::steer_item(call.node, &text) {
                steer::ItemSteer::Done(output) => {
                    (Steered::No, self.checked_item(call, Ok((text, output))))
                }
                steer::ItemSteer::Fail(why) => {
                    let error = Err(FlowError::agent(why.clone()));
                    (Steered::Failed, (text, error, Some(why)))
                }
                steer::ItemSteer::Ask(why) => {
                    (Steered::Asks, (text, Err(FlowError::agent(why)), None))
                }
            },
            other => (Steered::No, self.checked_item(call, other)),
        };
        Attempted {
            index: call.index,
            retry_count,
            prompt,
            steered,
            text,
            result,
            feedback,
        }
    }

    /// An attempt's reply checked against the item's postconditions.
    fn checked_item(
        &self,
        call: &ItemCall<'_>,
        attempted: std::result::Result<(String, Value), FlowError>,
    ) -> (
        String,
        std::result::Result<Value, FlowError>,
        Option<String>,
    ) {
        let (text, output) = match attempted {
            Err(e) => return (e.message.clone(), Err(e), None),
            Ok(r) => r,
        };
        let mut check = call.ctx.clone();
        if let Value::Object(m) = &mut check {
            m.insert("output".into(), output.clone());
        }
        for c in call.step.common().postconditions {
            // The definition was validated: a check that does not parse cannot occur.
            let Ok(e) = expr::parse(c.check.as_str()) else {
                continue;
            };
            if !e.eval_in(&check, call.run.working_folder.as_deref()) {
                let error = FlowError::contract(format!("postcondition failed: {}", c.error));
                return (text, Err(error), Some(c.error.to_string()));
            }
        }
        (text, Ok(output), None)
    }

    /// One attempt at an item: its reply text and output, or why it failed.
    /// Agent items take the same agent-turn path as agent steps, without
    /// history, and their prompt is a user turn (set in `prompt`) as a step's is.
    async fn attempt_item(
        &self,
        call: &ItemCall<'_>,
        feedback: Option<&str>,
        prompt: &mut Option<TurnRow>,
        cancel: &mut watch::Receiver<bool>,
    ) -> std::result::Result<(String, Value), FlowError> {
        let run = call.run;
        let (agent, identifier, msgs) = match call.step {
            Step::Llm(s) => (
                &s.agent_type,
                &s.identifier,
                render_messages(&s.messages, &call.pctx),
            ),
            Step::Command(s) => match run
                .snapshot
                .commands
                .get(&format!("{}/{}", s.agent_type, s.command_name))
            {
                Some(cmd) => (
                    &s.agent_type,
                    &s.identifier,
                    render_messages(&cmd.messages, &call.pctx),
                ),
                None => {
                    return Err(FlowError::step(format!(
                        "unknown command {:?}",
                        s.command_name.as_str()
                    )));
                }
            },
            Step::Script(s) => {
                return self
                    .run_script(run, s, &call.ctx)
                    .await
                    .map(|v| (v.to_string(), v));
            }
            Step::Subflow(s) => {
                let child =
                    self.create_child(run, s.flow.as_str(), &s.input, &call.ctx, call.local)?;
                return match self.run_child(&child, cancel).await {
                    ChildResult::Done(v, _) => Ok((v.to_string(), v)),
                    ChildResult::Failed(e) => Err(FlowError::subflow(e)),
                    ChildResult::Stopped => Err(FlowError::subflow("stopped")),
                    ChildResult::Waiting => Err(FlowError::subflow(
                        "a subflow run per item cannot wait at a gate",
                    )),
                };
            }
            _ => {
                return Err(FlowError::step(
                    "a foreach item must be an llm, command, script or subflow step",
                ));
            }
        };
        *prompt = Some(self.prompt_turn(run, call.node, Some(call.index), &msgs, feedback));
        let mut scratch = RunState::default();
        self.ask(
            run,
            call.node,
            &mut scratch,
            AgentAsk {
                agent: agent.as_str(),
                identifier: identifier.as_str(),
                messages: msgs,
                feedback,
                keep_history: false,
                item: Some((call.var.to_owned(), call.masked_item.clone())),
            },
        )
        .await
        .map(|(r, _)| (r.clone(), prompt::parse_output(&r)))
        .map_err(|f| f.error)
    }
}
