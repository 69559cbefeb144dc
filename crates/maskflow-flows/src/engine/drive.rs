//! Driving a run step by step until it ends, waits or is stopped.

use std::ops::ControlFlow;

use super::*;

/// The attempts a step gets before a failed contract asks the person: the
/// first and one retry with the failure as feedback (seed 002).
pub(super) const STEP_ATTEMPTS: u32 = 2;

/// A step that moved on, before its postconditions are checked.
struct Advanced {
    next: RunState,
    turns: Vec<TurnRow>,
    msgs: Vec<AgentMessageRow>,
    check_post: bool,
}

/// How a step ended.
pub(super) enum Outcome {
    Advance {
        next: RunState,
        turns: Vec<TurnRow>,
        msgs: Vec<AgentMessageRow>,
        check_post: bool,
    },
    Wait {
        next: RunState,
        /// [`RunEvent::Wait`] or [`RunEvent::Escalate`].
        event: RunEvent,
        pending: Pending,
        turns: Vec<TurnRow>,
    },
    /// An agent asked for a person (seed 003): wait, keeping its messages.
    AskPerson {
        next: RunState,
        pending: Pending,
        turns: Vec<TurnRow>,
        msgs: Vec<AgentMessageRow>,
    },
    /// An agent reported its step failed (or replied malformed): the step's
    /// contract retries it with `feedback`, then asks for attention.
    Rejected {
        next: RunState,
        turns: Vec<TurnRow>,
        msgs: Vec<AgentMessageRow>,
        feedback: String,
    },
    Stopped,
}

pub(super) struct StepFailure {
    pub(super) error: FlowError,
    pub(super) turns: Vec<TurnRow>,
}

pub(super) fn failure(message: impl Into<String>) -> StepFailure {
    StepFailure {
        error: FlowError::step(message),
        turns: Vec::new(),
    }
}

impl From<FlowError> for StepFailure {
    fn from(error: FlowError) -> Self {
        StepFailure {
            error,
            turns: Vec::new(),
        }
    }
}

/// Moves the cursor to `target`, closing loops the target is not in and
/// opening (at iteration 1) those it is in.
pub(super) fn enter(program: &Program, state: &mut RunState, target: Option<usize>) {
    state.cursor = target;
    let Some(t) = target else {
        state.loop_stack.clear();
        return;
    };
    let loops = &program.nodes[t].loops;
    let keep = state
        .loop_stack
        .iter()
        .zip(loops)
        .take_while(|(f, l)| f.node == **l)
        .count();
    state.loop_stack.truncate(keep);
    for &l in &loops[keep..] {
        state.loop_stack.push(LoopFrame {
            loop_step_path: program.nodes[l].path.clone(),
            iteration: 1,
            node: l,
        });
    }
}

/// Resolves when `rx` turns true; never when its sender is gone (nobody can
/// raise it any more).
pub(super) async fn raised(rx: &mut watch::Receiver<bool>) {
    if rx.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}

impl FlowEngine {
    /// Resolves when the run is told to stop: through `cancel` (its
    /// in-flight entry's, or its parent run's) or its own stop signal.
    async fn cancelled(cancel: &mut watch::Receiver<bool>, stop: &mut StopSignal<'_>) {
        tokio::select! {
            _ = raised(cancel) => {}
            _ = stop.raised() => {}
        }
    }

