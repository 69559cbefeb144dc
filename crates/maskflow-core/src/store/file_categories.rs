//! Rows of `file_categories` (#28 point 1): the category columns found in
//! an uploaded file, with their raw values and counts. They stay here, on
//! the machine: a column enters an extract (and may be sent) only when the
//! user switches it on at approval. Plain reads and writes.

use rusqlite::{Connection, OptionalExtension, params};

use maskflow_privacy::categories::CategoryCandidate;

/// Migration (issue 28, branch wt-allow — the lead renumbers on merge): one
/// row per uploaded file, gone with the file.
pub const MIGRATION: &str = r#"
CREATE TABLE file_categories (
    file_id    TEXT PRIMARY KEY NOT NULL REFERENCES input_files(id) ON DELETE CASCADE,
    candidates TEXT NOT NULL CHECK (json_valid(candidates) AND json_type(candidates) = 'array')
) STRICT;
"#;

/// Stores the candidates of a file (replacing any).
pub fn put(
    conn: &Connection,
    file_id: &str,
    candidates: &[CategoryCandidate],
) -> rusqlite::Result<()> {
    let json = serde_json::to_string(candidates).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO file_categories (file_id, candidates) VALUES (?1, ?2)
         ON CONFLICT (file_id) DO UPDATE SET candidates = ?2",
        params![file_id, json],
    )?;
    Ok(())
}

/// The candidates of a file (none when none were found or stored).
pub fn of_file(conn: &Connection, file_id: &str) -> rusqlite::Result<Vec<CategoryCandidate>> {
    let json: Option<String> = conn
        .query_row(
            "SELECT candidates FROM file_categories WHERE file_id = ?1",
            [file_id],
            |r| r.get(0),
        )
        .optional()?;
    // A row this code did not write reads as none found, not as an error.
    Ok(json
        .and_then(|j| serde_json::from_str(&j).ok())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_extractors::CategoryValue;

    #[test]
    fn candidates_round_trip_and_go_with_their_file() {
        let conn = crate::store::open_in_memory().expect("db");
        crate::store::insert_file(
            &conn,
            &crate::store::FileRow {
                id: "file_1".into(),
                filename: "p.csv".into(),
                path: "/tmp/p.csv".into(),
                size_bytes: 1,
                extract: serde_json::json!({}),
                created_at: "2026-01-01T00:00:00Z".into(),
            },
        )
        .expect("file");
        assert_eq!(of_file(&conn, "file_1").expect("read"), []);
        let c = vec![CategoryCandidate {
            sheet: None,
            column: "island".into(),
            values: vec![CategoryValue {
                value: "Biscoe".into(),
                count: 12,
            }],
        }];
        put(&conn, "file_1", &c).expect("put");
        assert_eq!(of_file(&conn, "file_1").expect("read"), c);
        crate::store::input_files::delete_unlinked(&conn, "file_1").expect("delete");
        assert_eq!(of_file(&conn, "file_1").expect("read"), []);
    }
}
