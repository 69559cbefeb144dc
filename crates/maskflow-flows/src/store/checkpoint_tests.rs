//! Checkpoints written as deltas: every kept checkpoint reads back as the
//! state committed, pruning keeps the final state, and a fan-out's
//! checkpoints grow with its items, not with their square.

use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::state::{ForeachProgress, ItemResult, PendingRetry};

fn open() -> Connection {
    let conn = Connection::open_in_memory().expect("db");
    conn.execute_batch("PRAGMA foreign_keys = ON;")
        .expect("pragma");
    conn.execute_batch(MIGRATION).expect("migration");
    conn.execute_batch(DELTA_MIGRATION)
        .expect("delta migration");
    conn
}

fn new_run(conn: &Connection, id: &str) {
    insert_run(conn, &test_row(id), "local").expect("insert");
}

/// Commits `state` as a step of run `id` with `status`; returns the checkpoint's id.
fn step(
    conn: &mut Connection,
    id: &str,
    status: RunStatus,
    state: &RunState,
    chain: &mut Chain,
    policy: &CheckpointPolicy,
) -> i64 {
    let commit = StepCommit {
        run_id: id,
        status,
        state,
        pending: None,
        error: None,
        turns: &[],
        agent_messages: &[],
        now: "t",
    };
    commit_step_with(conn, &commit, chain, policy).expect("commit");
    chain.last_id
}

fn kinds(conn: &Connection, id: &str) -> Vec<String> {
    conn.prepare("SELECT kind FROM flow_checkpoints WHERE run_id = ?1 ORDER BY id")
        .expect("prepare")
        .query_map([id], |r| r.get(0))
        .expect("query")
        .collect::<rusqlite::Result<_>>()
        .expect("rows")
}

fn stored_bytes(conn: &Connection, id: &str) -> i64 {
    conn.query_row(
        "SELECT COALESCE(SUM(length(state)), 0) FROM flow_checkpoints WHERE run_id = ?1",
        [id],
        |r| r.get(0),
    )
    .expect("bytes")
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z =]{0,8}".prop_map(Value::String),
    ]
}

