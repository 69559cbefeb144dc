//! Benchmark of the flow engine's per-step overhead (see `bench/flows/`):
//! a looping flow of trivial steps (an agent step answered at once by an
//! in-process provider, a break, the loop's end), each step committed with
//! its checkpoint. Usage: `flow_bench STEPS normal|full`. Prints one JSON line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use maskflow_clock::{Clock, SystemClock, UlidGen};
use maskflow_core::events::EventBus;
use maskflow_flows::{FlowConfig, FlowEngine, StartFlow, Synchronous};
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, Role};

/// Answers at once: `{"n": 1}` to the worker, "yes" to the stopper at the last iteration.
#[derive(Debug)]
struct Instant2 {
    iterations: usize,
    breaks: AtomicUsize,
}

impl Provider for Instant2 {
    fn name(&self) -> &str {
        "instant"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let text = if request.role == Role::Agent("stopper".into()) {
                let n = self.breaks.fetch_add(1, Ordering::Relaxed) + 1;
                if n >= self.iterations {
                    r#"{"answer":"yes"}"#
                } else {
                    r#"{"answer":"no"}"#
                }
            } else {
                r#"{"n":1}"#
            };
            Ok(LlmReply { text: text.into() })
        })
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let steps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let sync = match args.get(2).map(String::as_str) {
        Some("full") => Synchronous::Full,
        _ => Synchronous::Normal,
    };
    // Each iteration commits 3 steps: the agent step, the break, the loop end.
    let iterations = steps.div_ceil(3);
    let home = tempfile::tempdir()?;
    std::fs::create_dir_all(home.path().join("flows"))?;
    std::fs::write(
        home.path().join("flows/bench.json"),
        r#"{"steps":[{"type":"startLoop","steps":[
            {"type":"llm","agentType":"worker","identifier":"w","messages":[{"role":"user","content":["step {{loop.iteration}}"]}]},
            {"type":"break","agentType":"stopper","identifier":"s","question":"stop?","breakOn":"yes"}]}]}"#,
    )?;
    // A flow may only name agents Maskflow knows.
    std::fs::create_dir_all(home.path().join("agents"))?;
    std::fs::write(home.path().join("agents/worker.json"), "{}")?;
    std::fs::write(home.path().join("agents/stopper.json"), "{}")?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let provider = Arc::new(Instant2 {
        iterations,
        breaks: AtomicUsize::new(0),
    });
    let engine = FlowEngine::open(
        FlowConfig {
            home: home.path().to_owned(),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            storage: Arc::new(maskflow_core::store::flow_storage::StoreFlowStorage::default()),
            synchronous: sync,
            checkpoints: maskflow_flows::checkpoint::CheckpointPolicy::default(),
        },
        maskflow_flows::testing::ports(provider, Arc::new(EventBus::default())),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (seconds, done, checkpoints) = runtime.block_on(async {
        let (started, handle) = engine.prepare("bench", StartFlow::default())?;
        let t = Instant::now();
        let status = handle.run().await;
        let seconds = t.elapsed().as_secs_f64();
        let view = engine.get_run(&started.conversation_id)?;
        if status != maskflow_flows::RunStatus::Completed {
            return Err(format!("the run ended {status:?}: {:?}", view.error).into());
        }
        let steps_committed = iterations * 3 - 1;
        Ok::<_, Box<dyn std::error::Error>>((seconds, steps_committed, view.turns.len()))
    })?;
    println!(
        "{{\"engine\":\"maskflow\",\"synchronous\":\"{}\",\"steps\":{done},\"turns\":{checkpoints},\"seconds\":{seconds:.4},\"ms_per_step\":{:.4}}}",
        if sync == Synchronous::Full {
            "FULL"
        } else {
            "NORMAL"
        },
        seconds * 1000.0 / done as f64
    );
    Ok(())
}
