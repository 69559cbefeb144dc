//! LLM back ends through the whole API: the privacy guard and ledger on the
//! seed conversation (the "done when"), the manual back end end to
//! end, the seed conversation through each automated back end (wiremock
//! speaking each protocol), and a planted API key that must show up nowhere.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::StatusCode;
use maskflow_core::builder::Phase;
use maskflow_core::{Event, Service, ServiceConfig, Status};
use maskflow_llm::Provider;
use maskflow_llm::Role;
use maskflow_llm::keys::KeyringCredentials;
use maskflow_server::api::{AppState, router};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::support::*;

mod categories;
mod repair;

/// Raw values in the user's file; none may leave unconfirmed.
const RAW: [&str; 5] = [
    "Zebulon",
    "Quagmire",
    "zebulon@quagmire-corp.com",
    "PROD-194211",
    "12,345.67",
];

const CSV: &str = "customer,email,amount,sku,date\n\
Zebulon Quagmire,zebulon@quagmire-corp.com,\"$12,345.67\",PROD-194211,2024-01-15\n\
Ottoline Fairweather,ottoline@fairweather.example,\"$9,876.54\",PROD-550012,2024-02-03\n";

async fn upload(service: &Service) -> String {
    let (id, path) = service.new_upload("sales.csv").expect("upload slot");
    std::fs::write(&path, CSV).expect("write");
    service
        .add_upload(&id, "sales.csv", path)
        .await
        .expect("extract")
        .file_id
}

fn open_with(home: &std::path::Path, config: ServiceConfig) -> (Router, Service) {
    let _ = home;
    let service = Service::open(config).expect("open");
    (
        router(AppState::new(service.clone(), TOKEN.into(), PORT)),
        service,
    )
}

async fn wait_status(rx: &mut tokio::sync::broadcast::Receiver<Event>, want: Status) {
    let wait = async {
        loop {
            if let Event::StatusChanged { status, .. } = rx.recv().await.expect("event")
                && status == want
            {
                return;
            }
        }
    };
    // A bound, so a missing event fails the test instead of hanging CI.
    tokio::time::timeout(std::time::Duration::from_secs(120), wait)
        .await
        .unwrap_or_else(|_| panic!("no version reached {want:?}"));
}

fn ledger_leaks(entries: &Value) -> Vec<String> {
    let mut leaks = Vec::new();
    for e in entries.as_array().expect("ledger list") {
        let body = e["request_body"].as_str().unwrap_or("").to_lowercase();
        let error = e["error"].as_str().unwrap_or("").to_lowercase();
        for raw in RAW {
            let r = raw.to_lowercase();
            if body.contains(&r) || error.contains(&r) {
                leaks.push(format!("{raw} in {}", e["id"]));
            }
        }
    }
    leaks
}

#[tokio::test]
async fn no_raw_value_leaves_and_a_users_raw_value_is_blocked_until_confirmed() {
    let home = tempfile::tempdir().expect("tmp");
    let (app, service) = open(
        home.path(),
        replay(json!({
            "validator": [{"feasible": true}],
            "clarifier": [
                {"needs_clarification": true, "question": "Which amount column?"},
                {"needs_clarification": false},
                {"needs_clarification": true, "question": "Anything else?"}
            ],
            "builder": [build("Sales Summary")]
        })),
    );
    let mut events = service.subscribe();
    let file_id = upload(&service).await;
    let (s, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let msg = format!("/api/workflows/{wf}/messages");

    let (s, r) = call(
        &app,
        "POST",
        &msg,
        Some(json!({"content": "sum the amount per customer"})),
    )
    .await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("clarifying")),
        "{r}"
    );
    let (s, r) = call(
        &app,
        "POST",
        &msg,
        Some(json!({"content": "the amount column, keep all rows"})),
    )
    .await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("building")),
        "{r}"
    );
    wait_status(&mut events, Status::PendingUserApproval).await;

    let (_, ledger) = call(&app, "GET", "/api/ledger?limit=500", None).await;
    let entries = ledger.as_array().expect("list").clone();
    let roles: Vec<&str> = entries.iter().filter_map(|e| e["role"].as_str()).collect();
    assert_eq!(
        roles,
        ["builder", "clarifier", "clarifier", "validator"],
        "{ledger}"
    );
    assert!(
        entries
            .iter()
            .all(|e| e["outcome"] == "ok" && e["provider"] == "replay")
    );
    assert!(
        entries.iter().any(|e| e["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("customer"))),
        "column names are sent"
    );
    assert_eq!(ledger_leaks(&ledger), Vec::<String>::new());

    // The user types a raw value: blocked, masked, with its source.
    let typed = "only the rows of Zebulon Quagmire please";
    let (s, r) = call(&app, "POST", &msg, Some(json!({"content": typed}))).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{r}");
    assert_eq!(r["error"], "privacy_blocked");
    let matches = r["matches"].as_array().expect("matches");
    assert!(
        matches
            .iter()
            .any(|m| m["masked"] == "Aaaaaaa" && m["source"] == "sales.csv, column \"customer\""),
        "{r}"
    );
    let text = r.to_string().to_lowercase();
    assert!(
        !text.contains("zebulon") && !text.contains("quagmire"),
        "{r}"
    );
    let (_, ledger) = call(&app, "GET", "/api/ledger?q=blocked", None).await;
    assert_eq!(ledger_leaks(&ledger), Vec::<String>::new());
    let (_, all) = call(&app, "GET", "/api/ledger", None).await;
    let blocked: Vec<&Value> = all
        .as_array()
        .expect("l")
        .iter()
        .filter(|e| e["blocked"] == true)
        .collect();
    assert_eq!(blocked.len(), 1);
    assert_eq!(blocked[0]["request_body"], "");
    assert_eq!(ledger_leaks(&all), Vec::<String>::new());
    // Still blocked on a second try without confirmation.
    let (s, _) = call(&app, "POST", &msg, Some(json!({"content": typed}))).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);

    // Confirmed: the user's own text is sent.
    let (s, r) = call(
        &app,
        "POST",
        &msg,
        Some(json!({"content": typed, "confirm_privacy": true})),
    )
    .await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("clarifying")),
        "{r}"
    );
    let (_, last) = call(&app, "GET", "/api/ledger?limit=1", None).await;
    assert_eq!(last[0]["outcome"], "ok");
    assert!(
        last[0]["request_body"]
            .as_str()
            .is_some_and(|b| b.contains("Zebulon Quagmire"))
    );
}

