//! The OpenAI-compatible back end: `POST {base}/chat/completions` with
//! streaming over SSE (OpenAI, Ollama's `/v1`, LM Studio, llama.cpp's
//! server, vLLM, OpenRouter, Groq). Structured replies ask for
//! `response_format: json_schema`; a server that refuses that (400) is asked
//! with `json_object`, then with instructions only (the prompts carry the
//! schema), and remembers the level that worked. Every reply is validated by
//! [`super::ask_json`] whatever the level. `max_tokens` is the role's output
//! budget ([`super::budget`]); a reply cut by it (`finish_reason: length`) is
//! [`ProviderError::BudgetExceeded`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use serde_json::{Value, json};

use super::http::{Budget, Dialect, Endpoint, HttpClient, Sse, Streamed};
use super::{BoxFuture, ChatMessage, DeltaSink, LlmRequest, ProviderError};

/// An OpenAI-compatible chat completions back end.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    client: HttpClient,
    json_schema: bool,
    // The structured level the server last accepted (shared by clones).
    level: Arc<AtomicU8>,
    window: super::context::WindowCache,
}

/// How a structured reply is asked of an OpenAI-compatible server, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structured {
    /// `response_format: {type: json_schema}` (constrained decoding).
    JsonSchema,
    /// `response_format: {type: json_object}` (any JSON object).
    JsonObject,
    /// Only the schema in the prompt's instructions.
    Instructions,
}

impl Structured {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::JsonSchema,
            1 => Self::JsonObject,
            _ => Self::Instructions,
        }
    }

    fn next(self) -> Option<Self> {
        match self {
            Self::JsonSchema => Some(Self::JsonObject),
            Self::JsonObject => Some(Self::Instructions),
            Self::Instructions => None,
        }
    }
}

impl OpenAiProvider {
    /// A back end at `endpoint` (base URL ending in `/v1`).
    pub fn new(endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            client: HttpClient::new("OpenAI-compatible server", endpoint)?,
            json_schema: true,
            level: Arc::new(AtomicU8::new(0)),
            window: super::context::WindowCache::default(),
        })
    }

    /// Whether structured replies use `response_format: json_schema`.
    pub fn with_json_schema(mut self, on: bool) -> Self {
        self.json_schema = on;
        self
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.client.bearer()
    }

    /// Checks that the server answers and knows the model (`GET /models`).
    pub async fn test_connection(&self) -> Result<String, ProviderError> {
        let ids = self
            .client
            .list_models("/models", &self.headers(), "data", "id")
            .await?;
        Ok(self.client.connected(&ids, "(none listed)"))
    }
}

/// The request body (pure): the reply's schema asked for at `structured`
/// (ignored without a schema), `max_tokens` the role's budget.
pub fn request_body(
    endpoint: &Endpoint,
    messages: &[ChatMessage],
    schema: Option<&Value>,
    structured: Structured,
    max_tokens: u32,
) -> Value {
    let mut body = json!({
        "model": endpoint.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": max_tokens,
    });
    if let Some(t) = endpoint.temperature {
        body["temperature"] = json!(t);
    }
    match (schema, structured) {
        (Some(schema), Structured::JsonSchema) => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema, "strict": false}
            });
        }
        (Some(_), Structured::JsonObject) => {
            body["response_format"] = json!({"type": "json_object"});
        }
        _ => {}
    }
    body
}

impl OpenAiProvider {
    /// The structured level the next request starts at.
    pub fn structured_level(&self) -> Structured {
        if !self.json_schema {
            return Structured::Instructions;
        }
        Structured::from_u8(self.level.load(Ordering::Relaxed))
    }

    /// The model's context window: the known table, else what the server
    /// lists in `GET /models` (llama.cpp's `meta.n_ctx`), learned once.
    pub async fn context_window(&self) -> Option<u32> {
        super::http::context_window(self).await
    }

    async fn stream(
        &self,
        request: &LlmRequest,
        budget: Budget,
        on_delta: DeltaSink<'_>,
    ) -> Result<Streamed, ProviderError> {
        let schema = request.schema.as_ref();
        let mut level = self.structured_level();
        let response = loop {
            let body = request_body(
                self.client.endpoint(),
                &request.messages,
                schema,
                level,
                budget.tokens,
            );
            match self
                .client
                .post_json("/chat/completions", &self.headers(), &body)
                .await
            {
                Err(ProviderError::Failed { message, .. })
                    if schema.is_some() && message.contains("(400)") =>
                {
                    // The server does not take this response_format: step down.
                    match level.next() {
                        Some(n) => {
                            level = n;
                            self.level.store(n as u8, Ordering::Relaxed);
                        }
                        None => return Err(self.client.fail(message)),
                    }
                }
                other => break other?,
            }
        };
        let mut sse = Sse::new(response);
        let mut out = Streamed::default();
        while let Some((_, data)) = sse.next(&self.client).await? {
            if data.trim() == "[DONE]" {
                out.finished = true;
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(&data) else {
                return Err(self
                    .client
                    .fail("the server sent a stream event that is not JSON"));
            };
            if let Some(err) = chunk.get("error") {
                return Err(self.client.fail(format!(
                    "the server reported an error in the stream: {}",
                    super::http::error_detail(&json!({"error": err}).to_string())
                )));
            }
            if let Some(delta) = chunk
                .pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                && !delta.is_empty()
            {
                on_delta(delta);
                out.text.push_str(delta);
            }
            if let Some(reason) = chunk
                .pointer("/choices/0/finish_reason")
                .filter(|f| !f.is_null())
            {
                out.finished = true;
                out.cut |= reason == "length";
            }
            if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
                super::call::record_usage(
                    usage["prompt_tokens"].as_i64(),
                    usage["completion_tokens"].as_i64(),
                );
            }
        }
        Ok(out)
    }
}

impl Dialect for OpenAiProvider {
    const NAME: &'static str = "openai";

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn window_cache(&self) -> &super::context::WindowCache {
        &self.window
    }

    // A server that stepped down to `json_object` or plain text is not
    // given the schema: the prompt's copy is all its model has.
    fn takes_schema(&self) -> bool {
        self.structured_level() == Structured::JsonSchema
    }

    fn ask_window(&self) -> BoxFuture<'_, Option<u32>> {
        Box::pin(async move {
            let body = self
                .client
                .get("/models", &self.headers())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ChatRole;

    #[test]
    fn the_body_asks_for_a_stream_and_the_schema() {
        let mut e = Endpoint::new("http://x/v1", "gpt-x");
        e.temperature = Some(0.0);
        let msgs = [
            ChatMessage::new(ChatRole::System, "s"),
            ChatMessage::new(ChatRole::User, "u"),
        ];
        let schema = json!({"type": "object"});
        let body = request_body(&e, &msgs, Some(&schema), Structured::JsonSchema, 512);
        assert_eq!(body["model"], "gpt-x");
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 512);
        assert_eq!(body["messages"][1]["role"], "user");
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(
            body["response_format"]["json_schema"]["schema"]["type"],
            "object"
        );
        assert_eq!(body["temperature"], 0.0);
        let obj = request_body(&e, &msgs, Some(&schema), Structured::JsonObject, 512);
        assert_eq!(obj["response_format"], json!({"type": "json_object"}));
        let plain = request_body(&e, &msgs, Some(&schema), Structured::Instructions, 512);
        assert!(plain.get("response_format").is_none());
        assert!(
            request_body(&e, &[], None, Structured::JsonSchema, 8)
                .get("response_format")
                .is_none()
        );
    }
}
