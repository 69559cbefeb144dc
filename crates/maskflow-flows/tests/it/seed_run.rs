//! Every example of seeds 003 and 004, imported verbatim (the fixtures in
//! `crates/maskflow-flows/tests/fixtures/seeds/`) through the engine's
//! import, then run with a recorded back end to a terminal or waiting state.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at};
use maskflow_flows::bundle::{FlowBundle, ImportRequest};
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, ProviderError, ReplayProvider};
use maskflow_llm::{LlmRequest, Provider};

const EDGE_LABELS: &str = include_str!("../fixtures/seeds/003-edge-labels.mmd");
const PR_REVIEW: &str = include_str!("../fixtures/seeds/003-pr-review.mmd");
const BUNDLE: &str = include_str!("../fixtures/seeds/003-export-bundle.json");
const FLOW_004: &str = include_str!("../fixtures/seeds/004-flow-example.json");

/// A recorded agent: the reply of the first entry whose text the prompt
/// contains; every prompt is kept.
#[derive(Debug)]
struct Recorded {
    replies: Vec<(&'static str, Value)>,
    prompts: Mutex<Vec<String>>,
    requests: Mutex<Vec<String>>,
}

impl Recorded {
    fn new(replies: Vec<(&'static str, Value)>) -> Arc<Self> {
        Arc::new(Self {
            replies,
            prompts: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        })
    }

    fn prompts(&self) -> Vec<String> {
        self.prompts.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Every request, all its messages joined.
    fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn asked(&self, needle: &str) -> usize {
        self.prompts().iter().filter(|p| p.contains(needle)).count()
    }
}

impl Provider for Recorded {
    fn name(&self) -> &str {
        "recorded"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            // The step's own prompt is the last message.
            let prompt = request
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            if let Ok(mut p) = self.prompts.lock() {
                p.push(prompt.clone());
            }
            let all: Vec<&str> = request
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect();
            if let Ok(mut r) = self.requests.lock() {
                r.push(all.join("\n"));
            }
            let reply = self
                .replies
                .iter()
                .find(|(needle, _)| prompt.contains(needle))
                .map(|(_, r)| match r {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_else(|| "done".into());
            Ok(LlmReply { text: reply })
        })
    }
}

struct Env {
    home: tempfile::TempDir,
    engine: FlowEngine,
}

fn env(provider: Arc<dyn Provider>) -> Env {
    let home = tempfile::tempdir().expect("tempdir");
    let engine = engine_at(home.path(), provider, START_MS);
    Env { home, engine }
}

impl Env {
    fn import_mermaid(&self, text: &str, name: &str) {
        self.engine
            .import_flow(ImportRequest {
                mermaid: Some(text.into()),
                name: Some(name.into()),
                ..ImportRequest::default()
            })
            .expect("imports");
    }

    fn import_bundle(&self, bundle: FlowBundle) -> String {
        self.engine
            .import_flow(ImportRequest {
                bundle: Some(bundle),
                ..ImportRequest::default()
            })
            .expect("imports")
            .name
    }

    async fn run(&self, name: &str) -> RunView {
        crate::support::run(&self.engine, name, None).await
    }
}

#[tokio::test]
async fn seed_003_edge_label_diagram_runs_each_branch() {
    for (score, status, taken) in [
        (85, RunStatus::Completed, "Approve"),
        (60, RunStatus::Waiting, ""),
        (10, RunStatus::Completed, "Reject"),
    ] {
        let agent = Recorded::new(vec![("Analyze", json!({"score": score}))]);
        let env = env(agent.clone());
        env.import_mermaid(EDGE_LABELS, "edge-labels");
        let view = env.run("edge-labels").await;
        assert_eq!(view.status, status, "score {score}: {view:?}");
        let asked = agent.prompts();
        assert_eq!(
            asked.len(),
            if taken.is_empty() { 1 } else { 2 },
            "{asked:?}"
        );
        assert!(asked[0].contains("Analyze"));
        if taken.is_empty() {
            let pending = view.pending.expect("a person is asked");
            assert_eq!(pending["kind"], "gate");
            assert_eq!(pending["prompt"], "Human Review");
        } else {
            assert!(asked[1].contains(taken), "{asked:?}");
        }
    }
}

fn pr_agent() -> Arc<Recorded> {
    Recorded::new(vec![
        (
            "Fetch PR #",
            json!({"title": "Add parser", "author": "ann"}),
        ),
        (
            "Get list of changed files",
            json!({"files": [{"path": "src/a.rs", "additions": 3}, {"path": "src/b.rs", "additions": 1}]}),
        ),
        ("Review src/", json!({"score": 91, "issues": []})),
        (
            "Aggregate all file reviews",
            json!({"score": 91, "summary": "fine"}),
        ),
        ("constructive feedback", json!({"shouldRetry": false})),
    ])
}

#[tokio::test]
async fn seed_003_pr_review_runs_to_the_end() {
    let agent = pr_agent();
    let env = env(agent.clone());
    env.import_mermaid(PR_REVIEW, "pr-review");
    let view = env.run("pr-review").await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(agent.asked("Fetch PR #{{input.prNumber}} metadata"), 1);
    assert_eq!(agent.asked("Review src/a.rs for code style"), 1);
    assert_eq!(agent.asked("Review src/b.rs for code style"), 1);
    // Whether the join scores (issue 18 point 10) decides the Quality Gate.
    if agent.asked("Aggregate all file reviews") == 1 {
        assert_eq!(agent.asked("Generate approval comment"), 1);
        assert_eq!(agent.asked("Merge the PR"), 1);
        assert_eq!(agent.asked("constructive feedback"), 0);
    } else {
        assert_eq!(agent.asked("constructive feedback"), 1);
        assert_eq!(agent.asked("Close the PR"), 1);
        assert_eq!(agent.asked("Merge the PR"), 0);
    }
}

#[tokio::test]
async fn seed_003_export_bundle_imports_its_agent_and_runs() {
    let agent = Recorded::new(vec![("Fetch PR #", json!({"title": "t"}))]);
    let env = env(agent.clone());
    let bundle: FlowBundle = serde_json::from_str(BUNDLE).expect("bundle");
    let name = env.import_bundle(bundle);
    assert_eq!(name, "pr-review-pipeline");
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(env.home.path().join("agents/code-reviewer.json"))
            .expect("the seed's agent is written"),
    )
    .expect("json");
    assert_eq!(
        written,
        json!({"displayName": "Code Review Agent", "prompt": "You are an expert code reviewer..."})
    );
    let view = env.run(&name).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(agent.prompts(), ["Fetch PR #{{input.prNumber}}..."]);
}

#[tokio::test]
async fn seed_004_example_imports_as_written_and_runs() {
    let provider = Arc::new(
        ReplayProvider::from_value(&json!({
            "agent:coding_agent": ["summary 1", {"answer": "no"}, "summary 2", {"answer": "yes"}],
            "agent:planning_agent": ["plan 1", "plan 2"]
        }))
        .expect("replay"),
    );
    let env = env(provider);
    let commands = env.home.path().join("agents/planning_agent/commands");
    std::fs::create_dir_all(&commands).expect("mkdir");
    std::fs::write(
        commands.join("improve_plan.json"),
        r#"{"messages":[{"role":"user","content":["Improve the plan."]}]}"#,
    )
    .expect("write");
    // The seed's flow names `coding_agent`, which a user creates first: a
    // flow naming an agent Maskflow does not know is disabled.
    std::fs::write(env.home.path().join("agents/coding_agent.json"), "{}").expect("write");
    let flow: Value = serde_json::from_str(FLOW_004).expect("json");
    let imported = env
        .engine
        .import_flow(ImportRequest {
            flow: Some(flow),
            name: Some("flows-mode".into()),
            ..ImportRequest::default()
        })
        .expect("imports");
    assert_eq!(
        imported.description,
        "Summarize, refine, and iterate until done."
    );
    let view = env.run("flows-mode").await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    // Seed 004: each step's prompt is a user turn, its reply the assistant's.
    let replies: Vec<&str> = view
        .turns
        .iter()
        .filter(|t| t.role == "assistant")
        .map(|t| t.content.as_str())
        .collect();
    assert_eq!(
        replies,
        [
            "summary 1",
            "plan 1",
            r#"{"answer":"no"}"#,
            "summary 2",
            "plan 2",
            r#"{"answer":"yes"}"#
        ]
    );
    let prompts: Vec<&str> = view
        .turns
        .iter()
        .filter(|t| t.role == "user")
        .map(|t| t.content.as_str())
        .collect();
    assert_eq!(prompts.len(), 6, "{prompts:?}");
    assert_eq!(prompts[0], "Summarize the current notes.");
    assert_eq!(prompts[1], "Improve the plan.");
    assert_eq!(view.turns.len(), 12);
}

#[tokio::test]
async fn seed_foreach_prompts_see_index_and_total() {
    let agent = Recorded::new(vec![(
        "List",
        json!({"files": [{"path": "a"}, {"path": "b"}, {"path": "c"}]}),
    )]);
    let env = env(agent.clone());
    let bundle: FlowBundle = serde_json::from_value(json!({
        "workflow": {"name": "Count Items", "description": "index and total", "mermaidSource": "",
          "steps": [
            {"id": "list", "name": "List", "stepType": "task", "prompt": "List the files."},
            {"id": "each", "name": "Each", "stepType": "foreach", "itemsPath": "output.files",
             "itemVariable": "file", "defaultAssigneeId": "code-reviewer",
             "prompt": "Review {{file.path}}, item {{index}} of {{total}}"},
            {"id": "all", "name": "Join", "stepType": "join", "awaitTag": "foreach:{{parentId}}"}
          ]},
        "agents": [{"id": "code-reviewer", "displayName": "Code Review Agent", "agentPrompt": "You review code."}],
        "exportVersion": "2.0", "exportedAt": "2025-01-15T10:00:00Z"
    }))
    .expect("bundle");
    let name = env.import_bundle(bundle);
    assert_eq!(name, "count-items");
    let view = env.run(&name).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    let mut items: Vec<String> = agent
        .prompts()
        .into_iter()
        .filter(|p| p.starts_with("Review"))
        .collect();
    items.sort();
    assert_eq!(
        items,
        [
            "Review a, item 0 of 3",
            "Review b, item 1 of 3",
            "Review c, item 2 of 3"
        ]
    );
    assert!(
        agent
            .requests()
            .iter()
            .filter(|r| r.contains("Review a, item 0 of 3"))
            .all(|r| r.contains("You review code.")),
        "the seed agent's persona is in its prompts"
    );
}
