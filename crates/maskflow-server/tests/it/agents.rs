//! Agent routes end to end (issue 18, point 12): list, fetch by name,
//! create, update and delete through the HTTP API of `maskflow serve`, the
//! files they write as the flows read them, every problem of a bad request
//! named in one 400, the refusal to delete an agent a flow uses, and agent
//! and flow files whose names the loader refuses listed disabled with why.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::keys::KeyringCredentials;
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};

/// Opens the service as `maskflow serve` does (settings mode), with keys
/// in a mock keyring so the test never touches the user's.
fn open(home: &Path) -> Router {
    let service = Service::open(ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home)
    })
    .expect("service");
    router(AppState::new(service, TOKEN.into(), 4242))
}

/// Settings with the manual back end and, when `local`, an OpenAI-compatible one.
fn settings(local: bool) -> Value {
    let mut providers = vec![json!({"id": "manual", "kind": "manual"})];
    if local {
        providers.push(json!({"id": "local", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m1"}));
    }
    json!({
        "providers": providers,
        "roles": {"validator": "manual", "clarifier": "manual", "builder": "manual"}
    })
}

async fn configure(app: &Router, local: bool) {
    let (status, body) = call(app, "PUT", "/api/settings", Some(settings(local))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// A flow whose one step asks `agent`.
fn flow_using(agent: &str) -> String {
    json!({"description": "Uses an agent", "steps": [{"type": "llm", "agentType": agent, "identifier": "main",
        "messages": [{"role": "user", "content": ["Review this."]}]}]})
    .to_string()
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn agents_are_created_fetched_listed_updated_and_deleted_through_the_api() {
    let home = tempfile::tempdir().expect("tempdir");
    let app = open(home.path());
    configure(&app, true).await;
    let (status, list) = call(&app, "GET", "/api/agents", None).await;
    assert_eq!((status, list), (StatusCode::OK, json!({"agents": []})));

    let (status, created) = call(
        &app,
        "POST",
        "/api/agents",
        Some(json!({"name": "reviewer", "prompt": "  You review code.  ", "provider": "local", "model": "m2"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let want = json!({"name": "reviewer", "prompt": "You review code.", "provider": "local",
        "model": "m2", "usedBy": [], "disabled": false});
    assert_eq!(created, want);
    // The file is what the flows read: seed 004's agent file.
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join("agents/reviewer.json")).expect("agent file"),
    )
    .expect("json");
    assert_eq!(
        file,
        json!({"provider": "local", "model": "m2", "prompt": "You review code."})
    );
    let (status, fetched) = call(&app, "GET", "/api/agents/reviewer", None).await;
    assert_eq!((status, fetched), (StatusCode::OK, want));

    // Update replaces the settings: the model left out is unset.
    let (status, updated) = call(
        &app,
        "PUT",
        "/api/agents/reviewer",
        Some(json!({"name": "reviewer", "prompt": "You review tests.", "provider": "local"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["prompt"], "You review tests.");
    assert!(updated.get("model").is_none(), "{updated}");

    // A flow that names it: listed as a user, exported with it, and the delete is refused.
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    std::fs::write(
        home.path().join("flows/review.json"),
        flow_using("reviewer"),
    )
    .expect("write flow");
    let (_, list) = call(&app, "GET", "/api/agents", None).await;
    assert_eq!(list["agents"][0]["usedBy"], json!(["review"]));
    let (status, bundle) = call(&app, "GET", "/api/flows/review/export", None).await;
    assert_eq!(status, StatusCode::OK, "{bundle}");
    assert_eq!(bundle["agents"][0]["agent"]["prompt"], "You review tests.");
    let (status, body) = call(&app, "DELETE", "/api/agents/reviewer", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "conflict");
    assert!(message(&body).contains("used by flow review"), "{body}");
    assert!(home.path().join("agents/reviewer.json").exists());

    // A back end removed in Settings: the agent is kept, with a warning.
    configure(&app, false).await;
    let (_, fetched) = call(&app, "GET", "/api/agents/reviewer", None).await;
    let warning = fetched["warning"].as_str().expect("warning");
    assert!(warning.contains("\"local\" is not configured"), "{warning}");
    configure(&app, true).await;

    std::fs::remove_file(home.path().join("flows/review.json")).expect("rm flow");
    // Two steps, like a workflow's delete (issue 31 point 7): the first
    // deletes nothing and answers a token bound to this agent.
    let (status, body) = call(&app, "DELETE", "/api/agents/reviewer", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "confirmation_required", "{body}");
    assert_eq!(body["would_delete"]["agents"], 1, "{body}");
    assert!(home.path().join("agents/reviewer.json").exists());
    let token = body["confirm_token"].as_str().expect("token").to_owned();
    let (status, body) = call(&app, "DELETE", "/api/agents/reviewer?confirm=wrong", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(home.path().join("agents/reviewer.json").exists());
    let uri = format!("/api/agents/reviewer?confirm={token}");
    let (status, body) = call(&app, "DELETE", &uri, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["deleted"], true, "{body}");
    assert!(!home.path().join("agents/reviewer.json").exists());
    let (status, body) = call(&app, "GET", "/api/agents/reviewer", None).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (_, list) = call(&app, "GET", "/api/agents", None).await;
    assert_eq!(list, json!({"agents": []}));
}

#[tokio::test]
async fn every_problem_of_a_bad_request_is_named_in_one_answer() {
    let home = tempfile::tempdir().expect("tempdir");
    let app = open(home.path());
    configure(&app, true).await;

    let (status, body) = call(
        &app,
        "POST",
        "/api/agents",
        Some(json!({"name": "bad name", "colour": "red", "prompt": 5, "provider": "nope"})),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request")),
        "{body}"
    );
    for needle in [
        "colour: unknown field; expected one of name, displayName, prompt, provider, model",
        "prompt: must be a string (it is a number)",
        "name: \"bad name\" may only use letters, digits, - and _",
        "provider: \"nope\" is not a configured back end (configured: manual, local)",
    ] {
        assert!(message(&body).contains(needle), "{needle} in {body}");
    }
    assert!(!home.path().join("agents").exists(), "nothing written");

    let (status, body) = call(&app, "POST", "/api/agents", Some(json!({"prompt": "p"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message(&body).contains("name: missing"), "{body}");
    let (status, body) = call(&app, "POST", "/api/agents", Some(json!(["reviewer"]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = call(
        &app,
        "POST",
        "/api/agents",
        Some(json!({"name": "m", "provider": "manual", "model": "gpt"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message(&body).contains("takes no model"), "{body}");

    let (status, _) = call(&app, "POST", "/api/agents", Some(json!({"name": "a"}))).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = call(&app, "POST", "/api/agents", Some(json!({"name": "a"}))).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(message(&body).contains("exists already"), "{body}");
    let (status, body) = call(&app, "PUT", "/api/agents/a", Some(json!({"name": "b"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(message(&body).contains("not renamed"), "{body}");
    let (status, body) = call(
        &app,
        "PUT",
        "/api/agents/a",
        Some(json!({"provider": "gone", "temperature": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        message(&body).contains("temperature: unknown field")
            && message(&body).contains("\"gone\""),
        "{body}"
    );

    for (method, body) in [("GET", None), ("PUT", Some(json!({}))), ("DELETE", None)] {
        let (status, reply) = call(&app, method, "/api/agents/ghost", body.clone()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} ghost: {reply}");
        let (status, reply) = call(&app, method, "/api/agents/bad%20name", body).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{method} bad name: {reply}"
        );
        assert!(message(&reply).contains("may only use"), "{reply}");
    }
}

#[tokio::test]
async fn files_whose_names_are_refused_are_listed_disabled_with_the_reason() {
    let home = tempfile::tempdir().expect("tempdir");
    let app = open(home.path());
    configure(&app, true).await;
    for dir in ["flows", "agents"] {
        std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
    }
    // `assistant` is the built-in agent: no file, so the agent list stays as written.
    std::fs::write(
        home.path().join("flows/my flow.json"),
        flow_using("assistant"),
    )
    .expect("write");
    std::fs::write(home.path().join("flows/ok.json"), flow_using("assistant")).expect("write");
    std::fs::write(home.path().join("agents/bad one.json"), "{}").expect("write");
    std::fs::write(home.path().join("agents/odd.json"), r#"{"colour": 1}"#).expect("write");

    let (status, list) = call(&app, "GET", "/api/flows", None).await;
    assert_eq!(status, StatusCode::OK);
    let refused = &list["flows"][0];
    assert_eq!(
        (&refused["name"], &refused["disabled"]),
        (&json!("my flow"), &json!(true))
    );
    let error = refused["error"].as_str().expect("error");
    assert!(
        error.contains("flows/my flow.json") && error.contains("rename it, e.g. to my_flow.json"),
        "{error}"
    );
    assert_eq!(list["flows"][1]["disabled"], false);

    let (_, agents) = call(&app, "GET", "/api/agents", None).await;
    let names: Vec<&str> = agents["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(names, ["bad one", "odd"]);
    assert!(
        agents["agents"]
            .as_array()
            .expect("agents")
            .iter()
            .all(|a| a["disabled"] == true)
    );
    assert!(
        agents["agents"][0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("bad_one.json"))
    );
    let (status, odd) = call(&app, "GET", "/api/agents/odd", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        odd["error"]
            .as_str()
            .is_some_and(|e| e.contains("unknown field `colour`")),
        "{odd}"
    );
    // An invalid file is fixed by saving the agent over it.
    let (status, fixed) = call(
        &app,
        "PUT",
        "/api/agents/odd",
        Some(json!({"prompt": "Fixed."})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{fixed}");
    assert_eq!(
        (&fixed["disabled"], &fixed["prompt"]),
        (&json!(false), &json!("Fixed."))
    );
}
