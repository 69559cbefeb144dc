//! Rows of `schedules` (issue 30): a cron expression or a watched folder
//! that runs an approved workflow or a flow; `schedule_files`, the files a
//! watched folder already ran (path, size, mtime, content hash), so each
//! file runs once; and `run_triggers`, what started a scheduled run. Plain
//! reads and writes: the service decides.

use rusqlite::{Connection, OptionalExtension, Row, params};

/// Migration (issue 30, "schedules"): schedules, the files they ran, and
/// the trigger of each scheduled run.
pub const MIGRATION: &str = r#"
CREATE TABLE schedules (
    id            TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'sch\_%' ESCAPE '\'),
    name          TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    workflow_id   TEXT REFERENCES workflows(id) ON DELETE CASCADE,
    flow_name     TEXT,
    cron          TEXT,
    folder        TEXT,
    output_folder TEXT,
    paused        INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    next_run_ms   INTEGER,
    failures      INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
    retry_at_ms   INTEGER,
    last_run_at   TEXT,
    last_run_id   TEXT,
    last_status   TEXT,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    CHECK ((workflow_id IS NULL) <> (flow_name IS NULL)),
    CHECK ((cron IS NULL) <> (folder IS NULL))
) STRICT;
CREATE TABLE schedule_files (
    schedule_id TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ms    INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    run_id      TEXT,
    PRIMARY KEY (schedule_id, path)
) STRICT;
CREATE TABLE run_triggers (
    run_id      TEXT PRIMARY KEY NOT NULL,
    schedule_id TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('cron', 'folder', 'manual')),
    file        TEXT,
    created_at  TEXT NOT NULL
) STRICT;
"#;

/// Migration (issue 41, point 4): when a schedule last succeeded, so
/// outputs it placed before a refused or failed run are shown as stale.
pub const LAST_SUCCESS_MIGRATION: &str = "ALTER TABLE schedules ADD COLUMN last_success_at TEXT;";

/// One stored schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRow {
    /// `sch_…`
    pub id: String,
    /// Unique, chosen by the user (names the systemd units too).
    pub name: String,
    /// The workflow it runs, or
    pub workflow_id: Option<String>,
    /// the flow it runs.
    pub flow_name: Option<String>,
    /// A 5-field cron expression, or
    pub cron: Option<String>,
    /// the folder it watches.
    pub folder: Option<String>,
    /// Where results go (none: next to the file, or the run's own folder).
    pub output_folder: Option<String>,
    /// Whether it is paused.
    pub paused: bool,
    /// Cron: when it fires next (ms since the epoch).
    pub next_run_ms: Option<i64>,
    /// Failures in a row (the back-off grows with them).
    pub failures: i64,
    /// Nothing runs before this (the back-off after a failure).
    pub retry_at_ms: Option<i64>,
    /// When it last ran (RFC 3339).
    pub last_run_at: Option<String>,
    /// Its last run (`run_…` or a flow conversation).
    pub last_run_id: Option<String>,
    /// Its last run's status.
    pub last_status: Option<String>,
    /// Why its last run failed.
    pub last_error: Option<String>,
    /// When a run of it last succeeded (RFC 3339): the outputs it placed
    /// are from then.
    pub last_success_at: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

const COLUMNS: &str = "id, name, workflow_id, flow_name, cron, folder, output_folder, paused, \
     next_run_ms, failures, retry_at_ms, last_run_at, last_run_id, last_status, last_error, last_success_at, created_at";

fn row(r: &Row<'_>) -> rusqlite::Result<ScheduleRow> {
    Ok(ScheduleRow {
        id: r.get("id")?,
        name: r.get("name")?,
        workflow_id: r.get("workflow_id")?,
        flow_name: r.get("flow_name")?,
        cron: r.get("cron")?,
        folder: r.get("folder")?,
        output_folder: r.get("output_folder")?,
        paused: r.get::<_, i64>("paused")? != 0,
        next_run_ms: r.get("next_run_ms")?,
        failures: r.get("failures")?,
        retry_at_ms: r.get("retry_at_ms")?,
        last_run_at: r.get("last_run_at")?,
        last_run_id: r.get("last_run_id")?,
        last_status: r.get("last_status")?,
        last_error: r.get("last_error")?,
        last_success_at: r.get("last_success_at")?,
        created_at: r.get("created_at")?,
    })
}

