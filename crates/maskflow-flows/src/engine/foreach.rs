//! Fan-out over items and the join that gathers them.

use super::*;

/// What every attempt at one foreach item needs.
struct ItemCall<'a> {
    run: &'a Loaded,
    node: &'a compile::Node,
    step: &'a Step,
    var: &'a str,
    /// The item as agents see it (masked when it is local).
    masked_item: Value,
    /// The prompt context (without `output` and `steps`, local values masked).
    pctx: Value,
    /// The expression context, with the item and its index.
    ctx: Value,
    local: bool,
}

/// The item's result and its transcript turn.
fn item_turn(
    run: &Loaded,
    node: &compile::Node,
    index: usize,
    last: (String, std::result::Result<Value, FlowError>),
) -> (ItemResult, TurnRow) {
    let command = meta(run, node, Some(index));
    let (text, result) = last;
    let (result, content) = match result {
        Ok(output) => (
            ItemResult {
                ok: true,
                output: Some(output),
                error: None,
            },
            text,
        ),
        Err(FlowError { message: e, .. }) => (
            ItemResult {
                ok: false,
                output: None,
                error: Some(e.clone()),
            },
            if text.is_empty() || text == e {
                format!("Failed: {e}")
            } else {
                format!("{text}\nFailed: {e}")
            },
        ),
    };
    (
        result,
        TurnRow {
            role: TurnRole::Assistant,
            content,
            command,
        },
    )
}

