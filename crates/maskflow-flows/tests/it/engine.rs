//! Engine tests over a real store in a temporary data folder, with the
//! replay provider (or small test doubles) as the agents' back end.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use std::sync::Arc;

use serde_json::Value;

use crate::support::{START_MS, engine_at, wire, write_flows};
use maskflow_flows::error::Error;
use maskflow_flows::store::{self, local};
use maskflow_flows::testing::Hang;
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, ProviderError, ReplayProvider};
use maskflow_llm::{ChatRole, LlmRequest, Provider, Role};

struct Env {
    home: tempfile::TempDir,
    engine: FlowEngine,
}

fn env_with(provider: Arc<dyn Provider>, flows: &[(&str, Value)]) -> Env {
    let home = tempfile::tempdir().expect("tempdir");
    write_flows(home.path(), flows);
    let engine = engine_at(home.path(), provider, START_MS);
    Env { home, engine }
}

fn replay(replies: Value) -> Arc<ReplayProvider> {
    Arc::new(ReplayProvider::from_value(&replies).expect("replay"))
}

fn llm(agent: &str, id: &str, text: &str) -> Value {
    json!({"type": "llm", "agentType": agent, "identifier": id, "messages": [{"role": "user", "content": [text]}]})
}

fn brk(agent: &str, on: &str) -> Value {
    json!({"type": "break", "agentType": agent, "identifier": "b", "question": "Done?", "breakOn": on})
}

impl Env {
    /// The data folder's database, as another reader of it sees it.
    fn db(&self) -> rusqlite::Connection {
        crate::support::db(self.home.path())
    }

    async fn run(&self, name: &str) -> RunView {
        crate::support::run(&self.engine, name, None).await
    }

    async fn resume(&self, name: &str, id: &str, path: Option<Vec<i64>>) -> RunView {
        let req = StartFlow {
            conversation_id: Some(id.into()),
            resume_step_path: path,
            ..StartFlow::default()
        };
        let (_, handle) = self.engine.prepare(name, req).expect("prepare resume");
        handle.run().await;
        self.engine.get_run(id).expect("view")
    }
}

/// The seed example's break question as sent: the question, then the JSON instruction.
const BREAK_PROMPT: &str = "Is the summary complete? Reply as JSON {\"answer\":\"yes\"|\"no\"}.\n\nReply with exactly this JSON and nothing else: {\"answer\": \"yes\"} or {\"answer\": \"no\"}.";

fn contents(v: &RunView) -> Vec<String> {
    v.turns.iter().map(|t| t.content.clone()).collect()
}