fn arb_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One change a step makes to the state.
fn mutate(st: &mut RunState, op: u8, v: Value) {
    st.steps_done += 1;
    match op % 8 {
        0 => st.output = v,
        1 => {
            let key = format!("s{}", st.steps_done % 5);
            st.steps.insert(key, v);
        }
        2 => {
            let key = format!("s{}", st.steps_done % 5);
            st.steps.remove(&key);
        }
        3 => st.step_path = vec![op as usize % 3; (op as usize) % 4],
        4 => {
            let fe = st.foreach.get_or_insert(ForeachProgress {
                node: 1,
                total: 50,
                results: Default::default(),
                started_ms: None,
                timed_out: Vec::new(),
            });
            let i = fe.results.len();
            fe.results.insert(
                i,
                ItemResult {
                    ok: v.is_object(),
                    // `Some(null)` reads back as `None` in any stored state.
                    output: (!v.is_null()).then_some(v),
                    error: None,
                    // Retries change between checkpoints too.
                    retry_count: u32::try_from(i % 3).unwrap_or(0),
                    retry: None,
                },
            );
        }
        5 => st.foreach = None,
        6 => {
            st.pending_retry = match st.pending_retry {
                Some(_) => None,
                None => Some(PendingRetry {
                    node: 2,
                    error: v.to_string(),
                    attempt: 1,
                }),
            }
        }
        _ => {
            st.gate = (!v.is_null()).then_some(v);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random sequences of states: every checkpoint reads back as the state
    /// it was written for, and the run reads as the last one.
    #[test]
    fn every_checkpoint_rebuilds_the_state_it_was_written_for(
        ops in prop::collection::vec((any::<u8>(), arb_value()), 1..40),
        full_every in 1u32..8,
    ) {
        let mut conn = open();
        new_run(&conn, "flow_p");
        let policy = CheckpointPolicy { full_every, keep_full_snapshots: 0 };
        let mut chain = Chain::default();
        let mut st = RunState::default();
        let mut written = Vec::new();
        for (op, v) in ops {
            mutate(&mut st, op, v);
            let id = step(&mut conn, "flow_p", RunStatus::Running, &st, &mut chain, &policy);
            written.push((id, st.clone()));
        }
        for (id, want) in &written {
            let got = checkpoint_state(&conn, "flow_p", *id).expect("read");
            prop_assert_eq!(got.as_ref(), Some(want));
        }
        let run = get_run(&conn, "flow_p").expect("get").expect("row");
        prop_assert_eq!(&run.state, &st);
        prop_assert_eq!(&runs_of(&conn, "f").expect("list")[0].state, &st);
    }
}

#[test]
fn a_finished_run_keeps_only_its_final_state_and_a_running_one_two_snapshots() {
    let mut conn = open();
    new_run(&conn, "flow_f");
    let policy = CheckpointPolicy {
        full_every: 4,
        keep_full_snapshots: 2,
    };
    let mut chain = Chain::default();
    let mut st = RunState::default();
    for i in 0..30u8 {
        mutate(
            &mut st,
            4,
            json!({"item": i, "summary": "reviewed, nothing to change"}),
        );
        step(
            &mut conn,
            "flow_f",
            RunStatus::Running,
            &st,
            &mut chain,
            &policy,
        );
    }
    let kept = kinds(&conn, "flow_f");
    assert!(kept.len() < 30, "pruned while running: {kept:?}");
    assert_eq!(kept.iter().filter(|k| *k == "full").count(), 2, "{kept:?}");
    assert_eq!(kept[0], "full");
    assert_eq!(
        get_run(&conn, "flow_f").expect("get").expect("row").state,
        st
    );

    // A resume (a commit without the chain) starts with a full snapshot.
    mutate(&mut st, 0, json!("resumed"));
    commit_step(
        &mut conn,
        &StepCommit {
            run_id: "flow_f",
            status: RunStatus::Running,
            state: &st,
            pending: None,
            error: None,
            turns: &[],
            agent_messages: &[],
            now: "t",
        },
    )
    .expect("resume");
    assert_eq!(
        kinds(&conn, "flow_f").last().map(String::as_str),
        Some("full")
    );
    // The engine's stale chain notices and writes a full one too.
    mutate(&mut st, 0, json!("next"));
    step(
        &mut conn,
        "flow_f",
        RunStatus::Running,
        &st,
        &mut chain,
        &policy,
    );
    assert_eq!(
        kinds(&conn, "flow_f").last().map(String::as_str),
        Some("full")
    );

    mutate(&mut st, 0, json!("done"));
    let last = step(
        &mut conn,
        "flow_f",
        RunStatus::Completed,
        &st,
        &mut chain,
        &policy,
    );
    assert_eq!(kinds(&conn, "flow_f"), ["full"]);
    assert_eq!(
        checkpoint_state(&conn, "flow_f", last).expect("read"),
        Some(st.clone())
    );
    let run = get_run(&conn, "flow_f").expect("get").expect("row");
    assert_eq!((run.status, run.state), (RunStatus::Completed, st.clone()));

    // keep_full_snapshots = 0 keeps every checkpoint, finished or not.
    new_run(&conn, "flow_k");
    let keep_all = CheckpointPolicy {
        full_every: 4,
        keep_full_snapshots: 0,
    };
    let mut chain = Chain::default();
    for i in 0..10 {
        let status = if i == 9 {
            RunStatus::Completed
        } else {
            RunStatus::Running
        };
        step(&mut conn, "flow_k", status, &st, &mut chain, &keep_all);
    }
    assert_eq!(kinds(&conn, "flow_k").len(), 10);
}

/// A 1,000-item fan-out commits one step per item: its checkpoints add up
/// to a few times the final state, where full states would be ~500 times.
#[test]
fn a_1000_item_fan_out_stores_bytes_linear_in_its_items() {
    let fan_out = |n: usize, policy: CheckpointPolicy| {
        let mut conn = open();
        new_run(&conn, "flow_fan");
        let mut st = RunState::default();
        st.input.insert(
            "files".into(),
            json!(
                (0..n)
                    .map(|i| format!("file-{i:05}.txt"))
                    .collect::<Vec<_>>()
            ),
        );
        let mut chain = Chain::default();
        for i in 0..n {
            let fe = st.foreach.get_or_insert(ForeachProgress {
                node: 0,
                total: n,
                results: Default::default(),
                started_ms: None,
                timed_out: Vec::new(),
            });
            fe.results.insert(
                i,
                ItemResult {
                    ok: true,
                    output: Some(
                        json!({"ok": true, "n": i, "note": "reviewed, nothing to change"}),
                    ),
                    error: None,
                    retry_count: 0,
                    retry: None,
                },
            );
            st.steps_done += 1;
            step(
                &mut conn,
                "flow_fan",
                RunStatus::Running,
                &st,
                &mut chain,
                &policy,
            );
        }
        let final_bytes = serde_json::to_string(&st).expect("json").len() as i64;
        (stored_bytes(&conn, "flow_fan"), final_bytes)
    };
    let keep_all = CheckpointPolicy {
        full_every: CheckpointPolicy::default().full_every,
        keep_full_snapshots: 0,
    };
    let (bytes_1000, state_1000) = fan_out(1000, keep_all);
    assert!(
        bytes_1000 <= 5 * state_1000,
        "{bytes_1000} checkpoint bytes for a {state_1000}-byte final state"
    );
    // Linear: twice the items, about twice the bytes (a square would be 4×).
    let (bytes_500, _) = fan_out(500, keep_all);
    let ratio = bytes_1000 as f64 / bytes_500 as f64;
    assert!(
        ratio < 2.6,
        "1000 items: {bytes_1000} bytes, 500 items: {bytes_500}"
    );
    // The default policy prunes to two full snapshots and the deltas after them.
    let (pruned, state) = fan_out(1000, CheckpointPolicy::default());
    assert!(
        pruned <= 3 * state,
        "{pruned} bytes kept for a {state}-byte state"
    );
}

/// A damaged delta row is an error that says what does not fit, not a panic
/// and not a wrong state.
#[test]
fn a_damaged_delta_is_an_error_naming_the_problem() {
    let mut conn = open();
    new_run(&conn, "flow_d");
    let policy = CheckpointPolicy {
        full_every: 100,
        keep_full_snapshots: 0,
    };
    let mut chain = Chain::default();
    let mut st = RunState::default();
    st.input.insert("big".into(), json!("x".repeat(500)));
    for i in 0..3 {
        mutate(&mut st, 0, json!(i));
        step(
            &mut conn,
            "flow_d",
            RunStatus::Running,
            &st,
            &mut chain,
            &policy,
        );
    }
    assert_eq!(kinds(&conn, "flow_d"), ["full", "delta", "delta"]);
    conn.execute(
        r#"UPDATE flow_checkpoints SET state = '{"o":{"output":{"o":{"k":{"=":1}}}}}' WHERE id = (SELECT MAX(id) FROM flow_checkpoints)"#,
        [],
    )
    .expect("damage");
    let err = get_run(&conn, "flow_d").expect_err("a damaged delta");
    assert!(
        err.to_string().contains("checkpoint delta does not fit"),
        "{err}"
    );
}
