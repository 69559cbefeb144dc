//! Issue 28, point 9 over HTTP: a message's failure answers a status that
//! says whose side it was — 409 `cancelled` when
//! the user dismissed the manual prompt (it answered 502), 502 for a back
//! end's unusable replies, 504 for one that did not answer in time — and
//! every time the workflow is left where the user can send again, with a
//! stored notice in the chat when a back end failed or was stopped.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use common::{app, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::http::Endpoint;
use maskflow_llm::openai::OpenAiProvider;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, Roles};
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn extract() -> Value {
    json!({"filename": "sales.csv", "columns": ["date", "region", "amount"],
        "sample_rows": [["####-##-##", "Aaaaa", "###.##"]], "row_count": 12})
}

async fn new_workflow(api: &Router) -> String {
    let (s, created) = call(
        api,
        "POST",
        "/api/workflows",
        Some(json!({"file_extracts": [extract()]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    created["workflow_id"].as_str().expect("wf").to_owned()
}

async fn send(api: &Router, wf: &str) -> (StatusCode, Value) {
    call(
        api,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "sum the amount by region"})),
    )
    .await
}

async fn use_backend(api: &Router, provider: Value) {
    let (s, v) = call(
        api,
        "PUT",
        "/api/settings",
        Some(json!({"providers": [provider],
            "roles": {"validator": "b", "clarifier": "b", "builder": "b"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

/// The workflow is still `validating` (the user sends again) and its last
/// message is a notice containing `words` (or no notice at all).
async fn left_actionable(api: &Router, wf: &str, words: Option<&str>) {
    let (s, view) = call(api, "GET", &format!("/api/workflows/{wf}"), None).await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(view["current_version"]["status"], "validating", "{view}");
    let messages = view["messages"].as_array().expect("messages");
    let notices: Vec<&Value> = messages.iter().filter(|m| m["role"] == "notice").collect();
    match words {
        Some(w) => assert!(
            notices
                .last()
                .and_then(|m| m["content"].as_str())
                .is_some_and(|c| c.contains(w)),
            "{view}"
        ),
        None => assert!(notices.is_empty(), "{view}"),
    }
}

/// A model that never answers in the shape asked for.
#[derive(Debug)]
struct Weak;

impl Provider for Weak {
    fn name(&self) -> &str {
        "weak"
    }
    fn complete<'a>(
        &'a self,
        _request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async {
            Ok(LlmReply {
                text: "I think that can be done!".into(),
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_replies_are_a_bad_gateway_and_strand_nothing() {
    // A back end that answers, but never in the shape asked for (a weak
    // model): 502, and the workflow is still where the user sends again.
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(
        ServiceConfig::from_settings(home.path()).overriding(Roles::all(Arc::new(Weak))),
    )
    .expect("service");
    let api = app(service);
    let wf = new_workflow(&api).await;
    let (s, v) = send(&api, &wf).await;
    assert_eq!(s, StatusCode::BAD_GATEWAY, "{v}");
    assert_eq!(v["code"], "provider_error", "{v}");
    left_actionable(&api, &wf, Some("unusable reply twice")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_back_end_that_does_not_answer_in_time_is_a_gateway_timeout() {
    let silent = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(600)))
        .mount(&silent)
        .await;
    let mut endpoint = Endpoint::new(format!("{}/v1", silent.uri()), "slow-model");
    endpoint.http.retries = 0;
    endpoint.http.read_timeout = Duration::from_millis(300);
    let provider = Arc::new(OpenAiProvider::new(endpoint).expect("client"));
    let home = tempfile::tempdir().expect("tmp");
    let service =
        Service::open(ServiceConfig::from_settings(home.path()).overriding(Roles::all(provider)))
            .expect("service");
    let api = app(service);
    let wf = new_workflow(&api).await;
    let (s, v) = send(&api, &wf).await;
    // Not 502: nothing failed but the wait.
    assert_eq!(s, StatusCode::GATEWAY_TIMEOUT, "{v}");
    assert_eq!(v["code"], "provider_timeout", "{v}");
    left_actionable(&api, &wf, Some("did not answer within")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dismissing_the_manual_prompt_of_a_message_is_not_a_bad_gateway() {
    let home = tempfile::tempdir().expect("tmp");
    let service = Service::open(ServiceConfig::from_settings(home.path())).expect("service");
    let api = app(service);
    use_backend(&api, json!({"id": "b", "kind": "manual"})).await;
    let wf = new_workflow(&api).await;
    let sender = {
        let api = api.clone();
        let wf = wf.clone();
        tokio::spawn(async move { send(&api, &wf).await })
    };
    let mut id = None;
    for _ in 0..3000 {
        let (_, prompts) = call(&api, "GET", "/api/manual", None).await;
        id = prompts[0]["id"].as_str().map(str::to_owned);
        if id.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let id = id.expect("the validator's prompt waits");
    let (s, v) = call(&api, "DELETE", &format!("/api/manual/{id}"), None).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{v}");
    let (s, v) = sender.await.expect("sender");
    // Regression (#28): this answered 502, as if a back end had failed.
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["code"], "cancelled", "{v}");
    left_actionable(&api, &wf, Some("You stopped the reply")).await;
}

/// A weak model on loopback speaking `kind`'s protocol (streamed): prose
/// where JSON is asked for — for every role, or only for the builder.
struct Junk {
    kind: &'static str,
    builder_only: bool,
}

impl wiremock::Respond for Junk {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body);
        let text = if !self.builder_only {
            "I think that can be done! Let me know.".to_owned()
        } else if body.contains("needs_clarification") {
            json!({"needs_clarification": false}).to_string()
        } else if body.contains("feasible") {
            json!({"feasible": true}).to_string()
        } else {
            "Sure, here is a script: print('hi')".to_owned()
        };
        let out = match self.kind {
            "openai" => format!(
                "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}),
                json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}})
            ),
            _ => format!(
                "event: message_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\nevent: message_delta\ndata: {}\n\nevent: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n",
                json!({"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}),
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
                json!({"type":"message_delta","usage":{"output_tokens":5}})
            ),
        };
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(out)
    }
}

async fn weak_api(
    kind: &'static str,
    builder_only: bool,
) -> (Router, MockServer, tempfile::TempDir) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Junk { kind, builder_only })
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tmp");
    let config = ServiceConfig {
        keys: Arc::new(maskflow_llm::keys::KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock keyring"),
        )),
        ..ServiceConfig::from_settings(home.path())
    };
    let api = app(Service::open(config).expect("service"));
    let base = if kind == "openai" {
        format!("{}/v1", server.uri())
    } else {
        server.uri()
    };
    use_backend(
        &api,
        json!({"id": "b", "kind": kind, "base_url": base, "model": "tiny-model"}),
    )
    .await;
    (api, server, home)
}

/// Issue 44, point 5: a weak model's two unusable replies, through the
/// OpenAI-compatible and the Anthropic protocol, leave the version where
/// the user can act (it is `validating`, the message can be sent again),
/// answer the two ways on for the UI to offer (`next_steps`), and the
/// chat's notice names them: try again, or choose another model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_models_unusable_replies_offer_try_again_and_another_model_on_each_protocol() {
    for kind in ["openai", "anthropic"] {
        let (api, _server, _home) = weak_api(kind, false).await;
        let wf = new_workflow(&api).await;
        let (s, v) = send(&api, &wf).await;
        assert_eq!(s, StatusCode::BAD_GATEWAY, "{kind}: {v}");
        assert_eq!(v["code"], "provider_error", "{kind}: {v}");
        assert_eq!(
            v["next_steps"],
            json!(["try_again", "choose_another_model"]),
            "{kind}: {v}"
        );
        left_actionable(&api, &wf, Some("Try again")).await;
        left_actionable(&api, &wf, Some("choose another model for the validator")).await;
        // Trying again is possible (and fails the same way with the same model).
        let (s, v) = send(&api, &wf).await;
        assert_eq!(s, StatusCode::BAD_GATEWAY, "{kind}: {v}");
        left_actionable(&api, &wf, Some("unusable reply twice")).await;
    }
}

/// The builder's unusable replies end its build `failed` (where Edit
/// starts a new version) and the chat says so with "choose another model".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_weak_builder_ends_its_build_failed_with_the_way_on_on_each_protocol() {
    for kind in ["openai", "anthropic"] {
        let (api, _server, _home) = weak_api(kind, true).await;
        let wf = new_workflow(&api).await;
        let (s, v) = send(&api, &wf).await;
        assert_eq!(s, StatusCode::OK, "{kind}: {v}");
        assert_eq!(v["status"], "building", "{kind}: {v}");
        let mut view = Value::Null;
        for _ in 0..1200 {
            let (_, w) = call(&api, "GET", &format!("/api/workflows/{wf}"), None).await;
            if w["current_version"]["status"] != "building" {
                view = w;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            view["current_version"]["status"], "failed",
            "{kind}: {view}"
        );
        let last = view["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "notice"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_owned();
        assert!(
            last.contains("unusable reply twice")
                && last.contains("choose another model for the builder")
                && last.contains("Edit"),
            "{kind}: {view}"
        );
    }
}
