//! Rows of `manual_prompts` (issue 19): the manual back end's prompts kept
//! in the database, with who waits on each (a build, a flow run) and which
//! process asked, so a prompt outlives a restart. An answer given after a
//! restart is stored on the row until the waiter's repeated call takes it.
//! Plain reads and writes; the service decides what a row means.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::store::leases::LeaseOwner;
use maskflow_llm::call::{CallTag, ManualWaiter};
use maskflow_llm::manual::{ManualPrompt, StoredAnswer};

/// Migration (issue 19, "restart-safe waiting"): one row per waiting prompt.
pub const MIGRATION: &str = r#"
CREATE TABLE manual_prompts (
    id           TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    role         TEXT NOT NULL CHECK (length(role) > 0),
    workflow_id  TEXT,
    waiter       TEXT CHECK (waiter IS NULL OR json_valid(waiter)),
    waiter_key   TEXT,
    messages     TEXT NOT NULL CHECK (json_valid(messages)),
    schema       TEXT CHECK (schema IS NULL OR json_valid(schema)),
    owner_pid    INTEGER NOT NULL CHECK (owner_pid >= 0),
    owner_id     TEXT NOT NULL CHECK (length(owner_id) > 0),
    answer       TEXT,
    answered_at  TEXT,
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX manual_prompts_by_waiter ON manual_prompts (waiter_key);
"#;

/// Migration (issue 19, restart-safe phases of a build): the call a prompt
/// answers (its tag's key) and, for a
/// conversation call, the user's message the turn goes on with.
pub const CALL_MIGRATION: &str = r#"
ALTER TABLE manual_prompts ADD COLUMN call_key TEXT;
ALTER TABLE manual_prompts ADD COLUMN turn TEXT CHECK (turn IS NULL OR json_valid(turn));
"#;

/// A stored prompt: the prompt, the process that asked, and the answer
/// given after a restart (not yet taken by the waiter).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPrompt {
    /// The prompt as it was shown (`interrupted` unset).
    pub prompt: ManualPrompt,
    /// The asking process's pid.
    pub owner_pid: u32,
    /// The asking process's per-process id.
    pub owner_id: String,
    /// The answer waiting to be taken, when one was given after a restart.
    pub answer: Option<String>,
    /// The call it answers, when the call said (builds do; flow steps
    /// are matched on their identical prompt).
    pub call: Option<CallTag>,
}

/// The lookup key of a waiter: `build:<version>` or `flow_run:<run>`.
pub fn waiter_key(waiter: &ManualWaiter) -> String {
    match waiter {
        ManualWaiter::Build { version_id, .. } => format!("build:{version_id}"),
        ManualWaiter::FlowRun { run_id } => format!("flow_run:{run_id}"),
    }
}

fn json_text<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// Stores a new prompt asked by `owner` for the call `call` (if it said).
pub fn insert(
    conn: &Connection,
    prompt: &ManualPrompt,
    call: Option<&CallTag>,
    owner: &LeaseOwner,
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO manual_prompts (id, role, workflow_id, waiter, waiter_key, messages, schema,
             owner_pid, owner_id, created_at, call_key, turn)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            prompt.id,
            prompt.role,
            prompt.workflow_id,
            prompt.waiter.as_ref().map(json_text),
            prompt.waiter.as_ref().map(waiter_key),
            json_text(&prompt.messages),
            prompt.schema.as_ref().map(json_text),
            owner.pid,
            owner.id,
            prompt.created_at,
            call.map(|c| c.key.as_str()),
            call.and_then(|c| c.turn.as_ref()).map(json_text),
        ],
    )?;
    Ok(())
}

/// Forgets prompt `id` (true when there was one).
pub fn delete(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute("DELETE FROM manual_prompts WHERE id = ?1", [id])? == 1)
}

/// Forgets every prompt of `waiter` (its work ended); how many there were.
pub fn delete_for(conn: &Connection, waiter: &ManualWaiter) -> rusqlite::Result<usize> {
    conn.execute(
        "DELETE FROM manual_prompts WHERE waiter_key = ?1",
        [waiter_key(waiter)],
    )
}

