//! A join's `timeoutSeconds` (seed 003's open question 7): the fan-out
//! before it stops when the engine's clock says the time is up; the join
//! goes on with the finished items (listing the others as timed out) or
//! fails, as `onTimeout` says. The clock is the test's: an item's agent
//! moves it on, so nothing here depends on how fast the machine is.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{START_MS, write_flows};
use maskflow_clock::{Clock, UlidGen};
use maskflow_flows::checkpoint::CheckpointPolicy;
use maskflow_flows::testing::{LocalStorage, RecordedEvents};
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

/// A clock that stands still until the test moves it.
#[derive(Debug)]
struct HandClock(AtomicU64);

impl Clock for HandClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// An agent that reviews each file; reviewing `slow` takes an hour (it
/// moves the clock on by one).
#[derive(Debug)]
struct Reviewer {
    clock: Arc<HandClock>,
    asked: Mutex<Vec<String>>,
}

impl Provider for Reviewer {
    fn name(&self) -> &str {
        "reviewer"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let prompt = request
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            if prompt.contains("slow") {
                self.clock.0.fetch_add(3_600_000, Ordering::SeqCst);
            }
            if let Ok(mut a) = self.asked.lock() {
                a.push(prompt.clone());
            }
            Ok(LlmReply {
                text: format!("reviewed: {prompt}"),
            })
        })
    }
}

fn flow(join: Value) -> Value {
    json!({"input": {"files": ["a.txt", "slow.txt", "c.txt", "d.txt"]}, "steps": [
        {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file",
         "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                  "messages": [{"role": "user", "content": ["Review {{file}}"]}]}},
        join
    ]})
}

async fn run_with(join: Value) -> (RunView, Arc<Reviewer>) {
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), &[("fan", flow(join))]);
    let clock = Arc::new(HandClock(AtomicU64::new(START_MS)));
    let reviewer = Arc::new(Reviewer {
        clock: clock.clone(),
        asked: Mutex::new(Vec::new()),
    });
    let clock: Arc<dyn Clock> = clock;
    let engine = FlowEngine::open(
        FlowConfig {
            home: home.path().to_owned(),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            storage: Arc::new(LocalStorage),
            synchronous: Synchronous::Normal,
            checkpoints: CheckpointPolicy::default(),
        },
        maskflow_flows::testing::ports(reviewer.clone(), Arc::new(RecordedEvents::default())),
    )
    .expect("engine");
    let view = crate::support::run(&engine, "fan", None).await;
    // The run's folder goes with the temporary directory: keep it to the end.
    drop(home);
    (view, reviewer)
}

fn system_turns(view: &RunView) -> Vec<String> {
    view.turns
        .iter()
        .filter(|t| t.role == "system")
        .map(|t| t.content.clone())
        .collect()
}

#[tokio::test]
async fn a_join_past_its_timeout_goes_on_with_the_finished_items() {
    let (view, reviewer) =
        run_with(json!({"type": "join", "id": "all", "timeoutSeconds": 600})).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    // One at a time: a.txt, then slow.txt (an hour); c and d never start.
    let asked = reviewer.asked.lock().expect("asked").clone();
    assert_eq!(asked, ["Review a.txt", "Review slow.txt"]);
    let system = system_turns(&view);
    assert!(
        system
            .iter()
            .any(|t| t
                == "The join's timeout ran out: 2 of 4 items were not done in time (items 2, 3)"),
        "{system:?}"
    );
    assert!(
        system
            .iter()
            .any(|t| t == "Joined 2 of 4 items (0 failed, 2 timed out)"),
        "{system:?}"
    );
}

#[tokio::test]
async fn a_join_within_its_timeout_gathers_everything() {
    let (view, reviewer) =
        run_with(json!({"type": "join", "id": "all", "timeoutSeconds": 7200, "onTimeout": "fail"}))
            .await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(reviewer.asked.lock().expect("asked").len(), 4);
    assert!(
        system_turns(&view)
            .iter()
            .any(|t| t == "Joined 4 of 4 items (0 failed)")
    );
}

#[tokio::test]
async fn a_join_whose_timeout_fails_the_run_names_the_items_not_done() {
    let (view, _) =
        run_with(json!({"type": "join", "id": "all", "timeoutSeconds": 600, "onTimeout": "fail"}))
            .await;
    assert_eq!(view.status, RunStatus::Failed, "{view:?}");
    let error = view.error.clone().unwrap_or_default();
    assert!(
        error.contains("2 of 4 items were not done within its 600s timeout (items 2, 3)"),
        "{error}"
    );
}

#[test]
fn a_timeout_is_checked_where_the_loader_checks() {
    for (join, path, words) in [
        (
            json!({"type": "join", "timeoutSeconds": 0}),
            "steps[1].timeoutSeconds",
            "must be at least 1",
        ),
        (
            json!({"type": "join", "onTimeout": "fail"}),
            "steps[1].onTimeout",
            "no timeoutSeconds",
        ),
        (
            json!({"type": "join", "timeoutSeconds": 5, "onTimeout": "wait"}),
            "steps[1].onTimeout",
            "unknown variant",
        ),
    ] {
        let e = definition::from_value(&flow(join)).expect_err("refused");
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains(words), "{e}");
    }
}
