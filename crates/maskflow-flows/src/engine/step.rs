//! One step, one function per step kind. The kinds that ask an agent, run a
//! script, start a subflow or fan out live beside their helpers
//! (`agent.rs`, `script.rs`, `subflow.rs`, `foreach.rs`).

use super::*;

/// What running one step yields.
pub(super) type StepResult = std::result::Result<Outcome, StepFailure>;

/// The step moved on: commit `next` with these turns and agent messages.
pub(super) fn advance(
    next: RunState,
    turns: Vec<TurnRow>,
    msgs: Vec<AgentMessageRow>,
    check_post: bool,
) -> StepResult {
    Ok(Outcome::Advance {
        next,
        turns,
        msgs,
        check_post,
    })
}

impl FlowEngine {
    /// Runs the step at `cur` of `run` from state `st`.
    pub(super) async fn exec(
        &self,
        run: Arc<Loaded>,
        cur: usize,
        st: &RunState,
        cancel: &mut watch::Receiver<bool>,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        match &node.op {
            Op::Llm(_) | Op::Command(_) => self.exec_agent(&run, cur, st).await,
            Op::Break { step, loop_start } => {
                self.exec_break(&run, cur, st, step, *loop_start).await
            }
            Op::LoopStart { body, .. } => exec_loop_start(&run, cur, st, *body),
            Op::LoopEnd { start } => exec_loop_end(&run, st, *start),
            Op::Decision { branches, default } => {
                self.exec_decision(&run, cur, st, branches, *default)
            }
            Op::Gate { step, .. } => self.exec_gate(&run, cur, st, step),
            Op::Script(s) => self.exec_script(&run, cur, st, s).await,
            Op::Subflow(s) => self.exec_subflow(&run, cur, st, s, cancel).await,
            Op::Foreach(f) => self.foreach(run.clone(), cur, st, f, cancel).await,
            Op::Join(j) => self.exec_join(&run, cur, st, j).await,
        }
    }

    /// A decision: the first branch whose condition holds, else the default.
    fn exec_decision(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        branches: &[compile::CompiledBranch],
        default: Option<Option<usize>>,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let mut next = st.clone();
        let ctx = self.context(run, st);
        let mut chosen = None;
        for (i, b) in branches.iter().enumerate() {
            if b.condition.eval(&ctx) {
                if let Some(m) = b.max_iterations {
                    let n = next.edge_counts.entry(b.key.clone()).or_insert(0);
                    *n += 1;
                    if *n > m {
                        return Err(failure(format!(
                            "decision {:?}: branch {:?} was taken more than its maxIterations ({m})",
                            node.label, b.source
                        )));
                    }
                }
                chosen = Some((format!("branch {}: {}", i + 1, b.source), b.target));
                break;
            }
        }
        let (why, target) = match (chosen, default) {
            (Some(c), _) => c,
            (None, Some(t)) => ("default".to_owned(), t),
            (None, None) => {
                return Err(failure(format!(
                    "decision {:?}: no branch matched and it has no default",
                    node.label
                )));
            }
        };
        next.step_path = node.path.clone();
        next.steps_done += 1;
        enter(&run.program, &mut next, target);
        let turn = TurnRow {
            role: TurnRole::System,
            content: format!("→ {why}"),
            command: meta(run, node, None),
        };
        advance(next, vec![turn], vec![], true)
    }

    /// A gate: shows its prompt and context and waits for an answer.
    fn exec_gate(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        step: &crate::definition::GateStep,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let ctx = self.context(run, st);
        let mut shown = Map::new();
        for c in &step.context {
            let v = expr::parse_path(c.as_str())
                .ok()
                .and_then(|p| expr::lookup(&ctx, &p))
                .unwrap_or(Value::Null);
            shown.insert(c.to_string(), v);
        }
        let prompt_text = template::render(step.prompt.as_str(), &ctx);
        let pending = Pending::Gate {
            prompt: prompt_text.clone(),
            context: shown,
            step_path: node.path.clone(),
            options: step
                .options
                .iter()
                .map(|o| GateChoice {
                    label: o.label.to_string(),
                    requires_input: o.requires_input,
                })
                .collect(),
        };
        let turn = TurnRow {
            role: TurnRole::System,
            content: prompt_text,
            command: meta(run, node, None),
        };
        Ok(Outcome::Wait {
            next: st.clone(),
            event: RunEvent::Wait,
            pending,
            turns: vec![turn],
        })
    }
}

/// A loop's start: enters its body (at iteration 1, see [`enter`]).
fn exec_loop_start(run: &Loaded, cur: usize, st: &RunState, body: usize) -> StepResult {
    let node = &run.program.nodes[cur];
    let mut next = st.clone();
    next.step_path = node.path.clone();
    next.steps_done += 1;
    enter(&run.program, &mut next, Some(body));
    advance(next, vec![], vec![], false)
}

/// A loop's end: back to the body for the next iteration, within `maxIterations`.
fn exec_loop_end(run: &Loaded, st: &RunState, start: usize) -> StepResult {
    let program = &run.program;
    let mut next = st.clone();
    let (max, body) = match &program.nodes[start].op {
        Op::LoopStart {
            max_iterations,
            body,
        } => (*max_iterations, *body),
        _ => return Err(failure("a loop end points at a step that is not a loop")),
    };
    let Some(frame) = next.loop_stack.last_mut().filter(|f| f.node == start) else {
        return Err(failure(format!(
            "loop {:?} is not open",
            program.nodes[start].label
        )));
    };
    frame.iteration += 1;
    if let Some(m) = max
        && frame.iteration > m
    {
        return Err(failure(format!(
            "loop {:?} reached maxIterations ({m}) without a break",
            program.nodes[start].label
        )));
    }
    next.steps_done += 1;
    next.cursor = Some(body);
    advance(next, vec![], vec![], false)
}
