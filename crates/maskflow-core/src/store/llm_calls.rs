//! Rows of `llm_calls`, the egress ledger ([`maskflow_privacy::ledger`]):
//! appending a call before it is sent, completing it, listing and searching
//! the rows, and the token totals. Created by migration 2 and extended by
//! later ones ([`crate::store::schema`]).

use rusqlite::{Connection, Row, params};

use maskflow_privacy::ledger::{CallOutcome, LedgerEntry, Usage, UsageRow};

/// Migration (V5, issue #13): the ledger is written ahead. A call's row is
/// inserted before its request is sent (outcome `cancelled` until it ends)
/// and completed after; `completed_at` stays NULL for a call that was
/// dropped or whose process died while it was in flight. The table itself
/// is created by [`crate::store::schema::V2`].
pub const WRITE_AHEAD_MIGRATION: &str = "ALTER TABLE llm_calls ADD COLUMN completed_at TEXT;";

/// Migration (issue 18): the privacy ledger outlives a deleted workflow;
/// its rows keep the workflow's name here.
pub const DELETED_WORKFLOW_MIGRATION: &str =
    "ALTER TABLE llm_calls ADD COLUMN deleted_workflow TEXT;";

/// Migration (issue 26, branch wt-flows — renumber when merged beside
/// another): a flow agent's call records its flow run and step, as a
/// build's records its workflow.
pub const FLOW_STEP_MIGRATION: &str = "ALTER TABLE llm_calls ADD COLUMN flow_run_id TEXT;
ALTER TABLE llm_calls ADD COLUMN flow_step TEXT;";

const COLS: &str = "id, created_at, role, provider, model, workflow_id, url, request_body, reply, \
input_tokens, output_tokens, latency_ms, outcome, blocked, error, flow_run_id, flow_step, local, note";

/// Migration (issue 32): a call to the embedded model is marked local
/// (nothing left the machine); every earlier row went out, or was stopped.
pub const LOCAL_MIGRATION: &str =
    "ALTER TABLE llm_calls ADD COLUMN local INTEGER NOT NULL DEFAULT 0;";

/// Migration (issue 38): what the guard noted of a request it sent (values
/// of the user's files in their words that identify no one).
pub const NOTE_MIGRATION: &str = "ALTER TABLE llm_calls ADD COLUMN note TEXT;";

fn from_row(r: &Row<'_>) -> rusqlite::Result<LedgerEntry> {
    Ok(LedgerEntry {
        id: r.get(0)?,
        created_at: r.get(1)?,
        role: r.get(2)?,
        provider: r.get(3)?,
        model: r.get(4)?,
        workflow_id: r.get(5)?,
        url: r.get(6)?,
        request_body: r.get(7)?,
        reply: r.get(8)?,
        input_tokens: r.get(9)?,
        output_tokens: r.get(10)?,
        latency_ms: r.get(11)?,
        outcome: outcome(r, 12)?,
        blocked: r.get(13)?,
        error: r.get(14)?,
        flow_run_id: r.get(15)?,
        flow_step: r.get(16)?,
        local: r.get(17)?,
        note: r.get(18)?,
        deleted_workflow: r.get(19)?,
    })
}

/// The outcome in column `i`; the schema's CHECK keeps it one of the stored words.
fn outcome(r: &Row<'_>, i: usize) -> rusqlite::Result<CallOutcome> {
    let word: String = r.get(i)?;
    CallOutcome::parse(&word).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("unknown ledger outcome {word:?}").into(),
        )
    })
}

/// Appends an entry.
pub fn insert(conn: &Connection, e: &LedgerEntry) -> rusqlite::Result<()> {
    conn.execute(
        &format!("INSERT INTO llm_calls ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"),
        params![
            e.id, e.created_at, e.role, e.provider, e.model, e.workflow_id, e.url, e.request_body,
            e.reply, e.input_tokens, e.output_tokens, e.latency_ms, e.outcome.as_str(), e.blocked, e.error,
            e.flow_run_id, e.flow_step, e.local, e.note
        ],
    )?;
    Ok(())
}

/// Completes the row of an in-flight call (written by [`insert`] before it
/// was sent) with how it ended; inserts it when there is no such row.
pub fn complete(conn: &Connection, e: &LedgerEntry, completed_at: &str) -> rusqlite::Result<()> {
    let n = conn.execute(
        "UPDATE llm_calls SET url = ?2, request_body = ?3, reply = ?4, input_tokens = ?5,
             output_tokens = ?6, latency_ms = ?7, outcome = ?8, error = ?9, completed_at = ?10
         WHERE id = ?1",
        params![
            e.id,
            e.url,
            e.request_body,
            e.reply,
            e.input_tokens,
            e.output_tokens,
            e.latency_ms,
            e.outcome.as_str(),
            e.error,
            completed_at
        ],
    )?;
    if n == 0 {
        insert(conn, e)?;
        conn.execute(
            "UPDATE llm_calls SET completed_at = ?2 WHERE id = ?1",
            params![e.id, completed_at],
        )?;
    }
    Ok(())
}