const COLUMNS: &str = "id, role, workflow_id, waiter, messages, schema, owner_pid, owner_id, \
                       answer, created_at, call_key, turn";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredPrompt> {
    let parse = |i: usize, text: Option<String>| -> rusqlite::Result<Option<Value>> {
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
            })
        })
        .transpose()
    };
    let waiter = parse(3, r.get("waiter")?)?
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(3, rusqlite::types::Type::Text, e.into())
        })?;
    let messages = parse(4, Some(r.get("messages")?))?.unwrap_or(Value::Null);
    let messages = serde_json::from_value(messages).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, e.into())
    })?;
    let turn = parse(11, r.get("turn")?)?;
    let call = r
        .get::<_, Option<String>>("call_key")?
        .map(|key| CallTag { key, turn });
    Ok(StoredPrompt {
        prompt: ManualPrompt {
            id: r.get("id")?,
            role: r.get("role")?,
            workflow_id: r.get("workflow_id")?,
            messages,
            schema: parse(5, r.get("schema")?)?,
            created_at: r.get("created_at")?,
            waiter,
            interrupted: None,
        },
        owner_pid: r.get("owner_pid")?,
        owner_id: r.get("owner_id")?,
        answer: r.get("answer")?,
        call,
    })
}

/// Every stored prompt, oldest first.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<StoredPrompt>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM manual_prompts ORDER BY created_at, id"
    ))?;
    stmt.query_map([], row)?.collect()
}

/// Prompt `id`, if stored.
pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<StoredPrompt>> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM manual_prompts WHERE id = ?1"),
        [id],
        row,
    )
    .optional()
}

/// Stores the answer to prompt `id` for its waiter to take; false when the
/// prompt is gone or already has an answer.
pub fn set_answer(conn: &Connection, id: &str, text: &str, now: &str) -> rusqlite::Result<bool> {
    Ok(conn.execute(
        "UPDATE manual_prompts SET answer = ?2, answered_at = ?3 WHERE id = ?1 AND answer IS NULL",
        params![id, text, now],
    )? == 1)
}

/// Whether stored prompt `r` asks what `prompt` (made for the call `key`)
/// asks: a call that says which it is matches only that call, whatever
/// the wording; one that does not (a flow step) only an identical prompt
/// that did not either. A prompt stored before calls said (an older
/// Maskflow) is still taken by the identical prompt.
fn same_call(r: &StoredPrompt, prompt: &ManualPrompt, key: Option<&str>) -> bool {
    match (r.call.as_ref().map(|c| c.key.as_str()), key) {
        (Some(stored), Some(key)) => stored == key,
        (Some(_), None) => false,
        (None, _) => r.prompt.messages == prompt.messages && r.prompt.schema == prompt.schema,
    }
}

/// The stored prompts of `prompt`'s waiter and role (none without a
/// waiter), answered or not.
fn of_waiter(
    conn: &Connection,
    prompt: &ManualPrompt,
    answered: bool,
) -> rusqlite::Result<Vec<StoredPrompt>> {
    let Some(waiter) = &prompt.waiter else {
        return Ok(Vec::new());
    };
    let answer = if answered { "NOT NULL" } else { "NULL" };
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM manual_prompts
         WHERE waiter_key = ?1 AND role = ?2 AND answer IS {answer} ORDER BY created_at, id"
    ))?;
    stmt.query_map(params![waiter_key(waiter), prompt.role], row)?
        .collect()
}

/// Forgets the unanswered prompts another process left for the same
/// waiter, role and call as `prompt` (the work asks the same again, so
/// `prompt` replaces them); their ids.
pub fn drop_replaced(
    conn: &Connection,
    prompt: &ManualPrompt,
    key: Option<&str>,
    me: &LeaseOwner,
) -> rusqlite::Result<Vec<String>> {
    let mut dropped = Vec::new();
    for r in of_waiter(conn, prompt, false)? {
        if r.owner_id != me.id && same_call(&r, prompt, key) {
            delete(conn, &r.prompt.id)?;
            dropped.push(r.prompt.id);
        }
    }
    Ok(dropped)
}

