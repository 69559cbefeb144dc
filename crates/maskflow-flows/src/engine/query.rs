//! Reading, renaming and deleting runs.

use super::*;

impl FlowEngine {
    /// The runs of a flow, newest first.
    pub fn runs(&self, name: &str) -> Result<RunList> {
        let rows = fstore::runs_of(&self.db(), name)?;
        Ok(RunList {
            runs: rows
                .into_iter()
                .map(|r| RunSummary {
                    conversation_id: r.id,
                    flow_name: r.flow_name,
                    title: r.title,
                    status: r.status,
                    archived: r.archived,
                    error: r.error,
                    // Whether a live process runs it is the service's to tell.
                    interrupted: false,
                    running_elsewhere_pid: None,
                    created_at: r.created_at,
                    updated_at: r.updated_at,
                })
                .collect(),
        })
    }

    /// A run with its resume state and transcript.
    pub fn get_run(&self, id: &str) -> Result<RunView> {
        let db = self.db();
        let row = fstore::get_run(&db, id)?.ok_or_else(|| Error::not_found("flow run", id))?;
        let turns = fstore::turns_of(&db, id)?;
        drop(db);
        let program = serde_json::from_value::<Snapshot>(row.definition.clone())
            .ok()
            .and_then(|snap| compile::compile(&snap.flow).ok());
        let next_step_path = program.as_ref().and_then(|p| {
            row.state
                .cursor
                .and_then(|c| p.nodes.get(c).map(|n| n.path.clone()))
        });
        // A run this process drives is doing its retry, not waiting to.
        let here = lock(&self.inner.inflight).contains_key(id);
        let retry_due = program
            .as_ref()
            .filter(|_| !here)
            .and_then(|p| retry_due(p, row.status, &row.state));
        Ok(RunView {
            conversation_id: row.id,
            flow_name: row.flow_name,
            title: row.title,
            status: row.status,
            archived: row.archived,
            error: row.error,
            interrupted: false,
            running_elsewhere_pid: None,
            flags: RunFlags {
                flow: FlowFlags {
                    step_path: row.state.step_path.clone(),
                    next_step_path,
                    loop_stack: row.state.loop_stack.clone(),
                    agent_conversations: row.state.agent_conversations.clone(),
                },
            },
            turns: turns
                .into_iter()
                .map(|t| TurnView::of(&t.role, t.content, t.created_at, t.command))
                .collect(),
            pending: row
                .pending
                .map(|p| serde_json::to_value(p).unwrap_or(Value::Null)),
            parent_id: row.parent_id,
            working_folder: row.working_folder,
            retry_due,
            resume_steps: program.as_ref().map(resume_steps).unwrap_or_default(),
            resume: resume_context(program.as_ref(), &row.state),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }

    /// Renames or (un)archives a run.
    pub fn patch(&self, id: &str, patch: RunPatch) -> Result<RunView> {
        let now = self.now();
        {
            let db = self.db();
            let row = fstore::get_run(&db, id)?.ok_or_else(|| Error::not_found("flow run", id))?;
            let title = match patch.title.as_deref().map(str::trim) {
                Some("") => {
                    return Err(Error::InvalidRequest("title must not be empty".into()));
                }
                Some(t) if t.chars().count() > 200 => {
                    return Err(Error::InvalidRequest(
                        "title is longer than 200 characters".into(),
                    ));
                }
                Some(t) => t.to_owned(),
                None => row.title.clone(),
            };
            let archived = patch.archived.unwrap_or(row.archived);
            if archived && !row.archived && lock(&self.inner.inflight).contains_key(id) {
                return Err(Error::RunInProgress(id.to_owned()));
            }
            fstore::update_meta(&db, id, &title, archived, &now)?;
        }
        self.get_run(id)
    }

    /// Deletes a run (not while it runs, here or in another process).
    pub fn delete(&self, id: &str) -> Result<()> {
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(Error::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        if !fstore::delete_run(&self.db(), id)? {
            return Err(Error::not_found("flow run", id));
        }
        Ok(())
    }

    /// The inflight id of a running run in this process.
    pub fn inflight_id(&self, id: &str) -> Option<String> {
        lock(&self.inner.inflight)
            .get(id)
            .map(|f| f.inflight_id.clone())
    }
}

impl FlowEngine {
    /// The step of flow `name` whose `id` is `stage_id` (seed 003's "step by
    /// stage ID"), as written in the flow, nested steps included.
    pub fn step(&self, name: &str, stage_id: &str) -> Result<Value> {
        let def = agents::load_flow(&self.inner.home, name).map_err(load_error)?;
        let step = def
            .all_steps()
            .into_iter()
            .find(|s| s.common().id.is_some_and(|i| i.as_str() == stage_id))
            .ok_or_else(|| Error::not_found("flow step", &format!("{name}/{stage_id}")))?;
        serde_json::to_value(step).map_err(|e| Error::Corrupt(e.to_string()))
    }
}

/// The single-step retry a stopped, failed or interrupted run would run
/// first on resume: a step that failed its contract once and whose retry
/// has not finished (a run that needs attention asks instead).
fn retry_due(program: &Program, status: RunStatus, st: &RunState) -> Option<RetryDue> {
    if !matches!(
        status,
        RunStatus::Stopped | RunStatus::Failed | RunStatus::Running
    ) {
        return None;
    }
    let pending = st.pending_retry.as_ref()?;
    let of = drive::STEP_ATTEMPTS;
    let attempt = pending.attempt + 1;
    if attempt > of || st.cursor != Some(pending.node) {
        return None;
    }
    let node = program.nodes.get(pending.node)?;
    Some(RetryDue {
        message: format!(
            "step {:?} will be retried (attempt {attempt} of {of})",
            node.label
        ),
        step: node.label.clone(),
        step_path: node.path.clone(),
        attempt,
        of,
        feedback: pending.error.clone(),
    })
}

/// The steps of `program` a run may resume at, in the flow's order.
fn resume_steps(program: &Program) -> Vec<ResumeStep> {
    let mut steps: Vec<ResumeStep> = program
        .nodes
        .iter()
        .filter(|n| n.resumable)
        .map(|n| ResumeStep {
            step_path: n.path.clone(),
            label: n.label.clone(),
        })
        .collect();
    steps.sort_by(|a, b| a.step_path.cmp(&b.step_path));
    steps
}

/// What a resume starts from: the steps done, the last output (held back
/// when it is local data), and the fan-out's counts.
fn resume_context(program: Option<&Program>, st: &RunState) -> ResumeContext {
    let local = is_local(&st.local, "output");
    let fan_out = st.foreach.as_ref().map(|p| {
        let node = program.and_then(|prog| prog.nodes.get(p.node));
        let completed = p.results.values().filter(|r| r.ok).count();
        let failed = p.results.len() - completed;
        FanOutSummary {
            step: node.map(|n| n.label.clone()).unwrap_or_default(),
            step_path: node.map(|n| n.path.clone()).unwrap_or_default(),
            total: p.total,
            completed,
            failed,
            remaining: p.total.saturating_sub(p.results.len() + p.timed_out.len()),
        }
    });
    ResumeContext {
        completed_steps: st.completed_steps.clone(),
        last_output: if local {
            Value::Null
        } else {
            st.output.clone()
        },
        last_output_local: local,
        fan_out,
    }
}
