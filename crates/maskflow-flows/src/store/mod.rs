//! The flow tables (migration 4) and their reads and writes: `flow_runs`
//! (one row per run, holding the definition it started with and its
//! current state), `flow_checkpoints` (a versioned row with a monotonic id
//! per step), `flow_turns` (the transcript) and `flow_agent_messages` (each
//! agent conversation). [`commit_step`] writes state, turns, agent messages
//! and the checkpoint in ONE transaction, so a killed process loses at most
//! the step in flight and never half of one.
//!
//! Checkpoints stay small ([`super::checkpoint`]): a row holds the full state
//! or a delta against the row before it, `flow_runs.state` holds the state of
//! the run's newest full row, and a read applies the deltas written after it.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::checkpoint::{self, Chain, CheckpointPolicy, Next};
use super::state::{FORMAT, RunState, RunStatus};
use super::turn::{Pending, StepMeta, TurnRole};
use maskflow_llm::{ChatMessage, ChatRole};

#[cfg(any(test, feature = "testing"))]
pub mod local;

/// The migration's SQL.
pub const MIGRATION: &str = r#"
CREATE TABLE flow_runs (
    id             TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'flow\_%' ESCAPE '\'),
    account_id     TEXT NOT NULL,
    flow_name      TEXT NOT NULL,
    title          TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('running', 'waiting', 'needs_attention',
                       'stopped', 'completed', 'failed')),
    definition     TEXT NOT NULL CHECK (json_valid(definition)),
    state          TEXT NOT NULL CHECK (json_valid(state)),
    pending        TEXT CHECK (pending IS NULL OR json_valid(pending)),
    error          TEXT,
    working_folder TEXT,
    archived       INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    stop_requested INTEGER NOT NULL DEFAULT 0 CHECK (stop_requested IN (0, 1)),
    parent_id      TEXT REFERENCES flow_runs(id) ON DELETE CASCADE,
    depth          INTEGER NOT NULL DEFAULT 0 CHECK (depth >= 0),
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
) STRICT;
CREATE INDEX flow_runs_by_flow ON flow_runs (flow_name, id);

CREATE TABLE flow_checkpoints (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL REFERENCES flow_runs(id) ON DELETE CASCADE,
    format      INTEGER NOT NULL,
    status      TEXT NOT NULL,
    step_path   TEXT NOT NULL CHECK (json_valid(step_path)),
    state       TEXT NOT NULL CHECK (json_valid(state)),
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX flow_checkpoints_by_run ON flow_checkpoints (run_id, id);

CREATE TABLE flow_turns (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL REFERENCES flow_runs(id) ON DELETE CASCADE,
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content     TEXT NOT NULL,
    command     TEXT NOT NULL CHECK (json_valid(command)),
    created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX flow_turns_by_run ON flow_turns (run_id, id);

CREATE TABLE flow_agent_messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          TEXT NOT NULL REFERENCES flow_runs(id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    agent           TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content         TEXT NOT NULL,
    created_at      TEXT NOT NULL
) STRICT;
CREATE INDEX flow_agent_messages_by_conversation ON flow_agent_messages (conversation_id, id);
"#;

/// The migration (issue 18, point 7) that lets a checkpoint row hold a
/// delta: `kind` is `full` (the whole state, as every older row) or `delta`
/// (what changed since the run's row before it).
pub const DELTA_MIGRATION: &str = r#"
ALTER TABLE flow_checkpoints ADD COLUMN kind TEXT NOT NULL DEFAULT 'full'
    CHECK (kind IN ('full', 'delta'));
"#;

/// A `flow_runs` row.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// `flow_…` (the conversation id of seed 004).
    pub id: String,
    /// The flow's file stem.
    pub flow_name: String,
    /// `Flow: <name>` unless renamed.
    pub title: String,
    /// Where it is.
    pub status: RunStatus,
    /// The snapshot it runs (flow definition, agents, commands).
    pub definition: Value,
    /// The checkpointed state.
    pub state: RunState,
    /// What a waiting or needs-attention run asks.
    pub pending: Option<Pending>,
    /// Why it failed.
    pub error: Option<String>,
    /// The working folder.
    pub working_folder: Option<String>,
    /// Hidden from lists; cannot run.
    pub archived: bool,
    /// Another process asked it to stop.
    pub stop_requested: bool,
    /// The run that started it as a subflow.
    pub parent_id: Option<String>,
    /// Subflow depth (0 at the top).
    pub depth: u32,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A transcript turn to write.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    /// Who speaks.
    pub role: TurnRole,
    /// The text.
    pub content: String,
    /// Seed 004's step metadata.
    pub command: StepMeta,
}

/// A stored transcript turn.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTurn {
    /// Monotonic id.
    pub id: i64,
    /// The run.
    pub run_id: String,
    /// Role.
    pub role: String,
    /// Text.
    pub content: String,
    /// Step metadata.
    pub command: StepMeta,
    /// RFC 3339.
    pub created_at: String,
}