/// Answers by role, in each protocol's streaming format.
#[derive(Clone)]
struct ByRole {
    kind: &'static str,
    clarifier_calls: Arc<Mutex<u32>>,
}

impl ByRole {
    fn text_for(&self, body: &str) -> String {
        if body.contains("needs_clarification") {
            let mut n = self.clarifier_calls.lock().expect("lock");
            *n += 1;
            if *n == 1 {
                json!({"needs_clarification": true, "question": "Should I keep all columns from both files?"}).to_string()
            } else {
                json!({"needs_clarification": false}).to_string()
            }
        } else if body.contains("feasible") {
            json!({"feasible": true}).to_string()
        } else {
            build("Sales Data Merger").to_string()
        }
    }
}

impl Respond for ByRole {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        let text = self.text_for(&body);
        let mut out = String::new();
        let pieces: Vec<String> = text
            .chars()
            .collect::<Vec<_>>()
            .chunks(7)
            .map(|c| c.iter().collect())
            .collect();
        let ct = match self.kind {
            "openai" => {
                for p in &pieces {
                    out.push_str(&format!(
                        "data: {}\n\n",
                        json!({"choices":[{"index":0,"delta":{"content":p},"finish_reason":null}]})
                    ));
                }
                out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":42,\"completion_tokens\":9}}\n\ndata: [DONE]\n\n");
                "text/event-stream"
            }
            "anthropic" => {
                out.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":42,\"output_tokens\":1}}}\n\n");
                for p in &pieces {
                    out.push_str(&format!("event: content_block_delta\ndata: {}\n\n", json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":p}})));
                }
                out.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
                "text/event-stream"
            }
            _ => {
                for p in &pieces {
                    out.push_str(&format!(
                        "{}\n",
                        json!({"message":{"role":"assistant","content":p},"done":false})
                    ));
                }
                out.push_str("{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"prompt_eval_count\":42,\"eval_count\":9}\n");
                "application/x-ndjson"
            }
        };
        ResponseTemplate::new(200)
            .insert_header("content-type", ct)
            .set_body_string(out)
    }
}

async fn seed_conversation(app: &Router, service: &Service) -> String {
    let mut events = service.subscribe();
    let file_id = upload(service).await;
    let (s, created) = call(
        app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let msg = format!("/api/workflows/{wf}/messages");
    let (s, r) = call(
        app,
        "POST",
        &msg,
        Some(json!({"content": "merge these files by the date column"})),
    )
    .await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("clarifying")),
        "{r}"
    );
    assert_eq!(r["message"], "Should I keep all columns from both files?");
    let (s, r) = call(app, "POST", &msg, Some(json!({"content": "all of them"}))).await;
    assert_eq!(
        (s, r["status"].as_str()),
        (StatusCode::OK, Some("building")),
        "{r}"
    );
    wait_status(&mut events, Status::PendingUserApproval).await;
    let (_, w) = call(app, "GET", &format!("/api/workflows/{wf}"), None).await;
    assert_eq!(w["name"], "Sales Data Merger");
    wf
}