/// Entries newest first; `q` keeps those whose body, reply, role, provider,
/// model, workflow, flow run or step, or error contains it.
pub fn list(
    conn: &Connection,
    q: Option<&str>,
    limit: u32,
    offset: u32,
) -> rusqlite::Result<Vec<LedgerEntry>> {
    let pattern = q.filter(|q| !q.is_empty()).map(|q| {
        let escaped = q
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        format!("%{escaped}%")
    });
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLS}, deleted_workflow FROM llm_calls
         WHERE ?1 IS NULL OR request_body LIKE ?1 ESCAPE '\\' OR reply LIKE ?1 ESCAPE '\\'
            OR deleted_workflow LIKE ?1 ESCAPE '\\'
            OR role LIKE ?1 ESCAPE '\\' OR provider LIKE ?1 ESCAPE '\\' OR model LIKE ?1 ESCAPE '\\'
            OR workflow_id LIKE ?1 ESCAPE '\\' OR error LIKE ?1 ESCAPE '\\'
            OR flow_run_id LIKE ?1 ESCAPE '\\' OR flow_step LIKE ?1 ESCAPE '\\'
         ORDER BY id DESC LIMIT ?2 OFFSET ?3"
    ))?;
    stmt.query_map(params![pattern, limit, offset], from_row)?
        .collect()
}

const SUMS: &str = "COUNT(*), COALESCE(SUM(c.input_tokens), 0), COALESCE(SUM(c.output_tokens), 0), \
SUM(CASE WHEN c.input_tokens IS NULL AND c.output_tokens IS NULL THEN 1 ELSE 0 END)";

fn usage_row(r: &Row<'_>) -> rusqlite::Result<UsageRow> {
    Ok(UsageRow {
        key: r.get(0)?,
        name: r.get(1)?,
        calls: r.get(2)?,
        input_tokens: r.get(3)?,
        output_tokens: r.get(4)?,
        unreported: r.get::<_, Option<i64>>(5)?.unwrap_or(0),
    })
}

