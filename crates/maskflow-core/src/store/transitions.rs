//! Status writes of a version: compare-and-set, so a change made meanwhile
//! by another call (or process) is seen instead of overwritten.

use rusqlite::{Connection, params};
use serde_json::Value;

use super::VersionRow;
use crate::versions::Status;

/// Writes `v` back if its stored status is still `from`; the rows changed
/// (0 when it changed meanwhile).
pub fn update_version_if(
    conn: &Connection,
    v: &VersionRow,
    from: Status,
) -> rusqlite::Result<usize> {
    conn.execute(
        "UPDATE workflow_versions SET status = ?2, is_active = ?3, fields = ?4, execution = ?5,
             script = ?6, rejection_reason = ?7, failure_reason = ?8, updated_at = ?9
         WHERE id = ?1 AND status = ?10",
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
            from.as_str(),
        ],
    )
}
