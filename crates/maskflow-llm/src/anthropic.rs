//! The Anthropic Messages back end: `POST {base}/v1/messages` with the
//! system prompt apart, streamed events (`message_start`,
//! `content_block_delta`, `message_delta`, `message_stop`, `error`).
//! Structured replies are a forced tool call (`tools: [{name, input_schema}]`,
//! `tool_choice: {type: "tool", name}`) whose input is the reply; a server
//! that refuses tools (400) is asked again with instructions only (the
//! prompts carry the schema), and that is remembered. Either way
//! [`super::ask_json`] validates the reply. `max_tokens` is the role's
//! output budget; `stop_reason: max_tokens` is
//! [`ProviderError::BudgetExceeded`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::http::{Budget, Dialect, Endpoint, HttpClient, Sse, Streamed};
use super::{BoxFuture, ChatMessage, ChatRole, DeltaSink, LlmRequest, ProviderError};

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version header sent.
pub const API_VERSION: &str = "2023-06-01";
/// The name of the tool a structured reply is forced through.
pub const REPLY_TOOL: &str = "reply";

/// An Anthropic Messages back end.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    client: HttpClient,
    // Set once the server refused a tool call: instructions from then on.
    no_tools: Arc<AtomicBool>,
    window: super::context::WindowCache,
}

impl AnthropicProvider {
    /// A back end at `endpoint` (base URL without `/v1`).
    pub fn new(endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            client: HttpClient::new("Anthropic", endpoint)?,
            no_tools: Arc::new(AtomicBool::new(false)),
            window: super::context::WindowCache::default(),
        })
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = vec![("anthropic-version", API_VERSION.to_owned())];
        if let Some(k) = &self.client.endpoint().api_key {
            h.push(("x-api-key", k.expose().to_owned()));
        }
        h
    }

    /// Checks that the server answers and accepts the key (`GET /v1/models`).
    pub async fn test_connection(&self) -> Result<String, ProviderError> {
        self.client.get("/v1/models", &self.headers()).await?;
        Ok(format!("connected to {}", self.client.endpoint().base_url))
    }

    /// The model's context window: the known table (every `claude-*`), else
    /// what an Anthropic-compatible server lists in `GET /v1/models`
    /// (llama.cpp's `meta.n_ctx`), learned once.
    pub async fn context_window(&self) -> Option<u32> {
        super::http::context_window(self).await
    }

    async fn stream(
        &self,
        request: &LlmRequest,
        budget: Budget,
        on_delta: DeltaSink<'_>,
    ) -> Result<Streamed, ProviderError> {
        let mut tool = request
            .schema
            .as_ref()
            .filter(|_| !self.no_tools.load(Ordering::Relaxed));
        let response = loop {
            let body = request_body(
                self.client.endpoint(),
                &request.messages,
                tool,
                budget.tokens,
            );
            match self
                .client
                .post_json("/v1/messages", &self.headers(), &body)
                .await
            {
                Err(ProviderError::Failed { ref message, .. })
                    if tool.is_some() && message.contains("(400)") =>
                {
                    // The server does not take a forced tool: instructions only.
                    self.no_tools.store(true, Ordering::Relaxed);
                    tool = None;
                }
                other => break other?,
            }
        };
        let mut sse = Sse::new(response);
        let mut text = String::new();
        let mut tool_input = String::new();
        let mut tool_start: Option<Value> = None;
        let mut finished = false;
        let mut cut = false;
        while let Some((event, data)) = sse.next(&self.client).await? {
            let Ok(v) = serde_json::from_str::<Value>(&data) else {
                return Err(self
                    .client
                    .fail("the server sent a stream event that is not JSON"));
            };
            let kind = if event.is_empty() {
                v["type"].as_str().unwrap_or("").to_owned()
            } else {
                event
            };
            match kind.as_str() {
                "message_start" => super::call::record_usage(
                    v.pointer("/message/usage/input_tokens")
                        .and_then(Value::as_i64),
                    v.pointer("/message/usage/output_tokens")
                        .and_then(Value::as_i64),
                ),
                "content_block_start"
                    if v.pointer("/content_block/type").and_then(Value::as_str)
                        == Some("tool_use") =>
                {
                    tool_start = v.pointer("/content_block/input").cloned();
                }
                "content_block_delta" => {
                    if let Some(t) = v.pointer("/delta/text").and_then(Value::as_str)
                        && !t.is_empty()
                    {
                        on_delta(t);
                        text.push_str(t);
                    }
                    if let Some(t) = v.pointer("/delta/partial_json").and_then(Value::as_str)
                        && !t.is_empty()
                    {
                        on_delta(t);
                        tool_input.push_str(t);
                    }
                }
                "message_delta" => {
                    cut |= v.pointer("/delta/stop_reason").and_then(Value::as_str)
                        == Some("max_tokens");
                    super::call::record_usage(
                        v.pointer("/usage/input_tokens").and_then(Value::as_i64),
                        v.pointer("/usage/output_tokens").and_then(Value::as_i64),
                    );
                }
                "message_stop" => {
                    finished = true;
                    break;
                }
                "error" => {
                    return Err(self.client.fail(format!(
                        "the server reported an error in the stream: {}",
                        super::http::error_detail(&data)
                    )));
                }
                _ => {}
            }
        }
        if finished && tool.is_some() && tool_input.trim().is_empty() && tool_start.is_none() {
            // The server took the tool but the model did not call it (llama.cpp
            // with a model that has no tool template): stop asking for it.
            self.no_tools.store(true, Ordering::Relaxed);
        }
        Ok(Streamed {
            text: reply_text(text, tool_input, tool_start),
            finished,
            cut,
        })
    }
}

