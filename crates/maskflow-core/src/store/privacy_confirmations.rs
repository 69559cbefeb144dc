//! Rows of `privacy_confirmations` (created by migration 2,
//! [`crate::store::schema::V2`]): text the user chose to send to an LLM
//! although the privacy guard flagged it, per workflow.

use rusqlite::{Connection, params};

/// A workflow's confirmed texts, oldest first.
pub fn of_workflow(conn: &Connection, workflow_id: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT content FROM privacy_confirmations WHERE workflow_id = ?1 ORDER BY rowid")?
        .query_map([workflow_id], |r| r.get(0))?
        .collect()
}

/// Records that the user confirmed sending `content` for the workflow.
pub fn insert(
    conn: &Connection,
    workflow_id: &str,
    content: &str,
    now: &str,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO privacy_confirmations (workflow_id, content, created_at) VALUES (?1, ?2, ?3)",
        params![workflow_id, content, now],
    )?;
    Ok(())
}
