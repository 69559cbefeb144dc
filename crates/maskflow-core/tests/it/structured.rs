//! Native structured output and output budgets, against wiremock serving
//! each protocol's documented wire format: Anthropic's forced tool call (and
//! its fallback to instructions when the server refuses tools), OpenAI's
//! `json_schema` → `json_object` → instructions, and a reply cut at the
//! role's budget counted as the one repair. Real servers: `real_roles.rs`.

use std::time::Duration;

use maskflow_llm::anthropic::AnthropicProvider;
use maskflow_llm::http::Endpoint;
use maskflow_llm::openai::OpenAiProvider;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Provider, ProviderError, Role, ask_json};
use serde::Deserialize;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

#[derive(Deserialize, Debug, PartialEq)]
struct Feasible {
    feasible: bool,
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"feasible": {"type": "boolean"}}, "required": ["feasible"]})
}

fn request() -> LlmRequest {
    LlmRequest {
        role: Role::Validator,
        messages: vec![
            ChatMessage::new(ChatRole::System, "decide"),
            ChatMessage::new(ChatRole::User, "merge the files"),
        ],
        schema: Some(schema()),
    }
}

fn endpoint(base: String) -> Endpoint {
    let mut e = Endpoint::new(base, "m");
    e.http.retries = 0;
    e.http.backoff = Duration::from_millis(1);
    e
}

fn sse(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("content-type", "text/event-stream")
        .set_body_string(body)
}

fn anthropic_stream(blocks: &str, stop: &str) -> String {
    format!(
        "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"usage\":{{\"input_tokens\":5,\"output_tokens\":1}}}}}}\n\n{blocks}\
event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{stop}\"}},\"usage\":{{\"output_tokens\":9}}}}\n\n\
event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
    )
}

fn anthropic_tool_reply() -> String {
    let mut b = String::from(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"reply\",\"input\":{}}}\n\n",
    );
    for piece in ["{\"feas", "ible\": ", "true}"] {
        let ev = json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":piece}});
        b.push_str(&format!("event: content_block_delta\ndata: {ev}\n\n"));
    }
    anthropic_stream(&b, "tool_use")
}

fn anthropic_text_reply(text: &str, stop: &str) -> String {
    let ev =
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}});
    anthropic_stream(
        &format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\nevent: content_block_delta\ndata: {ev}\n\n"
        ),
        stop,
    )
}

fn openai_reply(text: &str, finish: &str) -> String {
    let c = json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]});
    let f = json!({"choices":[{"index":0,"delta":{},"finish_reason":finish}]});
    format!("data: {c}\n\ndata: {f}\n\ndata: [DONE]\n\n")
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect()
}

#[tokio::test]
async fn anthropic_reads_the_forced_tool_input_as_the_reply() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse(anthropic_tool_reply()))
        .mount(&server)
        .await;
    let p = AnthropicProvider::new(endpoint(server.uri())).expect("client");
    let got: Feasible = ask_json(&p, request(), &|_| Ok(()), &|_| {})
        .await
        .expect("reply");
    assert_eq!(got, Feasible { feasible: true });
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0]["tool_choice"],
        json!({"type": "tool", "name": "reply"})
    );
    assert_eq!(sent[0]["tools"][0]["input_schema"], schema());
    assert_eq!(sent[0]["max_tokens"], 512, "the validator's default budget");
}

#[tokio::test]
async fn anthropic_falls_back_to_instructions_when_tools_are_refused() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(body_string_contains("tool_choice"))
        .respond_with(ResponseTemplate::new(400).set_body_string(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"tools are not supported"}}"#,
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(sse(anthropic_text_reply(
            "{\"feasible\": false}",
            "end_turn",
        )))
        .mount(&server)
        .await;
    let p = AnthropicProvider::new(endpoint(server.uri())).expect("client");
    for _ in 0..2 {
        let got: Feasible = ask_json(&p, request(), &|_| Ok(()), &|_| {})
            .await
            .expect("reply");
        assert_eq!(got, Feasible { feasible: false });
    }
    let sent = bodies(&server).await;
    // Tools once, refused; then instructions, remembered for the next call.
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert!(sent[0].get("tool_choice").is_some());
    assert!(sent[1].get("tools").is_none() && sent[2].get("tools").is_none());
}

