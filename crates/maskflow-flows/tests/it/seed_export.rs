//! Seed 003's export shape: `workflow.steps` and `agents[{id, displayName,
//! agentPrompt}]`, imported on another machine, exported again the same, and
//! run the same.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, run};
use maskflow_flows::bundle::{FlowBundle, ImportRequest};
use maskflow_flows::*;
use maskflow_llm::ReplayProvider;

fn replay() -> Arc<ReplayProvider> {
    Arc::new(
        ReplayProvider::from_value(&json!({
            "agent:reviewer": ["draft one", {"answer": "no"}, "draft two", {"answer": "yes"}],
        }))
        .expect("replay"),
    )
}

fn flow() -> Value {
    json!({"description": "Drafts until the reviewer is happy", "steps": [
        {"type": "startLoop", "label": "Review loop", "maxIterations": 3, "steps": [
            {"type": "llm", "label": "Draft", "agentType": "reviewer", "identifier": "main",
             "messages": [{"role": "user", "content": ["Write draft {{loop.iteration}}."]}]},
            {"type": "break", "label": "Done?", "agentType": "reviewer", "identifier": "main",
             "question": "Is it good?", "breakOn": "yes"}
        ]}
    ]})
}

/// The bundle as JSON without `exportedAt` (the one field that is the time of export).
fn comparable(b: &FlowBundle) -> Value {
    let mut v = serde_json::to_value(b).expect("json");
    v.as_object_mut().expect("object").remove("exportedAt");
    v
}

fn contents(view: &RunView) -> Vec<String> {
    view.turns.iter().map(|t| t.content.clone()).collect()
}

#[tokio::test]
async fn a_seed_003_export_re_imports_identically_and_runs_the_same_steps() {
    let here = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(here.path().join("flows")).expect("mkdir");
    std::fs::create_dir_all(here.path().join("agents")).expect("mkdir");
    std::fs::write(here.path().join("flows/review.json"), flow().to_string()).expect("write");
    std::fs::write(
        here.path().join("agents/reviewer.json"),
        r#"{"displayName": "Code Review Agent", "prompt": "You are an expert code reviewer."}"#,
    )
    .expect("write");
    let engine = engine_at(here.path(), replay(), START_MS);
    let bundle = engine.export_seed003("review").expect("export");
    let v = serde_json::to_value(&bundle).expect("json");

    // Seed 003's shape: the steps parsed out, the agents as the seed writes them.
    assert_eq!(
        v["agents"],
        json!([{"id": "reviewer", "displayName": "Code Review Agent",
                "agentPrompt": "You are an expert code reviewer."}])
    );
    assert!(v["workflow"].get("definition").is_none(), "{v}");
    assert_eq!(v["exportVersion"], "2.0");
    let steps = v["workflow"]["steps"].as_array().expect("steps");
    let draft = steps
        .iter()
        .find(|s| s["name"] == "Draft")
        .expect("the Draft step");
    assert_eq!(draft["stepType"], "task");
    assert_eq!(draft["execution"], "automated");
    assert_eq!(draft["defaultAssigneeId"], "reviewer");
    assert_eq!(draft["prompt"], "Write draft {{loop.iteration}}.");
    assert!(
        v["workflow"]["mermaidSource"]
            .as_str()
            .expect("mermaid")
            .contains("%% === WORKFLOW_CONFIG ===")
    );

    // Another machine: the bundle as text, imported, exported again.
    let there = tempfile::tempdir().expect("tempdir");
    let other = engine_at(there.path(), replay(), START_MS + 60_000);
    let text = serde_json::to_string(&bundle).expect("text");
    let read: FlowBundle = serde_json::from_str(&text).expect("reads");
    let imported = other
        .import_flow(ImportRequest {
            bundle: Some(read),
            ..ImportRequest::default()
        })
        .expect("imports");
    assert_eq!(imported.name, "review");
    assert!(!imported.disabled, "{imported:?}");
    let again = other.export_seed003("review").expect("export again");
    assert_eq!(comparable(&again), comparable(&bundle));
    assert_eq!(
        other.load_definition("review").expect("flow"),
        engine.load_definition("review").expect("flow")
    );

    // Both run the same steps to the same end.
    let first = run(&engine, "review", None).await;
    let second = run(&other, "review", None).await;
    assert_eq!(first.status, RunStatus::Completed, "{first:?}");
    assert_eq!(second.status, RunStatus::Completed, "{second:?}");
    assert_eq!(contents(&first), contents(&second));
    assert!(contents(&second).contains(&"draft two".to_owned()));
}

#[tokio::test]
async fn the_default_export_keeps_maskflows_own_files() {
    let here = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(here.path().join("flows")).expect("mkdir");
    std::fs::create_dir_all(here.path().join("agents")).expect("mkdir");
    std::fs::write(here.path().join("flows/review.json"), flow().to_string()).expect("write");
    std::fs::write(
        here.path().join("agents/reviewer.json"),
        r#"{"model": "m"}"#,
    )
    .expect("write");
    let engine = engine_at(here.path(), replay(), START_MS);
    let full = serde_json::to_value(engine.export_bundle("review").expect("export")).expect("json");
    assert_eq!(full["agents"][0]["agent"], json!({"model": "m"}));
    assert!(full["workflow"]["definition"].is_object());
}