#[tokio::test]
async fn the_seed_conversation_passes_through_each_automated_back_end() {
    for kind in ["openai", "anthropic", "ollama"] {
        let server = MockServer::start().await;
        let path = match kind {
            "openai" => "/v1/chat/completions",
            "anthropic" => "/v1/messages",
            _ => "/api/chat",
        };
        Mock::given(wiremock::matchers::method("POST"))
            .and(wiremock::matchers::path(path))
            .respond_with(ByRole {
                kind,
                clarifier_calls: Arc::default(),
            })
            .mount(&server)
            .await;
        let home = tempfile::tempdir().expect("tmp");
        let config = ServiceConfig {
            keys: Arc::new(KeyringCredentials::with_store(
                keyring_core::mock::Store::new().expect("mock"),
            )),
            ..ServiceConfig::from_settings(home.path())
        };
        let (app, service) = open_with(home.path(), config);
        let base = if kind == "openai" {
            format!("{}/v1", server.uri())
        } else {
            server.uri()
        };
        let (s, v) = call(&app, "PUT", "/api/settings", Some(json!({
            "providers": [{"id": "llm", "kind": kind, "base_url": base, "model": "test-model"}, {"id": "manual", "kind": "manual"}],
            "roles": {"validator": "llm", "clarifier": "llm", "builder": "llm"}
        }))).await;
        assert_eq!(s, StatusCode::OK, "{kind}: {v}");
        assert_eq!(
            service
                .llm(&Role::Builder, None, None, None)
                .expect("p")
                .name(),
            kind
        );
        seed_conversation(&app, &service).await;
        let (_, ledger) = call(&app, "GET", "/api/ledger", None).await;
        let entries = ledger.as_array().expect("list");
        assert_eq!(entries.len(), 4, "{kind}: {ledger}");
        for e in entries {
            assert_eq!(e["provider"], kind);
            assert_eq!(e["model"], "test-model");
            assert_eq!(e["input_tokens"], 42, "{kind}: {e}");
            assert!(e["url"].as_str().is_some_and(|u| u.ends_with(path)));
            let body: Value = serde_json::from_str(e["request_body"].as_str().expect("body"))
                .expect("exact JSON body");
            assert_eq!(body["model"], "test-model");
        }
        assert_eq!(ledger_leaks(&ledger), Vec::<String>::new());
    }
}

