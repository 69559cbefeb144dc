//! Starting a run: checking the request, snapshotting the flow, recording a new or resumed run.

use super::*;

/// How a new run starts: its input, its working folder, and the parent run
/// (with the child's depth) when it is a subflow.
pub(super) struct Launch<'a> {
    /// The run's input, before the flow's defaults fill the gaps.
    pub input: Map<String, Value>,
    /// The folder its scripts run in.
    pub working_folder: Option<&'a Path>,
    /// The parent run's id and the child's depth.
    pub parent: Option<(&'a str, u32)>,
}

impl FlowEngine {
    /// Starts (or resumes) a run in the background; see [`FlowEngine::prepare`].
    pub fn start(&self, name: &str, request: StartFlow) -> Result<Started> {
        let (started, handle) = self.prepare(name, request)?;
        tokio::spawn(handle.run());
        Ok(started)
    }

    /// Checks a run request, records the run (new, or resumed) and returns a
    /// handle that drives it.
    pub fn prepare(&self, name: &str, request: StartFlow) -> Result<(Started, RunHandle)> {
        if request.resume_step_path.is_some() && request.conversation_id.is_none() {
            return Err(Error::InvalidRequest(
                "resumeStepPath needs the conversationId of the run to resume".into(),
            ));
        }
        let working_folder = match request.working_folder.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(w) => {
                let p = PathBuf::from(w);
                if !p.is_dir() {
                    return Err(Error::InvalidRequest(format!(
                        "working_folder {w:?} is not an existing folder"
                    )));
                }
                Some(p)
            }
        };
        let now = self.now();
        let (run, state) = match &request.conversation_id {
            Some(id) => self.prepare_resume(
                name,
                id,
                request.resume_step_path.as_deref(),
                working_folder,
                &now,
            )?,
            None => self.prepare_new(name, working_folder, &now)?,
        };
        self.inner
            .storage
            .backup_before_run(&self.db(), &self.inner.home, &run.id, &now)?;
        let model_id = self.model_id(&run.snapshot);
        let inflight_id = self.inner.ids.next_id("inf");
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (done_tx, done_rx) = watch::channel(false);
        {
            let map = lock(&self.inner.inflight);
            if map.contains_key(&run.id) {
                return Err(Error::RunInProgress(run.id.clone()));
            }
            drop(map);
            // Not under the in-flight lock: the lease takes the database lock.
            self.take_lease(&run.id)?;
            let mut map = lock(&self.inner.inflight);
            if map.contains_key(&run.id) {
                return Err(Error::RunInProgress(run.id.clone()));
            }
            map.insert(
                run.id.clone(),
                Inflight {
                    inflight_id: inflight_id.clone(),
                    cancel: cancel_tx,
                    done: done_rx,
                },
            );
        }
        self.publish_status(&run, RunStatus::Running, None);
        let started = Started {
            status: "started".into(),
            flow_name: run.flow_name.clone(),
            conversation_id: run.id.clone(),
            inflight_id,
            model_id,
        };
        Ok((
            started,
            RunHandle {
                engine: self.clone(),
                run: Arc::new(run),
                state,
                cancel: cancel_rx,
                done: done_tx,
            },
        ))
    }

    pub(super) fn model_id(&self, snap: &Snapshot) -> String {
        match snap.agents.iter().next() {
            Some((_, def)) if def.model.is_some() => def
                .model
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_default(),
            Some((name, def)) => {
                match self.agent_backend(name, def, "", &FlowCall::naming_only()) {
                    Ok(p) if !p.model().is_empty() => p.model().to_owned(),
                    Ok(p) => p.name().to_owned(),
                    Err(_) => String::new(),
                }
            }
            None => String::new(),
        }
    }

    pub(super) fn snapshot_of(&self, flow: FlowDef) -> Result<Snapshot> {
        let mut snap = Snapshot {
            flow,
            agents: BTreeMap::new(),
            commands: BTreeMap::new(),
        };
        let flow = snap.flow.clone();
        for step in flow.all_steps() {
            if let Some((agent, _)) = step.agent() {
                if !snap.agents.contains_key(agent.as_str()) {
                    let def = agents::load_agent(&self.inner.home, agent.as_str())
                        .map_err(|e| Error::InvalidRequest(e.to_string()))?;
                    snap.agents.insert(agent.to_string(), def);
                }
                if let Step::Command(c) = step {
                    let key = format!("{}/{}", c.agent_type, c.command_name);
                    if let std::collections::btree_map::Entry::Vacant(slot) =
                        snap.commands.entry(key)
                    {
                        // Seed 004: an unknown command starts the run, whose
                        // step then fails (`turn_final` failed, naming it).
                        match agents::load_command(
                            &self.inner.home,
                            c.agent_type.as_str(),
                            c.command_name.as_str(),
                        ) {
                            Ok(cmd) => {
                                slot.insert(cmd);
                            }
                            Err(LoadError::Missing { .. }) => {}
                            Err(other) => return Err(Error::InvalidRequest(other.to_string())),
                        }
                    }
                }
            }
        }
        Ok(snap)
    }

    pub(super) fn load(&self, row: &RunRow) -> Result<Loaded> {
        let snapshot: Snapshot = serde_json::from_value(row.definition.clone())
            .map_err(|e| Error::Corrupt(format!("flow run {}: {e}", row.id)))?;
        let program =
            compile::compile(&snapshot.flow).map_err(|e| Error::Corrupt(e.to_string()))?;
        Ok(Loaded {
            id: row.id.clone(),
            flow_name: row.flow_name.clone(),
            program,
            depth: row.depth,
            working_folder: row.working_folder.as_ref().map(PathBuf::from),
            parent_id: row.parent_id.clone(),
            authored: context::authored_words(&row.definition),
            // Serialised once here, not at every agent step.
            authored_text: serde_json::to_string(&snapshot).unwrap_or_default(),
            snapshot,
        })
    }

    /// The row of a new run of flow `name`, at its first step.
    pub(super) fn new_row(
        &self,
        name: &str,
        snapshot: &Snapshot,
        program: &Program,
        launch: Launch<'_>,
        now: &str,
    ) -> Result<RunRow> {
        let Launch {
            input,
            working_folder,
            parent,
        } = launch;
        let mut st = RunState {
            format: state::FORMAT,
            input,
            output: Value::Null,
            ..RunState::default()
        };
        if let Some(defaults) = &snapshot.flow.input {
            for (k, v) in defaults {
                st.input.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        enter(program, &mut st, program.start);
        Ok(RunRow {
            id: self.inner.ids.next_id("flow"),
            flow_name: name.to_owned(),
            title: format!("Flow: {name}"),
            status: RunStatus::Running,
            definition: serde_json::to_value(snapshot)
                .map_err(|e| Error::Corrupt(e.to_string()))?,
            state: st,
            pending: None,
            error: None,
            working_folder: working_folder.map(|p| p.display().to_string()),
            archived: false,
            stop_requested: false,
            parent_id: parent.map(|(p, _)| p.to_owned()),
            depth: parent.map_or(0, |(_, d)| d),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        })
    }

    pub(super) fn prepare_new(
        &self,
        name: &str,
        working_folder: Option<PathBuf>,
        now: &str,
    ) -> Result<(Loaded, RunState)> {
        let def = agents::load_flow(&self.inner.home, name).map_err(load_error)?;
        let snapshot = self.snapshot_of(def)?;
        let program =
            compile::compile(&snapshot.flow).map_err(|e| Error::InvalidRequest(e.to_string()))?;
        let launch = Launch {
            input: Map::new(),
            working_folder: working_folder.as_deref(),
            parent: None,
        };
        let row = self.new_row(name, &snapshot, &program, launch, now)?;
        fstore::insert_run(&self.db(), &row, self.inner.storage.account())?;
        let state = row.state.clone();
        Ok((self.load(&row)?, state))
    }

    /// Writes why a resume was refused into the run's transcript (seed 004:
    /// an agent mismatch is in the transcript), the run otherwise unchanged.
    fn note_refused_resume(&self, row: &RunRow, message: &str, now: &str) -> Result<()> {
        let turn = TurnRow {
            role: TurnRole::System,
            content: format!("Resume refused: {message}"),
            command: crate::turn::StepMeta::flow(),
        };
        fstore::commit_step(
            &mut self.db(),
            &StepCommit {
                run_id: &row.id,
                status: row.status,
                state: &row.state,
                pending: row.pending.as_ref(),
                error: row.error.as_deref(),
                turns: &[turn],
                agent_messages: &[],
                now,
            },
        )?;
        Ok(())
    }

    pub(super) fn prepare_resume(
        &self,
        name: &str,
        id: &str,
        path: Option<&[i64]>,
        working_folder: Option<PathBuf>,
        now: &str,
    ) -> Result<(Loaded, RunState)> {
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| Error::not_found("flow run", id))?;
        if row.flow_name != name {
            return Err(Error::InvalidRequest(format!(
                "run {id} belongs to flow {:?}, not {name:?}",
                row.flow_name
            )));
        }
        if row.archived {
            return Err(Error::Archived(format!("flow run {id}")));
        }
        if lock(&self.inner.inflight).contains_key(id) {
            return Err(Error::RunInProgress(id.to_owned()));
        }
        self.check_lease(id)?;
        let mut loaded = self.load(&row)?;
        if working_folder.is_some() {
            loaded.working_folder = working_folder;
        }
        let mut st = row.state.clone();
        match path {
            Some(p) => {
                let node = resolve_path(&loaded.program, p)?;
                enter(&loaded.program, &mut st, Some(node));
                st.pending_retry = None;
                st.agent_answer = None;
                st.child = None;
            }
            None => match row.status {
                RunStatus::Completed => {
                    return Err(Error::InvalidRequest(format!(
                        "run {id} has completed; give resumeStepPath to run again from a step"
                    )));
                }
                RunStatus::Waiting | RunStatus::NeedsAttention => {
                    return Err(Error::Conflict(format!(
                        "run {id} is waiting for an answer; answer it with POST /api/flow-runs/{id}/gate"
                    )));
                }
                _ => {}
            },
        }
        for (key, conv) in &st.agent_conversations {
            let wanted = key.split(':').next().unwrap_or_default();
            let owner = match st.conversation_agents.get(conv) {
                Some(a) => Some(a.clone()),
                None => fstore::conversation_agent(&self.db(), conv)?,
            };
            let stored_owner = fstore::conversation_agent(&self.db(), conv)?;
            for o in [owner, stored_owner].into_iter().flatten() {
                if o != wanted {
                    let message = format!(
                        "conversation {conv} stored for {key:?} belongs to agent {o:?}, not {wanted:?}"
                    );
                    self.note_refused_resume(&row, &message, now)?;
                    return Err(Error::AgentMismatch(message));
                }
            }
        }
        state::apply(row.status, RunEvent::Resume).map_err(|e| Error::Conflict(e.to_string()))?;
        {
            let mut db = self.db();
            fstore::set_stop_requested(&db, id, false)?;
            fstore::commit_step(
                &mut db,
                &StepCommit {
                    run_id: id,
                    status: RunStatus::Running,
                    state: &st,
                    pending: None,
                    error: None,
                    turns: &[],
                    agent_messages: &[],
                    now,
                },
            )?;
            if let Some(w) = &loaded.working_folder {
                fstore::set_working_folder(&db, id, &w.display().to_string())?;
            }
        }
        Ok((loaded, st))
    }
}

/// Validates a `resumeStepPath` against the program.
fn resolve_path(program: &Program, path: &[i64]) -> Result<usize> {
    if path.is_empty() {
        return Err(Error::InvalidRequest(
            "resumeStepPath must not be empty".into(),
        ));
    }
    let mut p = Vec::with_capacity(path.len());
    for (depth, &i) in path.iter().enumerate() {
        let Ok(i) = usize::try_from(i) else {
            return Err(Error::InvalidRequest(format!(
                "resumeStepPath[{depth}] is negative ({i})"
            )));
        };
        p.push(i);
    }
    program.resumable_at(&p).ok_or_else(|| {
        Error::InvalidRequest(format!(
            "resumeStepPath {path:?} does not name a step of this flow"
        ))
    })
}
