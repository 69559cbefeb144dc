//! What a delete removes, counted before it happens, and the deletes
//! themselves (seed 002's `SafeDatabaseClient`): the service asks for the
//! counts, shows them with a confirmation token, and deletes only when the
//! token comes back. The privacy ledger is never deleted: a deleted
//! workflow's ledger rows stay, marked with its name. No code here (or
//! anywhere outside the migrations) drops or truncates a table; a test
//! reads the source tree to keep it so.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::Result;

/// What a delete removes (and, for the ledger, keeps).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, ToSchema, ts_rs::TS,
)]
pub struct DeleteCounts {
    /// Workflows.
    pub workflows: u32,
    /// Workflow versions.
    pub versions: u32,
    /// Conversation messages.
    pub messages: u32,
    /// Runs of approved workflows.
    pub runs: u32,
    /// Flow runs (a run's subflow runs included).
    pub flow_runs: u32,
    /// Flow checkpoints.
    pub checkpoints: u32,
    /// Flow transcript turns.
    pub turns: u32,
    /// Backup files.
    pub backups: u32,
    /// Bytes of backup files.
    #[ts(type = "number")]
    pub bytes: i64,
    /// Privacy-ledger entries that stay on record (they are never deleted).
    pub ledger_entries_kept: u32,
    /// Agent files (`agents/<name>.json`).
    pub agents: u32,
}

fn count(conn: &Connection, sql: &str, id: &str) -> Result<u32> {
    let n: i64 = conn.query_row(sql, [id], |r| r.get(0))?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// What deleting workflow `id` removes, or `None` when there is no such workflow.
pub fn workflow_counts(conn: &Connection, id: &str) -> Result<Option<DeleteCounts>> {
    let exists = conn
        .query_row("SELECT 1 FROM workflows WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some();
    if !exists {
        return Ok(None);
    }
    Ok(Some(DeleteCounts {
        workflows: 1,
        versions: count(
            conn,
            "SELECT count(*) FROM workflow_versions WHERE workflow_id = ?1",
            id,
        )?,
        messages: count(
            conn,
            "SELECT count(*) FROM workflow_messages WHERE workflow_id = ?1",
            id,
        )?,
        runs: count(
            conn,
            "SELECT count(*) FROM workflow_runs WHERE workflow_id = ?1",
            id,
        )?,
        ledger_entries_kept: count(
            conn,
            "SELECT count(*) FROM llm_calls WHERE workflow_id = ?1",
            id,
        )?,
        ..DeleteCounts::default()
    }))
}

/// Deletes a workflow with its versions, messages and runs (the database's
/// cascades), in one transaction; its ledger rows stay, marked with `name`.
/// Returns whether it existed.
pub fn delete_workflow_keeping_ledger(conn: &mut Connection, id: &str, name: &str) -> Result<bool> {
    let tx = conn.transaction()?;
    tx.execute(
        "UPDATE llm_calls SET deleted_workflow = ?2 WHERE workflow_id = ?1",
        params![id, name],
    )?;
    let deleted = super::delete_workflow(&tx, id)?;
    tx.commit()?;
    Ok(deleted)
}

// A run and its subflow runs (children cascade with their parent).
const RUN_TREE: &str = "WITH RECURSIVE tree(id) AS (
        SELECT id FROM flow_runs WHERE id = ?1
        UNION SELECT r.id FROM flow_runs r JOIN tree t ON r.parent_id = t.id)";

/// What deleting flow run `id` removes, or `None` when there is no such run.
pub fn flow_run_counts(conn: &Connection, id: &str) -> Result<Option<DeleteCounts>> {
    let runs = count(conn, &format!("{RUN_TREE} SELECT count(*) FROM tree"), id)?;
    if runs == 0 {
        return Ok(None);
    }
    Ok(Some(DeleteCounts {
        flow_runs: runs,
        checkpoints: count(
            conn,
            &format!("{RUN_TREE} SELECT count(*) FROM flow_checkpoints WHERE run_id IN tree"),
            id,
        )?,
        turns: count(
            conn,
            &format!("{RUN_TREE} SELECT count(*) FROM flow_turns WHERE run_id IN tree"),
            id,
        )?,
        ..DeleteCounts::default()
    }))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// Statements that destroy a table or a database. Built from pieces so
    /// this file does not match itself.
    fn destructive() -> [String; 2] {
        [
            format!("{}{}", "DR", "OP "),
            format!("{}{}", "TRUN", "CATE"),
        ]
    }

    /// The migration texts are where schema changes belong: `const … =
    /// r#"…"#;` blocks in `schema.rs` and any `MIGRATION` constant.
    fn without_migrations(path: &Path, text: &str) -> String {
        let is_schema = path.ends_with("store/schema.rs");
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("const ") {
            let (before, from) = rest.split_at(at);
            out.push_str(before);
            let name: String = from["const ".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let migration = is_schema || name == "MIGRATION";
            match (migration, from.find("r#\""), from.find(';')) {
                (true, Some(open), Some(semi)) if open < semi => {
                    let close = from[open..].find("\"#").map(|c| open + c + 2);
                    let end = close.unwrap_or(from.len());
                    rest = &from[end..];
                }
                _ => {
                    out.push_str("const ");
                    rest = &from["const ".len()..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    fn offenders(path: &Path, text: &str) -> Vec<String> {
        let kept = without_migrations(path, text);
        destructive()
            .iter()
            .filter(|word| kept.contains(word.as_str()))
            .map(|word| format!("{}: {}", path.display(), word.trim()))
            .collect()
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !matches!(name.as_str(), "target" | "node_modules" | ".git" | "gen") {
                    rust_files(&p, out);
                }
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }

    #[test]
    fn no_code_drops_or_truncates_a_table_outside_the_migrations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in ["crates", "src-tauri", "bench"] {
            rust_files(&root.join(dir), &mut files);
        }
        assert!(files.len() > 50, "the source tree was not found");
        let found: Vec<String> = files
            .iter()
            .flat_map(|f| offenders(f, &std::fs::read_to_string(f).unwrap_or_default()))
            .collect();
        assert!(
            found.is_empty(),
            "destructive SQL outside migrations: {found:?}"
        );
    }

    #[test]
    fn the_check_finds_a_drop_in_code_but_not_in_a_migration() {
        let [drop, truncate] = destructive();
        let code = format!("fn f(c: &Connection) {{ c.execute(\"{drop}TABLE x\", []); }}");
        assert_eq!(offenders(Path::new("core/src/x.rs"), &code).len(), 1);
        let code = format!("let q = \"{truncate} flow_turns\";");
        assert_eq!(offenders(Path::new("core/src/x.rs"), &code).len(), 1);
        let migration =
            format!("pub const MIGRATION: &str = r#\"\n{drop}INDEX old;\n\"#;\nfn g() {{}}");
        assert!(offenders(Path::new("core/src/flows/store.rs"), &migration).is_empty());
        let schema = format!("pub const V9: &str = r#\"{drop}TABLE t;\"#;");
        assert!(offenders(Path::new("core/src/store/schema.rs"), &schema).is_empty());
        // Outside a migration constant the same text is still found.
        let after = format!("{migration}\nconst Q: &str = \"{drop}TABLE y\";");
        assert_eq!(
            offenders(Path::new("core/src/flows/store.rs"), &after).len(),
            1
        );
    }
}
