//! Database backups a user can find and restore (issue 18, seed 002's
//! "backup before runs"): every online backup — before migrations, before a
//! flow run, on demand, before a restore — is a file under `<home>/backups/`
//! and a row of `database_backups`. Retention keeps the newest N of each
//! automatic kind apart (pre-migration and per-run counts are separate
//! settings); backups the user asked for are only removed by the user.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{CoreError, Result};

/// Migration (issue 18, branch seeds18 — the lead renumbers on merge): the
/// record of every backup. `workflow_run_id` is the flow run a pre-run
/// backup was taken for (no foreign key: the backup outlives the run).
pub const MIGRATION: &str = r#"
CREATE TABLE database_backups (
    id              TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'bak\_%' ESCAPE '\'),
    created_at      TEXT NOT NULL,
    reason          TEXT NOT NULL CHECK (reason IN ('pre_migration', 'pre_flow_run', 'manual', 'pre_restore')),
    path            TEXT NOT NULL UNIQUE,
    workflow_run_id TEXT,
    size_bytes      INTEGER NOT NULL CHECK (size_bytes >= 0)
) STRICT;
CREATE INDEX database_backups_by_reason ON database_backups (reason, created_at);
"#;

/// The settings key of the retention counts (a JSON [`Retention`]).
pub const RETENTION_SETTING: &str = "backup_retention";
/// Most backups of one automatic kind a user may ask to keep.
pub const MAX_KEPT: u32 = 1000;

/// Why a backup was taken.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "BackupReason")]
#[schema(as = BackupReason)]
pub enum Reason {
    /// Before the schema was migrated (kept apart, see [`Retention`]).
    PreMigration,
    /// Before a flow run started or resumed.
    PreFlowRun,
    /// The user asked for it in Settings.
    Manual,
    /// Before another backup was restored over the database.
    PreRestore,
}

impl Reason {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::PreMigration => "pre_migration",
            Reason::PreFlowRun => "pre_flow_run",
            Reason::Manual => "manual",
            Reason::PreRestore => "pre_restore",
        }
    }

    fn parse(s: &str) -> Option<Reason> {
        [
            Reason::PreMigration,
            Reason::PreFlowRun,
            Reason::Manual,
            Reason::PreRestore,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

/// One recorded backup.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
pub struct Backup {
    /// `bak_…`
    pub id: String,
    /// RFC 3339.
    pub created_at: String,
    /// Why it was taken.
    pub reason: Reason,
    /// The backup file (local only).
    pub path: String,
    /// The flow run it was taken before, for `pre_flow_run`.
    pub workflow_run_id: Option<String>,
    /// The file's size.
    #[ts(type = "number")]
    pub size_bytes: i64,
}

/// How many automatic backups are kept, per kind.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
#[ts(rename = "BackupRetention")]
#[schema(as = BackupRetention)]
pub struct Retention {
    /// Backups taken before migrations.
    pub pre_migration: u32,
    /// Backups taken before flow runs.
    pub pre_flow_run: u32,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            pre_migration: 10,
            pre_flow_run: 10,
        }
    }
}

impl Retention {
    /// Checks the counts a user gave.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (name, n) in [
            ("pre_migration", self.pre_migration),
            ("pre_flow_run", self.pre_flow_run),
        ] {
            if n == 0 || n > MAX_KEPT {
                return Err(format!("{name} must keep between 1 and {MAX_KEPT} backups"));
            }
        }
        Ok(())
    }

    fn kept(&self, reason: Reason) -> Option<usize> {
        match reason {
            Reason::PreMigration => Some(self.pre_migration as usize),
            Reason::PreFlowRun => Some(self.pre_flow_run as usize),
            Reason::Manual | Reason::PreRestore => None,
        }
    }
}

/// The retention counts as stored (the defaults when unset or unreadable).
pub fn retention(conn: &Connection) -> Retention {
    super::settings::get(conn, RETENTION_SETTING)
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_str::<Retention>(&v).ok())
        .filter(|r| r.check().is_ok())
        .unwrap_or_default()
}

/// Stores new retention counts and prunes to them at once.
pub fn set_retention(conn: &Connection, retention: Retention, now: &str) -> Result<()> {
    retention.check().map_err(CoreError::InvalidRequest)?;
    let value = serde_json::to_string(&retention).map_err(|e| CoreError::Corrupt(e.to_string()))?;
    super::settings::put(conn, RETENTION_SETTING, &value, now)?;
    prune(conn, Reason::PreMigration)?;
    prune(conn, Reason::PreFlowRun)?;
    Ok(())
}

