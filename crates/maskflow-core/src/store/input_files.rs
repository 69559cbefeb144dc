//! The upload side of `input_files` (created by migration 1,
//! [`crate::store::schema::V1`]): uploads that joined no workflow version,
//! their removal, and the raw rows the flow guard reads. Inserting and
//! reading one file stay in [`crate::store`] beside the version links.

use rusqlite::Connection;

/// An upload that no version uses (a row of `input_files`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnlinkedFile {
    /// `file_…`
    pub id: String,
    /// Where the file lies (Maskflow's copy or the user's own file).
    pub path: String,
    /// RFC 3339.
    pub created_at: String,
}

/// A file as the flow guard reads it: where it lies and its stored extract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardedFile {
    /// Where the file lies.
    pub path: String,
    /// The name the user gave it.
    pub filename: String,
    /// The stored extract (JSON text, as written).
    pub extract: String,
}

/// Every upload that no workflow version uses.
pub fn unlinked(conn: &Connection) -> rusqlite::Result<Vec<UnlinkedFile>> {
    let mut stmt = conn.prepare(
        "SELECT id, path, created_at FROM input_files f
         WHERE NOT EXISTS (SELECT 1 FROM workflow_version_files v WHERE v.file_id = f.id)",
    )?;
    stmt.query_map([], |r| {
        Ok(UnlinkedFile {
            id: r.get(0)?,
            path: r.get(1)?,
            created_at: r.get(2)?,
        })
    })?
    .collect()
}

/// The id of every stored file.
pub fn ids(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT id FROM input_files")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// Deletes the file's row unless a version uses it (it may have joined one
/// since it was listed); whether it was deleted.
pub fn delete_unlinked(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    let gone = conn.execute(
        "DELETE FROM input_files WHERE id = ?1
         AND NOT EXISTS (SELECT 1 FROM workflow_version_files v WHERE v.file_id = ?1)",
        [id],
    )?;
    Ok(gone > 0)
}

/// A stamp that changes whenever a file is added or removed: the count and
/// the highest rowid.
pub fn stamp(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.query_row(
        "SELECT COUNT(*), COALESCE(MAX(rowid), 0) FROM input_files",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Every stored file with its extract, for the flow guard.
pub fn guarded(conn: &Connection) -> rusqlite::Result<Vec<GuardedFile>> {
    conn.prepare("SELECT path, filename, extract FROM input_files")?
        .query_map([], |r| {
            Ok(GuardedFile {
                path: r.get(0)?,
                filename: r.get(1)?,
                extract: r.get(2)?,
            })
        })?
        .collect()
}