/// An agent conversation message to write.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentMessageRow {
    /// The conversation.
    pub conversation_id: String,
    /// Its agent.
    pub agent: String,
    /// The message.
    pub message: ChatMessage,
}

/// Everything one step writes.
#[derive(Debug)]
pub struct StepCommit<'a> {
    /// The run.
    pub run_id: &'a str,
    /// Its new status.
    pub status: RunStatus,
    /// Its new state.
    pub state: &'a RunState,
    /// What it now asks, if waiting.
    pub pending: Option<&'a Pending>,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// Transcript turns of the step.
    pub turns: &'a [TurnRow],
    /// Agent conversation messages of the step.
    pub agent_messages: &'a [AgentMessageRow],
    /// RFC 3339.
    pub now: &'a str,
}

fn corrupt(idx: usize, e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
}

/// Column `idx` read as JSON into `T`.
fn json<T: serde::de::DeserializeOwned>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let t: String = row.get(idx)?;
    serde_json::from_str(&t).map_err(|e| corrupt(idx, e))
}

const RUN_COLS: &str = "id, flow_name, title, status, definition, state, pending, error, working_folder, archived, stop_requested, parent_id, depth, created_at, updated_at";

/// A row with its state column's text still to be read (see [`with_state`]).
fn run_from(row: &Row<'_>) -> rusqlite::Result<(RunRow, String)> {
    let status: String = row.get(3)?;
    let state: String = row.get(5)?;
    let pending: Option<String> = row.get(6)?;
    let run = RunRow {
        id: row.get(0)?,
        flow_name: row.get(1)?,
        title: row.get(2)?,
        status: RunStatus::parse(&status).ok_or_else(|| {
            corrupt(
                3,
                std::io::Error::other(format!("unknown flow run status {status:?}")),
            )
        })?,
        definition: json(row, 4)?,
        state: RunState::default(),
        pending: pending
            .map(|p| serde_json::from_str(&p).map_err(|e| corrupt(6, e)))
            .transpose()?,
        error: row.get(7)?,
        working_folder: row.get(8)?,
        archived: row.get(9)?,
        stop_requested: row.get(10)?,
        parent_id: row.get(11)?,
        depth: row.get(12)?,
        created_at: row.get(13)?,
        updated_at: row.get(14)?,
    };
    Ok((run, state))
}

/// The deltas written after a run's newest full checkpoint, oldest first.
fn deltas_after_base(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT state FROM flow_checkpoints WHERE run_id = ?1 AND kind = 'delta'
           AND id > COALESCE((SELECT MAX(id) FROM flow_checkpoints WHERE run_id = ?1 AND kind = 'full'), 0)
         ORDER BY id",
    )?;
    stmt.query_map([run_id], |r| r.get(0))?.collect()
}

/// `base` (a full state's text) with `deltas` applied, as a run state.
fn rebuild(base: &str, deltas: &[String]) -> rusqlite::Result<RunState> {
    if deltas.is_empty() {
        return serde_json::from_str(base).map_err(|e| corrupt(5, e));
    }
    let mut v: Value = serde_json::from_str(base).map_err(|e| corrupt(5, e))?;
    for d in deltas {
        let d: Value = serde_json::from_str(d).map_err(|e| corrupt(5, e))?;
        checkpoint::apply(&mut v, &d).map_err(|e| corrupt(5, e))?;
    }
    serde_json::from_value(v).map_err(|e| corrupt(5, e))
}

