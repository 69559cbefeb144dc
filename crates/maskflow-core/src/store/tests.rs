//! In-memory tests of the schema and its constraints, and of backups.

use super::*;
use serde_json::json;

fn workflow(conn: &Connection, id: &str) {
    insert_workflow(
        conn,
        &WorkflowRow {
            id: id.into(),
            name: None,
            description: None,
            label: None,
            created_at: "t".into(),
            updated_at: "t".into(),
        },
    )
    .expect("insert workflow");
}

fn version(id: &str, wf: &str, n: i64, status: Status, active: bool) -> VersionRow {
    VersionRow {
        id: id.into(),
        workflow_id: wf.into(),
        version: n,
        status,
        is_active: active,
        file_extracts: json!([]),
        fields: None,
        execution: None,
        script: None,
        rejection_reason: None,
        failure_reason: None,
        created_at: "t".into(),
        updated_at: "t".into(),
        origin: crate::store::Origin::Created,
        origin_version_id: None,
    }
}

fn is_constraint(err: rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ConstraintViolation)
    )
}

#[test]
fn migrations_are_valid_and_apply_to_an_empty_database() {
    schema::migrations().validate().expect("valid migrations");
    let conn = open_in_memory().expect("open");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version");
    assert_eq!(version, schema::all().len() as i64);
    let fk: i64 = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .expect("fk");
    assert_eq!(fk, 1);
}

#[test]
fn the_draft_index_matches_the_status_table() {
    for s in Status::ALL {
        let quoted = format!("'{}'", s.as_str());
        let in_draft_index = schema::V1
            .split("workflow_versions_one_draft")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .is_some_and(|index| index.contains(&quoted));
        assert_eq!(in_draft_index, s.is_draft(), "{s:?}");
    }
}

#[test]
fn the_database_refuses_two_active_versions() {
    let conn = open_in_memory().expect("open");
    workflow(&conn, "wf_1");
    insert_version(&conn, &version("wv_1", "wf_1", 1, Status::Approved, true)).expect("first");
    let err = insert_version(&conn, &version("wv_2", "wf_1", 2, Status::Approved, true))
        .expect_err("second active version");
    assert!(is_constraint(err));
    // Another workflow may have its own active version.
    workflow(&conn, "wf_2");
    insert_version(&conn, &version("wv_3", "wf_2", 1, Status::Approved, true)).expect("other");
}

#[test]
fn the_database_refuses_two_drafts_but_allows_archived_and_approved_beside_one() {
    let conn = open_in_memory().expect("open");
    workflow(&conn, "wf_1");
    insert_version(&conn, &version("wv_1", "wf_1", 1, Status::Archived, false)).expect("v1");
    insert_version(&conn, &version("wv_2", "wf_1", 2, Status::Approved, true)).expect("v2");
    insert_version(
        &conn,
        &version("wv_3", "wf_1", 3, Status::Clarifying, false),
    )
    .expect("v3");
    for (i, s) in [
        Status::Validating,
        Status::Building,
        Status::PendingUserApproval,
    ]
    .into_iter()
    .enumerate()
    {
        let err = insert_version(
            &conn,
            &version(&format!("wv_x{i}"), "wf_1", 4 + i as i64, s, false),
        )
        .expect_err("second draft");
        assert!(is_constraint(err), "{s:?}");
    }
    insert_version(&conn, &version("wv_4", "wf_1", 4, Status::Failed, false))
        .expect("failed is no draft");
}

#[test]
fn the_database_refuses_bad_rows() {
    let conn = open_in_memory().expect("open");
    workflow(&conn, "wf_1");
    // Active but not approved.
    let err = insert_version(&conn, &version("wv_1", "wf_1", 1, Status::Building, true))
        .expect_err("active draft");
    assert!(is_constraint(err));
    // Unknown workflow.
    let err = insert_version(
        &conn,
        &version("wv_2", "wf_nope", 1, Status::Validating, false),
    )
    .expect_err("fk");
    assert!(is_constraint(err));
    // Duplicate version number.
    insert_version(&conn, &version("wv_3", "wf_1", 1, Status::Archived, false)).expect("v1");
    let err = insert_version(&conn, &version("wv_4", "wf_1", 1, Status::Archived, false))
        .expect_err("dup number");
    assert!(is_constraint(err));
    // Unknown status, written behind the table's back.
    let err = conn
        .execute(
            "UPDATE workflow_versions SET status = 'done' WHERE id = 'wv_3'",
            [],
        )
        .expect_err("bad status");
    assert!(is_constraint(err));
    // A rejected version without a reason.
    let err = conn
        .execute(
            "UPDATE workflow_versions SET status = 'rejected' WHERE id = 'wv_3'",
            [],
        )
        .expect_err("rejected without reason");
    assert!(is_constraint(err));
    // Bad message role.
    let err = conn
        .execute(
            "INSERT INTO workflow_messages (id, workflow_id, account_id, role, content, created_at)
             VALUES ('msg_1', 'wf_1', 'local', 'system', 'x', 't')",
            [],
        )
        .expect_err("bad role");
    assert!(is_constraint(err));
}

