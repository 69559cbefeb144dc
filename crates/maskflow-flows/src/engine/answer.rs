//! Answering a gate or a run that needs attention.

use super::*;

impl FlowEngine {
    /// Answers the gate a run waits at, or a run that needs attention
    /// (`retry`, `skip`, `stop`), and carries on in the background.
    pub fn answer(&self, id: &str, answer: GateAnswer) -> Result<Started> {
        let (started, handle) = self.prepare_answer(id, answer)?;
        if let Some(h) = handle {
            tokio::spawn(h.run());
        }
        Ok(started)
    }

    /// Like [`FlowEngine::answer`], returning the handle instead of spawning it.
    pub fn prepare_answer(
        &self,
        id: &str,
        answer: GateAnswer,
    ) -> Result<(Started, Option<RunHandle>)> {
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| Error::not_found("flow run", id))?;
        if row.archived {
            return Err(Error::Archived(format!("flow run {id}")));
        }
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(Error::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        let run = self.load(&row)?;
        let option = answer.option.trim().to_owned();
        let input = answer
            .input
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let result = answer.result.filter(|r| !r.is_null());
        let mut next = row.state.clone();
        let cursor = next
            .cursor
            .ok_or_else(|| Error::Conflict(format!("run {id} has no step waiting")))?;
        let node = &run.program.nodes[cursor];
        let (turns, stop) = match (row.status, &row.pending) {
            (_, _) if result.is_some() && !matches!(node.op, Op::Gate { .. }) => {
                return Err(Error::InvalidRequest(format!(
                    "run {id} does not wait at a person's step; a result is only taken there"
                )));
            }
            (RunStatus::Waiting, Some(Pending::Gate { .. })) if steer::is_agent(node) => {
                steer::answer_pause(&run, cursor, &mut next, &option, input)?
            }
            (RunStatus::Waiting, Some(Pending::Gate { .. })) => {
                let answer = Decision {
                    option: &option,
                    input,
                    result,
                };
                let turn = answer_gate(&run, node, &mut next, answer)?;
                next.complete_step(&node.path, &node.label, &self.now());
                (vec![turn], false)
            }
            (RunStatus::NeedsAttention, pending) => {
                let join = matches!(pending, Some(Pending::Join { .. }));
                let (turn, stop) = answer_attention(&run, node, &mut next, &option, join)?;
                (vec![turn], stop)
            }
            (RunStatus::Waiting, Some(Pending::Subflow { conversation_id })) => {
                let child = conversation_id;
                return Err(Error::Conflict(format!(
                    "run {id} waits for its subflow; answer run {child} instead"
                )));
            }
            (status, _) => {
                return Err(Error::Conflict(format!(
                    "run {id} is {} and is not waiting for an answer",
                    status.as_str()
                )));
            }
        };
        if stop {
            return self.record_stop(&run, row.status, &next, turns);
        }
        self.resume_answered(run, row.status, next, turns)
    }

    /// Records the stop an answer asked for.
    fn record_stop(
        &self,
        run: &Loaded,
        from: RunStatus,
        next: &RunState,
        turns: Vec<TurnRow>,
    ) -> Result<(Started, Option<RunHandle>)> {
        self.record_status(&run.id, &run.flow_name, from, RunEvent::Stop, next, turns)?;
        let started = Started {
            status: "stopped".into(),
            flow_name: run.flow_name.clone(),
            conversation_id: run.id.clone(),
            inflight_id: String::new(),
            model_id: self.model_id(&run.snapshot),
        };
        Ok((started, None))
    }

    /// Records the run as running again and returns the handle that drives it on.
    fn resume_answered(
        &self,
        run: Loaded,
        from: RunStatus,
        next: RunState,
        turns: Vec<TurnRow>,
    ) -> Result<(Started, Option<RunHandle>)> {
        self.record_status(
            &run.id,
            &run.flow_name,
            from,
            RunEvent::Answer,
            &next,
            turns,
        )?;
        let inflight_id = self.inner.ids.next_id("inf");
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        self.take_lease(&run.id)?;
        lock(&self.inner.inflight).insert(
            run.id.clone(),
            Inflight {
                inflight_id: inflight_id.clone(),
                cancel: cancel_tx,
                done: done_rx,
            },
        );
        let started = Started {
            status: "started".into(),
            flow_name: run.flow_name.clone(),
            conversation_id: run.id.clone(),
            inflight_id,
            model_id: self.model_id(&run.snapshot),
        };
        Ok((
            started,
            Some(RunHandle {
                engine: self.clone(),
                run: Arc::new(run),
                state: next,
                cancel: cancel_rx,
                done: done_tx,
            }),
        ))
    }
}

