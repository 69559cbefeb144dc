//! The checkpoint-store contract: what every [`FlowStorage`] must give the
//! flows' tables, checked through the public store API — put (a step
//! committed), get (a run's state, any kept checkpoint's state), list (a
//! run's checkpoints, oldest first) and prune (the retention policy of
//! [`crate::checkpoint`]) — plus the leases the engine takes. One suite that
//! every store implementation passes, as LangGraph's checkpointers do: this
//! crate's [`super::LocalStorage`] and the app's store both call it.

use std::path::Path;

use rusqlite::Connection;
use serde_json::json;

use crate::FlowStorage;
use crate::checkpoint::{Chain, CheckpointPolicy};
use crate::state::{FORMAT, RunState, RunStatus};
use crate::store::{self, RunRow, StepCommit, TurnRow};
use crate::turn::{StepMeta, TurnRole};

/// The run the contract writes most of its steps to.
const RUN: &str = "flow_contract_main";
/// A second run beside it, which the first one's writes must not touch.
const OTHER: &str = "flow_contract_other";
/// The run pruned by a retention policy.
const PRUNED: &str = "flow_contract_pruned";

/// Runs the whole contract against `storage`, in the data folder `home`
/// (empty, or at least without the contract's runs). Panics, naming the
/// broken clause, when the store breaks one.
pub fn checkpoint_contract(storage: &dyn FlowStorage, home: &Path) {
    let mut conn = storage
        .open(home, "contract")
        .expect("open: a fresh data folder opens");
    let ids = put_and_get(storage, home, &mut conn);
    list(&mut conn, &ids);
    prune(&mut conn);
    leases(storage, &conn);
}

/// A new running run's row.
fn row(id: &str) -> RunRow {
    RunRow {
        id: id.into(),
        flow_name: "contract".into(),
        title: "Flow: contract".into(),
        status: RunStatus::Running,
        definition: json!({"steps": []}),
        state: RunState::default(),
        pending: None,
        error: None,
        working_folder: None,
        archived: false,
        stop_requested: false,
        parent_id: None,
        depth: 0,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
    }
}

/// The state after step `n`: a large input every step carries (so a step's
/// change is small beside it) and one output more per step.
fn state(n: usize) -> RunState {
    let mut s = RunState {
        format: FORMAT,
        cursor: Some(n + 1),
        step_path: vec![n],
        ..RunState::default()
    };
    s.input.insert("document".into(), json!("y".repeat(2000)));
    for i in 1..=n {
        s.steps.insert(format!("step{i}"), json!({"n": i}));
    }
    s.output = json!({"n": n});
    s
}

/// Commits step `n` of `run` with `status` under `policy`, with one
/// transcript turn; returns the checkpoint's id.
fn put(
    conn: &mut Connection,
    run: &str,
    n: usize,
    status: RunStatus,
    chain: &mut Chain,
    policy: &CheckpointPolicy,
) -> i64 {
    let turns = [TurnRow {
        role: TurnRole::Assistant,
        content: format!("step {n}"),
        command: StepMeta::flow(),
    }];
    let st = state(n);
    let commit = StepCommit {
        run_id: run,
        status,
        state: &st,
        pending: None,
        error: None,
        turns: &turns,
        agent_messages: &[],
        now: "2026-01-01T00:00:01Z",
    };
    let turn_ids = store::commit_step_with(conn, &commit, chain, policy)
        .unwrap_or_else(|e| panic!("put: step {n} of {run} commits: {e}"));
    assert_eq!(turn_ids.len(), 1, "put: a committed turn has an id");
    chain.last_id
}

/// Keeps every checkpoint.
fn keep_all() -> CheckpointPolicy {
    CheckpointPolicy {
        keep_full_snapshots: 0,
        ..CheckpointPolicy::default()
    }
}

/// Put three steps, then get them back, from another connection too.
fn put_and_get(storage: &dyn FlowStorage, home: &Path, conn: &mut Connection) -> Vec<i64> {
    store::insert_run(conn, &row(RUN), storage.account()).expect("put: a run is inserted");
    let mut chain = Chain::default();
    let ids: Vec<i64> = (1..=3)
        .map(|n| put(conn, RUN, n, RunStatus::Running, &mut chain, &keep_all()))
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "put: checkpoint ids are monotonic: {ids:?}"
    );
    // Another connection (a reopened store) sees what was committed.
    let reader = storage
        .open(home, "contract")
        .expect("open: an existing store reopens");
    let run = store::get_run(&reader, RUN)
        .expect("get: reads")
        .expect("get: the run is there");
    assert_eq!(
        run.status,
        RunStatus::Running,
        "get: the last step's status"
    );
    assert_eq!(run.state, state(3), "get: the last step's state");
    for (n, id) in (1..=3).zip(&ids) {
        assert_eq!(
            store::checkpoint_state(&reader, RUN, *id).expect("get: reads"),
            Some(state(n)),
            "get: checkpoint {id} holds step {n}'s state"
        );
    }
    assert_eq!(
        store::checkpoint_state(&reader, RUN, ids[2] + 1_000).expect("get: reads"),
        None,
        "get: a checkpoint never written"
    );
    assert_eq!(
        store::get_run(&reader, "flow_contract_missing").expect("get: reads"),
        None,
        "get: a run never written"
    );
    let turns: Vec<String> = store::turns_of(&reader, RUN)
        .expect("get: turns read")
        .into_iter()
        .map(|t| t.content)
        .collect();
    assert_eq!(turns, ["step 1", "step 2", "step 3"], "get: the transcript");
    ids
}

