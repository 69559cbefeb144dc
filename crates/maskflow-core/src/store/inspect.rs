//! Reads and one deliberate corruption that only tests make: they look at
//! what a database file holds (a backup, a deleted workflow's ledger rows)
//! from outside the service, so their SQL lives here with the rest.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

/// Opens a database file as it is (no migrations, no backups).
fn open(db: &Path) -> rusqlite::Result<Connection> {
    Connection::open(db)
}

/// The `deleted_workflow` mark of each ledger row of a workflow.
pub fn ledger_deleted_marks(db: &Path, workflow_id: &str) -> rusqlite::Result<Vec<Option<String>>> {
    let db = open(db)?;
    let mut stmt = db.prepare("SELECT deleted_workflow FROM llm_calls WHERE workflow_id = ?1")?;
    let rows = stmt.query_map([workflow_id], |r| r.get(0))?;
    rows.collect()
}

/// How many checkpoints and turns a flow run has in a database file.
pub fn flow_run_step_rows(db: &Path, run_id: &str) -> rusqlite::Result<i64> {
    open(db)?.query_row(
        "SELECT (SELECT count(*) FROM flow_checkpoints WHERE run_id = ?1)
              + (SELECT count(*) FROM flow_turns WHERE run_id = ?1)",
        [run_id],
        |r| r.get(0),
    )
}

/// The kind (`full` or `delta`) of each checkpoint a flow run keeps in a
/// database file, oldest first.
pub fn flow_checkpoint_kinds(db: &Path, run_id: &str) -> rusqlite::Result<Vec<String>> {
    let db = open(db)?;
    let mut stmt = db.prepare("SELECT kind FROM flow_checkpoints WHERE run_id = ?1 ORDER BY id")?;
    let rows = stmt.query_map([run_id], |r| r.get(0))?;
    rows.collect()
}

/// A workflow's name in a database file, if it is there.
pub fn workflow_name(db: &Path, workflow_id: &str) -> rusqlite::Result<Option<String>> {
    open(db)?
        .query_row(
            "SELECT name FROM workflows WHERE id = ?1",
            [workflow_id],
            |r| r.get(0),
        )
        .optional()
}

/// What a flow run left in a database file: checkpoint rows, their bytes,
/// the run's own state bytes, and the file's size before and after a
/// `VACUUM` (the WAL folded in first).
#[derive(Debug, Clone, Copy)]
pub struct RunFootprint {
    /// Rows in `flow_checkpoints`.
    pub checkpoint_rows: i64,
    /// Bytes of their states.
    pub checkpoint_bytes: i64,
    /// Bytes of `flow_runs.state`.
    pub run_state_bytes: i64,
    /// The database file's size.
    pub file_bytes: u64,
    /// Its size after `VACUUM`.
    pub vacuumed_bytes: u64,
}

/// Measures [`RunFootprint`] (for the checkpoint benchmark).
pub fn run_footprint(
    db_path: &Path,
    run_id: &str,
) -> Result<RunFootprint, Box<dyn std::error::Error>> {
    let db = open(db_path)?;
    db.query_row("PRAGMA wal_checkpoint(FULL)", [], |_| Ok(()))?;
    let (checkpoint_rows, checkpoint_bytes) = db.query_row(
        "SELECT COUNT(*), COALESCE(SUM(length(state)), 0) FROM flow_checkpoints WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let run_state_bytes = db.query_row(
        "SELECT length(state) FROM flow_runs WHERE id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    let file_bytes = std::fs::metadata(db_path)?.len();
    db.execute_batch("VACUUM")?;
    let vacuumed_bytes = std::fs::metadata(db_path)?.len();
    Ok(RunFootprint {
        checkpoint_rows,
        checkpoint_bytes,
        run_state_bytes,
        file_bytes,
        vacuumed_bytes,
    })
}
