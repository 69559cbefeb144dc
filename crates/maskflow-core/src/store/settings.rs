//! Rows of `settings`: one JSON value per key (created by migration 1,
//! [`crate::store::schema::V1`]). Callers own their key and decode the value;
//! this module only reads and writes the text.

use rusqlite::{Connection, OptionalExtension, params};

/// The stored JSON text of `key`, if any.
pub fn get(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .optional()
}

/// Stores (or replaces) `key`'s JSON text, stamped `now`.
pub fn put(conn: &Connection, key: &str, value: &str, now: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, value, now],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_stored_replaced_and_read_back() {
        let conn = crate::store::open_in_memory().expect("db");
        assert_eq!(get(&conn, "k").expect("get"), None);
        put(&conn, "k", "1", "2026-01-01T00:00:00Z").expect("put");
        put(&conn, "k", "\"two\"", "2026-01-01T00:00:01Z").expect("replace");
        assert_eq!(get(&conn, "k").expect("get").as_deref(), Some("\"two\""));
        assert!(put(&conn, "k", "not json", "x").is_err(), "values are JSON");
    }
}
