//! The set-up every engine test shares: flow files written into a data
//! folder, an engine over it (the flows' own database, the test ports), a
//! run to its end, and the database read back.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use maskflow_clock::{Clock, StepClock, UlidGen};
use maskflow_flows::checkpoint::CheckpointPolicy;
use maskflow_flows::testing::{LocalStorage, RecordedEvents};
use maskflow_flows::{
    FlowConfig, FlowEngine, FlowEvents, GateAnswer, RunView, StartFlow, Synchronous,
};
use maskflow_llm::Provider;

/// When the engines' clocks start, unless a test says otherwise.
pub const START_MS: u64 = 1_700_000_000_000;

/// Every agent name a flow's JSON gives (`agentType`, `defaultAssigneeId`).
fn agents_named(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("agentType" | "defaultAssigneeId", Value::String(a)) => out.push(a.clone()),
                    _ => agents_named(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| agents_named(x, out)),
        _ => {}
    }
}

/// Writes each `(name, definition)` to `<home>/flows/<name>.json`, with an
/// agent file (default settings) for each agent they name that has none:
/// a flow may only name agents Maskflow knows.
pub fn write_flows(home: &Path, flows: &[(&str, Value)]) {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir");
    std::fs::create_dir_all(home.join("agents")).expect("mkdir");
    for (name, def) in flows {
        let mut named = Vec::new();
        agents_named(def, &mut named);
        for a in named {
            let file = home.join("agents").join(format!("{a}.json"));
            if maskflow_flows::agents::valid_name(&a) && !file.exists() {
                std::fs::write(file, "{}").expect("write agent");
            }
        }
        std::fs::write(
            home.join("flows").join(format!("{name}.json")),
            def.to_string(),
        )
        .expect("write");
    }
}

/// An engine over `home` whose clock starts at `start_ms` (a later start is
/// a process restarted after the first one's lease ran out).
pub fn engine_at(home: &Path, provider: Arc<dyn Provider>, start_ms: u64) -> FlowEngine {
    engine_on(
        home,
        provider,
        start_ms,
        Arc::new(RecordedEvents::default()),
    )
}

/// [`engine_at`], announcing on `events`.
pub fn engine_on(
    home: &Path,
    provider: Arc<dyn Provider>,
    start_ms: u64,
    events: Arc<dyn FlowEvents>,
) -> FlowEngine {
    let clock: Arc<dyn Clock> = Arc::new(StepClock::new(start_ms));
    FlowEngine::open(
        FlowConfig {
            home: home.to_owned(),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            storage: Arc::new(LocalStorage),
            synchronous: Synchronous::Normal,
            checkpoints: CheckpointPolicy::default(),
        },
        maskflow_flows::testing::ports(provider, events),
    )
    .expect("engine")
}

/// Runs flow `name` (in `working_folder`, if given) to its end or its first
/// wait; its view then.
pub async fn run(engine: &FlowEngine, name: &str, working_folder: Option<&Path>) -> RunView {
    let request = StartFlow {
        working_folder: working_folder.map(|w| w.display().to_string()),
        ..StartFlow::default()
    };
    let (started, handle) = engine.prepare(name, request).expect("prepare");
    handle.run().await;
    engine.get_run(&started.conversation_id).expect("view")
}

/// `home`'s database, as another reader of it sees it.
pub fn db(home: &Path) -> rusqlite::Connection {
    LocalStorage::db(home).expect("db")
}

/// The checkpointed state of a run, as stored.
pub fn stored_state(home: &Path, id: &str) -> maskflow_flows::state::RunState {
    maskflow_flows::store::get_run(&db(home), id)
        .expect("read")
        .expect("run")
        .state
}

/// Answers run `id`'s gate with `option` (and `input`, for a free-text
/// reply), runs on if the answer lets it; the run's view then.
pub async fn answer(engine: &FlowEngine, id: &str, option: &str, input: Option<&str>) -> RunView {
    let answer = GateAnswer {
        option: option.into(),
        input: input.map(str::to_owned),
        result: None,
    };
    let (_, handle) = engine.prepare_answer(id, answer).expect("answer");
    if let Some(h) = handle {
        h.run().await;
    }
    engine.get_run(id).expect("view")
}

/// A turn's `command` as the wire carries it, for asserting on its JSON.
pub fn wire(command: &maskflow_flows::turn::StepMeta) -> Value {
    serde_json::to_value(command).expect("step metadata serialises")
}