/// Takes (and forgets) the stored answer to a prompt of the same waiter,
/// role and call as `prompt` (made for the call `key`).
pub fn take_answer(
    conn: &Connection,
    prompt: &ManualPrompt,
    key: Option<&str>,
) -> rusqlite::Result<Option<StoredAnswer>> {
    let found = of_waiter(conn, prompt, true)?
        .into_iter()
        .find(|r| same_call(r, prompt, key));
    let Some(found) = found else {
        return Ok(None);
    };
    delete(conn, &found.prompt.id)?;
    Ok(found.answer.map(|text| StoredAnswer {
        id: found.prompt.id,
        text,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_llm::{ChatMessage, ChatRole};

    fn prompt(id: &str, waiter: Option<ManualWaiter>, text: &str) -> ManualPrompt {
        ManualPrompt {
            id: id.into(),
            role: "agent:writer".into(),
            workflow_id: None,
            messages: vec![ChatMessage::new(ChatRole::User, text)],
            schema: Some(serde_json::json!({"type": "object"})),
            created_at: format!("2026-01-01T00:00:0{}Z", id.len() % 10),
            waiter,
            interrupted: None,
        }
    }

    fn owner() -> LeaseOwner {
        LeaseOwner {
            pid: 7,
            id: "proc_7".into(),
        }
    }

    #[test]
    fn a_stored_answer_is_taken_once_by_an_identical_prompt_of_the_same_waiter() {
        let conn = crate::store::open_in_memory().expect("open");
        let run = ManualWaiter::FlowRun {
            run_id: "fr_1".into(),
        };
        let asked = prompt("mp_1", Some(run.clone()), "Draft it.");
        insert(&conn, &asked, None, &owner()).expect("insert");
        insert(&conn, &prompt("mp_22", None, "Hi"), None, &owner()).expect("insert");
        let listed = list(&conn).expect("list");
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].prompt, asked, "read back as written");
        assert_eq!(listed[0].owner_pid, 7);

        // No answer yet: nothing to take.
        assert_eq!(take_answer(&conn, &asked, None).expect("take"), None);
        assert!(set_answer(&conn, "mp_1", "the draft", "now").expect("answer"));
        assert!(
            !set_answer(&conn, "mp_1", "again", "now").expect("answer"),
            "answered once"
        );
        assert!(!set_answer(&conn, "mp_404", "x", "now").expect("answer"));

        // Another waiter, or other messages, do not take it.
        let other_run = ManualWaiter::FlowRun {
            run_id: "fr_2".into(),
        };
        let elsewhere = prompt("mp_3", Some(other_run.clone()), "Draft it.");
        assert_eq!(take_answer(&conn, &elsewhere, None).expect("take"), None);
        let changed = prompt("mp_4", Some(run.clone()), "Draft something else.");
        assert_eq!(take_answer(&conn, &changed, None).expect("take"), None);
        let no_waiter = prompt("mp_5", None, "Draft it.");
        assert_eq!(take_answer(&conn, &no_waiter, None).expect("take"), None);

        // The same call again takes it, once.
        let again = prompt("mp_6", Some(run.clone()), "Draft it.");
        let got = take_answer(&conn, &again, None).expect("take");
        assert_eq!(
            got,
            Some(StoredAnswer {
                id: "mp_1".into(),
                text: "the draft".into()
            })
        );
        assert_eq!(take_answer(&conn, &again, None).expect("take"), None);
        assert!(get(&conn, "mp_1").expect("get").is_none());

        // The same question asked again by a later process replaces the
        // unanswered prompt an earlier one left.
        insert(
            &conn,
            &prompt("mp_8", Some(run.clone()), "Draft it."),
            None,
            &owner(),
        )
        .expect("insert");
        let me = LeaseOwner {
            pid: 8,
            id: "proc_8".into(),
        };
        let asked_again = prompt("mp_9", Some(run.clone()), "Draft it.");
        assert_eq!(
            drop_replaced(&conn, &changed, None, &me).expect("drop"),
            Vec::<String>::new()
        );
        assert_eq!(
            drop_replaced(&conn, &asked_again, None, &owner()).expect("drop"),
            Vec::<String>::new(),
            "a process does not replace its own"
        );
        assert_eq!(
            drop_replaced(&conn, &asked_again, None, &me).expect("drop"),
            vec!["mp_8".to_owned()]
        );

        // Ended work forgets its prompts; others stay.
        insert(
            &conn,
            &prompt("mp_7", Some(other_run.clone()), "x"),
            None,
            &owner(),
        )
        .expect("insert");
        assert_eq!(delete_for(&conn, &other_run).expect("delete"), 1);
        assert_eq!(list(&conn).expect("list").len(), 1);
        assert!(delete(&conn, "mp_22").expect("delete"));
        assert!(!delete(&conn, "mp_22").expect("delete"));
    }

    fn tag(key: &str, content: Option<&str>) -> CallTag {
        CallTag {
            key: key.into(),
            turn: content.map(|c| serde_json::json!({"content": c, "stored": false})),
        }
    }

    #[test]
    fn a_keyed_answer_goes_to_the_same_call_only_whatever_its_wording() {
        let conn = crate::store::open_in_memory().expect("open");
        let build = ManualWaiter::Build {
            workflow_id: "wf_1".into(),
            version_id: "wv_1".into(),
        };
        let mut asked = prompt("mp_1", Some(build.clone()), "Is this feasible? rules v1");
        asked.role = "validator".into();
        let call = tag("validator:aaa", Some("Sum the amounts"));
        insert(&conn, &asked, Some(&call), &owner()).expect("insert");
        let stored = get(&conn, "mp_1").expect("get").expect("row");
        assert_eq!(
            stored.call,
            Some(call.clone()),
            "the call and its turn read back"
        );
        assert!(set_answer(&conn, "mp_1", r#"{"feasible": true}"#, "now").expect("answer"));

        // Asked again with other wording (edited house rules): the same call.
        let mut again = prompt("mp_2", Some(build.clone()), "Is this feasible? rules v2");
        again.role = "validator".into();
        // Never to another call, another role or a call that does not say,
        // even with the identical text.
        assert_eq!(
            take_answer(&conn, &again, Some("validator:bbb")).expect("take"),
            None
        );
        let mut clarifier = again.clone();
        clarifier.role = "clarifier".into();
        assert_eq!(
            take_answer(&conn, &clarifier, Some("validator:aaa")).expect("take"),
            None
        );
        let mut same_text = asked.clone();
        same_text.id = "mp_3".into();
        assert_eq!(take_answer(&conn, &same_text, None).expect("take"), None);
        let other_build = ManualWaiter::Build {
            workflow_id: "wf_1".into(),
            version_id: "wv_2".into(),
        };
        let mut elsewhere = again.clone();
        elsewhere.waiter = Some(other_build);
        assert_eq!(
            take_answer(&conn, &elsewhere, Some("validator:aaa")).expect("take"),
            None
        );
        let got = take_answer(&conn, &again, Some("validator:aaa")).expect("take");
        assert_eq!(got.map(|a| a.id), Some("mp_1".to_owned()));
        assert!(list(&conn).expect("list").is_empty(), "taken once");

        // Stored by an older Maskflow (no call): the identical prompt only.
        insert(&conn, &asked, None, &owner()).expect("insert");
        assert!(set_answer(&conn, "mp_1", "old", "now").expect("answer"));
        assert_eq!(
            take_answer(&conn, &again, Some("validator:aaa")).expect("take"),
            None
        );
        let got = take_answer(&conn, &same_text, Some("validator:aaa")).expect("take");
        assert_eq!(got.map(|a| a.text), Some("old".to_owned()));

        // An unanswered prompt is replaced only by the same call.
        insert(&conn, &asked, Some(&call), &owner()).expect("insert");
        let me = LeaseOwner {
            pid: 8,
            id: "proc_8".into(),
        };
        assert_eq!(
            drop_replaced(&conn, &again, Some("validator:bbb"), &me).expect("drop"),
            Vec::<String>::new()
        );
        assert_eq!(
            drop_replaced(&conn, &same_text, None, &me).expect("drop"),
            Vec::<String>::new(),
            "identical text of a call that does not say is another call"
        );
        assert_eq!(
            drop_replaced(&conn, &again, Some("validator:aaa"), &me).expect("drop"),
            vec!["mp_1".to_owned()]
        );
    }
}
