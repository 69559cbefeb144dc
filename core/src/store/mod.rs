//! The SQLite store: opening the database file (WAL, foreign keys), backups
//! before migrations, and the row-level reads and writes of workflows,
//! versions, messages and input files.
//!
//! Functions here take a `&Connection` (a transaction derefs to one) and do
//! no domain checks: status moves are decided by [`crate::versions`] and the
//! service; the database's own constraints are the last line of defence.

pub mod builds;
pub mod leases;
pub mod python_locks;
pub mod schema;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Row, params};
use rusqlite_migration::Migrations;
use serde_json::Value;

use crate::error::{CoreError, Result};
use crate::versions::Status;

/// The account every local row belongs to.
pub const LOCAL_ACCOUNT: &str = "local";
/// The user every local row belongs to.
pub const LOCAL_USER: &str = "local";
/// The database file's name inside the data folder.
pub const DB_FILE: &str = "maskflow.db";
/// How many backups are kept in `<home>/backups/`.
pub const BACKUPS_KEPT: usize = 10;

/// Opens (creating if needed) `<home>/maskflow.db`, backs it up into
/// `<home>/backups/` if it already existed and migrations are pending, then
/// runs the migrations. `stamp` names the backup (e.g. a formatted time).
pub fn open(home: &Path, stamp: &str) -> Result<Connection> {
    open_with(home, stamp, &schema::migrations())
}

pub(crate) fn open_with(home: &Path, stamp: &str, migrations: &Migrations) -> Result<Connection> {
    std::fs::create_dir_all(home)
        .map_err(|e| CoreError::io(format!("creating the data folder {}", home.display()), e))?;
    let path = home.join(DB_FILE);
    let existed = path.exists();
    let mut conn = Connection::open(&path)?;
    configure(&conn)?;
    if existed && migrations.pending_migrations(&conn)? > 0 {
        backup(&conn, &home.join("backups"), stamp)?;
    }
    migrations.to_latest(&mut conn)?;
    Ok(conn)
}

/// An in-memory database with every migration applied (for tests).
pub fn open_in_memory() -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    configure(&conn)?;
    schema::migrations().to_latest(&mut conn)?;
    Ok(conn)
}

fn configure(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(())
}

/// Takes an online backup of `conn` into `dir/maskflow-<stamp>.db` and keeps
/// only the newest [`BACKUPS_KEPT`] backups. Returns the backup's path.
pub fn backup(conn: &Connection, dir: &Path, stamp: &str) -> Result<PathBuf> {
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
    {
        let mut dst = Connection::open(&target)?;
        rusqlite::backup::Backup::new(conn, &mut dst)?.run_to_completion(
            256,
            std::time::Duration::ZERO,
            None,
        )?;
        // A backup is one self-contained file, not a WAL database.
        dst.pragma_update(None, "journal_mode", "DELETE")?;
    }
    let mut backups: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CoreError::io(format!("listing {}", dir.display()), e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("maskflow-") && n.ends_with(".db"))
        })
        .collect();
    backups.sort();
    if backups.len() > BACKUPS_KEPT {
        for old in &backups[..backups.len() - BACKUPS_KEPT] {
            std::fs::remove_file(old)
                .map_err(|e| CoreError::io(format!("removing old backup {}", old.display()), e))?;
        }
    }
    Ok(target)
}

/// A row of `workflows`.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowRow {
    /// `wf_…`
    pub id: String,
    /// Set by the first build, then by the user.
    pub name: Option<String>,
    /// Set by the first build, then by the user.
    pub description: Option<String>,
    /// A user tag such as "finance".
    pub label: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A row of `workflow_versions`.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionRow {
    /// `wv_…`
    pub id: String,
    /// The workflow it belongs to.
    pub workflow_id: String,
    /// 1, 2, 3…
    pub version: i64,
    /// Where it is in its life.
    pub status: Status,
    /// The one version in use.
    pub is_active: bool,
    /// The approved extracts (a JSON array of `FileExtract`).
    pub file_extracts: Value,
    /// The inputs the built workflow takes.
    pub fields: Option<Value>,
    /// How the built workflow runs.
    pub execution: Option<Value>,
    /// The generated Python source.
    pub script: Option<String>,
    /// Why the validator rejected the task.
    pub rejection_reason: Option<String>,
    /// Why the build failed.
    pub failure_reason: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A row of `workflow_messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// `msg_…`
    pub id: String,
    /// The workflow the conversation belongs to.
    pub workflow_id: String,
    /// The version that was the draft when it was sent.
    pub version_id: Option<String>,
    /// `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
    /// RFC 3339.
    pub created_at: String,
}

