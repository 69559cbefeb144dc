//! The SQLite store: opening the database file (WAL, foreign keys), backups
//! before migrations, and the row-level reads and writes of workflows,
//! versions, messages and input files.
//!
//! Functions here take a `&Connection` (a transaction derefs to one) and do
//! no domain checks: status moves are decided by [`crate::versions`] and the
//! service; the database's own constraints are the last line of defence.

pub mod backups;
pub mod builds;
pub mod client_requests;
pub mod conversations;
pub mod deletes;
pub mod file_categories;
pub mod flow_storage;
pub mod guard;
pub mod input_files;
pub mod input_hashes;
#[cfg(any(test, feature = "testing"))]
pub mod inspect;
pub mod leases;
pub mod llm_calls;
pub mod manual_prompts;
pub mod privacy_confirmations;
pub mod python_locks;
pub mod schedules;
pub mod schema;
pub mod settings;
pub mod transitions;
pub mod waiting;

use std::path::Path;

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

/// Opens (creating if needed) `<home>/maskflow.db`, backs it up into
/// `<home>/backups/` if it already existed and migrations are pending, then
/// runs the migrations and records the backup (`database_backups` exists
/// only after them). `stamp` names the backup (e.g. a formatted time).
pub fn open(home: &Path, stamp: &str) -> Result<Connection> {
    open_with(home, stamp, &schema::migrations())
}

pub(crate) fn open_with(home: &Path, stamp: &str, migrations: &Migrations) -> Result<Connection> {
    std::fs::create_dir_all(home)
        .map_err(|e| CoreError::io(format!("creating the data folder {}", home.display()), e))?;
    let path = home.join(DB_FILE);
    let existed = path.exists();
    let mut conn = Connection::open(&path)?;
    configure(&mut conn)?;
    guard::protect(&conn)?;
    let taken = if existed && migrations.pending_migrations(&conn)? > 0 {
        Some(backups::copy_to_file(&conn, &home.join("backups"), stamp)?)
    } else {
        None
    };
    guard::migrate(&mut conn, migrations)?;
    if let Some(path) = taken
        && has_backups_table(&conn)?
    {
        let b = backups::describe(&path, backups::Reason::PreMigration, None, stamp);
        backups::record(&conn, &b)?;
        backups::prune(&conn, backups::Reason::PreMigration)?;
    }
    Ok(conn)
}

// A test's own migration list may stop before the backups table.
fn has_backups_table(conn: &Connection) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'database_backups'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Re-applies the connection settings after the file's content was
/// replaced (a restored backup is not in WAL mode).
pub(crate) fn reconfigure(conn: &mut Connection) -> Result<()> {
    configure(conn)
}

/// An in-memory database with every migration applied (for tests).
pub fn open_in_memory() -> Result<Connection> {
    let mut conn = Connection::open_in_memory()?;
    configure(&mut conn)?;
    guard::protect(&conn)?;
    guard::migrate(&mut conn, &schema::migrations())?;
    Ok(conn)
}

fn configure(conn: &mut Connection) -> Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Checkpoint the WAL every ~16 MB instead of SQLite's ~4 MB: the
    // checkpoint's fsync was 8 % of a flow step (bench/flows/README.md).
    conn.pragma_update(None, "wal_autocheckpoint", 4000)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Every transaction here writes. A deferred one that reads first and
    // then writes fails at once with "database is locked" when another
    // connection wrote in between (the busy timeout cannot help a stale
    // snapshot); taking the write lock up front waits for it instead.
    conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
    Ok(())
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
    /// How it came to be: created, edited or restored.
    pub origin: Origin,
    /// The version it was edited or restored from.
    pub origin_version_id: Option<String>,
}

/// How a version came to be (`workflow_versions.origin`).
#[derive(
    serde::Serialize,
    serde::Deserialize,
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    utoipa::ToSchema,
    ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "VersionOrigin")]
#[schema(as = VersionOrigin)]
pub enum Origin {
    /// The first version of a new workflow.
    Created,
    /// Made by Edit from another version.
    Edited,
    /// Made by Restore from an earlier version.
    Restored,
}

impl Origin {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Created => "created",
            Origin::Edited => "edited",
            Origin::Restored => "restored",
        }
    }

    fn parse(s: Option<&str>) -> Origin {
        match s {
            Some("edited") => Origin::Edited,
            Some("restored") => Origin::Restored,
            _ => Origin::Created,
        }
    }
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

const VERSION_COLS: &str = "id, workflow_id, version, status, is_active, file_extracts, fields, execution, script, rejection_reason, failure_reason, created_at, updated_at, origin, origin_version_id";

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
        origin: Origin::parse(row.get::<_, Option<String>>(13)?.as_deref()),
        origin_version_id: row.get(14)?,
    })
}

/// Inserts a version (every column as given).
pub fn insert_version(conn: &Connection, v: &VersionRow) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT INTO workflow_versions ({VERSION_COLS}, account_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"),
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
            v.origin.as_str(),
            v.origin_version_id,
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
