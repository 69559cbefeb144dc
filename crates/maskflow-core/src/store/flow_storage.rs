//! The flow engine's database port ([`FlowStorage`]) over this store.

use std::path::Path;

use rusqlite::Connection;

use super::{LOCAL_ACCOUNT, backups, leases};
use crate::flows::FlowStorage;
use crate::flows::error::Result;

/// The store as the flow engine's database: this process's leases, the
/// local account.
#[derive(Debug, Default, Clone, Copy)]
pub struct StoreFlowStorage;

impl FlowStorage for StoreFlowStorage {
    fn open(&self, home: &Path, stamp: &str) -> Result<Connection> {
        Ok(super::open(home, stamp)?)
    }

    fn backup_before_run(
        &self,
        conn: &Connection,
        home: &Path,
        run_id: &str,
        now: &str,
    ) -> Result<()> {
        backups::take(conn, home, backups::Reason::PreFlowRun, Some(run_id), now)?;
        Ok(())
    }

    fn lease_ttl_ms(&self) -> i64 {
        leases::DEFAULT_TTL_MS
    }

    fn acquire_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()> {
        let owner = leases::LeaseOwner::this_process();
        leases::acquire(conn, resource, &owner, now_ms, leases::DEFAULT_TTL_MS)?;
        Ok(())
    }

    fn renew_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()> {
        let owner = leases::LeaseOwner::this_process();
        leases::heartbeat(conn, resource, &owner, now_ms, leases::DEFAULT_TTL_MS)?;
        Ok(())
    }

    fn release_lease(&self, conn: &Connection, resource: &str) -> Result<()> {
        Ok(leases::release(
            conn,
            resource,
            &leases::LeaseOwner::this_process(),
        )?)
    }

    fn account(&self) -> &str {
        LOCAL_ACCOUNT
    }
}
