//! Rows of `version_python_locks`: the pinned Python package set each
//! version was built and tested with ([`maskflow_pyenv::Lock`]), so re-runs
//! and `maskflow run` use exactly that set. Plain reads and writes.

use rusqlite::{Connection, OptionalExtension, params};

use maskflow_pyenv::Lock;

/// Migration (issue 16, "python locks"): one pinned set per version.
pub const MIGRATION: &str = r#"
CREATE TABLE version_python_locks (
    version_id   TEXT PRIMARY KEY NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
    python       TEXT NOT NULL CHECK (length(python) > 0),
    requirements TEXT NOT NULL CHECK (json_valid(requirements) AND json_type(requirements) = 'array'),
    pinned       TEXT NOT NULL,
    created_at   TEXT NOT NULL
) STRICT;
"#;

/// Stores (or replaces) the lock of a version.
pub fn put_lock(
    conn: &Connection,
    version_id: &str,
    lock: &Lock,
    now: &str,
) -> rusqlite::Result<()> {
    let requirements = serde_json::to_string(&lock.requirements).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO version_python_locks (version_id, python, requirements, pinned, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (version_id) DO UPDATE SET python = ?2, requirements = ?3, pinned = ?4, created_at = ?5",
        params![version_id, lock.python, requirements, lock.pinned, now],
    )?;
    Ok(())
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Lock> {
    let requirements: String = r.get("requirements")?;
    Ok(Lock {
        python: r.get("python")?,
        requirements: serde_json::from_str(&requirements).unwrap_or_default(),
        pinned: r.get("pinned")?,
    })
}

/// Drops the lock of a version (it has none afterwards).
pub fn delete_lock(conn: &Connection, version_id: &str) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM version_python_locks WHERE version_id = ?1",
        [version_id],
    )?;
    Ok(())
}

/// The lock of a version, if it has one.
pub fn get_lock(conn: &Connection, version_id: &str) -> rusqlite::Result<Option<Lock>> {
    conn.query_row(
        "SELECT python, requirements, pinned FROM version_python_locks WHERE version_id = ?1",
        [version_id],
        row,
    )
    .optional()
}

/// The locks of every version that may still run or be built (not
/// archived, rejected or failed): the environments still in use.
pub fn locks_in_use(conn: &Connection) -> rusqlite::Result<Vec<Lock>> {
    let mut stmt = conn.prepare(
        "SELECT l.python, l.requirements, l.pinned FROM version_python_locks l
         JOIN workflow_versions v ON v.id = l.version_id
         WHERE v.status NOT IN ('archived', 'rejected', 'failed')",
    )?;
    stmt.query_map([], row)?.collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(conn: &Connection, id: &str, status: &str) {
        conn.execute(
            "INSERT OR IGNORE INTO workflows (id, account_id, user_id, created_at, updated_at)
             VALUES ('wf_1', 'local', 'local', 't', 't')",
            [],
        )
        .expect("workflow");
        let n: i64 = conn
            .query_row("SELECT count(*) + 1 FROM workflow_versions", [], |r| {
                r.get(0)
            })
            .expect("count");
        conn.execute(
            "INSERT INTO workflow_versions (id, workflow_id, account_id, version, status, file_extracts, created_at, updated_at)
             VALUES (?1, 'wf_1', 'local', ?2, ?3, '[]', 't', 't')",
            params![id, n, status],
        )
        .expect("version");
    }

    #[test]
    fn a_version_keeps_its_lock_and_deleting_it_drops_the_lock() {
        let conn = crate::store::open_in_memory().expect("db");
        version(&conn, "wv_1", "approved");
        version(&conn, "wv_2", "archived");
        let lock = Lock {
            python: "3.11".into(),
            requirements: vec!["pandas".into()],
            pinned: "pandas==2.2.0 \\\n    --hash=sha256:ab\n".into(),
        };
        assert_eq!(get_lock(&conn, "wv_1").expect("get"), None);
        put_lock(&conn, "wv_1", &lock, "t").expect("put");
        put_lock(&conn, "wv_2", &lock, "t").expect("put");
        assert_eq!(get_lock(&conn, "wv_1").expect("get"), Some(lock.clone()));
        assert_eq!(
            locks_in_use(&conn).expect("in use"),
            vec![lock.clone()],
            "not the archived one"
        );
        let bad = put_lock(
            &conn,
            "wv_1",
            &Lock {
                python: String::new(),
                ..lock.clone()
            },
            "t",
        );
        assert!(bad.is_err(), "a lock names its Python");
        conn.execute("DELETE FROM workflows WHERE id = 'wf_1'", [])
            .expect("delete");
        assert_eq!(get_lock(&conn, "wv_1").expect("get"), None);
    }
}