/// The row with its current state: the newest full state and the deltas after it.
fn with_state(conn: &Connection, (mut run, base): (RunRow, String)) -> rusqlite::Result<RunRow> {
    let deltas = deltas_after_base(conn, &run.id)?;
    run.state = rebuild(&base, &deltas)?;
    Ok(run)
}

/// JSON text for a column; these types always serialise, but a failure is
/// an error rather than an invalid row.
fn json_text<T: serde::Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn state_text(state: &RunState) -> String {
    serde_json::to_string(state).unwrap_or_else(|_| "{}".into())
}

/// Inserts a new run.
pub fn insert_run(conn: &Connection, r: &RunRow, account: &str) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT INTO flow_runs ({RUN_COLS}, account_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"),
        params![
            r.id,
            r.flow_name,
            r.title,
            r.status.as_str(),
            r.definition.to_string(),
            state_text(&r.state),
            r.pending.as_ref().map(json_text).transpose()?,
            r.error,
            r.working_folder,
            r.archived,
            r.stop_requested,
            r.parent_id,
            r.depth,
            r.created_at,
            r.updated_at,
            account,
        ],
    )?;
    Ok(())
}

/// One run.
pub fn get_run(conn: &Connection, id: &str) -> rusqlite::Result<Option<RunRow>> {
    conn.prepare_cached(&format!("SELECT {RUN_COLS} FROM flow_runs WHERE id = ?1"))?
        .query_row([id], run_from)
        .optional()?
        .map(|raw| with_state(conn, raw))
        .transpose()
}

/// The top-level runs of a flow, newest first.
pub fn runs_of(conn: &Connection, flow_name: &str) -> rusqlite::Result<Vec<RunRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {RUN_COLS} FROM flow_runs WHERE flow_name = ?1 AND parent_id IS NULL ORDER BY id DESC"
    ))?;
    let raws = stmt
        .query_map([flow_name], run_from)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(|raw| with_state(conn, raw)).collect()
}

/// A top-level run as the conversation list shows it (no definition or state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutline {
    /// `flow_…`
    pub id: String,
    /// The flow's file stem.
    pub flow_name: String,
    /// `Flow: <name>` unless renamed.
    pub title: String,
    /// The stored status (`running`, `completed`…).
    pub status: String,
    /// Hidden from lists; cannot run.
    pub archived: bool,
    /// RFC 3339.
    pub created_at: String,
    /// The last transcript turn's time, else the run's creation (RFC 3339).
    pub last_turn_at: String,
}

/// Top-level runs of `flow_name` (of every flow when `None`), newest first.
pub fn run_outlines(
    conn: &Connection,
    flow_name: Option<&str>,
) -> rusqlite::Result<Vec<RunOutline>> {
    let mut stmt = conn.prepare(
        "SELECT r.id, r.flow_name, r.title, r.status, r.archived, r.created_at,
                COALESCE((SELECT MAX(t.created_at) FROM flow_turns t WHERE t.run_id = r.id), r.created_at)
         FROM flow_runs r
         WHERE r.parent_id IS NULL AND (?1 IS NULL OR r.flow_name = ?1)
         ORDER BY r.id DESC",
    )?;
    stmt.query_map([flow_name], |r| {
        Ok(RunOutline {
            id: r.get(0)?,
            flow_name: r.get(1)?,
            title: r.get(2)?,
            status: r.get(3)?,
            archived: r.get(4)?,
            created_at: r.get(5)?,
            last_turn_at: r.get(6)?,
        })
    })?
    .collect()
}

/// Sets title and archived.
pub fn update_meta(
    conn: &Connection,
    id: &str,
    title: &str,
    archived: bool,
    now: &str,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE flow_runs SET title = ?2, archived = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, title, archived, now],
    )
}

