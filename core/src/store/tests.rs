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
fn a_backup_is_taken_before_pending_migrations_and_old_ones_are_pruned() {
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

    // Retention.
    let conn = open_in_memory().expect("mem");
    let dir = home.path().join("backups");
    for i in 0..15 {
        backup(&conn, &dir, &format!("2025-01-01T00:00:{i:02}")).expect("backup");
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert_eq!(names.len(), BACKUPS_KEPT);
    assert!(names[BACKUPS_KEPT - 1].contains("00-00-14"));
}