#[tokio::test]
async fn seed_004_example_runs_as_written_with_its_metadata() {
    let provider = replay(json!({
        "agent:coding_agent": ["summary 1", {"answer": "no"}, "summary 2", {"answer": "yes"}],
        "agent:planning_agent": ["plan 1", "plan 2"]
    }));
    let def: Value = serde_json::from_str(include_str!(
        "../../../../tests/fixtures/flows/seed004/flows/seed_example.json"
    ))
    .expect("json");
    let env = env_with(provider.clone(), &[("seed", def)]);
    let cmd_dir = env.home.path().join("agents/planning_agent/commands");
    std::fs::create_dir_all(&cmd_dir).expect("mkdir");
    std::fs::write(
        cmd_dir.join("improve_plan.json"),
        r#"{"messages":[{"role":"user","content":["Improve the plan."]}]}"#,
    )
    .expect("write");
    std::fs::write(
        env.home.path().join("agents/coding_agent.json"),
        r#"{"prompt":"You are the coding agent."}"#,
    )
    .expect("write");
    let view = env.run("seed").await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(view.title, "Flow: seed");
    assert_eq!(
        contents(&view),
        [
            "Summarize the current notes.",
            "summary 1",
            "Improve the plan.",
            "plan 1",
            BREAK_PROMPT,
            r#"{"answer":"no"}"#,
            "Summarize the current notes.",
            "summary 2",
            "Improve the plan.",
            "plan 2",
            BREAK_PROMPT,
            r#"{"answer":"yes"}"#
        ]
    );
    // Seed 004: each step's prompt is a user turn before its reply, with the same metadata.
    let roles: Vec<&str> = view.turns.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant"].repeat(6));
    assert_eq!(view.turns[2].command, view.turns[3].command);
    let c = &wire(&view.turns[3].command);
    assert_eq!(c["name"], "flow");
    assert_eq!(
        (
            c["stepIndex"].as_u64(),
            c["totalSteps"].as_u64(),
            c["loopDepth"].as_u64()
        ),
        (Some(1), Some(3), Some(1))
    );
    assert_eq!(
        (
            c["agentType"].as_str(),
            c["identifier"].as_str(),
            c["label"].as_str()
        ),
        (
            Some("planning_agent"),
            Some("planner"),
            Some("Improve plan")
        )
    );
    let convs = &view.flags.flow.agent_conversations;
    assert_eq!(
        convs.keys().collect::<Vec<_>>(),
        ["coding_agent:summary", "planning_agent:planner"]
    );
    assert_eq!(view.flags.flow.step_path, vec![0, 2]);
    // The summary conversation continues: its 2nd request carries the 1st exchange and the persona.
    let reqs: Vec<_> = provider
        .requests()
        .into_iter()
        .filter(|r| r.role == Role::Agent("coding_agent".into()))
        .collect();
    assert!(
        reqs[0].messages[0]
            .content
            .contains("## Agent Context\nYou are the coding agent.")
    );
    assert!(reqs[1].messages.iter().any(|m| m.content == "summary 1"));
    assert!(
        reqs[1]
            .messages
            .last()
            .expect("last")
            .content
            .contains("{\"answer\": \"yes\"}")
    );
    assert_eq!(
        reqs[3]
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::Assistant)
            .count(),
        3
    );
}

#[tokio::test]
async fn nested_loops_break_at_each_depth() {
    let provider = replay(json!({
        "agent:w": ["i1", "i2", "i3"],
        "agent:inner": [{"answer": "no"}, {"answer": "yes"}, {"answer": "yes"}],
        "agent:outer": [{"answer": "no"}, {"answer": "yes"}]
    }));
    let flow = json!({"steps": [
        {"type": "startLoop", "label": "outer", "steps": [
            {"type": "startLoop", "label": "inner", "steps": [llm("w", "x", "work"), brk("inner", "yes")]},
            brk("outer", "yes")
        ]},
        {"type": "gate", "label": "after", "prompt": "iterations {{loop.depth}}", "options": [{"label": "ok"}]}
    ]});
    let env = env_with(provider.clone(), &[("nested", flow)]);
    let view = env.run("nested").await;
    assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
    let depths: Vec<u64> = view
        .turns
        .iter()
        .filter_map(|t| wire(&t.command)["loopDepth"].as_u64())
        .collect();
    // Each agent step's prompt and reply (seed 004's user turn, then the answer).
    assert_eq!(depths, [2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 2, 2, 2, 2, 1, 1, 0]);
    assert_eq!(view.turns.last().expect("gate").content, "iterations 0");
    assert!(view.flags.flow.loop_stack.is_empty());
    assert_eq!(provider.remaining(&Role::Agent("w".into())), 0);
}

#[tokio::test]
async fn a_decision_routes_on_output_score() {
    for (score, expected) in [(85, "high"), (79, "low")] {
        let provider = replay(
            json!({"agent:judge": [{"score": score}], "agent:high": ["H"], "agent:low": ["L"]}),
        );
        let flow = json!({"steps": [
            llm("judge", "j", "score it"),
            {"type": "decision", "branches": [{"condition": "output.score >= 80", "steps": [llm("high", "h", "good")]}],
             "default": {"steps": [llm("low", "l", "bad")]}},
            {"type": "gate", "prompt": "Score was {{steps.s}}", "context": ["output.text"], "options": [{"label": "done", "next": null}]}
        ]});
        let env = env_with(provider.clone(), &[("d", flow)]);
        let view = env.run("d").await;
        assert_eq!(view.status, RunStatus::Waiting);
        assert_eq!(
            provider.remaining(&Role::Agent(expected.into())),
            0,
            "{score}"
        );
        let other = if expected == "high" { "low" } else { "high" };
        assert_eq!(provider.remaining(&Role::Agent(other.into())), 1);
        assert_eq!(view.turns[0].content, "score it");
        assert!(view.turns[2].content.starts_with(if expected == "high" {
            "→ branch 1"
        } else {
            "→ default"
        }));
        let (_, handle) = env
            .engine
            .prepare_answer(
                &view.conversation_id,
                GateAnswer {
                    option: "done".into(),
                    input: None,
                    result: None,
                },
            )
            .expect("answer");
        handle.expect("runs").run().await;
        assert_eq!(
            env.engine
                .get_run(&view.conversation_id)
                .expect("view")
                .status,
            RunStatus::Completed
        );
    }
}