impl FlowEngine {
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
        let path = expr::parse_path(f.items_path.as_str()).map_err(|e| failure(e.to_string()))?;
        let items = match expr::lookup(&ctx, &path) {
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
        let local_items = is_local(&st.local, f.items_path.as_str());
        let mut progress = match &st.foreach {
            Some(p) if p.node == cur && p.total == items.len() => p.clone(),
            _ => ForeachProgress {
                node: cur,
                total: items.len(),
                results: BTreeMap::new(),
            },
        };
        let concurrency = f.concurrency.unwrap_or(1).max(1) as usize;
        let mut todo: Vec<usize> = (0..items.len())
            .filter(|i| !progress.results.contains_key(i))
            .collect();
        todo.reverse();
        let mut set = tokio::task::JoinSet::new();
        // Seed 003: an item's prompt sees `{{index}}` (from 0) and `{{total}}`.
        let mut ctx = ctx;
        if let Value::Object(m) = &mut ctx {
            m.insert("total".into(), Value::from(items.len()));
        }
        let base = Arc::new(ctx);
        let items = Arc::new(items);
        let spawn = |set: &mut tokio::task::JoinSet<(usize, ItemResult, TurnRow)>, index: usize| {
            let engine = self.clone();
            let run = run.clone();
            let base = base.clone();
            let items = items.clone();
            let step = (*f.step).clone();
            let var = f.item_variable.to_string();
            let mut item_cancel = cancel.clone();
            set.spawn(async move {
                let item = items.get(index).cloned().unwrap_or(Value::Null);
                engine
                    .run_item(
                        run,
                        cur,
                        &step,
                        &var,
                        index,
                        item,
                        local_items,
                        &base,
                        &mut item_cancel,
                    )
                    .await
            });
        };
        while set.len() < concurrency {
            let Some(i) = todo.pop() else { break };
            spawn(&mut set, i);
        }
        while let Some(joined) = set.join_next().await {
            let (index, result, turn) = match joined {
                Ok(r) => r,
                Err(e) => return Err(failure(format!("a foreach item stopped unexpectedly: {e}"))),
            };
            progress.results.insert(index, result);
            let mut partial = st.clone();
            partial.foreach = Some(progress.clone());
            self.commit(&run, RunEvent::StepDone, &partial, None, None, &[turn], &[])?;
            if let Some(i) = todo.pop() {
                spawn(&mut set, i);
            }
        }
        let mut next = st.clone();
        let ok = progress.results.values().filter(|r| r.ok).count();
        let output =
            json!({"total": progress.total, "succeeded": ok, "failed": progress.total - ok});
        next.foreach = Some(progress);
        if local_items || matches!(*f.step, Step::Script(_)) {
            next.local.insert("foreach".into());
        }
        next.step_path = node.path.clone();
        next.steps_done += 1;
        next.output = output;
        enter(&run.program, &mut next, node.next);
        Ok(Outcome::Advance {
            next,
            turns: vec![],
            msgs: vec![],
            check_post: false,
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_item(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        step: &Step,
        var: &str,
        index: usize,
        item: Value,
        local: bool,
        base: &Value,
        cancel: &mut watch::Receiver<bool>,
    ) -> (usize, ItemResult, TurnRow) {
        let node = &run.program.nodes[cur];
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
        let mut masked_item = item.clone();
        if local {
            let mut set = std::collections::BTreeSet::new();
            set.insert(var.to_owned());
            mask_local(&mut pctx, &set);
            let mut wrapper = json!({ "v": masked_item });
            mask_local(&mut wrapper, &["v".to_owned()].into_iter().collect());
            masked_item = wrapper["v"].take();
        }
        let post: Vec<compile::Contract> = step
            .common()
            .postconditions
            .iter()
            .filter_map(|c| {
                expr::parse(c.check.as_str())
                    .ok()
                    .map(|check| compile::Contract {
                        check,
                        error: c.error.to_string(),
                    })
            })
            .collect();
        let call = ItemCall {
            run: &run,
            node,
            step,
            var,
            masked_item,
            pctx,
            ctx,
            local,
        };
        let mut feedback: Option<String> = None;
        let mut last = (String::new(), Err(FlowError::step(String::new())));
        for _attempt in 0..2 {
            match self.attempt_item(&call, feedback.as_deref(), cancel).await {
                Err(e) => {
                    last = (e.message.clone(), Err(e));
                    break;
                }
                Ok((text, output)) => {
                    let mut check = call.ctx.clone();
                    if let Value::Object(m) = &mut check {
                        m.insert("output".into(), output.clone());
                    }
                    match post.iter().find(|c| !c.check.eval(&check)) {
                        None => {
                            last = (text, Ok(output));
                            break;
                        }
                        Some(c) => {
                            feedback = Some(c.error.clone());
                            last = (
                                text,
                                Err(FlowError::contract(format!(
                                    "postcondition failed: {}",
                                    c.error
                                ))),
                            );
                        }
                    }
                }
            }
        }
        let (result, turn) = item_turn(&run, node, index, last);
        (index, result, turn)
    }

    /// One attempt at an item: its reply text and output, or why it failed.
    /// Agent items take the same agent-turn path as agent steps, without history.
    async fn attempt_item(
        &self,
        call: &ItemCall<'_>,
        feedback: Option<&str>,
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
        let mut scratch = RunState::default();
        self.ask(
            run,
            call.node,
            &mut scratch,
            agent.as_str(),
            identifier.as_str(),
            msgs,
            feedback,
            false,
            Some((call.var.to_owned(), call.masked_item.clone())),
        )
        .await
        .map(|(r, _)| (r.clone(), prompt::parse_output(&r)))
        .map_err(|f| f.error)
    }
}

/// A `join`: gathers the foreach results; failed items fail the run, wait
/// for an answer or are skipped, as its `onFailure` says.
pub(super) fn exec_join(
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
    let local = progress.results.values().any(|r| r.ok) && st.local.contains("foreach");
    next.local.remove("foreach");
    let output = json!({"total": progress.total, "succeeded": results.len(), "results": results, "failed": failed});
    let turn = TurnRow {
        role: TurnRole::System,
        content: format!(
            "Joined {} of {} items ({} failed)",
            progress.total - failed.len(),
            progress.total,
            failed.len()
        ),
        command: meta(run, node, None),
    };
    FlowEngine::complete_with(&mut next, node, output, local);
    enter(&run.program, &mut next, node.next);
    advance(next, vec![turn], vec![], true)
}