/// Sets or clears the stop request.
pub fn set_stop_requested(conn: &Connection, id: &str, requested: bool) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE flow_runs SET stop_requested = ?2 WHERE id = ?1",
        params![id, requested],
    )
}

/// Records the folder a resumed run's scripts now run in.
pub fn set_working_folder(conn: &Connection, id: &str, folder: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE flow_runs SET working_folder = ?2 WHERE id = ?1",
        params![id, folder],
    )
}

/// Whether another process asked the run to stop.
pub fn stop_requested(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT stop_requested FROM flow_runs WHERE id = ?1")?
        .query_row([id], |r| r.get::<_, bool>(0))
        .optional()?
        .unwrap_or(false))
}

/// Deletes a run with its children, checkpoints and transcript.
pub fn delete_run(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM flow_runs WHERE id = ?1", [id])? > 0)
}

/// Writes one step as [`commit_step_with`] does, starting a new chain of
/// checkpoints (its checkpoint is a full one) and pruning nothing: the
/// engine's next full checkpoint prunes by its policy.
pub fn commit_step(conn: &mut Connection, c: &StepCommit<'_>) -> rusqlite::Result<Vec<i64>> {
    let keep_all = CheckpointPolicy {
        keep_full_snapshots: 0,
        ..CheckpointPolicy::default()
    };
    commit_step_with(conn, c, &mut Chain::default(), &keep_all)
}

/// Writes one step: the run's status (and its state when the checkpoint is
/// a full one), its turns and agent messages, and a checkpoint row — a delta
/// against `chain` when it ends at the run's last row — in one transaction;
/// prunes old checkpoints by `policy`. Returns the turns' ids; `chain` then
/// ends at the new row (it is left as it was when the write fails).
pub fn commit_step_with(
    conn: &mut Connection,
    c: &StepCommit<'_>,
    chain: &mut Chain,
    policy: &CheckpointPolicy,
) -> rusqlite::Result<Vec<i64>> {
    let value = serde_json::to_value(c.state)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    // Immediate: the step reads the chain's last id, then writes; a deferred
    // transaction would fail at once if another connection wrote in between.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let stored_last: Option<i64> = tx
        .prepare_cached("SELECT MAX(id) FROM flow_checkpoints WHERE run_id = ?1")?
        .query_row([c.run_id], |r| r.get(0))?;
    let finished = matches!(c.status, RunStatus::Completed | RunStatus::Failed);
    let prune = policy.keep_full_snapshots > 0;
    let next = chain.next(&value, stored_last, policy, finished && prune);
    let pending = c.pending.map(json_text).transpose()?;
    let changed = match &next {
        Next::Full(state) => tx.prepare_cached(
            "UPDATE flow_runs SET status = ?2, state = ?3, pending = ?4, error = ?5, updated_at = ?6 WHERE id = ?1",
        )?
        .execute(params![c.run_id, c.status.as_str(), state, pending, c.error, c.now])?,
        Next::Delta(_) => tx.prepare_cached(
            "UPDATE flow_runs SET status = ?2, pending = ?3, error = ?4, updated_at = ?5 WHERE id = ?1",
        )?
        .execute(params![c.run_id, c.status.as_str(), pending, c.error, c.now])?,
    };
    if changed != 1 {
        return Err(rusqlite::Error::QueryReturnedNoRows);
    }
    let ids = write_turns(&tx, c)?;
    let (kind, text) = match &next {
        Next::Full(t) => ("full", t),
        Next::Delta(t) => ("delta", t),
    };
    tx.prepare_cached(
        "INSERT INTO flow_checkpoints (run_id, format, status, step_path, state, created_at, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        c.run_id,
        FORMAT,
        c.status.as_str(),
        serde_json::to_string(&c.state.step_path).unwrap_or_else(|_| "[]".into()),
        text,
        c.now,
        kind
    ])?;
    let id = tx.last_insert_rowid();
    if prune && finished {
        // A finished run keeps its final state only; resume reads no more.
        tx.prepare_cached("DELETE FROM flow_checkpoints WHERE run_id = ?1 AND id < ?2")?
            .execute(params![c.run_id, id])?;
    } else if prune && kind == "full" {
        tx.prepare_cached(
            "DELETE FROM flow_checkpoints WHERE run_id = ?1 AND id < (
                SELECT id FROM flow_checkpoints WHERE run_id = ?1 AND kind = 'full'
                ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        )?
        .execute(params![c.run_id, policy.keep_full_snapshots - 1])?;
    }
    tx.commit()?;
    chain.wrote(id, value, &next);
    Ok(ids)
}

