//! Committing steps and statuses, and publishing them. Each run in progress
//! keeps a [`Chain`] here, so its next checkpoint is a delta against the last,
//! and the tails of its agent conversations, so a step does not read back
//! from SQLite the messages this engine has just committed.

use std::collections::VecDeque;

use super::*;
use crate::checkpoint::Chain;

/// The last [`HISTORY_LIMIT`] messages of each agent conversation of a run,
/// by conversation id.
type Tails = HashMap<String, VecDeque<ChatMessage>>;

/// The checkpoint policy, and the chain and conversation tails of each run in progress.
#[derive(Debug)]
pub(super) struct Checkpoints {
    policy: CheckpointPolicy,
    chains: HashMap<String, Chain>,
    /// Kept exactly as long as the run's chain: filled from the database on
    /// a first read, extended by each committed step (only this engine
    /// writes a run's messages while it holds the run's lease), dropped when
    /// a write fails or the run leaves `running`.
    tails: HashMap<String, Tails>,
}

impl Checkpoints {
    pub(super) fn new(policy: CheckpointPolicy) -> Checkpoints {
        Checkpoints {
            policy,
            chains: HashMap::new(),
            tails: HashMap::new(),
        }
    }

    /// Forgets everything kept for run `id`.
    fn forget(&mut self, id: &str) {
        self.chains.remove(id);
        self.tails.remove(id);
    }
}

/// Where a committed step moves its run: the event the state table applies,
/// what the run then waits for, and the error it ends with.
#[derive(Debug, Clone, Copy)]
pub(super) struct StatusMove<'a> {
    event: RunEvent,
    pending: Option<&'a Pending>,
    error: Option<&'a str>,
}

impl<'a> StatusMove<'a> {
    /// The move `event` makes, with nothing pending and no error.
    pub(super) fn on(event: RunEvent) -> Self {
        StatusMove {
            event,
            pending: None,
            error: None,
        }
    }

    /// The same move, leaving the run waiting for `pending`.
    pub(super) fn waiting(self, pending: &'a Pending) -> Self {
        StatusMove {
            pending: Some(pending),
            ..self
        }
    }

    /// The same move, ending the run with `error` (if any).
    pub(super) fn error(self, error: Option<&'a str>) -> Self {
        StatusMove { error, ..self }
    }
}

impl FlowEngine {
    /// Replaces how checkpoints are written and pruned (the default keeps
    /// two full snapshots per run in progress and the final state of a finished run).
    pub fn set_checkpoint_policy(&self, policy: CheckpointPolicy) {
        lock(&self.inner.checkpoints).policy = policy;
    }

    /// Drops a run's chain when its execution ends, however it ended.
    pub(super) fn forget_chain(&self, id: &str) {
        lock(&self.inner.checkpoints).forget(id);
    }

    /// The last [`HISTORY_LIMIT`] messages of agent conversation `conv` of
    /// run `run_id`, oldest first: kept in memory, read from the database once.
    pub(super) fn conversation_tail(
        &self,
        run_id: &str,
        conv: &str,
    ) -> rusqlite::Result<Vec<ChatMessage>> {
        // The database lock is held across the read and the fill, as
        // `write_step` holds it across the commit and the append: a step
        // committed meanwhile cannot be missed by the tail filled here.
        let db = self.db();
        if let Some(t) = lock(&self.inner.checkpoints)
            .tails
            .get(run_id)
            .and_then(|t| t.get(conv))
        {
            return Ok(t.iter().cloned().collect());
        }
        let (read, _) = fstore::conversation_tail(&db, conv, HISTORY_LIMIT)?;
        lock(&self.inner.checkpoints)
            .tails
            .entry(run_id.to_owned())
            .or_default()
            .insert(conv.to_owned(), read.iter().cloned().collect());
        Ok(read)
    }

    /// Writes one step through the run's checkpoint chain; a run that leaves
    /// `running` drops its chain (a resume starts a new one).
    fn write_step(&self, c: &StepCommit<'_>) -> rusqlite::Result<Vec<i64>> {
        let mut db = self.db();
        let mut cps = lock(&self.inner.checkpoints);
        let policy = cps.policy;
        let chain = cps.chains.entry(c.run_id.to_owned()).or_default();
        let written = fstore::commit_step_with(&mut db, c, chain, &policy);
        if written.is_err() || c.status != RunStatus::Running {
            cps.forget(c.run_id);
        } else if let Some(tails) = cps.tails.get_mut(c.run_id) {
            for m in c.agent_messages {
                // A conversation not read yet is read whole on its first use.
                if let Some(t) = tails.get_mut(&m.conversation_id) {
                    t.push_back(m.message.clone());
                    if t.len() > HISTORY_LIMIT {
                        t.pop_front();
                    }
                }
            }
        }
        written
    }

