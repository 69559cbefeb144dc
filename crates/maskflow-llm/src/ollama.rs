//! Ollama's native back end: `POST {base}/api/chat` streaming NDJSON (one
//! JSON object a line, the last with `"done": true`), with `format` set to
//! the reply's JSON schema for structured replies, and `num_predict` the
//! role's output budget (`done_reason: length` is
//! [`ProviderError::BudgetExceeded`]).

use serde_json::{Value, json};

use super::http::{Budget, Dialect, Endpoint, HttpClient, Lines, Streamed};
use super::{BoxFuture, ChatMessage, DeltaSink, LlmRequest, ProviderError};

/// The default base URL of a local Ollama.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434";

/// An Ollama native back end.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    client: HttpClient,
    window: super::context::WindowCache,
}

impl OllamaProvider {
    /// A back end at `endpoint` (base URL without `/api`).
    pub fn new(endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            client: HttpClient::new("Ollama", endpoint)?,
            window: super::context::WindowCache::default(),
        })
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        self.client.bearer()
    }

    /// Checks that the server answers (`GET /api/tags`) and lists its models.
    pub async fn test_connection(&self) -> Result<String, ProviderError> {
        let names = self
            .client
            .list_models("/api/tags", &self.headers(), "models", "name")
            .await?;
        Ok(self.client.connected(&names, "(none pulled)"))
    }

    /// The model's context window from `POST /api/show` (`num_ctx`, else
    /// the model's `context_length`), learned once.
    pub async fn context_window(&self) -> Option<u32> {
        super::http::context_window(self).await
    }

    async fn stream(
        &self,
        request: &LlmRequest,
        budget: Budget,
        on_delta: DeltaSink<'_>,
    ) -> Result<Streamed, ProviderError> {
        let body = request_body(
            self.client.endpoint(),
            &request.messages,
            request.schema.as_ref(),
            budget.tokens,
        );
        let response = self
            .client
            .post_json("/api/chat", &self.headers(), &body)
            .await?;
        let mut lines = Lines::new(response);
        let mut out = Streamed::default();
        while let Some(line) = lines.next(&self.client).await? {
            if line.trim().is_empty() {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                return Err(self
                    .client
                    .fail("the server sent a stream line that is not JSON"));
            };
            if let Some(err) = v.get("error") {
                return Err(self.client.fail(format!(
                    "the server reported an error in the stream: {}",
                    err.as_str().unwrap_or("unknown error")
                )));
            }
            if let Some(t) = v.pointer("/message/content").and_then(Value::as_str)
                && !t.is_empty()
            {
                on_delta(t);
                out.text.push_str(t);
            }
            if v["done"].as_bool() == Some(true) {
                super::call::record_usage(
                    v["prompt_eval_count"].as_i64(),
                    v["eval_count"].as_i64(),
                );
                out.finished = true;
                out.cut = v["done_reason"] == "length";
                break;
            }
        }
        Ok(out)
    }
}

impl Dialect for OllamaProvider {
    const NAME: &'static str = "ollama";

    fn client(&self) -> &HttpClient {
        &self.client
    }

    fn window_cache(&self) -> &super::context::WindowCache {
        &self.window
    }

    // Ollama's model names are local tags, not the known table's: only the
    // user's setting, else the server's answer.
    fn configured_window(&self) -> Option<u32> {
        self.client.endpoint().context_window
    }

    fn ask_window(&self) -> BoxFuture<'_, Option<u32>> {
        Box::pin(async move {
            let model = &self.client.endpoint().model;
            let body = self
                .client
                .post_probe("/api/show", &self.headers(), &json!({"model": model}))
                .await
                .ok()?
                .json::<Value>()
                .await
                .ok()?;
            super::context::window_from_ollama_show(&body)
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

/// The request body (pure).
pub fn request_body(
    endpoint: &Endpoint,
    messages: &[ChatMessage],
    schema: Option<&Value>,
    max_tokens: u32,
) -> Value {
    let mut body = json!({
        "model": endpoint.model,
        "messages": messages,
        "stream": true,
    });
    if let Some(s) = schema {
        body["format"] = s.clone();
    }
    let mut options = serde_json::Map::new();
    if let Some(t) = endpoint.temperature {
        options.insert("temperature".into(), json!(t));
    }
    options.insert("num_predict".into(), json!(max_tokens));
    body["options"] = Value::Object(options);
    body
}
