//! The tables of [`crate::testing::LocalStorage`]: a database file holding
//! the flows' own tables and a lease table of its own, with no app around
//! it. Built for tests only (the `testing` feature); the app keeps its
//! leases and backups in its own store.

use std::path::Path;

use rusqlite::{Connection, params};

use super::{DELTA_MIGRATION, MIGRATION};

/// The lease table of a test database: one row per leased resource.
pub const LEASE_MIGRATION: &str = r#"
CREATE TABLE flow_test_leases (
    resource    TEXT PRIMARY KEY NOT NULL CHECK (length(resource) > 0),
    owner       TEXT NOT NULL CHECK (length(owner) > 0),
    expires_ms  INTEGER NOT NULL
) STRICT;
"#;

/// The schema version this module's migrations bring a file to.
const VERSION: i64 = 1;

/// Opens (and creates, and migrates) the test database at `path`, with the
/// connection settings the app uses (WAL, foreign keys, a busy timeout,
/// immediate transactions), so the engine meets the same locking.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Every transaction writes: take the write lock up front, so two
    // engines opening one file wait for each other instead of failing.
    conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
    let tx = conn.transaction()?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version < VERSION {
        tx.execute_batch(MIGRATION)?;
        tx.execute_batch(DELTA_MIGRATION)?;
        tx.execute_batch(LEASE_MIGRATION)?;
        tx.pragma_update(None, "user_version", VERSION)?;
    }
    tx.commit()?;
    Ok(conn)
}

/// Takes (or renews) `owner`'s lease on `resource` until `expires_ms`;
/// `false` when another owner holds a lease that has not expired at `now_ms`.
pub fn acquire_lease(
    conn: &Connection,
    resource: &str,
    owner: &str,
    now_ms: i64,
    expires_ms: i64,
) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "INSERT INTO flow_test_leases (resource, owner, expires_ms) VALUES (?1, ?2, ?4)
         ON CONFLICT (resource) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms
         WHERE flow_test_leases.owner = excluded.owner OR flow_test_leases.expires_ms <= ?3",
        params![resource, owner, now_ms, expires_ms],
    )?;
    Ok(changed == 1)
}

/// Moves `owner`'s lease on `resource` on to `expires_ms`; `false` when the
/// lease is not `owner`'s (any more).
pub fn renew_lease(
    conn: &Connection,
    resource: &str,
    owner: &str,
    expires_ms: i64,
) -> rusqlite::Result<bool> {
    let changed = conn.execute(
        "UPDATE flow_test_leases SET expires_ms = ?3 WHERE resource = ?1 AND owner = ?2",
        params![resource, owner, expires_ms],
    )?;
    Ok(changed == 1)
}

/// Gives up `owner`'s lease on `resource` (a no-op if it is not `owner`'s).
pub fn release_lease(conn: &Connection, resource: &str, owner: &str) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM flow_test_leases WHERE resource = ?1 AND owner = ?2",
        params![resource, owner],
    )?;
    Ok(())
}

/// Who holds a live lease on `resource` at `now_ms`, if anyone.
pub fn lease_holder(
    conn: &Connection,
    resource: &str,
    now_ms: i64,
) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.query_row(
        "SELECT owner FROM flow_test_leases WHERE resource = ?1 AND expires_ms > ?2",
        params![resource, now_ms],
        |r| r.get(0),
    )
    .optional()
}

/// How many runs of flow `flow_name` a database holds (subflow children too).
pub fn runs_named(conn: &Connection, flow_name: &str) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COUNT(*) FROM flow_runs WHERE flow_name = ?1",
        [flow_name],
        |r| r.get(0),
    )
}

/// Hands an agent conversation's messages to another agent, as a tampered
/// database would, to test that the engine refuses it.
pub fn reassign_agent_conversation(
    conn: &Connection,
    conversation_id: &str,
    agent: &str,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE flow_agent_messages SET agent = ?2 WHERE conversation_id = ?1",
        [conversation_id, agent],
    )
}