/// Copies `conn`'s database into a new file `dir/maskflow-<stamp>.db`
/// (SQLite's online backup: consistent while others write). Returns the path.
/// Free space is checked first; a full disk is [`CoreError::DiskFull`] and
/// leaves no partial file behind.
pub fn copy_to_file(conn: &Connection, dir: &Path, stamp: &str) -> Result<PathBuf> {
    copy_to_file_with(conn, dir, stamp, crate::disk::available_space)
}

/// [`copy_to_file`] with the free-space measure given (tests pass a small disk).
fn copy_to_file_with(
    conn: &Connection,
    dir: &Path,
    stamp: &str,
    free: fn(&Path) -> u64,
) -> Result<PathBuf> {
    let needed = database_bytes(conn)?;
    crate::disk::ensure_free(free(dir), dir, needed, "a backup of the database")?;
    std::fs::create_dir_all(dir)
        .map_err(|e| CoreError::io(format!("creating the backup folder {}", dir.display()), e))?;
    let safe: String = stamp
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let mut target = dir.join(format!("maskflow-{safe}.db"));
    let mut n = 1;
    while target.exists() {
        target = dir.join(format!("maskflow-{safe}-{n}.db"));
        n += 1;
    }
    match write_backup(conn, &target) {
        Ok(()) => Ok(target),
        Err(e) => {
            // Nothing half-written stays: the file (and any journal) goes.
            for leftover in [target.clone(), target.with_extension("db-journal")] {
                let _ = std::fs::remove_file(leftover);
            }
            Err(full_disk_named(e, &target))
        }
    }
}

fn write_backup(conn: &Connection, target: &Path) -> Result<()> {
    let mut dst = Connection::open(target)?;
    super::guard::protect(&dst)?;
    rusqlite::backup::Backup::new(conn, &mut dst)?.run_to_completion(
        256,
        std::time::Duration::from_millis(20),
        None,
    )?;
    // A backup is one self-contained file, not a WAL database.
    dst.pragma_update(None, "journal_mode", "DELETE")?;
    Ok(())
}

/// The size the backup file will have: the database's pages.
fn database_bytes(conn: &Connection) -> Result<u64> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
}

/// SQLite's "database or disk is full" while writing the backup, said as
/// the other full-disk errors are: what, and where.
fn full_disk_named(e: CoreError, target: &Path) -> CoreError {
    if e.code() == crate::error::ErrorCode::DiskFull && !matches!(e, CoreError::DiskFull(_)) {
        return CoreError::DiskFull(format!(
            "writing the backup {}: the disk is full; free some space (Settings → Storage \
             shows what Maskflow keeps and clears it) and try again",
            target.display()
        ));
    }
    e
}

/// The row for a backup file just written.
pub fn describe(path: &Path, reason: Reason, run_id: Option<&str>, now: &str) -> Backup {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Backup {
        // The file name is unique in the folder, so the id is too.
        id: format!("bak_{}", stem.trim_start_matches("maskflow-")),
        created_at: now.to_owned(),
        reason,
        path: path.display().to_string(),
        workflow_run_id: run_id.map(str::to_owned),
        size_bytes: i64::try_from(size).unwrap_or(i64::MAX),
    }
}

/// Records a backup (kept as is when its path is already recorded).
pub fn record(conn: &Connection, b: &Backup) -> Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO database_backups (id, created_at, reason, path, workflow_run_id, size_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![b.id, b.created_at, b.reason.as_str(), b.path, b.workflow_run_id, b.size_bytes],
    )?;
    Ok(())
}

/// Takes a backup of `conn` into `<home>/backups/`, records it and applies
/// the retention of its kind.
pub fn take(
    conn: &Connection,
    home: &Path,
    reason: Reason,
    run_id: Option<&str>,
    now: &str,
) -> Result<Backup> {
    let free = crate::disk::available_space;
    take_with(conn, home, (reason, run_id), now, free)
}

/// [`take`] with the free-space measure given.
fn take_with(
    conn: &Connection,
    home: &Path,
    (reason, run_id): (Reason, Option<&str>),
    now: &str,
    free: fn(&Path) -> u64,
) -> Result<Backup> {
    let path = copy_to_file_with(conn, &home.join("backups"), now, free)?;
    let backup = describe(&path, reason, run_id, now);
    if let Err(e) = record(conn, &backup) {
        // An unrecorded file would be invisible in Settings: remove it.
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    prune(conn, reason)?;
    Ok(backup)
}

fn backup_from(row: &rusqlite::Row<'_>) -> rusqlite::Result<Backup> {
    let reason: String = row.get(2)?;
    Ok(Backup {
        id: row.get(0)?,
        created_at: row.get(1)?,
        reason: Reason::parse(&reason).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                2,
                rusqlite::types::Type::Text,
                format!("unknown backup reason {reason:?}").into(),
            )
        })?,
        path: row.get(3)?,
        workflow_run_id: row.get(4)?,
        size_bytes: row.get(5)?,
    })
}