/// A row of `input_files`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileRow {
    /// `file_…`
    pub id: String,
    /// The name the user gave the file.
    pub filename: String,
    /// Where the stored copy is (local only, never sent).
    pub path: String,
    /// Size in bytes.
    pub size_bytes: i64,
    /// Its masked extract (a JSON `FileExtract`).
    pub extract: Value,
    /// RFC 3339.
    pub created_at: String,
}

fn json_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Value> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn opt_json_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Value>> {
    let text: Option<String> = row.get(idx)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

fn status_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Status> {
    let text: String = row.get(idx)?;
    Status::parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("unknown status {text:?}").into(),
        )
    })
}

const WORKFLOW_COLS: &str = "id, name, description, label, created_at, updated_at";

fn workflow_from(row: &Row<'_>) -> rusqlite::Result<WorkflowRow> {
    Ok(WorkflowRow {
        id: row.get(0)?,
        name: row.get(1)?,
        description: row.get(2)?,
        label: row.get(3)?,
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
    })
}

/// Inserts a workflow owned by the local user.
pub fn insert_workflow(conn: &Connection, w: &WorkflowRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO workflows (id, account_id, user_id, name, description, label, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![w.id, LOCAL_ACCOUNT, LOCAL_USER, w.name, w.description, w.label, w.created_at, w.updated_at],
    )?;
    Ok(())
}

/// One workflow.
pub fn get_workflow(conn: &Connection, id: &str) -> rusqlite::Result<Option<WorkflowRow>> {
    conn.query_row(
        &format!("SELECT {WORKFLOW_COLS} FROM workflows WHERE id = ?1"),
        [id],
        workflow_from,
    )
    .optional()
}

/// Every workflow, newest first.
pub fn list_workflows(conn: &Connection) -> rusqlite::Result<Vec<WorkflowRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {WORKFLOW_COLS} FROM workflows ORDER BY id DESC"
    ))?;
    stmt.query_map([], workflow_from)?.collect()
}

/// Overwrites a workflow's name, description and label.
pub fn update_workflow_meta(conn: &Connection, w: &WorkflowRow) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE workflows SET name = ?2, description = ?3, label = ?4, updated_at = ?5 WHERE id = ?1",
        params![w.id, w.name, w.description, w.label, w.updated_at],
    )
}

/// Deletes a workflow with its versions and messages. Returns whether it existed.
pub fn delete_workflow(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM workflows WHERE id = ?1", [id])? > 0)
}

const VERSION_COLS: &str = "id, workflow_id, version, status, is_active, file_extracts, fields, execution, script, rejection_reason, failure_reason, created_at, updated_at";

fn version_from(row: &Row<'_>) -> rusqlite::Result<VersionRow> {
    Ok(VersionRow {
        id: row.get(0)?,
        workflow_id: row.get(1)?,
        version: row.get(2)?,
        status: status_col(row, 3)?,
        is_active: row.get(4)?,
        file_extracts: json_col(row, 5)?,
        fields: opt_json_col(row, 6)?,
        execution: opt_json_col(row, 7)?,
        script: row.get(8)?,
        rejection_reason: row.get(9)?,
        failure_reason: row.get(10)?,
        created_at: row.get(11)?,
        updated_at: row.get(12)?,
    })
}

/// Inserts a version (every column as given).
pub fn insert_version(conn: &Connection, v: &VersionRow) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT INTO workflow_versions ({VERSION_COLS}, account_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
        params![
            v.id,
            v.workflow_id,
            v.version,
            v.status.as_str(),
            v.is_active,
            v.file_extracts.to_string(),
            v.fields.as_ref().map(Value::to_string),
            v.execution.as_ref().map(Value::to_string),
            v.script,
            v.rejection_reason,
            v.failure_reason,
            v.created_at,
            v.updated_at,
            LOCAL_ACCOUNT,
        ],
    )?;
    Ok(())
}

