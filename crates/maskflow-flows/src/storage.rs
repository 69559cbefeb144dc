//! The engine's port to the app's database: opening it (migrated), the
//! backup before a run, the cross-process leases on runs, and the account
//! new runs belong to. The app implements it over its store, so flows keep
//! only their own tables ([`super::store`]).

use std::path::Path;

use rusqlite::Connection;

use crate::error::Result;

/// What the engine asks of the app's database besides its own tables.
pub trait FlowStorage: Send + Sync + std::fmt::Debug {
    /// Opens `<home>`'s database, migrated to the latest schema.
    fn open(&self, home: &Path, stamp: &str) -> Result<Connection>;
    /// Backs the database up before run `run_id` starts.
    fn backup_before_run(
        &self,
        conn: &Connection,
        home: &Path,
        run_id: &str,
        now: &str,
    ) -> Result<()>;
    /// How long a lease lives without a heartbeat, in milliseconds.
    fn lease_ttl_ms(&self) -> i64;
    /// Takes this process's lease on `resource`; refused while another
    /// process holds a live one.
    fn acquire_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()>;
    /// Renews this process's lease on `resource`.
    fn renew_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()>;
    /// Gives up this process's lease on `resource`.
    fn release_lease(&self, conn: &Connection, resource: &str) -> Result<()>;
    /// The account new runs belong to.
    fn account(&self) -> &str;
}
