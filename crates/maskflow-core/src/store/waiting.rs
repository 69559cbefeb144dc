//! Reads for the list of what waits for a person: builds stopped at a gate
//! (plan, review, packages or file bindings) that the user must decide.
//! Plain reads; `service/waiting.rs` makes the list.

use rusqlite::Connection;

/// A build waiting at a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildGate {
    /// `wf_…`
    pub workflow_id: String,
    /// `wv_…`
    pub version_id: String,
    /// The workflow's name, when it has one.
    pub name: Option<String>,
    /// When the build stopped at the gate (its row's last write, RFC 3339).
    pub since: String,
}

/// Builds of versions still `building` whose gate waits, oldest first.
pub fn build_gates(conn: &Connection) -> rusqlite::Result<Vec<BuildGate>> {
    let mut stmt = conn.prepare(
        "SELECT v.workflow_id, b.version_id, w.name, b.updated_at
         FROM version_builds b
         JOIN workflow_versions v ON v.id = b.version_id
         JOIN workflows w ON w.id = v.workflow_id
         WHERE b.pending_gate = 1 AND v.status = 'building'
         ORDER BY b.updated_at, b.version_id",
    )?;
    stmt.query_map([], |r| {
        Ok(BuildGate {
            workflow_id: r.get(0)?,
            version_id: r.get(1)?,
            name: r.get(2)?,
            since: r.get(3)?,
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::builds::{BuildRow, put_build};
    use crate::store::{
        Origin, VersionRow, WorkflowRow, insert_version, insert_workflow, open_in_memory,
    };
    use crate::versions::Status;

    fn version(conn: &Connection, wf: &str, id: &str, status: Status, gate: bool) {
        insert_workflow(
            conn,
            &WorkflowRow {
                id: wf.into(),
                name: Some(format!("Named {wf}")),
                description: None,
                label: None,
                created_at: "t".into(),
                updated_at: "t".into(),
            },
        )
        .expect("workflow");
        insert_version(
            conn,
            &VersionRow {
                id: id.into(),
                workflow_id: wf.into(),
                version: 1,
                status,
                is_active: false,
                file_extracts: json!([]),
                fields: None,
                execution: None,
                script: None,
                rejection_reason: None,
                failure_reason: (status == Status::Failed).then(|| "broke".into()),
                created_at: "t".into(),
                updated_at: "t".into(),
                origin: Origin::Created,
                origin_version_id: None,
            },
        )
        .expect("version");
        let state =
            json!({"phase": "generate", "stage": "response", "iteration": 1, "pending_gate": gate});
        let row = BuildRow {
            version_id: id.into(),
            state,
            test_report: None,
        };
        put_build(conn, &row, "2026-01-01T00:00:00Z").expect("build");
    }

    #[test]
    fn only_building_versions_at_a_gate_are_listed() {
        let conn = open_in_memory().expect("db");
        version(&conn, "wf_a", "wv_a", Status::Building, true);
        version(&conn, "wf_b", "wv_b", Status::Building, false);
        version(&conn, "wf_c", "wv_c", Status::Failed, true);
        let gates = build_gates(&conn).expect("gates");
        assert_eq!(
            gates,
            vec![BuildGate {
                workflow_id: "wf_a".into(),
                version_id: "wv_a".into(),
                name: Some("Named wf_a".into()),
                since: "2026-01-01T00:00:00Z".into(),
            }]
        );
    }
}