const COLS: &str = "id, created_at, reason, path, workflow_run_id, size_bytes";

/// Every recorded backup, newest first.
pub fn list(conn: &Connection) -> Result<Vec<Backup>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLS} FROM database_backups ORDER BY created_at DESC, id DESC"
    ))?;
    let rows = stmt
        .query_map([], backup_from)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// One recorded backup.
pub fn get(conn: &Connection, id: &str) -> Result<Option<Backup>> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLS} FROM database_backups WHERE id = ?1"),
            [id],
            backup_from,
        )
        .optional()?)
}

/// Removes a backup's file (already gone is fine) and its row.
pub fn remove(conn: &Connection, b: &Backup) -> Result<()> {
    match std::fs::remove_file(&b.path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CoreError::io(format!("removing backup {}", b.path), e)),
    }
    conn.execute("DELETE FROM database_backups WHERE id = ?1", [&b.id])?;
    Ok(())
}

/// Opens a backup read-only and checks it is a sound Maskflow database no
/// newer than this version of Maskflow, which knows `known` migrations (the
/// caller says: the schema's list names every table module, this one too).
pub fn open_checked(b: &Backup, known: i64) -> Result<Connection> {
    let bad = |why: String| CoreError::InvalidRequest(format!("backup {}: {why}", b.id));
    if !std::path::Path::new(&b.path).is_file() {
        return Err(bad(format!("its file {} is missing", b.path)));
    }
    let conn = Connection::open_with_flags(
        &b.path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| bad(format!("cannot be opened: {e}")))?;
    super::guard::protect(&conn)?;
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(|e| bad(format!("is not a database: {e}")))?;
    if check != "ok" {
        return Err(bad(format!("is damaged: {check}")));
    }
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > known {
        return Err(bad(format!(
            "was made by a newer Maskflow (schema {version}, this one knows {known})"
        )));
    }
    let has_workflows = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'workflows'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| bad(e.to_string()))?;
    if has_workflows == 0 {
        return Err(bad("is not a Maskflow database".into()));
    }
    Ok(conn)
}

/// Keeps only the newest backups of an automatic kind, per the retention.
pub fn prune(conn: &Connection, reason: Reason) -> Result<()> {
    let Some(kept) = retention(conn).kept(reason) else {
        return Ok(());
    };
    let all: Vec<Backup> = list(conn)?
        .into_iter()
        .filter(|b| b.reason == reason)
        .collect();
    for old in all.iter().skip(kept) {
        remove(conn, old)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "backups_disk_tests.rs"]
mod disk_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_pruned_apart_and_manual_backups_stay() {
        let home = tempfile::tempdir().expect("tmp");
        let conn = crate::store::open_in_memory().expect("db");
        set_retention(
            &conn,
            Retention {
                pre_migration: 2,
                pre_flow_run: 3,
            },
            "t",
        )
        .expect("retention");
        for i in 0..5 {
            let now = format!("2025-01-01T00:00:{i:02}.000Z");
            take(&conn, home.path(), Reason::PreFlowRun, Some("fr_1"), &now).expect("run");
            take(&conn, home.path(), Reason::PreMigration, None, &now).expect("mig");
            take(&conn, home.path(), Reason::Manual, None, &now).expect("manual");
        }
        let all = list(&conn).expect("list");
        let count = |r: Reason| all.iter().filter(|b| b.reason == r).count();
        assert_eq!(count(Reason::PreFlowRun), 3);
        assert_eq!(count(Reason::PreMigration), 2);
        assert_eq!(count(Reason::Manual), 5);
        // The newest of each kind are the ones kept, and their files exist.
        assert!(
            all.iter()
                .filter(|b| b.reason == Reason::PreMigration)
                .all(|b| b.created_at.as_str() >= "2025-01-01T00:00:03")
        );
        for b in &all {
            let meta = std::fs::metadata(&b.path).expect("file kept");
            assert_eq!(meta.len() as i64, b.size_bytes);
        }
        let files = std::fs::read_dir(home.path().join("backups"))
            .expect("dir")
            .count();
        assert_eq!(files, all.len(), "pruned rows have no file left");
        // Lowering a count prunes at once.
        set_retention(
            &conn,
            Retention {
                pre_migration: 1,
                pre_flow_run: 1,
            },
            "t",
        )
        .expect("lower");
        assert_eq!(list(&conn).expect("list").len(), 1 + 1 + 5);
    }

    #[test]
    fn retention_counts_are_checked() {
        let conn = crate::store::open_in_memory().expect("db");
        let zero = Retention {
            pre_migration: 0,
            pre_flow_run: 3,
        };
        let err = set_retention(&conn, zero, "t").expect_err("zero");
        assert!(err.to_string().contains("pre_migration"), "{err}");
        assert_eq!(retention(&conn), Retention::default());
    }
}
