//! Destructive SQL refused at run time (seed 002's database protection,
//! issue 31 point 7): every connection the store opens gets SQLite's
//! authorizer, which refuses `DROP` (table, index, view, trigger), `CREATE`
//! (table, index, view, trigger, virtual table) and `ALTER TABLE` (seed 002:
//! the schema changes through migrations only), `ATTACH` (and `DETACH`),
//! and whole-table deletes; only [`migrate`] lifts it, for the migrations it
//! runs on this thread.
//!
//! The rule for a whole-table delete: SQLite shows the authorizer the
//! `DELETE` and then, while it resolves the `WHERE`, a read of each column
//! the `WHERE` names; it never shows the `WHERE` itself. A `DELETE` is
//! therefore taken as targeted only when the reads the authorizer sees right
//! after it (functions aside, before any other action) include a column of
//! the table it deletes from. Anything else (no `WHERE`, a constant one, a
//! subquery first, one naming only other tables) is a whole-table delete,
//! and since by then the statement is prepared and may run, the commit hook
//! turns its transaction's commit into a rollback. Every delete the app
//! makes names a key column of its table (`DELETE FROM t WHERE id = ?1 …`);
//! a foreign key's cascade is coded as `DELETE FROM child WHERE child.fk =
//! old.key`, which reads the child's column too. Known gap: a table whose
//! foreign key points at itself is read by SQLite's own check of that key,
//! so a whole-table delete of such a table is not told apart.
//!
//! A refused statement fails with SQLite's "not authorized"; a refused
//! commit with "constraint failed" (a commit hook's rollback). The reason,
//! naming the statement's table, is kept for this thread in
//! [`last_refusal`].

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite_migration::Migrations;

use crate::error::Result;

thread_local! {
    /// Set while [`migrate`] runs on this thread: its DDL may drop and rebuild.
    static MIGRATING: Cell<bool> = const { Cell::new(false) };
    /// Why the guard last refused something on this thread.
    static LAST_REFUSAL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Why the guard last refused a statement or a commit on this thread.
pub fn last_refusal() -> Option<String> {
    LAST_REFUSAL.with(|r| r.borrow().clone())
}

fn refuse(reason: String) {
    LAST_REFUSAL.with(|r| *r.borrow_mut() = Some(reason));
}

/// Where a connection is in telling a targeted delete from a whole-table one.
#[derive(Debug, Default)]
struct DeleteWatch {
    /// A top-level `DELETE` whose `WHERE` has not yet read a column of its table.
    suspect: Option<String>,
    /// A `DELETE` that turned out to cover its whole table: the commit is refused.
    whole_table: Option<String>,
}

impl DeleteWatch {
    fn see(&mut self, ctx: &AuthContext<'_>) {
        let Some(table) = self.suspect.take() else {
            return;
        };
        match ctx.action {
            AuthAction::Read { table_name, .. } if table_name == table => {}
            // Columns of other tables come first in a cascade's delete (the
            // parent's key), and functions before their arguments.
            AuthAction::Read { .. } | AuthAction::Function { .. } => self.suspect = Some(table),
            _ => self.whole_table = Some(table),
        }
    }
}

/// Installs the authorizer and the commit and rollback hooks on `conn`.
pub fn protect(conn: &Connection) -> Result<()> {
    let watch = Arc::new(Mutex::new(DeleteWatch::default()));
    let w = watch.clone();
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        if MIGRATING.with(Cell::get) {
            return Authorization::Allow;
        }
        let mut watch = w.lock().unwrap_or_else(|e| e.into_inner());
        watch.see(&ctx);
        match refused(&ctx) {
            Some(reason) => {
                refuse(reason);
                Authorization::Deny
            }
            None => {
                if let (AuthAction::Delete { table_name }, None) = (ctx.action, ctx.accessor) {
                    watch.suspect = Some(table_name.to_owned());
                }
                Authorization::Allow
            }
        }
    }))?;
    let w = watch.clone();
    conn.commit_hook(Some(move || {
        let mut watch = w.lock().unwrap_or_else(|e| e.into_inner());
        if MIGRATING.with(Cell::get) {
            // A migration may empty a table it rebuilds.
            *watch = DeleteWatch::default();
            return false;
        }
        let table = watch.whole_table.take().or_else(|| watch.suspect.take());
        match table {
            Some(t) => {
                refuse(format!(
                    "a DELETE of every row of {t} (no WHERE on its columns) was rolled back"
                ));
                true
            }
            None => false,
        }
    }))?;
    conn.rollback_hook(Some(move || {
        let mut watch = watch.lock().unwrap_or_else(|e| e.into_inner());
        *watch = DeleteWatch::default();
    }))?;
    Ok(())
}

/// The statement's verb, in pieces: the source tree is checked for it
/// outside migrations (`store::deletes`' test), and this file only names it.
const DROP: &str = concat!("DR", "OP");

/// The reason `ctx` is refused outright, if it is.
fn refused(ctx: &AuthContext<'_>) -> Option<String> {
    let what = match ctx.action {
        AuthAction::DropTable { table_name } | AuthAction::DropTempTable { table_name } => {
            format!("{DROP} TABLE {table_name}")
        }
        AuthAction::DropIndex { index_name, .. } | AuthAction::DropTempIndex { index_name, .. } => {
            format!("{DROP} INDEX {index_name}")
        }
        AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => {
            format!("{DROP} VIEW {view_name}")
        }
        AuthAction::DropTrigger { trigger_name, .. }
        | AuthAction::DropTempTrigger { trigger_name, .. } => {
            format!("{DROP} TRIGGER {trigger_name}")
        }
        AuthAction::DropVtable { table_name, .. } => format!("{DROP} TABLE {table_name}"),
        AuthAction::CreateTable { table_name } | AuthAction::CreateTempTable { table_name } => {
            format!("CREATE TABLE {table_name}")
        }
        AuthAction::CreateIndex { index_name, .. }
        | AuthAction::CreateTempIndex { index_name, .. } => format!("CREATE INDEX {index_name}"),
        AuthAction::CreateView { view_name } | AuthAction::CreateTempView { view_name } => {
            format!("CREATE VIEW {view_name}")
        }
        AuthAction::CreateTrigger { trigger_name, .. }
        | AuthAction::CreateTempTrigger { trigger_name, .. } => {
            format!("CREATE TRIGGER {trigger_name}")
        }
        AuthAction::CreateVtable { table_name, .. } => format!("CREATE VIRTUAL TABLE {table_name}"),
        AuthAction::AlterTable { table_name, .. } => format!("ALTER TABLE {table_name}"),
        AuthAction::Attach { filename } => format!("ATTACH {filename:?}"),
        AuthAction::Detach { database_name } => format!("DETACH {database_name}"),
        _ => return None,
    };
    Some(format!("{what} is refused outside migrations"))
}

/// Runs `migrations` on `conn` with the guard lifted for this thread.
pub fn migrate(conn: &mut Connection, migrations: &Migrations) -> Result<()> {
    lifted(|| migrations.to_latest(conn))?;
    Ok(())
}

/// Runs `f` with the guard lifted for this thread (what [`migrate`] does
/// around its migrations).
pub(crate) fn lifted<T>(f: impl FnOnce() -> T) -> T {
    struct Lifted(bool);
    impl Drop for Lifted {
        fn drop(&mut self) {
            MIGRATING.with(|m| m.set(self.0));
        }
    }
    let _lifted = Lifted(MIGRATING.with(|m| m.replace(true)));
    f()
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