#[test]
fn deleting_a_workflow_removes_its_versions_and_messages() {
    let conn = open_in_memory().expect("open");
    workflow(&conn, "wf_1");
    insert_version(
        &conn,
        &version("wv_1", "wf_1", 1, Status::Validating, false),
    )
    .expect("v1");
    insert_message(
        &conn,
        &MessageRow {
            id: "msg_1".into(),
            workflow_id: "wf_1".into(),
            version_id: Some("wv_1".into()),
            role: "user".into(),
            content: "hi".into(),
            created_at: "t".into(),
        },
    )
    .expect("msg");
    assert!(delete_workflow(&conn, "wf_1").expect("delete"));
    assert!(get_version(&conn, "wv_1").expect("get").is_none());
    assert!(messages_of(&conn, "wf_1").expect("msgs").is_empty());
}

#[test]
fn a_backup_is_taken_and_recorded_before_pending_migrations() {
    let home = tempfile::tempdir().expect("tempdir");
    // A fresh database: nothing to back up.
    let conn = open(home.path(), "2024-01-01T00:00:00.000Z").expect("open");
    workflow(&conn, "wf_1");
    drop(conn);
    assert!(!home.path().join("backups").exists());
    // Re-opening with nothing pending takes no backup either.
    drop(open(home.path(), "2024-01-01T00:00:00.001Z").expect("reopen"));
    assert!(!home.path().join("backups").exists());
    // A new migration is pending: the old file is backed up first.
    let mut more = schema::all();
    more.push(rusqlite_migration::M::up(
        "CREATE TABLE extra (x INTEGER) STRICT;",
    ));
    let migrations = Migrations::new(more);
    let conn = open_with(home.path(), "2024-01-02T00:00:00.000Z", &migrations).expect("migrate");
    let recorded = crate::store::backups::list(&conn).expect("list");
    drop(conn);
    let backups: Vec<_> = std::fs::read_dir(home.path().join("backups"))
        .expect("backups")
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(backups.len(), 1);
    let old = Connection::open(backups[0].path()).expect("open backup");
    let v: i64 = old
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version");
    assert_eq!(
        v,
        schema::all().len() as i64,
        "the backup holds the schema before migrating"
    );
    assert!(get_workflow(&old, "wf_1").expect("read").is_some());

    // The backup is recorded as a pre-migration one, with its size.
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        recorded[0].reason,
        crate::store::backups::Reason::PreMigration
    );
    assert_eq!(std::path::Path::new(&recorded[0].path), backups[0].path());
    assert_eq!(
        recorded[0].size_bytes,
        std::fs::metadata(backups[0].path()).expect("meta").len() as i64
    );
}

#[test]
fn migration_2_upgrades_a_version_1_database_and_keeps_its_rows() {
    let home = tempfile::tempdir().expect("tempdir");
    let v1 = Migrations::new(vec![rusqlite_migration::M::up(schema::V1)]);
    let conn = open_with(home.path(), "2024-01-01T00:00:00.000Z", &v1).expect("v1");
    workflow(&conn, "wf_1");
    drop(conn);
    let conn = open(home.path(), "2024-01-02T00:00:00.000Z").expect("upgrade");
    assert!(get_workflow(&conn, "wf_1").expect("read").is_some());
    let n: i64 = conn
        .query_row("SELECT count(*) FROM llm_calls", [], |r| r.get(0))
        .expect("ledger table");
    assert_eq!(n, 0);
    // A blocked call must not carry a body.
    let err = conn
        .execute(
            "INSERT INTO llm_calls (id, created_at, role, provider, model, request_body, latency_ms, outcome, blocked)
             VALUES ('call_1', 't', 'validator', 'x', '', 'raw body', 0, 'blocked', 1)",
            [],
        )
        .expect_err("blocked rows keep no body");
    assert!(is_constraint(err));
}

#[test]
fn the_version_origin_migration_fills_in_older_rows() {
    let home = tempfile::tempdir().expect("tempdir");
    let all = schema::all();
    // Found by its text: other migrations may be appended after it.
    let at = all
        .iter()
        .position(|m| format!("{m:?}").contains("origin_version_id"))
        .expect("the migration is listed");
    let before = Migrations::new(all[..at].to_vec());
    let conn = open_with(home.path(), "2024-01-01T00:00:00.000Z", &before).expect("old");
    workflow(&conn, "wf_1");
    for (id, n, status) in [("wv_1", 1, "archived"), ("wv_2", 2, "approved")] {
        conn.execute(
            "INSERT INTO workflow_versions (id, workflow_id, account_id, version, status, is_active, file_extracts, created_at, updated_at)
             VALUES (?1, 'wf_1', 'local', ?2, ?3, ?4, '[]', 't', 't')",
            rusqlite::params![id, n, status, n == 2],
        )
        .expect("old version");
    }
    drop(conn);
    let conn = open(home.path(), "2024-01-02T00:00:00.000Z").expect("upgrade");
    let v1 = get_version(&conn, "wv_1").expect("read").expect("v1");
    let v2 = get_version(&conn, "wv_2").expect("read").expect("v2");
    assert_eq!(v1.origin, crate::store::Origin::Created);
    assert_eq!(v2.origin, crate::store::Origin::Edited);
    assert_eq!(v2.origin_version_id, None);
    let bad = conn.execute(
        "UPDATE workflow_versions SET origin = 'copied' WHERE id = 'wv_1'",
        [],
    );
    assert!(is_constraint(bad.expect_err("unknown origin")));
}

