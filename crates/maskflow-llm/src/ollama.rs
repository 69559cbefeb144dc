//! Ollama's native back end: `POST {base}/api/chat` streaming NDJSON (one
//! JSON object a line, the last with `"done": true`), with `format` set to
//! the reply's JSON schema for structured replies, and `num_predict` the
//! role's output budget (`done_reason: length` is
//! [`ProviderError::BudgetExceeded`]).

use serde_json::{Value, json};

use super::http::{Endpoint, HttpClient, Lines};
use super::{BoxFuture, ChatMessage, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

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
        if let Some(w) = self.window.get() {
            return w;
        }
        let model = self.client.endpoint().model.clone();
        let mut w = self.client.endpoint().context_window;
        if w.is_none()
            && let Ok(r) = self
                .client
                .post_probe("/api/show", &self.headers(), &json!({"model": model}))
                .await
            && let Ok(body) = r.json::<Value>().await
        {
            w = super::context::window_from_ollama_show(&body);
        }
        self.window.set(w);
        w
    }

    async fn run(
        &self,
        request: &LlmRequest,
        on_delta: DeltaSink<'_>,
    ) -> Result<LlmReply, ProviderError> {
        let endpoint = self.client.endpoint();
        let role_budget = endpoint
            .budgets
            .max_tokens(&request.role, endpoint.max_tokens);
        let window = self.context_window().await;
        let budget = super::context::check(request, self.model(), window, role_budget)?;
        // Set when the window, not the role's budget, limits the reply.
        let window = window.filter(|_| budget < role_budget);
        let body = request_body(
            self.client.endpoint(),
            &request.messages,
            request.schema.as_ref(),
            budget,
        );
        let response = self
            .client
            .post_json("/api/chat", &self.headers(), &body)
            .await?;
        let mut lines = Lines::new(response);
        let mut text = String::new();
        let mut finished = false;
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
                text.push_str(t);
            }
            if v["done"].as_bool() == Some(true) {
                super::call::record_usage(
                    v["prompt_eval_count"].as_i64(),
                    v["eval_count"].as_i64(),
                );
                finished = true;
                if v["done_reason"] == "length" {
                    return Err(ProviderError::BudgetExceeded {
                        role: request.role.key(),
                        budget,
                        window,
                    });
                }
                break;
            }
        }
        if !finished {
            return Err(self.client.truncated());
        }
        Ok(LlmReply { text })
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

impl Provider for OllamaProvider {
    fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        Box::pin(self.test_connection())
    }

    fn name(&self) -> &str {
        "ollama"
    }

    fn model(&self) -> &str {
        &self.client.endpoint().model
    }

    fn context_window(&self) -> super::BoxFuture<'_, Option<u32>> {
        Box::pin(OllamaProvider::context_window(self))
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(self.run(request, on_delta))
    }
}
