//! How much a flow run leaves in the database (see `bench/flows/README.md`):
//! runs seed 004's example, a loop of STEPS steps or a fan-out of ITEMS items
//! with agents answered at once by an in-process provider, then prints one
//! JSON line: the database's size, the checkpoint rows and their bytes, the
//! bytes the process wrote and the time per step.
//! Usage: `checkpoint_bench seed | loop STEPS | fanout ITEMS [keep-all]`
//! (`keep-all`: no pruning, so every checkpoint written stays to be counted).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use maskflow_clock::{Clock, SystemClock, UlidGen};
use maskflow_core::events::EventBus;
use maskflow_flows::checkpoint::CheckpointPolicy;
use maskflow_flows::{FlowConfig, FlowEngine, RunStatus, StartFlow, Synchronous};
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, Role};

/// Answers at once: "yes" to a break after `breaks_until` questions, a small
/// JSON object to every other step.
#[derive(Debug)]
struct Instant2 {
    breaks_until: usize,
    breaks: AtomicUsize,
    calls: AtomicUsize,
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
            let last = request
                .messages
                .last()
                .map(|m| m.content.as_str())
                .unwrap_or("");
            let asks_break = request.role == Role::Agent("stopper".into())
                || last.contains("Is the summary complete?");
            let text = if asks_break {
                let n = self.breaks.fetch_add(1, Ordering::Relaxed) + 1;
                if n >= self.breaks_until {
                    r#"{"answer":"yes"}"#.to_owned()
                } else {
                    r#"{"answer":"no"}"#.to_owned()
                }
            } else {
                let n = self.calls.fetch_add(1, Ordering::Relaxed);
                format!(r#"{{"ok":true,"n":{n},"note":"reviewed, nothing to change"}}"#)
            };
            Ok(LlmReply { text })
        })
    }
}

/// Bytes this process handed to `write`-like calls (`wchar` of /proc/self/io).
fn bytes_written() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("wchar: ")
                    .and_then(|v| v.trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

fn write(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

/// Writes the scenario's flow (and agents) into `home`; returns the flow's
/// name, the breaks before "yes" and how many steps the run commits.
fn scenario(home: &std::path::Path, kind: &str, n: usize) -> std::io::Result<(usize, usize)> {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/flows/seed004"
    );
    match kind {
        "seed" => {
            for rel in [
                "flows/seed_example.json",
                "agents/coding_agent.json",
                "agents/planning_agent.json",
                "agents/planning_agent/commands/improve_plan.json",
            ] {
                let text = std::fs::read_to_string(format!("{root}/{rel}"))?;
                write(&home.join(rel.replace("seed_example", "bench")), &text)?;
            }
            // Two passes of the loop, as in the engine's test of the example.
            Ok((2, 6))
        }
        "loop" => {
            write(
                &home.join("flows/bench.json"),
                r#"{"steps":[{"type":"startLoop","steps":[
                    {"type":"llm","agentType":"worker","identifier":"w","messages":[{"role":"user","content":["step {{loop.iteration}}"]}]},
                    {"type":"break","agentType":"stopper","identifier":"s","question":"stop?","breakOn":"yes"}]}]}"#,
            )?;
            // A flow may only name agents Maskflow knows.
            write(&home.join("agents/worker.json"), "{}")?;
            write(&home.join("agents/stopper.json"), "{}")?;
            // Each iteration commits 3 steps: the agent step, the break, the loop end.
            let iterations = n.div_ceil(3);
            Ok((iterations, iterations * 3 - 1))
        }
        _ => {
            let items: Vec<String> = (0..n).map(|i| format!("file-{i:05}.txt")).collect();
            let flow = serde_json::json!({"input": {"files": items}, "steps": [
                {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "concurrency": 4,
                 "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                          "messages": [{"role": "user", "content": ["Review {{file}}"]}]}},
                {"type": "join", "id": "all"}
            ]});
            write(&home.join("flows/bench.json"), &flow.to_string())?;
            write(&home.join("agents/rev.json"), "{}")?;
            Ok((usize::MAX, n + 1))
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let kind = args.get(1).map(String::as_str).unwrap_or("seed").to_owned();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let keep_all = args.get(3).map(String::as_str) == Some("keep-all");
    let home = tempfile::tempdir()?;
    let (breaks_until, steps) = scenario(home.path(), &kind, n)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let provider = Arc::new(Instant2 {
        breaks_until,
        breaks: AtomicUsize::new(0),
        calls: AtomicUsize::new(0),
    });
    let engine = FlowEngine::open(
        FlowConfig {
            home: home.path().to_owned(),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            storage: Arc::new(maskflow_core::store::flow_storage::StoreFlowStorage::default()),
            synchronous: Synchronous::Normal,
            checkpoints: CheckpointPolicy {
                keep_full_snapshots: if keep_all {
                    0
                } else {
                    CheckpointPolicy::default().keep_full_snapshots
                },
                ..CheckpointPolicy::default()
            },
        },
        maskflow_flows::testing::ports(provider, Arc::new(EventBus::default())),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let written_before = bytes_written();
    let (seconds, id) = runtime.block_on(async {
        let (started, handle) = engine.prepare("bench", StartFlow::default())?;
        let t = Instant::now();
        let status = handle.run().await;
        let seconds = t.elapsed().as_secs_f64();
        if status != RunStatus::Completed {
            let view = engine.get_run(&started.conversation_id)?;
            return Err(format!("the run ended {status:?}: {:?}", view.error).into());
        }
        Ok::<_, Box<dyn std::error::Error>>((seconds, started.conversation_id))
    })?;
    let written = bytes_written().saturating_sub(written_before);
    drop(engine);
    let f = maskflow_core::store::inspect::run_footprint(&home.path().join("maskflow.db"), &id)?;
    let (rows, checkpoint_bytes, state_bytes) =
        (f.checkpoint_rows, f.checkpoint_bytes, f.run_state_bytes);
    let (file_bytes, vacuumed) = (f.file_bytes, f.vacuumed_bytes);
    println!(
        "{{\"scenario\":\"{kind}\",\"keep_all\":{keep_all},\"n\":{n},\"steps\":{steps},\"db_bytes\":{file_bytes},\"db_bytes_vacuumed\":{vacuumed},\"checkpoint_rows\":{rows},\"checkpoint_bytes\":{checkpoint_bytes},\"run_state_bytes\":{state_bytes},\"bytes_written\":{written},\"seconds\":{seconds:.4},\"ms_per_step\":{:.4}}}",
        seconds * 1000.0 / steps as f64
    );
    Ok(())
}
