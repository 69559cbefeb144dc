//! The guard on a migrated database: each refusal, and the app's own
//! targeted deletes, cascades and migrations still going through.

use rusqlite::{Connection, params};

use super::*;
use crate::store::{WorkflowRow, insert_workflow, open, open_in_memory};

fn workflow(conn: &Connection, id: &str) {
    let row = WorkflowRow {
        id: id.into(),
        name: None,
        description: None,
        label: None,
        created_at: "t".into(),
        updated_at: "t".into(),
    };
    insert_workflow(conn, &row).expect("insert workflow");
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

fn exists(conn: &Connection, name: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .expect("schema")
        == 1
}

fn refused_for(conn: &Connection, sql: &str) -> String {
    let err = conn.execute_batch(sql).expect_err(sql);
    let reason = last_refusal().unwrap_or_default();
    format!("{err} / {reason}")
}

#[test]
fn drops_are_refused_and_the_schema_stays() {
    let conn = open_in_memory().expect("db");
    lifted(|| {
        conn.execute_batch(
            "CREATE VIEW guard_v AS SELECT id FROM workflows;
             CREATE TRIGGER guard_t AFTER INSERT ON workflows BEGIN SELECT 1; END;",
        )
    })
    .expect("creating is allowed where migrations run");
    for (what, name) in [
        ("TABLE workflows", "workflows"),
        ("TABLE IF EXISTS workflow_messages", "workflow_messages"),
        (
            "INDEX workflow_messages_by_workflow",
            "workflow_messages_by_workflow",
        ),
        ("VIEW guard_v", "guard_v"),
        ("TRIGGER guard_t", "guard_t"),
    ] {
        let sql = &format!("{DROP} {what}");
        let said = refused_for(&conn, sql);
        assert!(said.contains("not authorized"), "{sql}: {said}");
        assert!(
            said.contains(name) && said.contains("refused"),
            "{sql}: {said}"
        );
        assert!(exists(&conn, name), "{name} is still there");
    }
}

#[test]
fn attach_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = open(dir.path(), "s").expect("db");
    let other = dir.path().join("other.db");
    let sql = format!("ATTACH DATABASE '{}' AS other", other.display());
    let said = refused_for(&conn, &sql);
    assert!(said.contains("ATTACH"), "{said}");
    assert!(!other.exists(), "nothing was attached");
}

#[test]
fn a_whole_table_delete_is_rolled_back_and_a_targeted_one_goes_through() {
    let conn = open_in_memory().expect("db");
    for id in ["wf_1", "wf_2", "wf_3"] {
        workflow(&conn, id);
    }
    conn.execute(
        "INSERT INTO workflow_messages (id, workflow_id, account_id, role, content, created_at)
         VALUES ('msg_1', 'wf_1', 'local', 'user', 'hi', 't')",
        [],
    )
    .expect("message");
    for sql in [
        "DELETE FROM workflows",
        "DELETE FROM workflows WHERE 1",
        "DELETE FROM workflows WHERE EXISTS (SELECT 1 FROM workflow_messages)",
        "DELETE FROM workflow_messages",
    ] {
        let err = conn.execute(sql, []).expect_err(sql);
        assert!(err.to_string().contains("constraint"), "{sql}: {err}");
        let reason = last_refusal().unwrap_or_default();
        assert!(reason.contains("every row of workflow"), "{sql}: {reason}");
        assert_eq!(count(&conn, "workflows"), 3, "{sql}");
        assert_eq!(count(&conn, "workflow_messages"), 1, "{sql}");
    }
    // In a transaction, the commit is what is refused: nothing of it stays.
    let tx = conn.unchecked_transaction().expect("tx");
    tx.execute("INSERT INTO workflows (id, account_id, user_id, created_at, updated_at) VALUES ('wf_4', 'local', 'local', 't', 't')", [])
        .expect("insert");
    tx.execute("DELETE FROM workflows", []).expect("runs");
    assert!(tx.commit().is_err(), "the commit is refused");
    assert_eq!(count(&conn, "workflows"), 3);

    // The app's own deletes name a key column first; cascades follow.
    assert_eq!(
        conn.execute("DELETE FROM workflows WHERE id = ?1", params!["wf_1"])
            .expect("a targeted delete"),
        1
    );
    assert_eq!(count(&conn, "workflows"), 2);
    assert_eq!(
        count(&conn, "workflow_messages"),
        0,
        "the cascade went through"
    );
    conn.execute("DELETE FROM workflows WHERE lower(id) = 'wf_2'", [])
        .expect("a function around the key");
    assert_eq!(count(&conn, "workflows"), 1);
}

/// A migration that empties and drops the table the one before made.
const MIGRATION: &str = r#"DELETE FROM guard_tmp; DROP TABLE guard_tmp;"#;

#[test]
fn migrations_may_drop_and_empty_tables() {
    let mut conn = open_in_memory().expect("db");
    let list = rusqlite_migration::Migrations::new(vec![
        rusqlite_migration::M::up(
            "CREATE TABLE guard_tmp (x INTEGER); INSERT INTO guard_tmp VALUES (1);",
        ),
        rusqlite_migration::M::up(MIGRATION),
    ]);
    // A fresh connection of its own, so the list starts at zero.
    let mut fresh = Connection::open_in_memory().expect("db");
    protect(&fresh).expect("guard");
    migrate(&mut fresh, &list).expect("migrations run under the guard");
    assert!(!exists(&fresh, "guard_tmp"));
    // Outside `migrate`, the same statements are refused again.
    lifted(|| fresh.execute_batch("CREATE TABLE guard_tmp (x INTEGER)")).expect("create");
    assert!(
        fresh
            .execute_batch(&format!("{DROP} TABLE guard_tmp"))
            .is_err()
    );
    // The store's own list (run by `open_in_memory` above) is all applied.
    migrate(&mut conn, &crate::store::schema::migrations()).expect("nothing pending");
}

#[test]
fn create_and_alter_are_refused_outside_migrations() {
    let conn = open_in_memory().expect("db");
    for (sql, name) in [
        ("CREATE TABLE guard_new (x INTEGER)", "guard_new"),
        ("CREATE TEMP TABLE guard_tmp (x INTEGER)", "guard_tmp"),
        ("CREATE INDEX guard_i ON workflows (name)", "guard_i"),
        ("CREATE VIEW guard_v AS SELECT id FROM workflows", "guard_v"),
        (
            "CREATE TRIGGER guard_t AFTER INSERT ON workflows BEGIN SELECT 1; END",
            "guard_t",
        ),
    ] {
        let said = refused_for(&conn, sql);
        assert!(said.contains("not authorized"), "{sql}: {said}");
        assert!(
            said.contains(name) && said.contains("refused outside migrations"),
            "{sql}: {said}"
        );
        assert!(!exists(&conn, name), "{name} was not made");
    }
    let said = refused_for(&conn, "ALTER TABLE workflows ADD COLUMN guard_x TEXT");
    assert!(said.contains("ALTER TABLE workflows"), "{said}");
    let said = refused_for(&conn, "ALTER TABLE workflows RENAME TO guard_w");
    assert!(said.contains("ALTER TABLE workflows"), "{said}");
    assert!(exists(&conn, "workflows"), "the table keeps its name");
    // The app's own rows still go in.
    workflow(&conn, "wf_1");
    assert_eq!(count(&conn, "workflows"), 1);
}
