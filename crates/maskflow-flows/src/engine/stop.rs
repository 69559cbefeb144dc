//! Stopping a run, here or in another process. Each run driven here has a
//! stop signal; a stop asked by another process reaches it through the run's
//! `stop_requested` flag, which the lease heartbeat reads.

use super::*;

/// A run's stop signal while this engine drives it; dropping it (when the
/// drive ends) forgets it.
pub(super) struct StopSignal<'a> {
    engine: &'a FlowEngine,
    id: String,
    rx: watch::Receiver<bool>,
}

impl StopSignal<'_> {
    /// Whether the run was told to stop.
    pub(super) fn is_raised(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves when the run is told to stop.
    pub(super) async fn raised(&mut self) {
        drive::raised(&mut self.rx).await;
    }
}

impl Drop for StopSignal<'_> {
    fn drop(&mut self) {
        let mut stops = lock(&self.engine.inner.stops);
        // Only its own entry: the run may be driven again since (a resume).
        if stops
            .get(&self.id)
            .is_some_and(|tx| tx.subscribe().same_channel(&self.rx))
        {
            stops.remove(&self.id);
        }
    }
}

impl FlowEngine {
    /// Registers the stop signal of run `id`, which this engine now drives.
    pub(super) fn stop_signal(&self, id: &str) -> StopSignal<'_> {
        let (tx, rx) = watch::channel(false);
        lock(&self.inner.stops).insert(id.to_owned(), tx);
        StopSignal {
            engine: self,
            id: id.to_owned(),
            rx,
        }
    }

    /// Raises the stop signal of each run driven here that another process
    /// asked to stop (its `stop_requested` flag); the lease heartbeat calls it.
    pub(super) fn notice_stop_requests(&self) {
        // Lock order: the signals, then the database (nothing takes them the other way).
        let stops = lock(&self.inner.stops);
        let db = self.db();
        for (id, tx) in stops.iter() {
            if fstore::stop_requested(&db, id).unwrap_or(false) {
                tx.send_replace(true);
            }
        }
    }

    /// Stops a run: cancels the step in flight and records `stopped`.
    pub async fn stop(&self, id: &str) -> Result<RunView> {
        let local = lock(&self.inner.inflight).get(id).map(|f| {
            let _ = f.cancel.send(true);
            f.done.clone()
        });
        if let Some(mut done) = local {
            let _ = tokio::time::timeout(STOP_WAIT, done.wait_for(|d| *d)).await;
            return self.get_run(id);
        }
        // A subflow run driven here inside its parent's step: its own signal,
        // then wait for its drive to end (it drops the signal's receiver).
        let child = lock(&self.inner.stops).get(id).cloned();
        if let Some(tx) = child {
            tx.send_replace(true);
            let _ = tokio::time::timeout(STOP_WAIT, tx.closed()).await;
            return self.get_run(id);
        }
        let row =
            fstore::get_run(&self.db(), id)?.ok_or_else(|| Error::not_found("flow run", id))?;
        match row.status {
            RunStatus::Waiting | RunStatus::NeedsAttention => {
                self.record_status(
                    &row.id,
                    &row.flow_name,
                    row.status,
                    RunEvent::Stop,
                    &row.state,
                    vec![],
                )?;
            }
            RunStatus::Running => {
                // Perhaps another process runs it: ask, then wait for it to notice.
                fstore::set_stop_requested(&self.db(), id, true)?;
                if self.stopped_elsewhere(&row).await? {
                    return self.get_run(id);
                }
                // Nobody runs it (its process died): record the stop here.
                let row = fstore::get_run(&self.db(), id)?
                    .ok_or_else(|| Error::not_found("flow run", id))?;
                if row.status != RunStatus::Running {
                    return self.get_run(id);
                }
                self.record_status(
                    &row.id,
                    &row.flow_name,
                    row.status,
                    RunEvent::Stop,
                    &row.state,
                    vec![],
                )?;
            }
            other => {
                return Err(Error::Conflict(format!(
                    "run {id} is {} and cannot be stopped",
                    other.as_str()
                )));
            }
        }
        self.get_run(id)
    }

    /// Seed 004's `cancel_inflight` (sent over the WebSocket): stops run
    /// `conversation_id` as [`FlowEngine::stop`] does — the step in flight
    /// is cancelled, `stopped` recorded with the last completed step kept
    /// for resuming. With `inflight_id`, only when that is the run in
    /// flight here: a stale id (an earlier run, another process) is refused.
    pub async fn cancel_inflight(
        &self,
        conversation_id: &str,
        inflight_id: Option<&str>,
    ) -> Result<RunView> {
        if let Some(wanted) = inflight_id {
            match self.inflight_id(conversation_id) {
                Some(current) if current == wanted => {}
                Some(current) => {
                    return Err(Error::Conflict(format!(
                        "run {conversation_id} is in flight as {current}, not {wanted}"
                    )));
                }
                None => {
                    return Err(Error::Conflict(format!(
                        "run {conversation_id} has no step in flight here (inflight {wanted} has ended)"
                    )));
                }
            }
        }
        self.stop(conversation_id).await
    }

    /// Waits, at the lease heartbeat's cadence, for the process that runs
    /// `row` to see its `stop_requested` flag and stop it. False at once when
    /// no live process holds the lease of the run or of an ancestor (the
    /// run's process died), and after a lease's lifetime without a stop.
    async fn stopped_elsewhere(&self, row: &RunRow) -> Result<bool> {
        let mut chain = vec![row.id.clone()];
        let mut parent = row.parent_id.clone();
        while let Some(p) = parent {
            parent = fstore::get_run(&self.db(), &p)?.and_then(|r| r.parent_id);
            chain.push(p);
        }
        let every = self.heartbeat_every();
        // Three heartbeats make a lease's lifetime; one more to see the stop committed.
        let rounds = 4;
        for _ in 0..rounds {
            let status = fstore::get_run(&self.db(), &row.id)?.map(|r| r.status);
            if status != Some(RunStatus::Running) {
                return Ok(true);
            }
            // A lease this engine holds is live (and testing it would drop
            // it): a subflow run about to be driven here is seen by the heartbeat.
            let here = chain
                .iter()
                .any(|id| lock(&self.inner.inflight).contains_key(id));
            if !here && chain.iter().all(|id| self.check_lease(id).is_ok()) {
                return Ok(false);
            }
            tokio::time::sleep(every).await;
        }
        Ok(false)
    }
}

/// How long a stop here waits for the step in flight to end.
const STOP_WAIT: Duration = Duration::from_secs(30);