impl Dialect for AnthropicProvider {
    const NAME: &'static str = "anthropic";

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn window_cache(&self) -> &super::context::WindowCache {
        &self.window
    }

    fn ask_window(&self) -> BoxFuture<'_, Option<u32>> {
        Box::pin(async move {
            let body = self
                .client
                .get("/v1/models", &self.headers())
                .await
                .ok()?
                .json::<Value>()
                .await
                .ok()?;
            super::context::window_from_models_list(&body, &self.client.endpoint().model)
        })
    }

    fn check(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        Box::pin(self.test_connection())
    }

    fn exchange<'a>(
        &'a self,
        request: &'a LlmRequest,
        budget: Budget,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<Streamed, ProviderError>> {
        Box::pin(self.stream(request, budget, on_delta))
    }
}

/// The reply of a stream: the forced tool's input when the model called it
/// (streamed as `partial_json`, or whole at the block's start), else the text.
fn reply_text(text: String, tool_input: String, tool_start: Option<Value>) -> String {
    if !tool_input.trim().is_empty() {
        return tool_input;
    }
    match tool_start {
        Some(v) if v.as_object().is_some_and(|o| !o.is_empty()) => v.to_string(),
        _ => text,
    }
}

/// The request body (pure): system messages joined into `system`, the rest
/// as alternating turns; with a `schema`, a forced call of [`REPLY_TOOL`]
/// taking it as input.
pub fn request_body(
    endpoint: &Endpoint,
    messages: &[ChatMessage],
    schema: Option<&Value>,
    max_tokens: u32,
) -> Value {
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == ChatRole::System)
        .map(|m| m.content.as_str())
        .collect();
    let turns: Vec<Value> = messages
        .iter()
        .filter(|m| m.role != ChatRole::System)
        .map(|m| json!({"role": m.role, "content": m.content}))
        .collect();
    let mut body = json!({
        "model": endpoint.model,
        "max_tokens": max_tokens,
        "messages": turns,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(t) = endpoint.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(schema) = schema {
        body["tools"] = json!([{
            "name": REPLY_TOOL,
            "description": "Give your reply as this tool's input.",
            "input_schema": schema,
        }]);
        body["tool_choice"] = json!({"type": "tool", "name": REPLY_TOOL});
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_goes_apart() {
        let e = Endpoint::new("http://x", "claude");
        let body = request_body(
            &e,
            &[
                ChatMessage::new(ChatRole::System, "be brief"),
                ChatMessage::new(ChatRole::User, "hi"),
            ],
            None,
            300,
        );
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(body["max_tokens"], 300);
        assert_eq!(body["stream"], true);
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn a_schema_forces_the_reply_tool() {
        let e = Endpoint::new("http://x", "claude");
        let schema = json!({"type": "object", "properties": {"feasible": {"type": "boolean"}}});
        let body = request_body(
            &e,
            &[ChatMessage::new(ChatRole::User, "hi")],
            Some(&schema),
            64,
        );
        assert_eq!(body["tools"][0]["name"], REPLY_TOOL);
        assert_eq!(body["tools"][0]["input_schema"], schema);
        assert_eq!(
            body["tool_choice"],
            json!({"type": "tool", "name": REPLY_TOOL})
        );
    }

    #[test]
    fn the_tool_input_is_the_reply_else_the_text() {
        assert_eq!(
            reply_text("prose".into(), "{\"a\":1}".into(), None),
            "{\"a\":1}"
        );
        assert_eq!(
            reply_text("prose".into(), String::new(), Some(json!({"a": 2}))),
            "{\"a\":2}"
        );
        assert_eq!(
            reply_text("{\"b\":1}".into(), String::new(), Some(json!({}))),
            "{\"b\":1}"
        );
    }
}
