//! Subflow runs: creating, driving and waking the parent.

use super::*;

impl FlowEngine {
    /// A `subflow` step: creates the child run (once, committed before it
    /// runs) and drives it; a waiting child makes this run wait too.
    pub(super) async fn exec_subflow(
        &self,
        run: &Loaded,
        cur: usize,
        st: &RunState,
        s: &crate::definition::SubflowStep,
        cancel: &mut watch::Receiver<bool>,
    ) -> StepResult {
        let node = &run.program.nodes[cur];
        let mut next = st.clone();
        let ctx = self.context(run, st);
        let local_input = s
            .input
            .values()
            .any(|v| template_uses_local(v.as_str(), &st.local));
        let child = match &st.child {
            Some(c) => c.clone(),
            None => {
                let id = self.create_child(run, s.flow.as_str(), &s.input, &ctx, local_input)?;
                next.child = Some(id.clone());
                let mut partial = st.clone();
                partial.child = Some(id.clone());
                self.commit(run, StatusMove::on(RunEvent::StepDone), &partial, &[], &[])?;
                id
            }
        };
        match self.run_child(&child, cancel).await {
            ChildResult::Done(output, local) => {
                next.child = None;
                let turn = TurnRow {
                    role: TurnRole::Assistant,
                    content: output.to_string(),
                    command: meta(run, node, None),
                };
                Self::complete_with(&mut next, node, output, local);
                enter(&run.program, &mut next, node.next);
                advance(next, vec![turn], vec![], true)
            }
            ChildResult::Failed(e) => {
                Err(FlowError::subflow(format!("subflow {:?} failed: {e}", s.flow.as_str())).into())
            }
            ChildResult::Stopped => Ok(Outcome::Stopped),
            ChildResult::Waiting => Ok(Outcome::Wait {
                next,
                event: RunEvent::Wait,
                pending: Pending::Subflow {
                    conversation_id: child,
                },
                turns: vec![],
            }),
        }
    }

    pub(super) fn create_child(
        &self,
        run: &Loaded,
        flow: &str,
        mapping: &BTreeMap<String, crate::definition::Text>,
        ctx: &Value,
        local: bool,
    ) -> std::result::Result<String, FlowError> {
        let depth = run.depth + 1;
        if depth > MAX_SUBFLOW_DEPTH {
            return Err(FlowError::subflow(format!(
                "the subflow depth limit ({MAX_SUBFLOW_DEPTH}) is reached: flow {:?} at depth {} cannot start {flow:?}",
                run.flow_name, run.depth
            )));
        }
        let def = agents::load_flow(&self.inner.home, flow)
            .map_err(|e| FlowError::subflow(e.to_string()))?;
        let snapshot = self
            .snapshot_of(def)
            .map_err(|e| FlowError::subflow(e.to_string()))?;
        let program =
            compile::compile(&snapshot.flow).map_err(|e| FlowError::subflow(e.to_string()))?;
        let mut input = Map::new();
        for (k, v) in mapping {
            let text = v.as_str();
            let value = if text.contains("{{") {
                Value::String(template::render(text, ctx))
            } else {
                match expr::parse_path(text) {
                    Ok(p) => expr::lookup(ctx, &p).unwrap_or(Value::Null),
                    Err(_) => Value::String(text.to_owned()),
                }
            };
            input.insert(k.clone(), value);
        }
        let now = self.now();
        let mut row = self
            .new_row(
                flow,
                &snapshot,
                &program,
                Launch {
                    input,
                    working_folder: run.working_folder.as_deref(),
                    parent: Some((&run.id, depth)),
                },
                &now,
            )
            .map_err(|e| FlowError::subflow(e.to_string()))?;
        if local {
            row.state.local.insert("input".into());
        }
        fstore::insert_run(&self.db(), &row, self.inner.storage.account())
            .map_err(|e| FlowError::store(e.to_string()))?;
        Ok(row.id)
    }

    pub(super) async fn run_child(
        &self,
        child: &str,
        cancel: &mut watch::Receiver<bool>,
    ) -> ChildResult {
        let row = match fstore::get_run(&self.db(), child) {
            Ok(Some(r)) => r,
            Ok(None) => return ChildResult::Failed(format!("subflow run {child} is gone")),
            Err(e) => return ChildResult::Failed(e.to_string()),
        };
        let status = match row.status {
            RunStatus::Completed => RunStatus::Completed,
            RunStatus::Waiting | RunStatus::NeedsAttention => return ChildResult::Waiting,
            _ => {
                let loaded = match self.load(&row) {
                    Ok(l) => Arc::new(l),
                    Err(e) => return ChildResult::Failed(e.to_string()),
                };
                let mut st = row.state.clone();
                if row.status == RunStatus::Failed {
                    return ChildResult::Failed(row.error.unwrap_or_default());
                }
                st.format = state::FORMAT;
                self.drive(loaded, st, cancel).await
            }
        };
        match status {
            RunStatus::Completed => match fstore::get_run(&self.db(), child) {
                Ok(Some(r)) => {
                    ChildResult::Done(r.state.output.clone(), r.state.local.contains("output"))
                }
                _ => ChildResult::Failed(format!("subflow run {child} is gone")),
            },
            RunStatus::Failed => ChildResult::Failed(
                fstore::get_run(&self.db(), child)
                    .ok()
                    .flatten()
                    .and_then(|r| r.error)
                    .unwrap_or_default(),
            ),
            RunStatus::Stopped => ChildResult::Stopped,
            RunStatus::Waiting | RunStatus::NeedsAttention => ChildResult::Waiting,
            RunStatus::Running => ChildResult::Failed("subflow ended while running".into()),
        }
    }

    /// A subflow run that finished after an answer wakes its waiting parent.
    pub(super) fn after_child_finished(&self, run: &Loaded, status: RunStatus) {
        let Some(parent) = &run.parent_id else { return };
        if !matches!(status, RunStatus::Completed | RunStatus::Failed) {
            return;
        }
        let Ok(Some(row)) = fstore::get_run(&self.db(), parent) else {
            return;
        };
        let waits = row.status == RunStatus::Waiting
            && row.pending.as_ref().and_then(Pending::child) == Some(run.id.as_str());
        if !waits || lock(&self.inner.inflight).contains_key(parent) {
            return;
        }
        let Ok(loaded) = self.load(&row) else { return };
        // The parent runs here now: it holds its lease, whose heartbeat also
        // sees a stop asked by another process.
        if self.take_lease(&row.id).is_err() {
            return;
        }
        if self
            .record_status(
                &row.id,
                &row.flow_name,
                row.status,
                RunEvent::Answer,
                &row.state,
                vec![],
            )
            .is_err()
        {
            self.release(&row.id);
            return;
        }
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        lock(&self.inner.inflight).insert(
            row.id.clone(),
            Inflight {
                inflight_id: self.inner.ids.next_id("inf"),
                cancel: cancel_tx,
                done: done_rx,
            },
        );
        let handle = RunHandle {
            engine: self.clone(),
            run: Arc::new(loaded),
            state: row.state,
            cancel: cancel_rx,
            done: done_tx,
        };
        tokio::spawn(handle.run());
    }
}

pub(super) enum ChildResult {
    Done(Value, bool),
    Failed(String),
    Stopped,
    Waiting,
}