    /// Records a status move outside a running step (a stop, an answer, a
    /// woken parent): the state table decides the status `event` leads to from `from`.
    /// Such a move leaves nothing pending and no error.
    pub(super) fn record_status(
        &self,
        id: &str,
        flow_name: &str,
        from: RunStatus,
        event: RunEvent,
        st: &RunState,
        turns: Vec<TurnRow>,
    ) -> Result<()> {
        let (pending, error) = (None, None);
        let status = state::apply(from, event).map_err(|e| Error::Conflict(e.to_string()))?;
        let now = self.now();
        let ids = self.write_step(&StepCommit {
            run_id: id,
            status,
            state: st,
            pending,
            error,
            turns: &turns,
            agent_messages: &[],
            now: &now,
        })?;
        self.publish_turns(id, flow_name, &turns, &ids, &now);
        self.inner.events.publish(FlowEvent::Status {
            conversation_id: id.to_owned(),
            flow_name: flow_name.to_owned(),
            status,
            error: error.map(str::to_owned),
        });
        Ok(())
    }

    pub(super) fn publish_status(&self, run: &Loaded, status: RunStatus, error: Option<String>) {
        self.inner.events.publish(FlowEvent::Status {
            conversation_id: run.id.clone(),
            flow_name: run.flow_name.clone(),
            status,
            error,
        });
    }

    pub(super) fn publish_turns(
        &self,
        id: &str,
        flow_name: &str,
        turns: &[TurnRow],
        _ids: &[i64],
        now: &str,
    ) {
        for t in turns {
            self.inner.events.publish(FlowEvent::Turn {
                conversation_id: id.to_owned(),
                flow_name: flow_name.to_owned(),
                turn: TurnView::of(
                    t.role.as_str(),
                    t.content.clone(),
                    now.to_owned(),
                    t.command.clone(),
                ),
            });
        }
    }

    /// Commits one step; a database failure is returned as the error to fail the run with.
    pub(super) fn commit(
        &self,
        run: &Loaded,
        step: StatusMove<'_>,
        st: &RunState,
        turns: &[TurnRow],
        msgs: &[AgentMessageRow],
    ) -> std::result::Result<RunStatus, FlowError> {
        let StatusMove {
            event,
            pending,
            error,
        } = step;
        // A step is committed while its run is running; the state table says where `event` leads.
        let status =
            state::apply(RunStatus::Running, event).map_err(|e| FlowError::step(e.to_string()))?;
        let now = self.now();
        let ids = self
            .write_step(&StepCommit {
                run_id: &run.id,
                status,
                state: st,
                pending,
                error,
                turns,
                agent_messages: msgs,
                now: &now,
            })
            .map_err(|e| FlowError::store(format!("could not save the step: {e}")))?;
        self.publish_turns(&run.id, &run.flow_name, turns, &ids, &now);
        if status != RunStatus::Running {
            self.publish_status(run, status, error.map(str::to_owned));
        }
        Ok(status)
    }

    pub(super) fn end(
        &self,
        run: &Loaded,
        st: &RunState,
        event: RunEvent,
        error: Option<String>,
        turns: Vec<TurnRow>,
    ) -> RunStatus {
        let step = StatusMove::on(event).error(error.as_deref());
        let status = match self.commit(run, step, st, &turns, &[]) {
            Ok(status) => status,
            Err(e) => {
                eprintln!("maskflow flows: run {}: {e}", run.id);
                return RunStatus::Failed;
            }
        };
        if status == RunStatus::Stopped {
            let _ = fstore::set_stop_requested(&self.db(), &run.id, false);
        }
        status
    }

    pub(super) fn fail(
        &self,
        run: &Loaded,
        st: &RunState,
        node: Option<usize>,
        error: FlowError,
        mut turns: Vec<TurnRow>,
    ) -> RunStatus {
        // The run keeps only the sentence: its `error` column is text.
        let message = error.message;
        let command = node.map_or_else(StepMeta::flow, |n| meta(run, &run.program.nodes[n], None));
        turns.push(TurnRow {
            role: TurnRole::System,
            content: format!("Failed: {message}"),
            command,
        });
        self.end(run, st, RunEvent::Fail, Some(message), turns)
    }
}