/// Replies `{"ok": true}` except for the item named "bad", counting calls in flight.
#[derive(Debug, Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
    calls: AtomicUsize,
}

impl Provider for Gauge {
    fn name(&self) -> &str {
        "gauge"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(n, Ordering::SeqCst);
            for _ in 0..5 {
                tokio::task::yield_now().await;
            }
            self.now.fetch_sub(1, Ordering::SeqCst);
            let bad = request
                .messages
                .iter()
                .any(|m| m.content.contains("item-bad"));
            let text = if bad {
                r#"{"ok": false}"#
            } else {
                r#"{"ok": true}"#
            };
            Ok(LlmReply { text: text.into() })
        })
    }
}

#[tokio::test]
async fn foreach_runs_100_items_4_at_a_time_and_join_reports_the_failure() {
    let mut files: Vec<String> = (0..100).map(|i| format!("item-{i}")).collect();
    files[37] = "item-bad".into();
    let gauge = Arc::new(Gauge::default());
    let flow = json!({"input": {"files": files}, "steps": [
        {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "concurrency": 4,
         "step": {"type": "llm", "agentType": "rev", "identifier": "r", "messages": [{"role": "user", "content": ["Review {{file}}"]}],
                  "postconditions": [{"check": "output.ok === true", "error": "not ok"}]}},
        {"type": "join", "id": "all", "onFailure": "skip"}
    ]});
    let env = env_with(gauge.clone(), &[("fan", flow.clone())]);
    let view = env.run("fan").await;
    assert_eq!(view.status, RunStatus::Completed, "{:?}", view.error);
    let max = gauge.max.load(Ordering::SeqCst);
    assert!((2..=4).contains(&max), "max in flight {max}");
    assert_eq!(
        gauge.calls.load(Ordering::SeqCst),
        101,
        "the bad item is retried once"
    );
    // Each of the 101 calls: its prompt (seed 004's user turn); then a
    // reply per item and the join's turn.
    assert_eq!(view.turns.len(), 101 + 100 + 1);
    assert_eq!(
        view.turns
            .iter()
            .filter(|t| t.role == "user" && wire(&t.command)["itemIndex"].is_u64())
            .count(),
        101
    );
    assert!(
        view.turns
            .iter()
            .any(|t| t.content.contains("Failed: postcondition failed: not ok"))
    );
    assert!(
        view.turns
            .last()
            .expect("join")
            .content
            .contains("Joined 99 of 100 items (1 failed)")
    );

    // With the default policy the join fails the run (the item counted as
    // failed, not asked about: onExhausted fail); needsAttention pauses it.
    let mut failing = flow.clone();
    failing["steps"][1] = json!({"type": "join", "onExhausted": "fail"});
    let mut asking = flow;
    asking["steps"][1] = json!({"type": "join", "onFailure": "needsAttention"});
    let env = env_with(Arc::new(Gauge::default()), &[("f", failing), ("a", asking)]);
    let view = env.run("f").await;
    assert_eq!(view.status, RunStatus::Failed);
    assert!(
        view.error
            .as_deref()
            .unwrap_or("")
            .contains("1 of 100 items failed")
    );
    let view = env.run("a").await;
    assert_eq!(view.status, RunStatus::NeedsAttention);
    assert_eq!(view.pending.as_ref().expect("pending")["kind"], "join");
    let (_, h) = env
        .engine
        .prepare_answer(
            &view.conversation_id,
            GateAnswer {
                option: "skip".into(),
                input: None,
                result: None,
            },
        )
        .expect("skip");
    h.expect("handle").run().await;
    assert_eq!(
        env.engine
            .get_run(&view.conversation_id)
            .expect("view")
            .status,
        RunStatus::Completed
    );
}