#[tokio::test]
async fn openai_steps_down_from_json_schema_to_json_object_to_instructions() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_string_contains("response_format"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_string(r#"{"error":{"message":"response_format is not supported"}}"#),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(openai_reply("{\"feasible\": true}", "stop")))
        .mount(&server)
        .await;
    let p = OpenAiProvider::new(endpoint(format!("{}/v1", server.uri()))).expect("client");
    let got: Feasible = ask_json(&p, request(), &|_| Ok(()), &|_| {})
        .await
        .expect("reply");
    assert!(got.feasible);
    let sent = bodies(&server).await;
    let formats: Vec<Value> = sent
        .iter()
        .map(|b| b["response_format"]["type"].clone())
        .collect();
    assert_eq!(
        formats,
        vec![json!("json_schema"), json!("json_object"), Value::Null]
    );
}

#[tokio::test]
async fn a_reply_cut_at_its_budget_is_the_one_repair_then_a_named_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(openai_reply("I think that the answer", "length")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(sse(openai_reply("{\"feasible\": true}", "stop")))
        .mount(&server)
        .await;
    let p = OpenAiProvider::new(endpoint(format!("{}/v1", server.uri()))).expect("client");
    let got: Feasible = ask_json(&p, request(), &|_| Ok(()), &|_| {})
        .await
        .expect("the repair succeeds");
    assert!(got.feasible);
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let last = sent[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned();
    let repair = last.map(|m| m["content"].to_string()).unwrap_or_default();
    assert!(repair.contains("512 tokens"), "{repair}");

    // Cut twice: the error names the role and the budget.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(sse(anthropic_text_reply("blah blah", "max_tokens")))
        .mount(&server)
        .await;
    let p = AnthropicProvider::new(endpoint(server.uri())).expect("client");
    let err = ask_json::<Feasible>(&p, request(), &|_| Ok(()), &|_| {})
        .await
        .expect_err("cut twice");
    assert_eq!(
        err,
        ProviderError::BudgetExceeded {
            role: "validator".into(),
            budget: 512,
            window: None
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains(
            "the validator's reply passed 512 tokens; the model is not following the format"
        ),
        "{msg}"
    );
    assert_eq!(bodies(&server).await.len(), 2);
    let _ = p.name();
}

#[tokio::test]
async fn a_prompt_that_does_not_fit_the_window_is_refused_before_sending() {
    let server = MockServer::start().await;
    // llama.cpp's model list reports the window the server runs with.
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"object": "list", "data": [{"id": "m", "meta": {"n_ctx": 512, "n_ctx_train": 8192}}]}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(sse(openai_reply("{\"feasible\": true}", "stop")))
        .mount(&server)
        .await;
    let p = OpenAiProvider::new(endpoint(format!("{}/v1", server.uri()))).expect("client");
    assert_eq!(p.context_window().await, Some(512));
    let mut big = request();
    big.messages[1].content = "column_name ".repeat(200);
    let err = ask_json::<Feasible>(&p, big, &|_| Ok(()), &|_| {})
        .await
        .expect_err("too big");
    assert!(
        matches!(err, ProviderError::ContextOverflow { window: 512, prompt_tokens, .. } if prompt_tokens > 512),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("context window is 512 tokens") && msg.contains("nothing was sent"),
        "{msg}"
    );
    assert!(bodies(&server).await.is_empty(), "nothing was posted");

    // A prompt that fits is sent, its budget lowered to the room left.
    let ok: Feasible = ask_json(&p, request(), &|_| Ok(()), &|_| {})
        .await
        .expect("fits");
    assert!(ok.feasible);
    let sent = bodies(&server).await;
    let budget = sent[0]["max_tokens"].as_u64().unwrap_or(0);
    assert!(budget > 0 && budget < 512, "{budget}");
}
