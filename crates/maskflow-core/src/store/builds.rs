//! Rows of `version_builds` (each version's build state and test report)
//! and `workflow_runs` (runs of approved workflows). Plain reads and
//! writes; the service decides.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::LOCAL_ACCOUNT;

/// A version's build state as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildRow {
    /// The version.
    pub version_id: String,
    /// The whole engine state (JSON object).
    pub state: Value,
    /// The latest test report.
    pub test_report: Option<Value>,
}

fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// Writes a version's build state (insert or replace).
pub fn put_build(conn: &Connection, row: &BuildRow, now: &str) -> rusqlite::Result<()> {
    let s = &row.state;
    conn.execute(
        "INSERT INTO version_builds (version_id, phase, stage, iteration, pending_gate, state, test_report, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (version_id) DO UPDATE SET phase = ?2, stage = ?3, iteration = ?4,
             pending_gate = ?5, state = ?6, test_report = ?7, updated_at = ?8",
        params![
            row.version_id,
            text(&s["phase"]).unwrap_or_else(|| "init".into()),
            text(&s["stage"]),
            s["iteration"].as_i64().unwrap_or(0),
            s["pending_gate"].as_bool().unwrap_or(false),
            s.to_string(),
            row.test_report.as_ref().map(Value::to_string),
            now,
        ],
    )?;
    Ok(())
}

/// A version's build state.
pub fn get_build(conn: &Connection, version_id: &str) -> rusqlite::Result<Option<BuildRow>> {
    conn.query_row(
        "SELECT version_id, state, test_report FROM version_builds WHERE version_id = ?1",
        [version_id],
        |r| {
            Ok(BuildRow {
                version_id: r.get(0)?,
                state: json(r, 1)?,
                test_report: opt_json(r, 2)?,
            })
        },
    )
    .optional()
}

/// Clears the pending gate of a version's build; false when none was pending.
pub fn take_pending_gate(conn: &Connection, version_id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE version_builds SET pending_gate = 0,
             state = json_set(state, '$.pending_gate', json('false'))
         WHERE version_id = ?1 AND pending_gate = 1",
        [version_id],
    )? == 1)
}

/// Whether a version's build waits at a gate.
pub fn is_pending(conn: &Connection, version_id: &str) -> bool {
    conn.query_row(
        "SELECT pending_gate FROM version_builds WHERE version_id = ?1",
        [version_id],
        |r| r.get::<_, bool>(0),
    )
    .unwrap_or(false)
}

fn json(row: &Row<'_>, idx: usize) -> rusqlite::Result<Value> {
    let t: String = row.get(idx)?;
    serde_json::from_str(&t).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn opt_json(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<Value>> {
    let t: Option<String> = row.get(idx)?;
    t.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

/// A row of `workflow_runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// `run_…`
    pub id: String,
    /// The workflow.
    pub workflow_id: String,
    /// The version that ran.
    pub version_id: String,
    /// `running`, or how it ended.
    pub status: String,
    /// The inputs (field → value or file names).
    pub inputs: Value,
    /// The outputs (a JSON array of output files).
    pub outputs: Value,
    /// The run's result (message, stdout, stderr, limits).
    pub result: Option<Value>,
    /// The working folder (local only).
    pub workdir: String,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339.
    pub finished_at: Option<String>,
    /// Wall-clock duration.
    pub duration_ms: Option<i64>,
}

const RUN_COLS: &str = "id, workflow_id, version_id, status, inputs, outputs, result, workdir, started_at, finished_at, duration_ms";

fn run_from(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        workflow_id: r.get(1)?,
        version_id: r.get(2)?,
        status: r.get(3)?,
        inputs: json(r, 4)?,
        outputs: json(r, 5)?,
        result: opt_json(r, 6)?,
        workdir: r.get(7)?,
        started_at: r.get(8)?,
        finished_at: r.get(9)?,
        duration_ms: r.get(10)?,
    })
}