#[tokio::test]
async fn subflows_map_input_and_stop_at_the_depth_limit() {
    let provider = replay(json!({"agent:child": [{"answer": 42}]}));
    let outer = json!({"input": {"topic": "cats"}, "steps": [
        {"type": "subflow", "id": "sub", "flow": "inner", "input": {"topic": "input.topic", "line": "about {{input.topic}}"}},
        {"type": "gate", "prompt": "got {{steps.sub.answer}}", "options": [{"label": "ok"}]}
    ]});
    let inner = json!({"steps": [llm("child", "c", "Tell me {{input.line}} ({{input.topic}})")]});
    let rec = json!({"steps": [{"type": "subflow", "flow": "rec"}]});
    let env = env_with(
        provider.clone(),
        &[("outer", outer), ("inner", inner), ("rec", rec)],
    );
    let view = env.run("outer").await;
    assert_eq!(view.status, RunStatus::Waiting, "{view:?}");
    assert_eq!(view.turns.last().expect("gate").content, "got 42");
    assert!(
        provider.requests()[0]
            .messages
            .last()
            .expect("msg")
            .content
            .contains("Tell me about cats (cats)")
    );
    let view = env.run("rec").await;
    assert_eq!(view.status, RunStatus::Failed);
    let err = view.error.expect("error");
    assert!(
        err.contains(&format!("subflow depth limit ({MAX_SUBFLOW_DEPTH})")),
        "{err}"
    );
    let children = local::runs_named(&env.db(), "rec").expect("count");
    assert_eq!(children, i64::from(MAX_SUBFLOW_DEPTH) + 1);
}

#[tokio::test]
async fn a_failed_postcondition_retries_with_feedback_then_asks_the_user() {
    let provider = replay(json!({"agent:a": [{"score": 0}, {"score": 0}, {"score": 5}]}));
    let mut step = llm("a", "x", "score");
    step["postconditions"] =
        json!([{"check": "output.score > 0", "error": "score must be positive"}]);
    let env = env_with(
        provider.clone(),
        &[("p", json!({"steps": [step, llm("a", "y", "after")]}))],
    );
    let view = env.run("p").await;
    assert_eq!(view.status, RunStatus::NeedsAttention);
    let reqs = provider.requests();
    assert!(
        reqs[1]
            .messages
            .last()
            .expect("feedback")
            .content
            .contains("Previous attempt failed: score must be positive")
    );
    assert_eq!(
        view.pending.as_ref().expect("pending")["options"],
        json!(["retry", "skip", "stop"])
    );
    let bad = env.engine.prepare_answer(
        &view.conversation_id,
        GateAnswer {
            option: "maybe".into(),
            input: None,
            result: None,
        },
    );
    assert!(matches!(bad, Err(Error::InvalidRequest(_))));
    let (_, h) = env
        .engine
        .prepare_answer(
            &view.conversation_id,
            GateAnswer {
                option: "retry".into(),
                input: None,
                result: None,
            },
        )
        .expect("retry");
    h.expect("handle").run().await;
    let view = env.engine.get_run(&view.conversation_id).expect("view");
    // The retry passes; the next step has no reply left and fails clearly.
    assert_eq!(view.status, RunStatus::Failed);
    assert!(
        view.error
            .as_deref()
            .unwrap_or("")
            .contains("no more replies")
    );
}

