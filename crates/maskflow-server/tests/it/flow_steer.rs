//! Agents that steer, where a person meets them: an agent's ESCALATE pauses
//! the run over HTTP with its reason, the person replies through the gate
//! route, and the run goes on with the agent's next reply.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use common::{TOKEN, call, settled};
use maskflow_core::{Service, ServiceConfig};
use maskflow_flows::RunStatus;
use maskflow_llm::ReplayProvider;
use maskflow_llm::Roles;
use maskflow_server::api::{AppState, router};
use serde_json::json;

fn open(home: &Path, replies: serde_json::Value) -> (Router, Service) {
    let provider = Arc::new(ReplayProvider::from_value(&replies).expect("replay"));
    let service =
        Service::open(ServiceConfig::from_settings(home).overriding(Roles::all(provider)))
            .expect("service");
    (
        router(AppState::new(service.clone(), TOKEN.into(), 4242)),
        service,
    )
}

#[tokio::test]
async fn an_escalating_agent_waits_for_a_person_who_answers_through_the_api() {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    crate::common::agent_files(home.path(), &["a", "b"]);
    std::fs::write(
        home.path().join("flows/contract.json"),
        json!({"steps": [
            {"type": "llm", "id": "d", "label": "Draft", "agentType": "a", "identifier": "x",
             "instructions": "Draft the reply to the buyer.",
             "messages": [{"role": "user", "content": ["Draft."]}]},
            {"type": "llm", "label": "Send", "agentType": "b", "identifier": "x",
             "messages": [{"role": "user", "content": ["Send {{steps.d.summary}}"]}]}
        ]})
        .to_string(),
    )
    .expect("write");
    let escalate = "## Status\nSUCCESS\n\n## Summary\nDrafted.\n\n## Next Action\nESCALATE: the buyer asks for a discount I cannot grant.\n";
    let done = "## Status\nSUCCESS\n\n## Summary\nDrafted with 5 %.\n\n## Next Action\nCOMPLETE\n";
    let (app, service) = open(
        home.path(),
        json!({"agent:a": [escalate, done], "agent:b": ["sent"]}),
    );
    let mut events = service.subscribe();
    let (status, started) = call(&app, "POST", "/api/flows/contract/run", Some(json!({}))).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let id = started["conversationId"].as_str().expect("id").to_owned();
    assert_eq!(settled(&mut events, &id).await, RunStatus::Waiting);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    assert_eq!(run["status"], "waiting");
    assert_eq!(run["pending"]["kind"], "gate");
    assert_eq!(
        run["pending"]["prompt"],
        "Step \"Draft\" asks for a person (ESCALATE): the buyer asks for a discount I cannot grant."
    );
    let gate = format!("/api/flow-runs/{id}/gate");
    let (status, _) = call(&app, "POST", &gate, Some(json!({"option": "Reply"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = call(
        &app,
        "POST",
        &gate,
        Some(json!({"option": "Reply", "input": "Offer 5 % at most."})),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(settled(&mut events, &id).await, RunStatus::Completed);
    let (_, run) = call(&app, "GET", &format!("/api/flow-runs/{id}"), None).await;
    let turns: Vec<&str> = run["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .filter_map(|t| t["content"].as_str())
        .collect();
    assert!(turns.contains(&"Reply: Offer 5 % at most."), "{turns:?}");
    assert_eq!(turns.last(), Some(&"sent"), "{turns:?}");
}
