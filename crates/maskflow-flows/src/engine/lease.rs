//! The cross-process lease on a run.

use super::*;

impl FlowEngine {
    pub(super) fn release(&self, id: &str) {
        lock(&self.inner.inflight).remove(id);
        let _ = self
            .inner
            .storage
            .release_lease(&self.db(), &lease_name(id));
    }

    /// Takes this process's lease on a flow run (refused while another
    /// Maskflow process runs it) and renews it while the run is in this
    /// engine's in-flight map.
    pub(super) fn take_lease(&self, id: &str) -> Result<()> {
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        self.inner
            .storage
            .acquire_lease(&self.db(), &lease_name(id), now)?;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let engine = self.clone();
            let id = id.to_owned();
            let every = self.heartbeat_every();
            rt.spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    if !lock(&engine.inner.inflight).contains_key(&id) {
                        break;
                    }
                    let now = i64::try_from(engine.inner.clock.now_ms()).unwrap_or(i64::MAX);
                    let db = engine.db();
                    let _ = engine.inner.storage.renew_lease(&db, &lease_name(&id), now);
                    drop(db);
                    // A stop asked by another process is seen here, at this cadence.
                    engine.notice_stop_requests();
                }
            });
        }
        Ok(())
    }

    /// How often a lease is renewed: three times in its lifetime.
    pub(super) fn heartbeat_every(&self) -> Duration {
        let ttl = u64::try_from(self.inner.storage.lease_ttl_ms()).unwrap_or(0);
        Duration::from_millis((ttl / 3).max(1))
    }

    /// Refuses when another Maskflow process holds a live lease on the run;
    /// checked before any state is written (the lease is taken at start).
    pub(super) fn check_lease(&self, id: &str) -> Result<()> {
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let db = self.db();
        // Acquire-then-release is the one atomic test, and it clears a dead
        // owner's lease on the way.
        self.inner
            .storage
            .acquire_lease(&db, &lease_name(id), now)?;
        self.inner.storage.release_lease(&db, &lease_name(id))
    }
}

/// The lease resource of a flow run.
fn lease_name(id: &str) -> String {
    format!("flow_run:{id}")
}
