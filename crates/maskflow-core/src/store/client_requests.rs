//! `client_requests`: the files an outside client (an MCP client) asked to
//! see, each waiting for the user's approval in Maskflow, approved or
//! declined. A request names the file's row in `input_files` (its masked
//! extract, what the user approves) and the file's fingerprint when it was
//! asked for: a file changed since is a new request.

use rusqlite::{Connection, OptionalExtension, params};

/// Migration: the requests table.
pub const MIGRATION: &str = r#"
CREATE TABLE client_requests (
    id          TEXT PRIMARY KEY NOT NULL CHECK (id LIKE 'creq\_%' ESCAPE '\'),
    file_id     TEXT NOT NULL REFERENCES input_files(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    client      TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'declined')),
    created_at  TEXT NOT NULL,
    decided_at  TEXT,
    CHECK ((status = 'pending') = (decided_at IS NULL))
) STRICT;
CREATE INDEX client_requests_by_path ON client_requests (path, fingerprint);
"#;

/// One request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRow {
    /// `creq_…`
    pub id: String,
    /// The file's row (its masked extract).
    pub file_id: String,
    /// The file's canonical path on this machine.
    pub path: String,
    /// Size and modification time when asked for.
    pub fingerprint: String,
    /// The client's name, as it introduced itself.
    pub client: String,
    /// `pending`, `approved` or `declined`.
    pub status: String,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339, once decided.
    pub decided_at: Option<String>,
}

const COLUMNS: &str = "id, file_id, path, fingerprint, client, status, created_at, decided_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RequestRow> {
    Ok(RequestRow {
        id: r.get(0)?,
        file_id: r.get(1)?,
        path: r.get(2)?,
        fingerprint: r.get(3)?,
        client: r.get(4)?,
        status: r.get(5)?,
        created_at: r.get(6)?,
        decided_at: r.get(7)?,
    })
}

/// Records a new pending request.
pub fn insert(conn: &Connection, r: &RequestRow) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO client_requests (id, file_id, path, fingerprint, client, status, created_at, decided_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            r.id,
            r.file_id,
            r.path,
            r.fingerprint,
            r.client,
            r.status,
            r.created_at,
            r.decided_at
        ],
    )?;
    Ok(())
}

/// The latest request for this file as it is now (same path and fingerprint).
pub fn latest_for(
    conn: &Connection,
    path: &str,
    fingerprint: &str,
) -> rusqlite::Result<Option<RequestRow>> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM client_requests WHERE path = ?1 AND fingerprint = ?2
             ORDER BY created_at DESC, id DESC LIMIT 1"
        ),
        [path, fingerprint],
        row,
    )
    .optional()
}

/// One request by id.
pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<RequestRow>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM client_requests WHERE id = ?1"),
        [id],
        row,
    )
    .optional()
}

/// The requests waiting for the user, oldest first.
pub fn pending(conn: &Connection) -> rusqlite::Result<Vec<RequestRow>> {
    conn.prepare(&format!(
        "SELECT {COLUMNS} FROM client_requests WHERE status = 'pending'
         ORDER BY created_at, id"
    ))?
    .query_map([], row)?
    .collect()
}

/// Approves or declines a pending request; whether it was pending.
pub fn decide(conn: &Connection, id: &str, status: &str, at: &str) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE client_requests SET status = ?2, decided_at = ?3
         WHERE id = ?1 AND status = 'pending'",
        params![id, status, at],
    )?;
    Ok(changed == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("db");
        conn.pragma_update(None, "foreign_keys", true).expect("fk");
        crate::store::schema::migrations()
            .to_latest(&mut conn)
            .expect("migrate");
        conn.execute(
            "INSERT INTO input_files (id, account_id, user_id, filename, path, size_bytes, extract, created_at)
             VALUES ('file_1', 'a', 'u', 'p.csv', '/x/p.csv', 3, '{}', 't0')",
            [],
        )
        .expect("file");
        conn
    }

    fn request(id: &str, at: &str) -> RequestRow {
        RequestRow {
            id: id.into(),
            file_id: "file_1".into(),
            path: "/x/p.csv".into(),
            fingerprint: "3:1".into(),
            client: "c".into(),
            status: "pending".into(),
            created_at: at.into(),
            decided_at: None,
        }
    }

    #[test]
    fn a_request_is_pending_until_decided_once() {
        let conn = db();
        insert(&conn, &request("creq_1", "t1")).expect("insert");
        assert_eq!(pending(&conn).expect("pending").len(), 1);
        assert!(decide(&conn, "creq_1", "approved", "t2").expect("decide"));
        assert!(
            !decide(&conn, "creq_1", "declined", "t3").expect("decide"),
            "a decided request stays decided"
        );
        let latest = latest_for(&conn, "/x/p.csv", "3:1")
            .expect("latest")
            .expect("found");
        assert_eq!(latest.status, "approved");
        assert!(
            latest_for(&conn, "/x/p.csv", "4:1")
                .expect("latest")
                .is_none()
        );
        assert!(pending(&conn).expect("pending").is_empty());
    }

    #[test]
    fn the_table_refuses_a_bad_status_or_id() {
        let conn = db();
        let mut bad = request("creq_2", "t1");
        bad.status = "maybe".into();
        assert!(insert(&conn, &bad).is_err());
        assert!(insert(&conn, &request("file_2", "t1")).is_err());
    }
}
