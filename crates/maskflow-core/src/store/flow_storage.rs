//! The flow engine's database port ([`FlowStorage`]) over this store.

use std::path::Path;

use rusqlite::Connection;

use super::{LOCAL_ACCOUNT, backups, leases};
use maskflow_flows::FlowStorage;
use maskflow_flows::error::Result;

/// The store as the flow engine's database: the leases of one owner (the
/// service's), the local account.
#[derive(Debug, Clone)]
pub struct StoreFlowStorage {
    owner: leases::LeaseOwner,
}

impl StoreFlowStorage {
    /// The store, its leases held by `owner`.
    pub fn new(owner: leases::LeaseOwner) -> Self {
        Self { owner }
    }
}

impl Default for StoreFlowStorage {
    /// The store, its leases held by a new owner in this process.
    fn default() -> Self {
        Self::new(leases::LeaseOwner::new_in_this_process())
    }
}

impl FlowStorage for StoreFlowStorage {
    fn open(&self, home: &Path, stamp: &str) -> Result<Connection> {
        Ok(super::open(home, stamp)?)
    }

    fn backup_before_run(
        &self,
        conn: &Connection,
        home: &Path,
        run_id: &str,
        now: &str,
    ) -> Result<()> {
        backups::take(conn, home, backups::Reason::PreFlowRun, Some(run_id), now)?;
        Ok(())
    }

    fn lease_ttl_ms(&self) -> i64 {
        leases::DEFAULT_TTL_MS
    }

    fn acquire_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()> {
        leases::acquire(conn, resource, &self.owner, now_ms, leases::DEFAULT_TTL_MS)?;
        Ok(())
    }

    fn renew_lease(&self, conn: &Connection, resource: &str, now_ms: i64) -> Result<()> {
        leases::heartbeat(conn, resource, &self.owner, now_ms, leases::DEFAULT_TTL_MS)?;
        Ok(())
    }

    fn release_lease(&self, conn: &Connection, resource: &str) -> Result<()> {
        Ok(leases::release(conn, resource, &self.owner)?)
    }

    fn account(&self) -> &str {
        LOCAL_ACCOUNT
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::events::EventBus;
    use maskflow_clock::{Clock, StepClock, UlidGen};
    use maskflow_flows::checkpoint::CheckpointPolicy;
    use maskflow_flows::{FlowConfig, FlowEngine, RunStatus, StartFlow, Synchronous};
    use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

    /// Answers every item at once with a short review.
    #[derive(Debug)]
    struct Reviewer;

    impl Provider for Reviewer {
        fn name(&self) -> &str {
            "reviewer"
        }
        fn complete<'a>(
            &'a self,
            request: &'a LlmRequest,
            _d: DeltaSink<'a>,
        ) -> BoxFuture<'a, std::result::Result<LlmReply, ProviderError>> {
            let len = request.messages.last().map_or(0, |m| m.content.len());
            Box::pin(async move {
                Ok(LlmReply {
                    text: format!(
                        r#"{{"ok":true,"len":{len},"note":"reviewed, nothing to change"}}"#
                    ),
                })
            })
        }
    }

    /// Runs a fan-out of `n` items under `policy`; returns the checkpoint
    /// rows and bytes the run keeps and its final state's bytes.
    async fn fan_out(n: usize, policy: Option<CheckpointPolicy>) -> (i64, i64, i64) {
        let home = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
        let files: Vec<String> = (0..n).map(|i| format!("file-{i:05}.txt")).collect();
        let flow = json!({"input": {"files": files}, "steps": [
            {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "concurrency": 4,
             "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                      "messages": [{"role": "user", "content": ["Review {{file}}"]}]}},
            {"type": "join", "id": "all"}
        ]});
        std::fs::write(home.path().join("flows/fan.json"), flow.to_string()).expect("write");
        std::fs::create_dir_all(home.path().join("agents")).expect("mkdir");
        std::fs::write(home.path().join("agents/rev.json"), "{}").expect("agent");
        let clock: Arc<dyn Clock> = Arc::new(StepClock::new(1_700_000_000_000));
        let engine = FlowEngine::open(
            FlowConfig {
                home: home.path().to_owned(),
                ids: Arc::new(UlidGen::new(clock.clone())),
                clock,
                storage: Arc::new(StoreFlowStorage::default()),
                synchronous: Synchronous::Normal,
                checkpoints: policy.unwrap_or_default(),
            },
            maskflow_flows::testing::ports(Arc::new(Reviewer), Arc::new(EventBus::default())),
        )
        .expect("engine");
        let (started, handle) = engine
            .prepare("fan", StartFlow::default())
            .expect("prepare");
        assert_eq!(handle.run().await, RunStatus::Completed);
        let view = engine.get_run(&started.conversation_id).expect("view");
        // A prompt and a reply per item, and the join's turn.
        assert_eq!(view.turns.len(), 2 * n + 1);
        let conn = crate::store::open(home.path(), "test").expect("db");
        conn.query_row(
            "SELECT (SELECT COUNT(*) FROM flow_checkpoints WHERE run_id = ?1),
                    (SELECT COALESCE(SUM(length(state)), 0) FROM flow_checkpoints WHERE run_id = ?1),
                    (SELECT length(state) FROM flow_runs WHERE id = ?1)",
            [&started.conversation_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("sizes")
    }

    /// The app's store passes the same checkpoint-store contract as the
    /// flows' own test database.
    #[test]
    fn the_store_passes_the_checkpoint_contract() {
        let home = tempfile::tempdir().expect("tempdir");
        maskflow_flows::testing::checkpoint_contract(&StoreFlowStorage::default(), home.path());
    }

    /// Every checkpoint of a 1,000-item fan-out kept: their bytes add up to a
    /// few final states (full states each step would be ~500 of them); with
    /// the default policy the finished run keeps its final state only.
    #[tokio::test]
    async fn a_1000_item_fan_out_writes_checkpoint_bytes_linear_in_its_items() {
        let keep_all = CheckpointPolicy {
            keep_full_snapshots: 0,
            ..CheckpointPolicy::default()
        };
        let (rows, bytes, state) = fan_out(1000, Some(keep_all)).await;
        assert!(rows > 1000, "one checkpoint per item at least: {rows}");
        assert!(
            bytes <= 5 * state,
            "{bytes} checkpoint bytes, final state {state}"
        );
        let (rows, bytes, state) = fan_out(1000, None).await;
        assert_eq!(rows, 1, "a finished run keeps its final state only");
        assert_eq!(bytes, state);
    }
}