/// Writes back every mutable column of a version.
pub fn update_version(conn: &Connection, v: &VersionRow) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE workflow_versions SET status = ?2, is_active = ?3, fields = ?4, execution = ?5,
             script = ?6, rejection_reason = ?7, failure_reason = ?8, updated_at = ?9
         WHERE id = ?1",
        params![
            v.id,
            v.status.as_str(),
            v.is_active,
            v.fields.as_ref().map(Value::to_string),
            v.execution.as_ref().map(Value::to_string),
            v.script,
            v.rejection_reason,
            v.failure_reason,
            v.updated_at,
        ],
    )
}

/// One version.
pub fn get_version(conn: &Connection, id: &str) -> rusqlite::Result<Option<VersionRow>> {
    conn.query_row(
        &format!("SELECT {VERSION_COLS} FROM workflow_versions WHERE id = ?1"),
        [id],
        version_from,
    )
    .optional()
}

/// Every version of a workflow, oldest first.
pub fn versions_of(conn: &Connection, workflow_id: &str) -> rusqlite::Result<Vec<VersionRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {VERSION_COLS} FROM workflow_versions WHERE workflow_id = ?1 ORDER BY version"
    ))?;
    stmt.query_map([workflow_id], version_from)?.collect()
}

/// Every version in `status`, across workflows.
pub fn versions_in(conn: &Connection, status: Status) -> rusqlite::Result<Vec<VersionRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {VERSION_COLS} FROM workflow_versions WHERE status = ?1 ORDER BY id"
    ))?;
    stmt.query_map([status.as_str()], version_from)?.collect()
}

/// Appends a message to a workflow's conversation.
pub fn insert_message(conn: &Connection, m: &MessageRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO workflow_messages (id, workflow_id, account_id, version_id, role, content, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![m.id, m.workflow_id, LOCAL_ACCOUNT, m.version_id, m.role, m.content, m.created_at],
    )?;
    Ok(())
}

/// A workflow's whole conversation, in order.
pub fn messages_of(conn: &Connection, workflow_id: &str) -> rusqlite::Result<Vec<MessageRow>> {
    let mut stmt = conn.prepare(
        "SELECT id, workflow_id, version_id, role, content, created_at
         FROM workflow_messages WHERE workflow_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([workflow_id], |row| {
        Ok(MessageRow {
            id: row.get(0)?,
            workflow_id: row.get(1)?,
            version_id: row.get(2)?,
            role: row.get(3)?,
            content: row.get(4)?,
            created_at: row.get(5)?,
        })
    })?
    .collect()
}

/// Records a stored input file.
pub fn insert_file(conn: &Connection, f: &FileRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO input_files (id, account_id, user_id, filename, path, size_bytes, extract, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![f.id, LOCAL_ACCOUNT, LOCAL_USER, f.filename, f.path, f.size_bytes, f.extract.to_string(), f.created_at],
    )?;
    Ok(())
}

fn file_from(row: &Row<'_>) -> rusqlite::Result<FileRow> {
    Ok(FileRow {
        id: row.get(0)?,
        filename: row.get(1)?,
        path: row.get(2)?,
        size_bytes: row.get(3)?,
        extract: json_col(row, 4)?,
        created_at: row.get(5)?,
    })
}

/// One input file.
pub fn get_file(conn: &Connection, id: &str) -> rusqlite::Result<Option<FileRow>> {
    conn.query_row(
        "SELECT id, filename, path, size_bytes, extract, created_at FROM input_files WHERE id = ?1",
        [id],
        file_from,
    )
    .optional()
}

/// Ties input files to a version, in order.
pub fn link_files(
    conn: &Connection,
    version_id: &str,
    file_ids: &[String],
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "INSERT INTO workflow_version_files (version_id, file_id, position) VALUES (?1, ?2, ?3)",
    )?;
    for (i, f) in file_ids.iter().enumerate() {
        stmt.execute(params![version_id, f, i as i64])?;
    }
    Ok(())
}

/// The ids of the input files behind a version, in order.
pub fn file_ids_of(conn: &Connection, version_id: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT file_id FROM workflow_version_files WHERE version_id = ?1 ORDER BY position",
    )?;
    stmt.query_map([version_id], |r| r.get(0))?.collect()
}

#[cfg(test)]
mod tests;