#[test]
fn the_notices_migration_keeps_every_message_and_takes_notices() {
    let home = tempfile::tempdir().expect("tempdir");
    let all = schema::all();
    // Found by its text: other migrations may be appended after it.
    let at = all
        .iter()
        .position(|m| format!("{m:?}").contains("workflow_messages_new"))
        .expect("the migration is listed");
    let before = Migrations::new(all[..at].to_vec());
    let conn = open_with(home.path(), "2024-01-01T00:00:00.000Z", &before).expect("old");
    workflow(&conn, "wf_1");
    insert_version(&conn, &version("wv_1", "wf_1", 1, Status::Failed, false)).expect("v1");
    for (id, role) in [("msg_1", "user"), ("msg_2", "assistant")] {
        conn.execute(
            "INSERT INTO workflow_messages (id, workflow_id, account_id, version_id, role, content, created_at)
             VALUES (?1, 'wf_1', 'local', 'wv_1', ?2, 'text', 't')",
            rusqlite::params![id, role],
        )
        .expect("old message");
    }
    let notice = conn.execute(
        "INSERT INTO workflow_messages (id, workflow_id, account_id, role, content, created_at)
         VALUES ('msg_3', 'wf_1', 'local', 'notice', 'x', 't')",
        [],
    );
    assert!(is_constraint(notice.expect_err("no notices before")));
    drop(conn);
    let conn = open(home.path(), "2024-01-02T00:00:00.000Z").expect("upgrade");
    let kept: Vec<(String, String, Option<String>)> = messages_of(&conn, "wf_1")
        .expect("read")
        .into_iter()
        .map(|m| (m.id, m.role, m.version_id))
        .collect();
    assert_eq!(
        kept,
        [
            ("msg_1".into(), "user".into(), Some("wv_1".into())),
            ("msg_2".into(), "assistant".into(), Some("wv_1".into()))
        ]
    );
    conn.execute(
        "INSERT INTO workflow_messages (id, workflow_id, account_id, role, content, created_at)
         VALUES ('msg_3', 'wf_1', 'local', 'notice', 'The build failed', 't')",
        [],
    )
    .expect("a notice");
    let bad = conn.execute(
        "INSERT INTO workflow_messages (id, workflow_id, account_id, role, content, created_at)
         VALUES ('msg_4', 'wf_1', 'local', 'system', 'x', 't')",
        [],
    );
    assert!(is_constraint(bad.expect_err("unknown role")));
    // The table keeps its index and its cascade.
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'workflow_messages_by_workflow'",
            [],
            |r| r.get(0),
        )
        .expect("index");
    assert_eq!(indexed, 1);
    conn.execute("DELETE FROM workflows WHERE id = 'wf_1'", [])
        .expect("delete");
    assert!(messages_of(&conn, "wf_1").expect("read").is_empty());
}

#[test]
fn the_needs_look_migration_keeps_every_run_and_takes_the_new_status() {
    let home = tempfile::tempdir().expect("tempdir");
    let all = schema::all();
    let at = all
        .iter()
        .position(|m| format!("{m:?}").contains("workflow_runs_new"))
        .expect("the migration is listed");
    let before = Migrations::new(all[..at].to_vec());
    let conn = open_with(home.path(), "2024-01-01T00:00:00.000Z", &before).expect("old");
    workflow(&conn, "wf_1");
    insert_version(&conn, &version("wv_1", "wf_1", 1, Status::Approved, true)).expect("v1");
    let insert = |c: &rusqlite::Connection, id: &str, status: &str| {
        c.execute(
            "INSERT INTO workflow_runs (id, workflow_id, version_id, account_id, status, inputs, outputs, workdir, started_at)
             VALUES (?1, 'wf_1', 'wv_1', 'local', ?2, '{}', '[]', '/w', 't')",
            rusqlite::params![id, status],
        )
    };
    insert(&conn, "run_1", "succeeded").expect("old run");
    assert!(is_constraint(
        insert(&conn, "run_2", "needs_look").expect_err("not yet")
    ));
    drop(conn);
    let conn = open(home.path(), "2024-01-02T00:00:00.000Z").expect("upgrade");
    insert(&conn, "run_2", "needs_look").expect("held run");
    let kept: Vec<String> = crate::store::builds::runs_of(&conn, "wf_1")
        .expect("runs")
        .into_iter()
        .map(|r| format!("{} {}", r.id, r.status))
        .collect();
    assert_eq!(kept, vec!["run_2 needs_look", "run_1 succeeded"]);
}
