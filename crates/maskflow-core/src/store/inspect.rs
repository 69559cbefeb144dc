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

/// How many flow runs of one flow there are.
pub fn flow_runs_named(db: &Connection, flow_name: &str) -> rusqlite::Result<i64> {
    db.query_row(
        "SELECT COUNT(*) FROM flow_runs WHERE flow_name = ?1",
        [flow_name],
        |r| r.get(0),
    )
}

/// Hands an agent conversation's messages to another agent, as a tampered
/// database would, to test that the engine refuses it.
pub fn reassign_agent_conversation(
    db: &Connection,
    conversation_id: &str,
    agent: &str,
) -> rusqlite::Result<usize> {
    db.execute(
        "UPDATE flow_agent_messages SET agent = ?2 WHERE conversation_id = ?1",
        [conversation_id, agent],
    )
}
