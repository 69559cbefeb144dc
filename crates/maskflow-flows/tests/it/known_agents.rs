//! A flow may only name agents Maskflow knows: a misspelt `agentType`
//! disables the flow with the reason, in the list and on a run.

use std::sync::Arc;

use serde_json::json;

use crate::support::{START_MS, engine_at};
use maskflow_flows::error::Error;
use maskflow_flows::*;
use maskflow_llm::ReplayProvider;

fn llm(agent: &str, text: &str) -> serde_json::Value {
    json!({"type": "llm", "agentType": agent, "identifier": "x",
           "messages": [{"role": "user", "content": [text]}]})
}

#[tokio::test]
async fn a_misspelt_agent_disables_the_flow_with_the_reason_until_its_file_exists() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path();
    std::fs::create_dir_all(dir.join("flows")).expect("mkdir");
    std::fs::create_dir_all(dir.join("agents")).expect("mkdir");
    std::fs::write(dir.join("agents/coder.json"), "{}").expect("write");
    std::fs::write(dir.join("agents/reviewer.json"), "{}").expect("write");
    let flow = json!({"steps": [
        llm("coder", "write it"),
        {"type": "startLoop", "maxIterations": 2, "steps": [
            llm("reveiwer", "review it"),
            {"type": "break", "agentType": "coder", "identifier": "x",
             "question": "done?", "breakOn": "yes"}
        ]}
    ]});
    std::fs::write(dir.join("flows/review.json"), flow.to_string()).expect("write");
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({
            "agent:coder": ["code", {"answer": "yes"}], "agent:reveiwer": ["ok"]
        }))
        .expect("replay"),
    );
    let engine = engine_at(dir, provider, START_MS);
    let reason = "step 3 (steps[1].steps[0]) names the agent \"reveiwer\", which does not exist; \
                  agents: assistant, coder, reviewer";

    let listed = engine.list().expect("list").flows;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].disabled, "{listed:?}");
    let error = listed[0].error.clone().unwrap_or_default();
    assert!(
        error.starts_with("steps[1].steps[0].agentType: "),
        "{error}"
    );
    assert!(error.contains(reason), "{error}");

    let refused = engine.prepare("review", StartFlow::default());
    match refused {
        Err(Error::InvalidRequest(m)) => {
            assert!(m.contains("the flow is disabled"), "{m}");
            assert!(m.contains(reason), "{m}");
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a flow naming an unknown agent was started"),
    }

    // Its diagram still draws, so the page shows what the reason names;
    // its definition (what runs and edits read) is refused with the reason.
    let diagram = engine.mermaid("review").expect("drawn while disabled");
    assert!(diagram.contains("reveiwer"), "{diagram}");
    assert!(
        matches!(engine.definition("review"), Err(Error::InvalidRequest(m)) if m.contains(reason))
    );

    // Creating the agent it names (the user's fix) enables it.
    std::fs::write(dir.join("agents/reveiwer.json"), "{}").expect("write");
    assert!(!engine.list().expect("list").flows[0].disabled);
    let (started, handle) = engine
        .prepare("review", StartFlow::default())
        .expect("starts");
    handle.run().await;
    let view = engine.get_run(&started.conversation_id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
}