/// Stores a new schedule.
pub fn insert(conn: &Connection, s: &ScheduleRow) -> rusqlite::Result<()> {
    conn.execute(
        &format!(
            "INSERT INTO schedules ({COLUMNS}) VALUES \
             (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
        ),
        params![
            s.id,
            s.name,
            s.workflow_id,
            s.flow_name,
            s.cron,
            s.folder,
            s.output_folder,
            i64::from(s.paused),
            s.next_run_ms,
            s.failures,
            s.retry_at_ms,
            s.last_run_at,
            s.last_run_id,
            s.last_status,
            s.last_error,
            s.last_success_at,
            s.created_at
        ],
    )?;
    Ok(())
}

/// Every schedule, by name.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<ScheduleRow>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM schedules ORDER BY name"))?;
    stmt.query_map([], row)?.collect()
}

/// One schedule by id or by name.
pub fn get(conn: &Connection, id_or_name: &str) -> rusqlite::Result<Option<ScheduleRow>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1 OR name = ?1"),
        [id_or_name],
        row,
    )
    .optional()
}

/// Pauses or resumes; with `next_run_ms` set anew (a resumed cron
/// schedule fires at its next time, not at every time it missed).
pub fn set_paused(
    conn: &Connection,
    id: &str,
    paused: bool,
    next_run_ms: Option<i64>,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE schedules SET paused = ?2, next_run_ms = ?3, failures = 0, retry_at_ms = NULL \
         WHERE id = ?1",
        params![id, i64::from(paused), next_run_ms],
    )
}

/// Removes a schedule with its record of files.
pub fn delete(conn: &Connection, id: &str) -> rusqlite::Result<usize> {
    conn.execute("DELETE FROM schedules WHERE id = ?1", [id])
}

/// Claims a cron firing: moves `next_run_ms` from `due` to `next` only if
/// no one else did (another process on the same data folder fires it once).
pub fn claim_firing(conn: &Connection, id: &str, due: i64, next: i64) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE schedules SET next_run_ms = ?3 WHERE id = ?1 AND next_run_ms = ?2 AND paused = 0",
        params![id, due, next],
    )?;
    Ok(changed == 1)
}

/// Sets when a schedule fires next (a retry after a failure, or its next cron time).
pub fn set_next_run(conn: &Connection, id: &str, next_run_ms: Option<i64>) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE schedules SET next_run_ms = ?2 WHERE id = ?1",
        params![id, next_run_ms],
    )?;
    Ok(())
}

/// What a finished run leaves on its schedule.
#[derive(Clone, Debug)]
pub struct Outcome<'a> {
    /// The run (`run_…` or a flow conversation), when one started.
    pub run_id: Option<&'a str>,
    /// Its status.
    pub status: &'a str,
    /// Why it failed (none: it did not).
    pub error: Option<&'a str>,
    /// Failures in a row now.
    pub failures: i64,
    /// The back-off: nothing runs before this.
    pub retry_at_ms: Option<i64>,
    /// RFC 3339.
    pub at: &'a str,
}

/// Records a run's outcome on its schedule.
pub fn record_outcome(conn: &Connection, id: &str, o: &Outcome<'_>) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE schedules SET last_run_at = ?2, last_run_id = ?3, last_status = ?4, \
         last_error = ?5, failures = ?6, retry_at_ms = ?7, \
         last_success_at = CASE WHEN ?5 IS NULL THEN ?2 ELSE last_success_at END WHERE id = ?1",
        params![
            id,
            o.at,
            o.run_id,
            o.status,
            o.error,
            o.failures,
            o.retry_at_ms
        ],
    )?;
    Ok(())
}

/// A file a watched folder has seen, as it was then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeenFile {
    /// Its path.
    pub path: String,
    /// Bytes.
    pub size: i64,
    /// Modified, ms since the epoch.
    pub mtime_ms: i64,
    /// SHA-256 of its content, hex.
    pub sha256: String,
}

/// The record of `path` in a schedule's folder.
pub fn seen(
    conn: &Connection,
    schedule_id: &str,
    path: &str,
) -> rusqlite::Result<Option<SeenFile>> {
    conn.query_row(
        "SELECT path, size, mtime_ms, sha256 FROM schedule_files WHERE schedule_id = ?1 AND path = ?2",
        params![schedule_id, path],
        |r| {
            Ok(SeenFile {
                path: r.get(0)?,
                size: r.get(1)?,
                mtime_ms: r.get(2)?,
                sha256: r.get(3)?,
            })
        },
    )
    .optional()
}

/// Records `file` as seen (ran, or written by a run) by a schedule.
pub fn put_seen(
    conn: &Connection,
    schedule_id: &str,
    file: &SeenFile,
    run_id: Option<&str>,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO schedule_files (schedule_id, path, size, mtime_ms, sha256, run_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (schedule_id, path) DO UPDATE SET \
         size = ?3, mtime_ms = ?4, sha256 = ?5, run_id = coalesce(?6, run_id)",
        params![
            schedule_id,
            file.path,
            file.size,
            file.mtime_ms,
            file.sha256,
            run_id
        ],
    )?;
    Ok(())
}