/// A person's answer at a gate: the option picked, its note, their result.
struct Decision<'a> {
    option: &'a str,
    input: Option<String>,
    result: Option<Value>,
}

/// The step output a person's decision becomes: `decision` (and `option`,
/// its older name), `input`, `result` (the note when no JSON was given),
/// and, when the result is a JSON
/// object, its own keys, so conditions read it like an agent's output.
fn decision_output(label: &str, input: &Option<String>, result: &Option<Value>) -> Value {
    let mut out = Map::new();
    if let Some(Value::Object(fields)) = result {
        out.extend(fields.clone());
    }
    out.insert("decision".into(), json!(label));
    out.insert("option".into(), json!(label));
    out.insert("input".into(), json!(input));
    // A note typed as text is the person's result when no JSON was given.
    let result = result
        .clone()
        .or_else(|| input.clone().map(Value::String))
        .unwrap_or(Value::Null);
    out.insert("result".into(), result);
    Value::Object(out)
}

/// The answer to a gate: the chosen option (its input and the person's
/// result) becomes the step's output and `gate`, and the run moves to the
/// option's target.
fn answer_gate(
    run: &Loaded,
    node: &compile::Node,
    next: &mut RunState,
    answer: Decision<'_>,
) -> Result<TurnRow> {
    let Decision {
        option,
        mut input,
        result,
    } = answer;
    let Op::Gate { step, targets } = &node.op else {
        return Err(Error::Corrupt(format!(
            "run {} waits at a step that is not a gate",
            run.id
        )));
    };
    let Some(i) = step
        .options
        .iter()
        .position(|o| o.label.as_str().eq_ignore_ascii_case(option))
    else {
        let labels: Vec<&str> = step.options.iter().map(|o| o.label.as_str()).collect();
        return Err(Error::InvalidRequest(format!(
            "option {option:?} is not one of {labels:?}"
        )));
    };
    let chosen = &step.options[i];
    // A text result is the note an option asks for when no note was given.
    if input.is_none()
        && let Some(Value::String(t)) = &result
        && !t.trim().is_empty()
    {
        input = Some(t.trim().to_owned());
    }
    if chosen.requires_input && input.is_none() {
        return Err(Error::InvalidRequest(format!(
            "option {:?} requires input",
            chosen.label.as_str()
        )));
    }
    let decision = decision_output(chosen.label.as_str(), &input, &result);
    next.output = decision.clone();
    next.local.remove("output");
    next.gate = Some(decision.clone());
    if let Some(sid) = &node.id {
        next.steps.insert(sid.clone(), decision);
        next.local.remove(&format!("steps.{sid}"));
    }
    next.step_path = node.path.clone();
    next.steps_done += 1;
    let target = match &targets[i] {
        Target::Continue => node.next,
        Target::End => None,
        Target::Node(n) => Some(*n),
    };
    enter(&run.program, next, target);
    let mut content = match &input {
        Some(t) => format!("{}: {t}", chosen.label),
        None => chosen.label.to_string(),
    };
    if let Some(r) = result.as_ref().filter(|r| !r.is_string()) {
        content.push_str(&format!("\n{r}"));
    }
    Ok(TurnRow {
        role: TurnRole::User,
        content,
        command: meta(run, node, None),
    })
}

/// The answer to a run that needs attention: `retry`, `skip` or `stop`
/// (true); `join` when failed foreach items are what needs it.
fn answer_attention(
    run: &Loaded,
    node: &compile::Node,
    next: &mut RunState,
    option: &str,
    join: bool,
) -> Result<(TurnRow, bool)> {
    let choice = option.to_ascii_lowercase();
    let mut stop = false;
    match choice.as_str() {
        "retry" => {
            next.pending_retry = None;
            answer_due_retries(next, "retry");
            if join && let Some(p) = next.foreach.as_mut() {
                p.results.retain(|_, r| r.ok);
                let fnode = p.node;
                enter(&run.program, next, Some(fnode));
            }
        }
        "skip" => {
            next.pending_retry = None;
            if join {
                next.join_skip_failures = true;
            } else if !answer_due_retries(next, "skip") {
                next.step_path = node.path.clone();
                enter(&run.program, next, node.next);
            }
        }
        "stop" => stop = true,
        _ => {
            return Err(Error::InvalidRequest(format!(
                "a run that needs attention takes retry, skip or stop, not {option:?}"
            )));
        }
    }
    Ok((
        TurnRow {
            role: TurnRole::User,
            content: choice,
            command: meta(run, node, None),
        },
        stop,
    ))
}
