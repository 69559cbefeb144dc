//! Stopping a run, here or in another process.

use super::*;

impl FlowEngine {
    /// Stops a run: cancels the step in flight and records `stopped`.
    pub async fn stop(&self, id: &str) -> Result<RunView> {
        let local = lock(&self.inner.inflight).get(id).map(|f| {
            let _ = f.cancel.send(true);
            f.done.clone()
        });
        if let Some(mut done) = local {
            let _ = tokio::time::timeout(Duration::from_secs(30), done.wait_for(|d| *d)).await;
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
                for _ in 0..20 {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let now = fstore::get_run(&self.db(), id)?.map(|r| r.status);
                    if now != Some(RunStatus::Running) {
                        return self.get_run(id);
                    }
                }
                // Nobody runs it (its process died): record the stop here.
                let row = fstore::get_run(&self.db(), id)?
                    .ok_or_else(|| Error::not_found("flow run", id))?;
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
}
