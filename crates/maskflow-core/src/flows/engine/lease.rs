//! The cross-process lease on a run.

use super::*;

impl FlowEngine {
    pub(super) fn release(&self, id: &str) {
        lock(&self.inner.inflight).remove(id);
        let owner = crate::store::leases::LeaseOwner::this_process();
        let _ = crate::store::leases::release(&self.db(), &lease_name(id), &owner);
    }

    /// Takes this process's lease on a flow run (refused while another
    /// Maskflow process runs it) and renews it while the run is in this
    /// engine's in-flight map.
    pub(super) fn take_lease(&self, id: &str) -> Result<()> {
        use crate::store::leases;
        let owner = leases::LeaseOwner::this_process();
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        leases::acquire(
            &self.db(),
            &lease_name(id),
            &owner,
            now,
            leases::DEFAULT_TTL_MS,
        )?;
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let engine = self.clone();
            let id = id.to_owned();
            rt.spawn(async move {
                let every = std::time::Duration::from_millis(leases::DEFAULT_TTL_MS as u64 / 3);
                loop {
                    tokio::time::sleep(every).await;
                    if !lock(&engine.inner.inflight).contains_key(&id) {
                        break;
                    }
                    let now = i64::try_from(engine.inner.clock.now_ms()).unwrap_or(i64::MAX);
                    let db = engine.db();
                    let _ = leases::heartbeat(
                        &db,
                        &lease_name(&id),
                        &owner,
                        now,
                        leases::DEFAULT_TTL_MS,
                    );
                }
            });
        }
        Ok(())
    }

    /// Refuses when another Maskflow process holds a live lease on the run;
    /// checked before any state is written (the lease is taken at start).
    pub(super) fn check_lease(&self, id: &str) -> Result<()> {
        use crate::store::leases;
        let owner = leases::LeaseOwner::this_process();
        let now = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let db = self.db();
        // Acquire-then-release is the one atomic test, and it clears a dead
        // owner's lease on the way.
        leases::acquire(&db, &lease_name(id), &owner, now, leases::DEFAULT_TTL_MS)?;
        leases::release(&db, &lease_name(id), &owner)
    }
}

/// The lease resource of a flow run.
fn lease_name(id: &str) -> String {
    format!("flow_run:{id}")
}