#[tokio::test]
async fn preconditions_max_iterations_and_bad_break_replies_fail_clearly() {
    let mut guarded = llm("a", "x", "go");
    guarded["preconditions"] = json!([{"check": "input.ready", "error": "input is not ready"}]);
    let spin = json!({"steps": [{"type": "startLoop", "label": "spin", "maxIterations": 2, "steps": [brk("n", "yes")]}]});
    let env = env_with(
        replay(
            json!({"agent:n": [{"answer": "no"}, {"answer": "no"}, {"answer": "no"}], "agent:m": ["yes please"], "agent:k": [{"answer": "maybe"}]}),
        ),
        &[
            ("pre", json!({"steps": [guarded]})),
            ("spin", spin),
            (
                "m",
                json!({"steps": [{"type": "startLoop", "steps": [brk("m", "yes")]}]}),
            ),
            (
                "k",
                json!({"steps": [{"type": "startLoop", "steps": [brk("k", "yes")]}]}),
            ),
        ],
    );
    let v = env.run("pre").await;
    assert_eq!(
        (v.status, v.error.as_deref()),
        (
            RunStatus::Failed,
            Some("precondition of step \"llm\" failed: input is not ready")
        )
    );
    let v = env.run("spin").await;
    assert_eq!(v.status, RunStatus::Failed);
    assert!(
        v.error
            .as_deref()
            .unwrap_or("")
            .contains("reached maxIterations (2)"),
        "{v:?}"
    );
    let v = env.run("m").await;
    assert_eq!(v.status, RunStatus::Failed);
    assert!(
        v.error.as_deref().unwrap_or("").contains("not JSON"),
        "{v:?}"
    );
    let v = env.run("k").await;
    assert!(
        v.error.as_deref().unwrap_or("").contains("\"maybe\""),
        "{v:?}"
    );
}

#[tokio::test]
async fn the_graph_form_loops_on_a_guarded_back_edge() {
    let provider = replay(
        json!({"agent:a": [{"shouldRetry": true}, {"shouldRetry": true}, {"shouldRetry": true}], "agent:k": ["closed"]}),
    );
    let node = |id: &str, agent: &str, next: Option<&str>| {
        let mut n = llm(agent, "x", "work");
        n["id"] = json!(id);
        if let Some(t) = next {
            n["next"] = json!(t);
        }
        n
    };
    let graph = |max: u32| {
        json!({"nodes": [
            node("A", "a", Some("J")),
            {"id": "J", "type": "decision", "branches": [{"condition": "output.shouldRetry", "next": "A", "maxIterations": max}], "default": {"next": "K"}},
            node("K", "k", None)
        ]})
    };
    let env = env_with(provider, &[("g", graph(1))]);
    let v = env.run("g").await;
    assert_eq!(v.status, RunStatus::Failed);
    assert!(
        v.error
            .as_deref()
            .unwrap_or("")
            .contains("more than its maxIterations (1)"),
        "{v:?}"
    );
    let provider = replay(
        json!({"agent:a": [{"shouldRetry": true}, {"shouldRetry": false}], "agent:k": ["closed"]}),
    );
    let env = env_with(provider, &[("g", graph(3))]);
    let v = env.run("g").await;
    assert_eq!(v.status, RunStatus::Completed, "{v:?}");
    assert_eq!(contents(&v).last().map(String::as_str), Some("closed"));
    assert_eq!(v.flags.flow.step_path, vec![2]);
}