/// Writes a step's transcript turns and agent messages; returns the turns' ids.
fn write_turns(tx: &rusqlite::Transaction<'_>, c: &StepCommit<'_>) -> rusqlite::Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(c.turns.len());
    let mut stmt = tx.prepare_cached(
        "INSERT INTO flow_turns (run_id, role, content, command, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for t in c.turns {
        stmt.execute(params![
            c.run_id,
            t.role.as_str(),
            t.content,
            json_text(&t.command)?,
            c.now
        ])?;
        ids.push(tx.last_insert_rowid());
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO flow_agent_messages (run_id, conversation_id, agent, role, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for m in c.agent_messages {
        let role = match m.message.role {
            ChatRole::System => "system",
            ChatRole::User => "user",
            ChatRole::Assistant => "assistant",
        };
        stmt.execute(params![
            c.run_id,
            m.conversation_id,
            m.agent,
            role,
            m.message.content,
            c.now
        ])?;
    }
    Ok(ids)
}

/// The state a run had at checkpoint `id` (its full row before it and the
/// deltas up to it); `None` when the run has no such checkpoint (or it was pruned).
pub fn checkpoint_state(
    conn: &Connection,
    run_id: &str,
    id: i64,
) -> rusqlite::Result<Option<RunState>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, kind, state FROM flow_checkpoints WHERE run_id = ?1 AND id <= ?2
           AND id >= (SELECT MAX(id) FROM flow_checkpoints WHERE run_id = ?1 AND id <= ?2 AND kind = 'full')
         ORDER BY id",
    )?;
    let rows: Vec<(i64, String, String)> = stmt
        .query_map(params![run_id, id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    match rows.split_first() {
        Some(((_, kind, base), deltas))
            if kind == "full" && rows.last().map(|r| r.0) == Some(id) =>
        {
            let deltas: Vec<String> = deltas.iter().map(|(_, _, d)| d.clone()).collect();
            rebuild(base, &deltas).map(Some)
        }
        _ => Ok(None),
    }
}

/// A run's transcript, in order.
pub fn turns_of(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<StoredTurn>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, run_id, role, content, command, created_at FROM flow_turns WHERE run_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([run_id], |r| {
        Ok(StoredTurn {
            id: r.get(0)?,
            run_id: r.get(1)?,
            role: r.get(2)?,
            content: r.get(3)?,
            command: json(r, 4)?,
            created_at: r.get(5)?,
        })
    })?
    .collect()
}

/// The last `limit` messages of an agent conversation, oldest first, with the agent that wrote them.
pub fn conversation_tail(
    conn: &Connection,
    conversation_id: &str,
    limit: usize,
) -> rusqlite::Result<(Vec<ChatMessage>, Option<String>)> {
    let mut stmt = conn.prepare_cached(
        "SELECT role, content, agent FROM flow_agent_messages WHERE conversation_id = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let mut agent = None;
    let mut out: Vec<ChatMessage> = stmt
        .query_map(params![conversation_id, limit as i64], |r| {
            let role: String = r.get(0)?;
            let content: String = r.get(1)?;
            let a: String = r.get(2)?;
            Ok((role, content, a))
        })?
        .filter_map(|row| row.ok())
        .map(|(role, content, a)| {
            agent = Some(a);
            let role = match role.as_str() {
                "system" => ChatRole::System,
                "assistant" => ChatRole::Assistant,
                _ => ChatRole::User,
            };
            ChatMessage::new(role, content)
        })
        .collect();
    out.reverse();
    Ok((out, agent))
}

/// The agent that owns a conversation, if it has messages.
pub fn conversation_agent(
    conn: &Connection,
    conversation_id: &str,
) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT agent FROM flow_agent_messages WHERE conversation_id = ?1 ORDER BY id LIMIT 1",
    )?
    .query_row([conversation_id], |r| r.get(0))
    .optional()
}