/// Inserts or replaces a run.
pub fn put_run(conn: &Connection, run: &RunRow) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "INSERT OR REPLACE INTO workflow_runs ({RUN_COLS}, account_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ),
        params![
            run.id,
            run.workflow_id,
            run.version_id,
            run.status,
            run.inputs.to_string(),
            run.outputs.to_string(),
            run.result.as_ref().map(Value::to_string),
            run.workdir,
            run.started_at,
            run.finished_at,
            run.duration_ms,
            LOCAL_ACCOUNT,
        ],
    )?;
    Ok(())
}

/// The ids of runs still marked `running`.
pub fn running_runs(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT id FROM workflow_runs WHERE status = 'running'")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// The work folders of runs no longer `running`.
pub fn finished_run_workdirs(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    conn.prepare("SELECT workdir FROM workflow_runs WHERE status != 'running'")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// Marks a run that a stopped process left `running` as an error, saying so.
pub fn interrupt_run(conn: &Connection, id: &str, now: &str) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE workflow_runs SET status = 'error', finished_at = ?2,
             result = json_object('message', 'Maskflow stopped while this run was in progress; run it again')
         WHERE id = ?1 AND status = 'running'",
        params![id, now],
    )?;
    Ok(())
}

/// One run.
pub fn get_run(conn: &Connection, id: &str) -> rusqlite::Result<Option<RunRow>> {
    conn.query_row(
        &format!("SELECT {RUN_COLS} FROM workflow_runs WHERE id = ?1"),
        [id],
        run_from,
    )
    .optional()
}

/// A workflow's runs, newest first.
pub fn runs_of(conn: &Connection, workflow_id: &str) -> rusqlite::Result<Vec<RunRow>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {RUN_COLS} FROM workflow_runs WHERE workflow_id = ?1 ORDER BY id DESC"
    ))?;
    stmt.query_map([workflow_id], run_from)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn migration_3_stores_build_state_and_runs() {
        let conn = crate::store::open_in_memory().expect("db");
        conn.execute_batch(
            "INSERT INTO workflows (id, account_id, user_id, created_at, updated_at) VALUES ('wf_1', 'local', 'local', 't', 't');
             INSERT INTO workflow_versions (id, workflow_id, account_id, version, status, file_extracts, created_at, updated_at)
                 VALUES ('wv_1', 'wf_1', 'local', 1, 'building', '[]', 't', 't');",
        )
        .expect("seed");
        let row = BuildRow {
            version_id: "wv_1".into(),
            state: json!({"phase": "generate", "stage": "response", "iteration": 1, "pending_gate": true}),
            test_report: None,
        };
        put_build(&conn, &row, "t1").expect("put");
        assert!(is_pending(&conn, "wv_1"));
        assert!(take_pending_gate(&conn, "wv_1").expect("take"));
        assert!(!take_pending_gate(&conn, "wv_1").expect("again"));
        let back = get_build(&conn, "wv_1").expect("get").expect("row");
        assert_eq!(back.state["pending_gate"], json!(false));
        let bad = BuildRow {
            state: json!({"phase": "dancing"}),
            ..row
        };
        assert!(
            put_build(&conn, &bad, "t2").is_err(),
            "unknown phase refused"
        );

        let run = RunRow {
            id: "run_1".into(),
            workflow_id: "wf_1".into(),
            version_id: "wv_1".into(),
            status: "running".into(),
            inputs: json!({}),
            outputs: json!([]),
            result: None,
            workdir: "/tmp/x".into(),
            started_at: "t".into(),
            finished_at: None,
            duration_ms: None,
        };
        put_run(&conn, &run).expect("run");
        assert_eq!(runs_of(&conn, "wf_1").expect("runs"), vec![run.clone()]);
        let bad = RunRow {
            status: "exploded".into(),
            ..run
        };
        assert!(put_run(&conn, &bad).is_err());
    }
}