/// The run's checkpoints listed, oldest first, and no other run's.
fn list(conn: &mut Connection, ids: &[i64]) {
    store::insert_run(conn, &row(OTHER), "local").expect("put: a second run is inserted");
    let other = put(
        conn,
        OTHER,
        1,
        RunStatus::Running,
        &mut Chain::default(),
        &keep_all(),
    );
    let listed = store::checkpoints_of(conn, RUN).expect("list: reads");
    let listed_ids: Vec<i64> = listed.iter().map(|c| c.id).collect();
    assert_eq!(listed_ids, ids, "list: the run's checkpoints, oldest first");
    for (n, c) in (1..).zip(&listed) {
        assert_eq!(c.format, FORMAT, "list: checkpoint {} is versioned", c.id);
        assert_eq!(c.status, "running", "list: checkpoint {}'s status", c.id);
        assert_eq!(c.step_path, [n], "list: checkpoint {}'s step", c.id);
    }
    let kinds: Vec<&str> = listed.iter().map(|c| c.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["full", "delta", "delta"],
        "list: a chain starts full and goes on in deltas"
    );
    let others: Vec<i64> = store::checkpoints_of(conn, OTHER)
        .expect("list: reads")
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(others, [other], "list: only the run's own checkpoints");
    assert_eq!(
        store::checkpoint_stats(conn, RUN).expect("list: counts"),
        (3, ids.last().copied()),
        "list: the count and the newest id"
    );
}

/// A run in progress keeps its last `keep_full_snapshots` full checkpoints;
/// a finished one keeps its final state only; other runs keep theirs.
fn prune(conn: &mut Connection) {
    store::insert_run(conn, &row(PRUNED), "local").expect("put: a third run is inserted");
    // Every checkpoint a full one, two of them kept.
    let policy = CheckpointPolicy {
        full_every: 0,
        keep_full_snapshots: 2,
    };
    let mut chain = Chain::default();
    let ids: Vec<i64> = (1..=5)
        .map(|n| put(conn, PRUNED, n, RunStatus::Running, &mut chain, &policy))
        .collect();
    let kept: Vec<i64> = store::checkpoints_of(conn, PRUNED)
        .expect("prune: lists")
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(kept, ids[3..], "prune: the last two full checkpoints kept");
    assert_eq!(
        store::checkpoint_state(conn, PRUNED, ids[0]).expect("prune: reads"),
        None,
        "prune: a pruned checkpoint is gone"
    );
    assert_eq!(
        store::checkpoint_state(conn, PRUNED, ids[4]).expect("prune: reads"),
        Some(state(5)),
        "prune: the newest checkpoint still reads"
    );
    let last = put(conn, PRUNED, 6, RunStatus::Completed, &mut chain, &policy);
    let kept: Vec<i64> = store::checkpoints_of(conn, PRUNED)
        .expect("prune: lists")
        .iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(
        kept,
        [last],
        "prune: a finished run keeps its final state only"
    );
    let run = store::get_run(conn, PRUNED)
        .expect("prune: reads")
        .expect("prune: the run is there");
    assert_eq!(run.status, RunStatus::Completed, "prune: the final status");
    assert_eq!(run.state, state(6), "prune: the final state");
    assert_eq!(
        store::checkpoints_of(conn, RUN)
            .expect("prune: lists")
            .len(),
        3,
        "prune: another run's checkpoints are not touched"
    );
}

/// The engine's leases: taken, taken again by their holder, renewed, given up.
fn leases(storage: &dyn FlowStorage, conn: &Connection) {
    assert!(storage.lease_ttl_ms() > 0, "lease: a positive lifetime");
    assert!(!storage.account().is_empty(), "an account for new runs");
    let resource = "flow_run:flow_contract_main";
    let now = 1_700_000_000_000;
    storage
        .acquire_lease(conn, resource, now)
        .expect("lease: a free resource is taken");
    storage
        .acquire_lease(conn, resource, now + 1)
        .expect("lease: its holder takes it again");
    storage
        .renew_lease(conn, resource, now + 2)
        .expect("lease: its holder renews it");
    storage
        .release_lease(conn, resource)
        .expect("lease: its holder gives it up");
    storage
        .acquire_lease(conn, resource, now + 3)
        .expect("lease: a released resource is taken again");
    storage
        .release_lease(conn, resource)
        .expect("lease: given up again");
}