#[tokio::test]
async fn script_output_is_masked_before_it_reaches_an_agent() {
    let provider = replay(json!({"agent:a": ["fine"]}));
    let env = env_with(
        provider.clone(),
        &[(
            "s",
            json!({"steps": [
            {"type": "script", "id": "count", "path": "count.py", "args": ["{{input.n}}"]},
            llm("a", "x", "The customer is {{output.name}} with {{steps.count.rows}} rows")
        ], "input": {"n": 3}}),
        )],
    );
    let work = env.home.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(
        work.join("count.py"),
        "import json, sys\nprint(json.dumps({'name': 'John Smith', 'rows': int(sys.argv[1])}))\n",
    )
    .expect("write");
    let (started, handle) = env
        .engine
        .prepare(
            "s",
            StartFlow {
                working_folder: Some(work.display().to_string()),
                ..StartFlow::default()
            },
        )
        .expect("prepare");
    handle.run().await;
    let view = env.engine.get_run(&started.conversation_id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert!(
        view.turns[0].content.contains("John Smith"),
        "the local transcript shows real values"
    );
    let sent = provider.requests()[0]
        .messages
        .last()
        .expect("msg")
        .content
        .clone();
    assert_eq!(sent, "The customer is aaaa aaaaa with # rows");
}

/// A stop asked by another process (its `stop_requested` flag) is seen by
/// the lease heartbeat, which stops the step in flight; nothing polls the
/// flag in between.
#[tokio::test(start_paused = true)]
async fn a_stop_asked_by_another_process_is_seen_at_the_lease_heartbeat() {
    let flow = json!({"steps": [llm("a", "x", "one")]});
    let env = env_with(Arc::new(Hang), &[("h", flow)]);
    let (started, handle) = env
        .engine
        .prepare("h", StartFlow::default())
        .expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    tokio::task::yield_now().await;
    // What `stop` in another process writes.
    let conn = crate::support::db(env.home.path());
    store::set_stop_requested(&conn, &id, true).expect("ask");
    // The heartbeat renews the lease three times in its 30 s lifetime.
    tokio::time::sleep(std::time::Duration::from_secs(9)).await;
    assert!(!task.is_finished(), "stopped before the heartbeat");
    let status = tokio::time::timeout(std::time::Duration::from_secs(2), task)
        .await
        .expect("the heartbeat stops the run")
        .expect("joined");
    assert_eq!(status, RunStatus::Stopped);
    assert!(
        !store::stop_requested(&conn, &id).expect("read"),
        "the request is cleared"
    );
}

/// Stopping a subflow run its parent drives here raises the child's own
/// stop signal: the child stops at once, and its parent with it.
#[tokio::test]
async fn stopping_a_subflow_run_driven_here_stops_it_and_its_parent() {
    let outer = json!({"steps": [{"type": "subflow", "flow": "inner"}]});
    let inner = json!({"steps": [llm("a", "x", "one")]});
    let env = env_with(Arc::new(Hang), &[("outer", outer), ("inner", inner)]);
    let (started, handle) = env
        .engine
        .prepare("outer", StartFlow::default())
        .expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    let conn = crate::support::db(env.home.path());
    let mut child = None;
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        child = conn
            .query_row(
                "SELECT id FROM flow_runs WHERE parent_id = ?1",
                [&id],
                |r| r.get::<_, String>(0),
            )
            .ok();
        if child.is_some() {
            break;
        }
    }
    let child = child.expect("the subflow run started");
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let view = tokio::time::timeout(std::time::Duration::from_secs(5), env.engine.stop(&child))
        .await
        .expect("stopped at once")
        .expect("stop");
    assert_eq!(view.status, RunStatus::Stopped);
    assert_eq!(task.await.expect("joined"), RunStatus::Stopped);
}

#[tokio::test]
async fn stop_cancels_the_step_in_flight_and_resume_validates_its_path() {
    let flow = json!({"steps": [llm("a", "x", "one"), {"type": "startLoop", "steps": [llm("a", "x", "two"), brk("a", "yes")]}]});
    let env = env_with(Arc::new(Hang), &[("h", flow)]);
    let (started, handle) = env
        .engine
        .prepare("h", StartFlow::default())
        .expect("prepare");
    let id = started.conversation_id.clone();
    let task = tokio::spawn(handle.run());
    tokio::task::yield_now().await;
    let again = env.engine.prepare(
        "h",
        StartFlow {
            conversation_id: Some(id.clone()),
            ..StartFlow::default()
        },
    );
    assert!(matches!(again, Err(Error::RunInProgress(_))));
    assert!(matches!(
        env.engine.delete(&id),
        Err(Error::RunInProgress(_))
    ));
    let view = env.engine.stop(&id).await.expect("stop");
    assert_eq!(task.await.expect("joined"), RunStatus::Stopped);
    assert_eq!(view.status, RunStatus::Stopped);
    assert!(view.turns.is_empty());
    for bad in [vec![-1], vec![5], vec![1, 2], vec![1, 0, 0], vec![]] {
        let r = env.engine.prepare(
            "h",
            StartFlow {
                conversation_id: Some(id.clone()),
                resume_step_path: Some(bad.clone()),
                ..StartFlow::default()
            },
        );
        assert!(matches!(r, Err(Error::InvalidRequest(_))), "{bad:?}");
    }
    let r = env.engine.prepare(
        "other",
        StartFlow {
            conversation_id: Some(id.clone()),
            ..StartFlow::default()
        },
    );
    assert!(matches!(r, Err(Error::InvalidRequest(_))));
    assert!(matches!(
        env.engine.prepare(
            "h",
            StartFlow {
                resume_step_path: Some(vec![0]),
                ..StartFlow::default()
            }
        ),
        Err(Error::InvalidRequest(_))
    ));
    assert!(matches!(
        env.engine.prepare("missing", StartFlow::default()),
        Err(Error::NotFound { .. })
    ));
    env.engine
        .patch(
            &id,
            RunPatch {
                title: Some("Renamed".into()),
                archived: Some(true),
            },
        )
        .expect("archive");
    let r = env.engine.prepare(
        "h",
        StartFlow {
            conversation_id: Some(id.clone()),
            ..StartFlow::default()
        },
    );
    assert!(matches!(r, Err(Error::Archived(_))));
}

