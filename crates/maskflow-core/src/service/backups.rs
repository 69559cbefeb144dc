//! Backups in Settings (issue 18): list them, take one on demand, set the
//! retention counts, and restore one.
//!
//! Restoring does not swap connection objects: the backup's content is
//! copied *into* the open database through SQLite's online backup API, on
//! the service's own connection and under its lock. SQLite takes the
//! database's write lock for the copy, so every other connection — the flow
//! engine's, another Maskflow process's — sees either the old database or
//! the restored one, never a half-written file, and keeps working on the
//! same path afterwards. Before that: nothing may be in flight (a message,
//! a build, a flow run or any live lease of another process), and the
//! current database is backed up (`pre_restore`). After: the restored file
//! is migrated to the current schema, the backup records (which the
//! restored file may predate) are put back, and builds the restored file
//! shows as running are marked interrupted, as after a restart.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store::{self, backups};

/// How many times the restore waits for another connection's lock.
const RESTORE_TRIES: u32 = 50;

/// The Settings card's view of backups.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct BackupsView {
    /// Every recorded backup, newest first.
    pub backups: Vec<backups::Backup>,
    /// How many automatic backups of each kind are kept.
    pub retention: backups::Retention,
    /// The folder they are in (local only).
    pub folder: String,
}

/// What a restore did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct RestoreReply {
    /// The backup now in use.
    pub restored: backups::Backup,
    /// The backup of the database as it was just before.
    pub previous: backups::Backup,
}

impl Service {
    /// Every backup and the retention counts.
    pub fn backups(&self) -> Result<BackupsView> {
        let db = self.db();
        Ok(BackupsView {
            backups: backups::list(&db)?,
            retention: backups::retention(&db),
            folder: self.home().join("backups").display().to_string(),
        })
    }

    /// Takes a backup now (Settings' "Back up now").
    pub fn create_backup(&self) -> Result<backups::Backup> {
        let now = self.now();
        backups::take(&self.db(), self.home(), backups::Reason::Manual, None, &now)
    }

    /// Stores new retention counts; older automatic backups beyond them go at once.
    pub fn set_backup_retention(&self, retention: backups::Retention) -> Result<BackupsView> {
        let now = self.now();
        backups::set_retention(&self.db(), retention, &now)?;
        self.backups()
    }

    /// Restores a recorded backup over the database (see the module).
    pub fn restore_backup(&self, backup_id: &str) -> Result<RestoreReply> {
        let backup = backups::get(&self.db(), backup_id)?
            .ok_or_else(|| CoreError::not_found("backup", backup_id))?;
        let source = backups::open_checked(&backup, store::schema::all().len() as i64)?;
        self.check_idle()?;
        let now = self.now();
        let mut db = self.db();
        // Checked again under the lock: nothing starts while it is held.
        if !super::lock(&self.inner.busy).is_empty() {
            return Err(busy("a workflow is handling a message"));
        }
        let previous = backups::take(&db, self.home(), backups::Reason::PreRestore, None, &now)?;
        let records = backups::list(&db)?;
        copy_into(&source, &mut db)?;
        drop(source);
        store::reconfigure(&mut db)?;
        store::guard::migrate(&mut db, &store::schema::migrations())?;
        for b in &records {
            if std::path::Path::new(&b.path).exists() {
                backups::record(&db, b)?;
            }
        }
        drop(db);
        self.recover_interrupted_builds()?;
        Ok(RestoreReply {
            restored: backup,
            previous,
        })
    }

    /// Refuses a restore while anything could be writing.
    fn check_idle(&self) -> Result<()> {
        if !super::lock(&self.inner.busy).is_empty() {
            return Err(busy("a workflow is handling a message"));
        }
        let db = self.db();
        if !store::versions_in(&db, crate::versions::Status::Building)?.is_empty() {
            return Err(busy("a workflow is being built"));
        }
        let now_ms = i64::try_from(self.inner.clock.now_ms()).unwrap_or(i64::MAX);
        let system_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(now_ms);
        let live = store::leases::live_count(&db, system_ms.max(now_ms))?;
        if live > 0 || self.flows().any_in_flight() {
            return Err(busy("a flow run or a workflow run is in progress"));
        }
        Ok(())
    }
}

fn busy(what: &str) -> CoreError {
    CoreError::Conflict(format!(
        "cannot restore a backup while {what}; wait until it has finished"
    ))
}

/// Copies `source` over `dest`'s database in one locked step, retrying a
/// bounded number of times while another connection holds a lock.
fn copy_into(source: &rusqlite::Connection, dest: &mut rusqlite::Connection) -> Result<()> {
    use rusqlite::backup::{Backup, StepResult};
    let copy = Backup::new(source, dest)?;
    let mut tries = 0;
    loop {
        match copy.step(-1)? {
            StepResult::Done => return Ok(()),
            StepResult::More => {}
            StepResult::Busy | StepResult::Locked => {
                tries += 1;
                if tries >= RESTORE_TRIES {
                    return Err(busy("another connection holds the database"));
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            _ => {}
        }
    }
}
