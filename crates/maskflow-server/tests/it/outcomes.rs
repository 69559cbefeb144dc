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