/// What started a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerRow {
    /// The run.
    pub run_id: String,
    /// The schedule that started it.
    pub schedule_id: Option<String>,
    /// `cron`, `folder` or `manual`.
    pub kind: String,
    /// The file a watched folder ran it on.
    pub file: Option<String>,
}

/// Records what started `t.run_id`.
pub fn put_trigger(conn: &Connection, t: &TriggerRow, now: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO run_triggers (run_id, schedule_id, kind, file, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![t.run_id, t.schedule_id, t.kind, t.file, now],
    )?;
    Ok(())
}

/// What started `run_id`, if it was recorded.
pub fn trigger(conn: &Connection, run_id: &str) -> rusqlite::Result<Option<TriggerRow>> {
    conn.query_row(
        "SELECT run_id, schedule_id, kind, file FROM run_triggers WHERE run_id = ?1",
        [run_id],
        |r| {
            Ok(TriggerRow {
                run_id: r.get(0)?,
                schedule_id: r.get(1)?,
                kind: r.get(2)?,
                file: r.get(3)?,
            })
        },
    )
    .optional()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let mut conn = Connection::open_in_memory().expect("db");
        crate::store::schema::migrations()
            .to_latest(&mut conn)
            .expect("migrate");
        conn
    }

    fn flow_schedule(id: &str, name: &str) -> ScheduleRow {
        ScheduleRow {
            id: id.into(),
            name: name.into(),
            workflow_id: None,
            flow_name: Some("report".into()),
            cron: Some("*/15 * * * *".into()),
            folder: None,
            output_folder: None,
            paused: false,
            next_run_ms: Some(1000),
            failures: 0,
            retry_at_ms: None,
            last_run_at: None,
            last_run_id: None,
            last_status: None,
            last_error: None,
            last_success_at: None,
            created_at: "2026-11-27T00:00:00.000Z".into(),
        }
    }

    #[test]
    fn a_schedule_is_stored_claimed_once_and_removed_with_its_files() {
        let conn = conn();
        let s = flow_schedule("sch_1", "morning");
        insert(&conn, &s).expect("insert");
        assert_eq!(get(&conn, "morning").expect("get"), Some(s.clone()));
        assert!(claim_firing(&conn, "sch_1", 1000, 2000).expect("claim"));
        assert!(
            !claim_firing(&conn, "sch_1", 1000, 2000).expect("claim"),
            "a second claim of the same firing is refused"
        );
        let file = SeenFile {
            path: "/in/a.csv".into(),
            size: 3,
            mtime_ms: 5,
            sha256: "ab".into(),
        };
        put_seen(&conn, "sch_1", &file, Some("run_1")).expect("seen");
        assert_eq!(seen(&conn, "sch_1", "/in/a.csv").expect("seen"), Some(file));
        assert_eq!(delete(&conn, "sch_1").expect("delete"), 1);
        assert_eq!(seen(&conn, "sch_1", "/in/a.csv").expect("seen"), None);
    }

    #[test]
    fn a_schedule_names_exactly_one_target_and_one_trigger() {
        let conn = conn();
        let mut both = flow_schedule("sch_2", "both");
        both.folder = Some("/in".into());
        assert!(insert(&conn, &both).is_err(), "cron and folder at once");
        let mut neither = flow_schedule("sch_3", "neither");
        neither.flow_name = None;
        assert!(insert(&conn, &neither).is_err(), "no workflow and no flow");
    }

    #[test]
    fn a_failure_keeps_the_time_of_the_last_success() {
        let conn = conn();
        insert(&conn, &flow_schedule("sch_4", "daily")).expect("insert");
        let outcome = |at, error, failures| Outcome {
            run_id: Some("run_1"),
            status: "succeeded",
            error,
            failures,
            retry_at_ms: None,
            at,
        };
        record_outcome(&conn, "sch_4", &outcome("t1", None, 0)).expect("success");
        let refused = Outcome {
            status: "refused",
            ..outcome("t2", Some("the column Amount is gone"), 1)
        };
        record_outcome(&conn, "sch_4", &refused).expect("refusal");
        let row = get(&conn, "sch_4").expect("get").expect("row");
        assert_eq!(row.last_success_at.as_deref(), Some("t1"));
        assert_eq!(row.last_run_at.as_deref(), Some("t2"));
        record_outcome(&conn, "sch_4", &outcome("t3", None, 0)).expect("success");
        let row = get(&conn, "sch_4").expect("get").expect("row");
        assert_eq!(row.last_success_at.as_deref(), Some("t3"));
    }
}
