//! Rows of `version_input_hashes`: the SHA-256 of each input file of a
//! version, taken when it was approved. Plain reads and writes; the
//! service hashes the files and decides.

use rusqlite::{Connection, params};

/// One input file's hash as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputHashRow {
    /// The file's name as the user gave it.
    pub filename: String,
    /// Lower-case hex SHA-256, or `None` when the file could not be read.
    pub sha256: Option<String>,
}

/// Replaces the hashes of `version_id` with `rows`, in order.
pub fn put(conn: &Connection, version_id: &str, rows: &[InputHashRow]) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM version_input_hashes WHERE version_id = ?1",
        [version_id],
    )?;
    let mut stmt = conn.prepare(
        "INSERT INTO version_input_hashes (version_id, position, filename, sha256)
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, row) in rows.iter().enumerate() {
        let position = i64::try_from(position).unwrap_or(i64::MAX);
        stmt.execute(params![version_id, position, row.filename, row.sha256])?;
    }
    Ok(())
}

/// The hashes recorded for `version_id`, in file order (empty when none).
pub fn of(conn: &Connection, version_id: &str) -> rusqlite::Result<Vec<InputHashRow>> {
    let mut stmt = conn.prepare(
        "SELECT filename, sha256 FROM version_input_hashes WHERE version_id = ?1 ORDER BY position",
    )?;
    stmt.query_map([version_id], |r| {
        Ok(InputHashRow {
            filename: r.get(0)?,
            sha256: r.get(1)?,
        })
    })?
    .collect()
}