/// The token totals of the whole ledger.
pub fn usage(conn: &Connection) -> rusqlite::Result<Usage> {
    let total = conn.query_row(
        &format!("SELECT 'all', NULL, {SUMS} FROM llm_calls c"),
        [],
        usage_row,
    )?;
    let group = |sql: &str| -> rusqlite::Result<Vec<UsageRow>> {
        let mut stmt = conn.prepare(sql)?;
        stmt.query_map([], usage_row)?.collect()
    };
    let by_role = group(&format!(
        "SELECT c.role, NULL, {SUMS} FROM llm_calls c GROUP BY c.role
         ORDER BY COALESCE(SUM(c.input_tokens), 0) + COALESCE(SUM(c.output_tokens), 0) DESC, c.role"
    ))?;
    let by_workflow = group(&format!(
        "SELECT c.workflow_id, w.name, {SUMS} FROM llm_calls c
         LEFT JOIN workflows w ON w.id = c.workflow_id
         WHERE c.workflow_id IS NOT NULL GROUP BY c.workflow_id
         ORDER BY COALESCE(SUM(c.input_tokens), 0) + COALESCE(SUM(c.output_tokens), 0) DESC, c.workflow_id"
    ))?;
    Ok(Usage {
        total,
        by_role,
        by_workflow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_privacy::ledger::IN_FLIGHT;

    fn entry(id: &str, body: &str) -> LedgerEntry {
        LedgerEntry {
            id: id.into(),
            created_at: "2024-01-01T00:00:00.000Z".into(),
            role: "validator".into(),
            provider: "openai".into(),
            model: "m".into(),
            workflow_id: None,
            url: Some("http://x/v1/chat/completions".into()),
            request_body: body.into(),
            reply: Some("{}".into()),
            input_tokens: Some(3),
            output_tokens: None,
            latency_ms: 5,
            outcome: CallOutcome::Ok,
            blocked: false,
            error: None,
            deleted_workflow: None,
            flow_run_id: None,
            flow_step: None,
            local: false,
            note: None,
        }
    }

    #[test]
    fn a_call_to_the_embedded_model_stays_marked_local() {
        let conn = crate::store::open_in_memory().expect("db");
        let mut local = entry("call_01", "masked prompt");
        local.provider = "local".into();
        local.url = None;
        local.local = true;
        insert(&conn, &local).expect("insert");
        insert(&conn, &entry("call_02", "other")).expect("insert");
        let rows = list(&conn, None, 10, 0).expect("list");
        let flags: Vec<(String, bool)> = rows.into_iter().map(|e| (e.id, e.local)).collect();
        assert_eq!(
            flags,
            vec![("call_02".into(), false), ("call_01".into(), true)]
        );
    }

    #[test]
    fn a_flow_agents_row_keeps_its_run_and_step_and_is_found_by_them() {
        let conn = crate::store::open_in_memory().expect("db");
        let mut flow = entry("call_01", "masked prompt");
        flow.role = "agent:critic".into();
        flow.flow_run_id = Some("flow_01".into());
        flow.flow_step = Some("summarize [1]".into());
        insert(&conn, &flow).expect("insert");
        insert(&conn, &entry("call_02", "other")).expect("insert");
        let found = list(&conn, Some("flow_01"), 10, 0).expect("list");
        assert_eq!(found, vec![flow.clone()]);
        let found = list(&conn, Some("summarize"), 10, 0).expect("list");
        assert_eq!(found, vec![flow]);
    }

    #[test]
    fn entries_are_listed_newest_first_and_searched() {
        let conn = crate::store::open_in_memory().expect("db");
        insert(&conn, &entry("call_01", "hello 100%")).expect("insert");
        insert(&conn, &entry("call_02", "world")).expect("insert");
        let all = list(&conn, None, 10, 0).expect("list");
        assert_eq!(
            all.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
            ["call_02", "call_01"]
        );
        assert_eq!(all[1], entry("call_01", "hello 100%"));
        assert_eq!(list(&conn, Some("100%"), 10, 0).expect("q").len(), 1);
        assert_eq!(list(&conn, Some("%"), 10, 0).expect("q").len(), 1);
        assert_eq!(list(&conn, None, 1, 1).expect("page")[0].id, "call_01");
        let mut bad = entry("call_03", "");
        bad.outcome = CallOutcome::InFlight;
        assert!(
            insert(&conn, &bad).is_err(),
            "in_flight is only listed, never stored: the schema refuses it"
        );
    }

    #[test]
    fn an_in_flight_row_is_completed_in_place() {
        let conn = crate::store::open_in_memory().expect("db");
        let mut e = entry("call_09", "{\"messages\":[]}");
        e.outcome = CallOutcome::Cancelled;
        e.error = Some(IN_FLIGHT.into());
        e.reply = None;
        insert(&conn, &e).expect("written ahead");
        let pending: Option<String> = conn
            .query_row(
                "SELECT completed_at FROM llm_calls WHERE id = 'call_09'",
                [],
                |r| r.get(0),
            )
            .expect("row");
        assert_eq!(pending, None);
        e.outcome = CallOutcome::Ok;
        e.error = None;
        e.reply = Some("done".into());
        complete(&conn, &e, "2024-01-01T00:00:01.000Z").expect("completed");
        let all = list(&conn, None, 10, 0).expect("list");
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].outcome, CallOutcome::Ok);
        assert_eq!(all[0].reply.as_deref(), Some("done"));
    }

    #[test]
    fn usage_is_summed_per_role_and_per_workflow() {
        let conn = crate::store::open_in_memory().expect("db");
        let mut a = entry("call_01", "a");
        a.workflow_id = Some("wf_1".into());
        a.output_tokens = Some(10);
        let mut b = entry("call_02", "b");
        b.role = "builder".into();
        b.workflow_id = Some("wf_1".into());
        b.input_tokens = Some(100);
        b.output_tokens = Some(400);
        let mut c = entry("call_03", "c");
        c.role = "agent:critic".into();
        c.input_tokens = None;
        for e in [&a, &b, &c] {
            insert(&conn, e).expect("insert");
        }
        let u = usage(&conn).expect("usage");
        assert_eq!(
            (
                u.total.calls,
                u.total.input_tokens,
                u.total.output_tokens,
                u.total.unreported
            ),
            (3, 103, 410, 1)
        );
        let roles: Vec<(&str, i64, i64)> = u
            .by_role
            .iter()
            .map(|r| (r.key.as_str(), r.input_tokens, r.output_tokens))
            .collect();
        assert_eq!(
            roles,
            [
                ("builder", 100, 400),
                ("validator", 3, 10),
                ("agent:critic", 0, 0)
            ]
        );
        assert_eq!(u.by_workflow.len(), 1);
        assert_eq!(
            (
                u.by_workflow[0].key.as_str(),
                u.by_workflow[0].calls,
                u.by_workflow[0].input_tokens
            ),
            ("wf_1", 2, 103)
        );
    }
}
