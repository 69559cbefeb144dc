//! The Anthropic Messages back end: `POST {base}/v1/messages` with the
//! system prompt apart, streamed events (`message_start`,
//! `content_block_delta`, `message_delta`, `message_stop`, `error`).
//! Structured replies go through instructions (the prompts carry the
//! schema) and validation in [`super::ask_json`].

use serde_json::{Value, json};

use super::http::{Endpoint, HttpClient, Sse};
use super::{
    BoxFuture, ChatMessage, ChatRole, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError,
};

/// The default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version header sent.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when the settings give none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// An Anthropic Messages back end.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    client: HttpClient,
}

impl AnthropicProvider {
    /// A back end at `endpoint` (base URL without `/v1`).
    pub fn new(endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            client: HttpClient::new("Anthropic", endpoint)?,
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

    async fn run(
        &self,
        request: &LlmRequest,
        on_delta: DeltaSink<'_>,
    ) -> Result<LlmReply, ProviderError> {
        let body = request_body(self.client.endpoint(), &request.messages);
        let response = self
            .client
            .post_json("/v1/messages", &self.headers(), &body)
            .await?;
        let mut sse = Sse::new(response);
        let mut text = String::new();
        let mut finished = false;
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
                "content_block_delta" => {
                    if let Some(t) = v.pointer("/delta/text").and_then(Value::as_str)
                        && !t.is_empty()
                    {
                        on_delta(t);
                        text.push_str(t);
                    }
                }
                "message_delta" => super::call::record_usage(
                    v.pointer("/usage/input_tokens").and_then(Value::as_i64),
                    v.pointer("/usage/output_tokens").and_then(Value::as_i64),
                ),
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
        if !finished {
            return Err(self.client.truncated());
        }
        Ok(LlmReply { text })
    }
}

/// The request body (pure): system messages joined into `system`, the rest
/// as alternating turns.
pub fn request_body(endpoint: &Endpoint, messages: &[ChatMessage]) -> Value {
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
        "max_tokens": endpoint.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": turns,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(t) = endpoint.temperature {
        body["temperature"] = json!(t);
    }
    body
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn model(&self) -> &str {
        &self.client.endpoint().model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(self.run(request, on_delta))
    }
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
        );
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(body["stream"], true);
    }
}