/// How many checkpoints a run has, and the newest one's id.
pub fn checkpoint_stats(conn: &Connection, run_id: &str) -> rusqlite::Result<(i64, Option<i64>)> {
    conn.query_row(
        "SELECT COUNT(*), MAX(id) FROM flow_checkpoints WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// One checkpoint row as listed: what it is, not the state it holds (read
/// that with [`checkpoint_state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Monotonic within the database.
    pub id: i64,
    /// The state's format version ([`FORMAT`] when written).
    pub format: u32,
    /// The run's status after the step.
    pub status: String,
    /// `full` or `delta`.
    pub kind: String,
    /// The step it was written after.
    pub step_path: Vec<usize>,
    /// RFC 3339.
    pub created_at: String,
}

/// A run's checkpoints, oldest first (the ones the retention policy kept).
pub fn checkpoints_of(conn: &Connection, run_id: &str) -> rusqlite::Result<Vec<CheckpointInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, format, status, kind, step_path, created_at FROM flow_checkpoints
         WHERE run_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([run_id], |r| {
        let path: String = r.get(4)?;
        Ok(CheckpointInfo {
            id: r.get(0)?,
            format: r.get(1)?,
            status: r.get(2)?,
            kind: r.get(3)?,
            step_path: serde_json::from_str(&path).map_err(|e| corrupt(4, e))?,
            created_at: r.get(5)?,
        })
    })?
    .collect()
}

