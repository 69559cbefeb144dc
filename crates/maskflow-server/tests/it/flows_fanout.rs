//! Fan-out and fan-in through the HTTP API (issue 18, points 8 and 10): seed
//! 003's PR Review imported from its Mermaid text routes on the score of its
//! join's reply, the fan-in call is in the privacy ledger like every agent
//! call, and a foreach retry due when a run stopped is shown to the person.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::StatusCode;
use common::{TOKEN, call, settled};
use maskflow_core::{Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::Roles;
use maskflow_llm::{
    BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, ReplayProvider,
};
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

const PR_REVIEW: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review.mmd");

fn open(home: &Path, provider: Arc<dyn Provider>) -> (Router, Service) {
    let service =
        Service::open(ServiceConfig::from_settings(home).overriding(Roles::all(provider)))
            .expect("service");
    (
        router(AppState::new(service.clone(), TOKEN.into(), 4242)),
        service,
    )
}

#[tokio::test]
async fn the_pr_review_approves_a_high_score_and_requests_changes_on_a_low_one() {
    for (score, route, last) in [
        (90, "Generate approval comment", "Merged."),
        (30, "Generate constructive feedback", "Closed."),
    ] {
        let home = tempfile::tempdir().expect("tempdir");
        let provider = Arc::new(
            ReplayProvider::from_value(&json!({"agent:assistant": [
                {"title": "Fix parser"},
                {"files": [{"path": "src/a.rs"}, {"path": "src/b.rs"}]},
                {"score": 88, "issues": []},
                {"score": 45, "issues": [{"severity": "high", "line": 7, "message": "unchecked index"}]},
                {"score": score, "summary": "overall", "criticalIssues": [], "warnings": []},
                if score >= 80 { json!("Nice work.") } else { json!({"shouldRetry": false}) },
                last
            ]}))
            .expect("replay"),
        );
        let (app, service) = open(home.path(), provider.clone());
        let mut events = service.subscribe();
        let (status, body) = call(
            &app,
            "POST",
            "/api/flows/import",
            Some(json!({"mermaid": PR_REVIEW, "name": "pr-review"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, def) = call(&app, "GET", "/api/flows/pr-review", None).await;
        let join = def["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["id"] == "D")
            .cloned()
            .expect("D");
        assert_eq!(join["type"], "join");
        assert!(
            join["prompt"]
                .as_str()
                .unwrap_or("")
                .starts_with("Aggregate all file reviews")
        );
        let (status, started) =
            call(&app, "POST", "/api/flows/pr-review/run", Some(json!({}))).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{started}");
        let id = started["conversationId"].as_str().expect("id").to_owned();
        assert_eq!(settled(&mut events, &id).await, RunStatus::Completed);
        let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
        let turns = run["turns"].as_array().expect("turns");
        assert_eq!(turns.last().expect("turn")["content"], last);
        let sent: Vec<String> = provider
            .requests()
            .iter()
            .map(|r| r.messages.last().expect("message").content.clone())
            .collect();
        assert!(sent[5].starts_with(route), "{score}: {sent:#?}");

        // The fan-in call (the one of step "Join Reviews") went through the
        // guard into the ledger, once.
        let (status, ledger) = call(&app, "GET", "/api/ledger?q=Join%20Reviews", None).await;
        assert_eq!(status, StatusCode::OK, "{ledger}");
        let entries = ledger.as_array().expect("entries");
        assert_eq!(entries.len(), 1, "{ledger}");
        assert_eq!(entries[0]["role"], "agent:assistant");
        let body = entries[0]["request_body"]
            .as_str()
            .or_else(|| entries[0]["requestBody"].as_str())
            .unwrap_or("");
        assert!(
            body.contains("unchecked index") && body.contains("Aggregate all file reviews"),
            "{body}"
        );
        assert_eq!(
            entries[0]["reply"]
                .as_str()
                .map(|r| r.contains(&format!("\"score\":{score}"))),
            Some(true),
            "{ledger}"
        );
    }
}

/// Fails item-b's first call, hangs on its second (until stopped), then answers.
#[derive(Debug, Default)]
struct FlakyB {
    b_calls: AtomicUsize,
    hanging: tokio::sync::Notify,
}

impl Provider for FlakyB {
    fn name(&self) -> &str {
        "flaky"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let text = request.messages.last().map_or("", |m| m.content.as_str());
            if text.contains("item-b") {
                match self.b_calls.fetch_add(1, Ordering::SeqCst) {
                    0 => {
                        return Err(ProviderError::Unconfigured {
                            role: "flaky test back end".into(),
                        });
                    }
                    1 => {
                        self.hanging.notify_one();
                        std::future::pending::<()>().await;
                    }
                    _ => {}
                }
            }
            Ok(LlmReply {
                text: r#"{"ok": true}"#.into(),
            })
        })
    }
}

#[tokio::test]
async fn a_retry_due_when_the_run_stopped_is_shown_before_it_runs() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    crate::common::agent_files(home.path(), &["rev"]);
    std::fs::write(
        home.path().join("flows/fan.json"),
        json!({"input": {"files": ["item-a", "item-b", "item-c"]}, "steps": [
            {"type": "foreach", "itemsPath": "input.files", "itemVariable": "file", "maxRetries": 2,
             "step": {"type": "llm", "agentType": "rev", "identifier": "r",
                      "messages": [{"role": "user", "content": ["Review {{file}}"]}]}},
            {"type": "join", "id": "all"}
        ]})
        .to_string(),
    )
    .expect("write");
    let provider = Arc::new(FlakyB::default());
    let (app, service) = open(home.path(), provider.clone());
    let mut events = service.subscribe();
    let (status, started) = call(&app, "POST", "/api/flows/fan/run", Some(json!({}))).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let id = started["conversationId"].as_str().expect("id").to_owned();
    provider.hanging.notified().await; // item-b's retry is in flight
    let (status, _) = call(&app, "POST", &format!("/api/flow-runs/{id}/stop"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Stopped);

    let (status, _) = call(
        &app,
        "POST",
        "/api/flows/fan/run",
        Some(json!({"conversationId": id})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::NeedsAttention);
    assert_eq!(
        provider.b_calls.load(Ordering::SeqCst),
        2,
        "not retried silently"
    );
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let pending: &Value = &run["pending"];
    assert_eq!(pending["kind"], "attention", "{run}");
    let error = pending["error"].as_str().unwrap_or("");
    assert!(error.contains("item 1: retry 1 of 2"), "{error}");

    let (status, _) = call(
        &app,
        "POST",
        &format!("/api/flow-runs/{id}/gate"),
        Some(json!({"option": "retry"})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Completed);
    assert_eq!(provider.b_calls.load(Ordering::SeqCst), 3);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let items = run["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter(|t| t["role"] == "assistant" && t["command"]["itemIndex"].is_u64())
        .count();
    assert_eq!(items, 3, "{run}");
    // Each finished attempt's prompt is a user turn too (seed 004): item-a,
    // item-b's failure and its retry after the resume, item-c (the attempt
    // cut off by the stop committed nothing).
    let prompts = run["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter(|t| t["role"] == "user" && t["command"]["itemIndex"].is_u64())
        .count();
    assert_eq!(prompts, 4, "{run}");
}