#[tokio::test]
async fn resume_uses_the_stored_definition_and_checks_agent_ownership() {
    let flow = json!({"steps": [llm("a", "x", "one"), {"type": "gate", "prompt": "go on?", "options": [{"label": "yes"}]}, llm("a", "x", "two")]});
    let provider = replay(json!({"agent:a": ["first", "second", "third"]}));
    let env = env_with(provider.clone(), &[("r", flow)]);
    let view = env.run("r").await;
    assert_eq!(view.status, RunStatus::Waiting);
    let id = view.conversation_id.clone();
    // The file changes (and breaks) mid-run: the run keeps its definition.
    std::fs::write(env.home.path().join("flows/r.json"), "{\"steps\": []}").expect("write");
    assert!(env.engine.list().expect("list").flows[0].disabled);
    let (_, h) = env
        .engine
        .prepare_answer(
            &id,
            GateAnswer {
                option: "YES".into(),
                input: None,
                result: None,
            },
        )
        .expect("answer");
    h.expect("handle").run().await;
    let view = env.engine.get_run(&id).expect("view");
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(
        contents(&view),
        ["one", "first", "go on?", "yes", "two", "second"]
    );
    // Resume from step [2] again: the agent's conversation continues.
    let view = env.resume("r", &id, Some(vec![2])).await;
    assert_eq!(view.status, RunStatus::Completed);
    let last = provider.requests().pop().expect("request");
    assert!(last.messages.iter().any(|m| m.content == "second"));
    // A conversation id stored for agent a but owned by agent b is refused.
    let conv = view.flags.flow.agent_conversations["a:x"].clone();
    local::reassign_agent_conversation(&env.db(), &conv, "b").expect("tamper");
    let r = env.engine.prepare(
        "r",
        StartFlow {
            conversation_id: Some(id),
            resume_step_path: Some(vec![0]),
            ..StartFlow::default()
        },
    );
    assert!(matches!(r, Err(Error::AgentMismatch(_))), "{r:?}");
    // Seed 004: the mismatch is written to the run's transcript.
    let after = env.engine.get_run(&view.conversation_id).expect("view");
    let last = after.turns.last().expect("a turn");
    assert!(
        last.content.starts_with("Resume refused: conversation")
            && last.content.contains("belongs to agent \"b\""),
        "{}",
        last.content
    );
    assert_eq!(after.status, view.status, "the run is otherwise unchanged");
}

#[tokio::test]
async fn an_unknown_command_starts_a_run_that_fails_naming_it() {
    // Seed 004: the run starts, and ends failed (`turn_final` failed).
    let flow = json!({"steps": [{"type": "command", "agentType": "p", "identifier": "x", "commandName": "nope"}]});
    let env = env_with(replay(json!({})), &[("c", flow)]);
    let view = env.run("c").await;
    assert_eq!(view.status, RunStatus::Failed, "{view:?}");
    let error = view.error.clone().unwrap_or_default();
    assert!(
        error.contains("unknown command \"nope\" of agent \"p\""),
        "{error}"
    );
    assert!(
        view.turns
            .last()
            .is_some_and(|t| t.content.contains("unknown command")),
        "the transcript says why: {:?}",
        view.turns
    );
    let r = env.engine.prepare(
        "c",
        StartFlow {
            working_folder: Some("/no/such/folder".into()),
            ..StartFlow::default()
        },
    );
    assert!(matches!(r, Err(Error::InvalidRequest(_))));
}