/// A running run's row with placeholder fields, for the store's tests.
#[cfg(test)]
fn test_row(id: &str) -> RunRow {
    RunRow {
        id: id.into(),
        flow_name: "f".into(),
        title: "Flow: f".into(),
        status: RunStatus::Running,
        definition: serde_json::json!({}),
        state: RunState::default(),
        pending: None,
        error: None,
        working_folder: None,
        archived: false,
        stop_requested: false,
        parent_id: None,
        depth: 0,
        created_at: "t".into(),
        updated_at: "t".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database holding only the flows' tables (their migration).
    fn open_in_memory() -> Connection {
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .expect("pragma");
        conn.execute_batch(MIGRATION).expect("migration");
        conn.execute_batch(DELTA_MIGRATION)
            .expect("delta migration");
        conn
    }

    /// A second connection writing while a step commits (the app's own
    /// connection beside the engine's) makes the step wait, not fail with
    /// "database is locked" (CI saw it in a fan-out resumed after a restart).
    #[test]
    fn a_step_waits_for_another_connections_write_instead_of_failing() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("db.sqlite");
        let open = || {
            let conn = Connection::open(&path).expect("open");
            conn.pragma_update(None, "journal_mode", "WAL")
                .expect("wal");
            conn.busy_timeout(std::time::Duration::from_secs(5))
                .expect("timeout");
            conn
        };
        let mut engine = open();
        engine.execute_batch(MIGRATION).expect("migration");
        engine.execute_batch(DELTA_MIGRATION).expect("delta");
        insert_run(&engine, &test_row("flow_1"), "local").expect("insert");
        let mut app = open();
        let (held, go) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let writer = std::thread::spawn(move || {
            let tx = app
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .expect("begin");
            tx.execute(
                "UPDATE flow_runs SET updated_at = 'other' WHERE id = 'flow_1'",
                [],
            )
            .expect("write");
            held.0.send(()).expect("held");
            // Commit only once the step has had time to read and queue for the lock.
            let _ = go.1.recv_timeout(std::time::Duration::from_millis(300));
            tx.commit().expect("commit");
        });
        held.1.recv().expect("writer holds the lock");
        let state = RunState::default();
        let commit = StepCommit {
            run_id: "flow_1",
            status: RunStatus::Running,
            state: &state,
            pending: None,
            error: None,
            turns: &[],
            agent_messages: &[],
            now: "t2",
        };
        let committed = commit_step(&mut engine, &commit);
        drop(go.0);
        writer.join().expect("writer");
        committed.expect("the step waits for the other write, then commits");
        assert_eq!(checkpoint_stats(&engine, "flow_1").expect("stats").0, 1);
    }

    #[test]
    fn migration_4_creates_the_tables_and_a_step_commits_atomically() {
        let mut conn = open_in_memory();
        insert_run(&conn, &test_row("flow_1"), "local").expect("insert");
        let state = RunState {
            steps_done: 1,
            step_path: vec![0, 1],
            ..RunState::default()
        };
        let turns = [TurnRow {
            role: TurnRole::Assistant,
            content: "hi".into(),
            command: StepMeta::flow(),
        }];
        let msgs = [AgentMessageRow {
            conversation_id: "c1".into(),
            agent: "a".into(),
            message: ChatMessage::new(ChatRole::User, "q"),
        }];
        let commit = StepCommit {
            run_id: "flow_1",
            status: RunStatus::Running,
            state: &state,
            pending: None,
            error: None,
            turns: &turns,
            agent_messages: &msgs,
            now: "t2",
        };
        commit_step(&mut conn, &commit).expect("commit");
        let state2 = RunState {
            steps_done: 2,
            ..state.clone()
        };
        let commit = StepCommit {
            state: &state2,
            ..commit
        };
        commit_step(&mut conn, &commit).expect("commit 2");
        let (n, last) = checkpoint_stats(&conn, "flow_1").expect("stats");
        assert_eq!((n, last), (2, Some(2)));
        assert_eq!(
            get_run(&conn, "flow_1")
                .expect("get")
                .expect("row")
                .state
                .steps_done,
            2
        );
        assert_eq!(turns_of(&conn, "flow_1").expect("turns").len(), 2);
        assert_eq!(
            conversation_agent(&conn, "c1").expect("agent").as_deref(),
            Some("a")
        );
        // A failing write rolls the whole step back.
        let bad = StepCommit {
            run_id: "flow_missing",
            ..commit
        };
        assert!(commit_step(&mut conn, &bad).is_err());
        assert_eq!(turns_of(&conn, "flow_1").expect("turns").len(), 2);
        assert!(conn.execute("INSERT INTO flow_runs (id, account_id, flow_name, title, status, definition, state, created_at, updated_at) VALUES ('x', 'l', 'f', 't', 'running', '{}', '{}', 't', 't')", []).is_err());
        assert!(delete_run(&conn, "flow_1").expect("delete"));
        assert_eq!(checkpoint_stats(&conn, "flow_1").expect("stats").0, 0);
    }

    /// A pending state and a turn written as plain JSON before the typed
    /// forms existed read back as those types.
    #[test]
    fn an_old_shape_pending_row_still_reads() {
        let conn = open_in_memory();
        insert_run(&conn, &test_row("flow_old"), "local").expect("insert");
        conn.execute(
            r#"UPDATE flow_runs SET status = 'waiting', pending = '{"context":{"output":null},"kind":"gate","options":[{"label":"Yes","requiresInput":false}],"prompt":"Ship?","stepPath":[1]}' WHERE id = 'flow_old'"#,
            [],
        )
        .expect("old row");
        let read = get_run(&conn, "flow_old").expect("get").expect("row");
        let Some(Pending::Gate {
            prompt,
            options,
            step_path,
            ..
        }) = read.pending
        else {
            panic!("not a gate: {:?}", read.pending);
        };
        assert_eq!((prompt.as_str(), step_path), ("Ship?", vec![1]));
        assert_eq!(options[0].label, "Yes");
        conn.execute(
            r#"UPDATE flow_runs SET pending = '{"kind":"subflow","conversationId":"flow_child"}' WHERE id = 'flow_old'"#,
            [],
        )
        .expect("old subflow row");
        let read = get_run(&conn, "flow_old").expect("get").expect("row");
        assert_eq!(
            read.pending.as_ref().and_then(Pending::child),
            Some("flow_child")
        );
    }
}

#[cfg(test)]
mod checkpoint_tests;