    pub(super) fn drive<'a>(
        &'a self,
        run: Arc<Loaded>,
        mut st: RunState,
        cancel: &'a mut watch::Receiver<bool>,
    ) -> maskflow_llm::BoxFuture<'a, RunStatus> {
        Box::pin(async move {
            let mut stop = self.stop_signal(&run.id);
            loop {
                if *cancel.borrow() || stop.is_raised() {
                    return self.end(&run, &st, RunEvent::Stop, None, vec![]);
                }
                let Some(cur) = st.cursor else {
                    return self.end(&run, &st, RunEvent::Complete, None, vec![]);
                };
                let node = &run.program.nodes[cur];
                if !node.pre.is_empty() {
                    let ctx = self.context(&run, &st);
                    let folder = run.working_folder.as_deref();
                    if let Some(c) = node.pre.iter().find(|c| !c.check.eval_in(&ctx, folder)) {
                        return self.fail(
                            &run,
                            &st,
                            Some(cur),
                            FlowError::contract(format!(
                                "precondition of step {:?} failed: {}",
                                node.label, c.error
                            )),
                            vec![],
                        );
                    }
                }
                // A step with postconditions writes into a staged folder:
                // its writes are rolled back when a postcondition fails.
                let staged = self.stage(&run, cur);
                let mut step_cancel = cancel.clone();
                // A manual prompt the step makes names this run (its agents'
                // back ends are made for the step: `for_flow_step`), so an
                // answer given after a restart resumes it (issue 19).
                let step = self.exec(run.clone(), cur, &st, &mut step_cancel);
                let result = tokio::select! {
                    r = step => r,
                    _ = Self::cancelled(cancel, &mut stop) => {
                        // A fan-out commits items as they finish (and retries
                        // as they fall due): the stop keeps what was committed.
                        let last = fstore::get_run(&self.db(), &run.id)
                            .ok()
                            .flatten()
                            .map_or(st, |r| r.state);
                        return self.end(&run, &last, RunEvent::Stop, None, vec![]);
                    }
                };
                match result {
                    Err(f) if f.error.code == crate::error::FlowErrorCode::Privacy => {
                        return self.escalate_blocked(&run, &st, cur, f);
                    }
                    Err(f) => return self.fail(&run, &st, Some(cur), f.error, f.turns),
                    Ok(Outcome::Stopped) => {
                        return self.end(&run, &st, RunEvent::Stop, None, vec![]);
                    }
                    Ok(Outcome::Wait {
                        next,
                        event,
                        pending,
                        turns,
                    }) => {
                        return match self.commit(
                            &run,
                            StatusMove::on(event).waiting(&pending),
                            &next,
                            &turns,
                            &[],
                        ) {
                            Ok(status) => status,
                            Err(e) => self.fail(&run, &st, Some(cur), e, vec![]),
                        };
                    }
                    Ok(o @ (Outcome::AskPerson { .. } | Outcome::Rejected { .. })) => {
                        match self.settle_steered(&run, &st, cur, o) {
                            ControlFlow::Continue(next) => st = next,
                            ControlFlow::Break(status) => return status,
                        }
                    }
                    Ok(Outcome::Advance {
                        next,
                        turns,
                        msgs,
                        check_post,
                    }) => {
                        let advanced = Advanced {
                            next,
                            turns,
                            msgs,
                            check_post,
                        };
                        match self.settle(&run, &st, cur, advanced, staged) {
                            ControlFlow::Continue(next) => st = next,
                            ControlFlow::Break(status) => return status,
                        }
                    }
                }
            }
        })
    }

    /// The working folder copied aside before step `cur`, when it has
    /// postconditions and the run a folder (`<home>/staging/<run>/`).
    fn stage(&self, run: &Loaded, cur: usize) -> Option<super::staging::Stage> {
        let node = &run.program.nodes[cur];
        let folder = run.working_folder.as_deref()?;
        if node.post.is_empty() {
            return None;
        }
        let copy = self.inner.home.join("staging").join(&run.id);
        if copy.starts_with(folder) {
            let inside = std::io::Error::other(format!(
                "the data folder {} is inside the working folder",
                self.inner.home.display()
            ));
            return Some(Err(super::staging::NotStaged::Io(inside)));
        }
        Some(super::staging::Staged::take(folder, &copy))
    }

    /// A prompt the privacy guard refused: nothing was sent, and the same
    /// prompt would be refused again, so the run asks a person at once
    /// (retry once the flow or its files are fixed, skip, or stop), keeping
    /// every completed step and its place at this one.
    fn escalate_blocked(
        &self,
        run: &Loaded,
        st: &RunState,
        cur: usize,
        f: StepFailure,
    ) -> RunStatus {
        let node = &run.program.nodes[cur];
        let message = f.error.message;
        let mut turns = f.turns;
        turns.push(TurnRow {
            role: TurnRole::System,
            content: message.clone(),
            command: meta(run, node, None),
        });
        let pending = Pending::Attention {
            reason: "privacy guard".into(),
            step: node.label.clone(),
            step_path: node.path.clone(),
            error: message,
            options: ATTENTION_OPTIONS.map(str::to_owned).to_vec(),
        };
        let event = RunEvent::Escalate;
        match self.commit(
            run,
            StatusMove::on(event).waiting(&pending),
            st,
            &turns,
            &[],
        ) {
            Ok(status) => status,
            Err(e) => self.fail(run, st, Some(cur), e, vec![]),
        }
    }

    /// Commits what an agent's reply asked for: a wait for a person, or a
    /// failed step retried through its contract.
    fn settle_steered(
        &self,
        run: &Loaded,
        st: &RunState,
        cur: usize,
        outcome: Outcome,
    ) -> ControlFlow<RunStatus, RunState> {
        match outcome {
            Outcome::AskPerson {
                next,
                pending,
                turns,
                msgs,
            } => {
                let event = RunEvent::Wait;
                let committed = self.commit(
                    run,
                    StatusMove::on(event).waiting(&pending),
                    &next,
                    &turns,
                    &msgs,
                );
                ControlFlow::Break(match committed {
                    Ok(status) => status,
                    Err(e) => self.fail(run, st, Some(cur), e, vec![]),
                })
            }
            Outcome::Rejected {
                next,
                turns,
                msgs,
                feedback,
            } => {
                let label = &run.program.nodes[cur].label;
                let error = format!("step {label:?} failed: {feedback}");
                let rejected = Advanced {
                    next,
                    turns,
                    msgs,
                    check_post: false,
                };
                self.retry_or_attention(run, st, cur, rejected, (feedback, error, "agent status"))
            }
            _ => ControlFlow::Break(self.fail(
                run,
                st,
                Some(cur),
                FlowError::step("an agent outcome was expected"),
                vec![],
            )),
        }
    }

    /// Checks the postconditions of an advanced step and commits it. A first
    /// failure retries the step with the error as feedback; a second one
    /// waits for attention. Continues with the state to run next, or breaks
    /// with the status the run ends (or waits) in.
    fn settle(
        &self,
        run: &Loaded,
        st: &RunState,
        cur: usize,
        mut advanced: Advanced,
        staged: Option<super::staging::Stage>,
    ) -> ControlFlow<RunStatus, RunState> {
        let node = &run.program.nodes[cur];
        let failed = if advanced.check_post && !node.post.is_empty() {
            let ctx = self.context(run, &advanced.next);
            // File checks read what the step wrote in the run's folder.
            let folder = run.working_folder.as_deref();
            node.post.iter().find(|c| !c.check.eval_in(&ctx, folder))
        } else {
            None
        };
        let Some(c) = failed else {
            let Advanced {
                mut next,
                turns,
                msgs,
                ..
            } = advanced;
            next.pending_retry = None;
            next.complete_step(&node.path, &node.label, &self.now());
            if let Err(e) = self.commit(
                run,
                StatusMove::on(RunEvent::StepDone),
                &next,
                &turns,
                &msgs,
            ) {
                return ControlFlow::Break(self.fail(run, st, Some(cur), e, vec![]));
            }
            return ControlFlow::Continue(next);
        };
        let error = format!("postcondition of step {:?} failed: {}", node.label, c.error);
        if let Some(staged) = &staged {
            advanced.turns.push(TurnRow {
                role: TurnRole::System,
                content: super::staging::rollback_note(staged.as_ref()),
                command: meta(run, node, None),
            });
        }
        let failure = (c.error.to_string(), error, "postcondition");
        self.retry_or_attention(run, st, cur, advanced, failure)
    }

    /// A step that failed its contract — `(feedback, error, reason)` — is
    /// retried once with the feedback, then waits for attention.
    fn retry_or_attention(
        &self,
        run: &Loaded,
        st: &RunState,
        cur: usize,
        advanced: Advanced,
        (feedback, error, reason): (String, String, &str),
    ) -> ControlFlow<RunStatus, RunState> {
        let node = &run.program.nodes[cur];
        let Advanced {
            next,
            mut turns,
            msgs,
            ..
        } = advanced;
        let mut retry = st.clone();
        retry.agent_conversations = next.agent_conversations.clone();
        retry.conversation_agents = next.conversation_agents.clone();
        let attempt = st
            .pending_retry
            .as_ref()
            .filter(|p| p.node == cur)
            .map_or(0, |p| p.attempt);
        retry.pending_retry = Some(PendingRetry {
            node: cur,
            error: feedback,
            attempt: attempt + 1,
        });
        turns.push(TurnRow {
            role: TurnRole::System,
            content: error.clone(),
            command: meta(run, node, None),
        });
        if attempt + 1 < STEP_ATTEMPTS {
            if let Err(e) = self.commit(
                run,
                StatusMove::on(RunEvent::StepDone),
                &retry,
                &turns,
                &msgs,
            ) {
                return ControlFlow::Break(self.fail(run, st, Some(cur), e, vec![]));
            }
            return ControlFlow::Continue(retry);
        }
        let pending = Pending::Attention {
            reason: reason.into(),
            step: node.label.clone(),
            step_path: node.path.clone(),
            error,
            options: ATTENTION_OPTIONS.map(str::to_owned).to_vec(),
        };
        match self.commit(
            run,
            StatusMove::on(RunEvent::Escalate).waiting(&pending),
            &retry,
            &turns,
            &msgs,
        ) {
            Ok(status) => ControlFlow::Break(status),
            Err(e) => ControlFlow::Break(self.fail(run, st, Some(cur), e, vec![])),
        }
    }

    /// Marks `next` as having completed `node` with `output`.
    pub(super) fn complete_with(
        next: &mut RunState,
        node: &compile::Node,
        output: Value,
        local: bool,
    ) {
        next.output = output.clone();
        if local {
            next.local.insert("output".into());
        } else {
            next.local.remove("output");
        }
        if let Some(id) = &node.id {
            next.steps.insert(id.clone(), output);
            let key = format!("steps.{id}");
            if local {
                next.local.insert(key);
            } else {
                next.local.remove(&key);
            }
        }
        next.step_path = node.path.clone();
        next.steps_done += 1;
    }
}
