//! The builder side of the one conversation list (seed 004's
//! `GET /conversations`): each workflow's conversation with its first user
//! message and the time of its last message. Flow runs are read by
//! [`maskflow_flows::store`]; merging and filtering is the service's.

use rusqlite::Connection;

/// A workflow's builder conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuilderConversation {
    /// The workflow (`wf_…`), which is the conversation's id.
    pub workflow_id: String,
    /// The workflow's name, once built or given.
    pub name: Option<String>,
    /// What the user asked first, if anything yet.
    pub first_user_message: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// The last message's time, else the workflow's creation (RFC 3339).
    pub last_message_at: String,
}

/// Every workflow that has a version, with its conversation's outline.
pub fn builder_conversations(conn: &Connection) -> rusqlite::Result<Vec<BuilderConversation>> {
    // Workflows without a version are half-created and not listed anywhere.
    let mut stmt = conn.prepare(
        "SELECT w.id, w.name, w.created_at,
                (SELECT m.content FROM workflow_messages m
                 WHERE m.workflow_id = w.id AND m.role = 'user' ORDER BY m.id LIMIT 1),
                COALESCE((SELECT MAX(m.created_at) FROM workflow_messages m
                          WHERE m.workflow_id = w.id), w.created_at)
         FROM workflows w
         WHERE EXISTS (SELECT 1 FROM workflow_versions v WHERE v.workflow_id = w.id)
         ORDER BY w.id DESC",
    )?;
    stmt.query_map([], |r| {
        Ok(BuilderConversation {
            workflow_id: r.get(0)?,
            name: r.get(1)?,
            created_at: r.get(2)?,
            first_user_message: r.get(3)?,
            last_message_at: r.get(4)?,
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_in_memory;

    #[test]
    fn lists_workflows_with_versions_and_their_last_message() {
        let conn = open_in_memory().expect("db");
        conn.execute_batch(
            "INSERT INTO workflows VALUES ('wf_1', 'local', 'local', NULL, NULL, NULL, 't1', 't1');
             INSERT INTO workflows VALUES ('wf_2', 'local', 'local', 'Named', NULL, NULL, 't2', 't2');
             INSERT INTO workflows VALUES ('wf_3', 'local', 'local', NULL, NULL, NULL, 't3', 't3');
             INSERT INTO workflow_versions (id, workflow_id, account_id, version, status, file_extracts, created_at, updated_at)
                 VALUES ('wv_1', 'wf_1', 'local', 1, 'validating', '[]', 't1', 't1');
             INSERT INTO workflow_versions (id, workflow_id, account_id, version, status, file_extracts, created_at, updated_at)
                 VALUES ('wv_2', 'wf_2', 'local', 1, 'validating', '[]', 't2', 't2');
             INSERT INTO workflow_messages VALUES ('msg_1', 'wf_1', 'local', NULL, 'user', 'merge them', 't4');
             INSERT INTO workflow_messages VALUES ('msg_2', 'wf_1', 'local', NULL, 'assistant', 'ok', 't5');
             INSERT INTO workflow_messages VALUES ('msg_3', 'wf_1', 'local', NULL, 'user', 'thanks', 't6');",
        )
        .expect("rows");
        let all = builder_conversations(&conn).expect("list");
        assert_eq!(all.len(), 2, "wf_3 has no version");
        assert_eq!(all[0].workflow_id, "wf_2");
        assert_eq!(all[0].name.as_deref(), Some("Named"));
        assert_eq!(all[0].first_user_message, None);
        assert_eq!(all[0].last_message_at, "t2");
        assert_eq!(all[1].first_user_message.as_deref(), Some("merge them"));
        assert_eq!(all[1].last_message_at, "t6");
    }
}