#[tokio::test]
async fn with_no_configuration_the_manual_back_end_runs_the_seed_conversation() {
    let home = tempfile::tempdir().expect("tmp");
    let (app, service) = open_with(home.path(), ServiceConfig::from_settings(home.path()));
    let (_, settings) = call(&app, "GET", "/api/settings", None).await;
    assert_eq!(settings["roles"]["builder"], "manual", "{settings}");
    assert!(
        service
            .llm(&Role::Builder, None, None, None)
            .expect("p")
            .is_manual()
    );

    // A person at the keyboard: answers each prompt as it appears.
    let mut rx = service.subscribe();
    let answerer = {
        let app = app.clone();
        tokio::spawn(async move {
            let responder = ByRole {
                kind: "manual",
                clarifier_calls: Arc::default(),
            };
            let mut answered = Vec::new();
            loop {
                let Ok(event) = rx.recv().await else {
                    return answered;
                };
                if let Event::ManualPrompt { prompt } = &event {
                    let (_, pending) = call(&app, "GET", "/api/manual", None).await;
                    assert!(
                        pending
                            .as_array()
                            .expect("list")
                            .iter()
                            .any(|p| p["id"] == prompt.id.as_str())
                    );
                    let text =
                        responder.text_for(&serde_json::to_string(&prompt.schema).expect("schema"));
                    let (s, _) = call(
                        &app,
                        "POST",
                        &format!("/api/manual/{}/answer", prompt.id),
                        Some(json!({"text": text})),
                    )
                    .await;
                    assert_eq!(s, StatusCode::NO_CONTENT);
                    answered.push(prompt.role.clone());
                }
                // The build asks nobody to approve the reply the person just
                // pasted (#28): no gate, and it ends on its own.
                if let Event::BuildChanged { build, .. } = &event {
                    assert!(!build.pending_gate, "a gate on a pasted reply: {build:?}");
                    if matches!(build.phase, Phase::Complete | Phase::Failed) {
                        return answered;
                    }
                }
            }
        })
    };
    seed_conversation(&app, &service).await;
    let answered = answerer.await.expect("answerer");
    assert_eq!(answered, ["validator", "clarifier", "clarifier", "builder"]);
    let (_, ledger) = call(&app, "GET", "/api/ledger", None).await;
    assert!(
        ledger
            .as_array()
            .expect("l")
            .iter()
            .all(|e| e["provider"] == "manual" && e["outcome"] == "ok")
    );
    let (s, r) = call(
        &app,
        "POST",
        "/api/manual/mp_nope/answer",
        Some(json!({"text": "x"})),
    )
    .await;
    assert_eq!(
        (s, r["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

#[tokio::test]
async fn a_planted_key_appears_in_no_response_no_ledger_and_no_database_file() {
    const PLANTED: &str = "sk-PLANTED-4f9c2e7a1b3d5e6f";
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::header(
            "authorization",
            format!("Bearer {PLANTED}").as_str(),
        ))
        .respond_with(ByRole {
            kind: "openai",
            clarifier_calls: Arc::default(),
        })
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tmp");
    let config = ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home.path())
    };
    let (app, service) = open_with(home.path(), config);
    let mut responses = Vec::new();
    let (s, v) = call(&app, "PUT", "/api/settings", Some(json!({
        "providers": [{"id": "cloud", "kind": "openai", "base_url": format!("{}/v1", server.uri()), "model": "m"}],
        "roles": {"validator": "cloud", "clarifier": "cloud", "builder": "cloud"}
    }))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    responses.push(v);
    let (s, v) = call(
        &app,
        "PUT",
        "/api/providers/cloud/key",
        Some(json!({"key": PLANTED})),
    )
    .await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    responses.push(v);
    let (_, v) = call(&app, "GET", "/api/settings", None).await;
    assert_eq!(v["providers"][0]["key"], "keyring", "{v}");
    responses.push(v);
    let (_, v) = call(&app, "POST", "/api/providers/cloud/test", None).await;
    responses.push(v);
    seed_conversation(&app, &service).await;
    // A rejected key: the error must not echo it (the server's body does).
    let bad = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": format!("Incorrect API key provided: {PLANTED}")}}),
        ))
        .mount(&bad)
        .await;
    let (_, v) = call(&app, "PUT", "/api/settings", Some(json!({
        "providers": [{"id": "cloud", "kind": "openai", "base_url": format!("{}/v1", bad.uri()), "model": "m"}],
        "roles": {"validator": "cloud", "clarifier": "cloud", "builder": "cloud"}
    }))).await;
    responses.push(v);
    let file_id = upload(&service).await;
    let (_, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    )
    .await;
    let wf = created["workflow_id"].as_str().expect("wf");
    let (s, v) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "merge by date"})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_GATEWAY, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("the API key was rejected by")),
        "{v}"
    );
    responses.push(v);
    let (_, ledger) = call(&app, "GET", "/api/ledger?limit=500", None).await;
    assert!(ledger.as_array().expect("l").len() >= 5);
    responses.push(ledger);
    for r in &responses {
        assert!(
            !r.to_string().contains(PLANTED),
            "a response shows the key: {r}"
        );
    }
    drop(app);
    drop(service);
    for entry in std::fs::read_dir(home.path()).expect("home") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let bytes = std::fs::read(&path).expect("read");
            assert!(
                !bytes
                    .windows(PLANTED.len())
                    .any(|w| w == PLANTED.as_bytes()),
                "{} holds the key",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn every_llm_route_is_in_the_openapi_document() {
    let home = tempfile::tempdir().expect("tmp");
    let (app, _service) = open_with(home.path(), ServiceConfig::from_settings(home.path()));
    let (s, doc) = call(&app, "GET", "/api/openapi.json", None).await;
    assert_eq!(s, StatusCode::OK);
    for (path, verb) in [
        ("/api/settings", "get"),
        ("/api/settings", "put"),
        ("/api/providers/{id}/key", "put"),
        ("/api/providers/{id}/key", "delete"),
        ("/api/providers/{id}/test", "post"),
        ("/api/providers/detected", "get"),
        ("/api/ledger", "get"),
        ("/api/manual", "get"),
        ("/api/manual/{id}/answer", "post"),
        ("/api/manual/{id}", "delete"),
    ] {
        assert!(
            doc["paths"][path][verb].is_object(),
            "{verb} {path} is missing"
        );
    }
    // Bad settings and unknown providers answer in the API's error shape.
    let (s, r) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(json!({"providers": [], "roles": {}})),
    )
    .await;
    assert_eq!(
        (s, r["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request")),
        "{r}"
    );
    let (s, r) = call(&app, "POST", "/api/providers/nope/test", None).await;
    assert_eq!(
        (s, r["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found")),
        "{r}"
    );
    let (s, r) = call(
        &app,
        "PUT",
        "/api/providers/manual/key",
        Some(json!({"key": "x"})),
    )
    .await;
    assert_eq!(
        (s, r["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request")),
        "{r}"
    );
    let (s, r) = call(&app, "POST", "/api/providers/manual/test", None).await;
    assert_eq!((s, r["ok"].as_bool()), (StatusCode::OK, Some(true)), "{r}");
}
