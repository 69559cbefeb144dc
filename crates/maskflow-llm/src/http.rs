//! The HTTP client every network back end shares: reqwest with rustls (the
//! `ring` provider, so no C toolchain is needed), connect and read
//! time-outs, retries with backoff on 429 and 5xx that honour
//! `Retry-After`, a line reader for SSE and NDJSON streams, and errors a
//! person understands ("no server is listening at …", "the API key was
//! rejected by Anthropic (401)"). An API key never appears in an error: every
//! message is scrubbed of it.

use std::fmt;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use super::call;
use super::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

/// An API key; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key (blank keys are `None`).
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into().trim().to_owned();
        (!key.is_empty()).then_some(Self(key))
    }

    /// The key itself, for a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Time-outs and retry policy.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpSettings {
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest silence while waiting for the reply (headers or the next chunk).
    pub read_timeout: Duration,
    /// How many times a 429 or 5xx is retried.
    pub retries: u32,
    /// The first backoff; doubled at each retry.
    pub backoff: Duration,
    /// The longest wait honoured from `Retry-After`.
    pub max_retry_wait: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(180),
            retries: 3,
            backoff: Duration::from_secs(1),
            max_retry_wait: Duration::from_secs(60),
        }
    }
}

/// Where a back end sends requests, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    /// The server's base URL, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model to ask.
    pub model: String,
    /// The API key, when the server needs one.
    pub api_key: Option<ApiKey>,
    /// Time-outs and retries.
    pub http: HttpSettings,
    /// Most reply tokens (Anthropic requires one; others send it when set).
    pub max_tokens: Option<u32>,
    /// Sampling temperature, when set.
    pub temperature: Option<f64>,
    /// The model's context window in tokens, when the user set it; else the
    /// back end learns it ([`super::context`]).
    pub context_window: Option<u32>,
    /// The output budgets in force (the service's; the defaults otherwise).
    pub budgets: super::budget::Budgets,
}

impl Endpoint {
    /// An endpoint with default time-outs and no key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            model: model.into(),
            api_key: None,
            http: HttpSettings::default(),
            max_tokens: None,
            temperature: None,
            context_window: None,
            budgets: super::budget::Budgets::default(),
        }
    }

    /// The same endpoint with `key`.
    pub fn with_key(mut self, key: Option<ApiKey>) -> Self {
        self.api_key = key;
        self
    }

    /// The same endpoint with `budgets` in force.
    pub fn with_budgets(mut self, budgets: super::budget::Budgets) -> Self {
        self.budgets = budgets;
        self
    }
}

/// A client for one back end.
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: reqwest::Client,
    vendor: &'static str,
    endpoint: Endpoint,
}

impl HttpClient {
    /// A client for `vendor` (a display name such as "OpenAI") at `endpoint`.
    pub fn new(vendor: &'static str, endpoint: Endpoint) -> Result<Self, ProviderError> {
        let client = reqwest::Client::builder()
            .connect_timeout(endpoint.http.connect_timeout)
            .read_timeout(endpoint.http.read_timeout)
            .no_proxy()
            .build()
            .map_err(|e| ProviderError::Failed {
                provider: vendor.to_owned(),
                message: format!("cannot start the HTTP client: {e}"),
            })?;
        Ok(Self {
            client,
            vendor,
            endpoint,
        })
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The display name, e.g. "Anthropic".
    pub fn vendor(&self) -> &'static str {
        self.vendor
    }

    /// A [`ProviderError::Failed`] with `message`, scrubbed of the key.
    pub fn fail(&self, message: impl Into<String>) -> ProviderError {
        ProviderError::Failed {
            provider: self.vendor.to_owned(),
            message: self.scrub(message.into()),
        }
    }

    /// A [`ProviderError::TimedOut`] of this back end saying what timed out.
    pub fn timed_out(&self, message: impl Into<String>) -> ProviderError {
        ProviderError::TimedOut {
            provider: self.vendor.to_owned(),
            message: self.scrub(message.into()),
        }
    }

    fn scrub(&self, message: String) -> String {
        match &self.endpoint.api_key {
            Some(k) => message.replace(k.expose(), "***"),
            None => message,
        }
    }

    /// The `authorization: Bearer` header of the endpoint's key, if it has
    /// one (OpenAI-compatible servers and Ollama behind a proxy).
    pub fn bearer(&self) -> Vec<(&'static str, String)> {
        match &self.endpoint.api_key {
            Some(k) => vec![("authorization", format!("Bearer {}", k.expose()))],
            None => Vec::new(),
        }
    }

    /// The models the server lists: `GET path`, then the `field` of each
    /// entry of the body's `list` array (a body it cannot read lists none).
    pub async fn list_models(
        &self,
        path: &str,
        headers: &[(&str, String)],
        list: &str,
        field: &str,
    ) -> Result<Vec<String>, ProviderError> {
        let response = self.get(path, headers).await?;
        let body: Value = response.json().await.unwrap_or(Value::Null);
        Ok(body[list]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m[field].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The line a connection check shows: the base URL and the models, or
    /// `none` when the server lists none.
    pub fn connected(&self, models: &[String], none: &str) -> String {
        format!(
            "connected to {}; models: {}",
            self.endpoint.base_url,
            if models.is_empty() {
                none.to_owned()
            } else {
                models.join(", ")
            }
        )
    }

    /// Sends a GET (for "test connection"), with the same error wording.
    pub async fn get(
        &self,
        path: &str,
        headers: &[(&str, String)],
    ) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}{path}", self.endpoint.base_url);
        let mut request = self.client.get(&url);
        for (k, v) in headers {
            request = request.header(*k, v);
        }
        let response = request.send().await.map_err(|e| self.send_error(&e))?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(self.status_error(response, 0).await)
        }
    }

    /// POSTs a small metadata query once (no retry, not recorded as the
    /// call's request), e.g. Ollama's `/api/show`.
    pub async fn post_probe(
        &self,
        path: &str,
        headers: &[(&str, String)],
        body: &Value,
    ) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}{path}", self.endpoint.base_url);
        let mut request = self.client.post(&url).json(body);
        for (k, v) in headers {
            request = request.header(*k, v);
        }
        let response = request.send().await.map_err(|e| self.send_error(&e))?;
        if response.status().is_success() {
            Ok(response)
        } else {
            Err(self.status_error(response, 0).await)
        }
    }

    /// POSTs `body` as JSON to `path` (appended to the base URL), retrying
    /// 429 and 5xx with backoff (honouring `Retry-After`), and returns the
    /// successful response, ready to be read as a stream.
    pub async fn post_json(
        &self,
        path: &str,
        headers: &[(&str, String)],
        body: &Value,
    ) -> Result<reqwest::Response, ProviderError> {
        let url = format!("{}{path}", self.endpoint.base_url);
        let text = body.to_string();
        let mut attempt = 0;
        let mut resent = false;
        loop {
            call::record_request(&url, &text);
            let mut request = self
                .client
                .post(&url)
                .header("content-type", "application/json")
                .body(text.clone());
            for (k, v) in headers {
                request = request.header(*k, v);
            }
            let response = match request.send().await {
                Ok(response) => response,
                // A kept-alive connection the server closed as it was
                // reused ("connection closed before message completed"):
                // sent once more, on a fresh connection.
                Err(e) if !resent && dropped_before_answer(&e) => {
                    resent = true;
                    continue;
                }
                Err(e) => return Err(self.send_error(&e)),
            };
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retryable = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            if retryable && attempt < self.endpoint.http.retries {
                let wait = retry_after(&response)
                    .map(|w| w.min(self.endpoint.http.max_retry_wait))
                    .unwrap_or_else(|| self.endpoint.http.backoff * 2u32.saturating_pow(attempt));
                drop(response);
                tokio::time::sleep(wait).await;
                attempt += 1;
                continue;
            }
            return Err(self.status_error(response, attempt).await);
        }
    }

    fn send_error(&self, e: &reqwest::Error) -> ProviderError {
        let base = &self.endpoint.base_url;
        if e.is_connect() {
            if e.is_timeout() {
                return self.timed_out(format!(
                    "could not connect to {base} within {} s",
                    self.endpoint.http.connect_timeout.as_secs_f32()
                ));
            }
            return self.fail(format!("no server is listening at {base}"));
        }
        if e.is_timeout() {
            return self.timed_out(format!(
                "{base} did not answer within {} s",
                self.endpoint.http.read_timeout.as_secs_f32()
            ));
        }
        if e.is_builder() {
            return self.fail(format!("the base URL {base} is not a valid URL"));
        }
        self.fail(format!("the request to {base} failed: {}", root_cause(e)))
    }

    async fn status_error(&self, response: reqwest::Response, retries: u32) -> ProviderError {
        let status = response.status();
        let code = status.as_u16();
        let detail = response
            .text()
            .await
            .ok()
            .map(|t| error_detail(&t))
            .unwrap_or_default();
        let detail = if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        };
        let vendor = self.vendor;
        let message = match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                if self.endpoint.api_key.is_some() {
                    format!("the API key was rejected by {vendor} ({code})")
                } else {
                    format!(
                        "{vendor} needs an API key and none is set ({code}); add one in Settings"
                    )
                }
            }
            StatusCode::NOT_FOUND => format!(
                "{} answered 404 Not Found{detail}; check the base URL and the model name",
                self.endpoint.base_url
            ),
            StatusCode::TOO_MANY_REQUESTS => format!(
                "{vendor} is rate-limiting requests (429) and still was after {retries} retries{detail}"
            ),
            s if s.is_server_error() => format!(
                "{vendor} had a server error ({code}) and still did after {retries} retries{detail}"
            ),
            _ => format!("{vendor} refused the request ({code}){detail}"),
        };
        self.fail(message)
    }

    /// The error for a stream that broke off.
    pub fn stream_error(&self, e: &reqwest::Error) -> ProviderError {
        if e.is_timeout() {
            self.timed_out(format!(
                "{} stopped sending the reply for {} s",
                self.endpoint.base_url,
                self.endpoint.http.read_timeout.as_secs_f32()
            ))
        } else {
            self.fail(format!(
                "the connection to {} dropped in the middle of the reply",
                self.endpoint.base_url
            ))
        }
    }

    /// The error for a stream that ended before its final event.
    pub fn truncated(&self) -> ProviderError {
        self.fail(format!(
            "the reply from {} ended before it was complete (the stream was cut off)",
            self.endpoint.base_url
        ))
    }
}

/// Whether a request failed because its connection closed before any
/// answer: not a refused connection, a time-out or a bad URL.
fn dropped_before_answer(e: &reqwest::Error) -> bool {
    e.is_request() && !e.is_connect() && !e.is_timeout() && !e.is_builder()
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// `Retry-After` from a response: seconds or an HTTP date, read against now.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let v = response.headers().get("retry-after")?.to_str().ok()?;
    retry_after_value(v, std::time::SystemTime::now())
}

/// The wait a `Retry-After` value asks for at `now`: delay-seconds, or an
/// HTTP date (a date already past means "retry now"). Pure, for tests.
fn retry_after_value(v: &str, now: std::time::SystemTime) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The server's own error sentence from an error body (OpenAI's, Anthropic's
/// and Ollama's shapes), cut to a readable length.
pub fn error_detail(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(|m| m.as_str().map(str::to_owned))
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 300 {
        let cut: String = one_line.chars().take(300).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

/// Reads a streamed response line by line (SSE and NDJSON).
#[derive(Debug)]
pub struct Lines {
    response: reqwest::Response,
    buf: Vec<u8>,
    done: bool,
}

impl Lines {
    /// Starts reading `response`.
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buf: Vec::new(),
            done: false,
        }
    }

    /// The next line without its line ending, `None` at the end.
    pub async fn next(&mut self, client: &HttpClient) -> Result<Option<String>, ProviderError> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
            }
            if self.done {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let rest = std::mem::take(&mut self.buf);
                return Ok(Some(String::from_utf8_lossy(&rest).into_owned()));
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.buf.extend_from_slice(&bytes),
                Ok(None) => self.done = true,
                Err(e) => return Err(client.stream_error(&e)),
            }
        }
    }
}

/// Reads Server-Sent Events: yields each event's `(event name, data)`.
#[derive(Debug)]
pub struct Sse {
    lines: Lines,
}

impl Sse {
    /// Starts reading `response` as SSE.
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            lines: Lines::new(response),
        }
    }

    /// The next event, `None` at the end of the stream.
    pub async fn next(
        &mut self,
        client: &HttpClient,
    ) -> Result<Option<(String, String)>, ProviderError> {
        let mut event = String::new();
        let mut data: Vec<String> = Vec::new();
        loop {
            let Some(line) = self.lines.next(client).await? else {
                return Ok((!data.is_empty()).then(|| (event, data.join("\n"))));
            };
            if line.is_empty() {
                if data.is_empty() {
                    event.clear();
                    continue;
                }
                return Ok(Some((event, data.join("\n"))));
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => event = value.to_owned(),
                "data" => data.push(value.to_owned()),
                _ => {}
            }
        }
    }
}

/// The output budget of one request: the tokens the reply may take, and the
/// context window when it, not the role's budget, set that limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The reply's most tokens (`max_tokens`, `num_predict`).
    pub tokens: u32,
    /// The window, when it limits the reply below the role's budget.
    pub window: Option<u32>,
}

/// How one streamed reply ended.
#[derive(Debug, Default)]
pub struct Streamed {
    /// The reply's text (or a forced tool's input).
    pub text: String,
    /// Whether the stream said it was done (else it was cut off).
    pub finished: bool,
    /// Whether the reply stopped at the output budget.
    pub cut: bool,
}

/// What differs between the HTTP back ends (OpenAI-compatible, Anthropic,
/// Ollama): where and how a request is sent, and how its stream is read.
/// Everything else (budgets, the context window cache, truncation and
/// budget errors) is one [`Provider`] implementation for every dialect, so
/// the three back ends cannot drift apart.
pub trait Dialect: Send + Sync + fmt::Debug {
    /// The short name for errors and the ledger, e.g. `"openai"`.
    const NAME: &'static str;

    /// The client, with its endpoint.
    fn client(&self) -> &HttpClient;

    /// Where the learned context window is kept (shared by clones).
    fn window_cache(&self) -> &super::context::WindowCache;

    /// The window known without asking the server: the user's setting, else
    /// the known-model table.
    fn configured_window(&self) -> Option<u32> {
        let endpoint = self.client().endpoint();
        endpoint
            .context_window
            .or_else(|| super::context::known_window(&endpoint.model))
    }

    /// Asks the server for the model's context window (once; cached).
    fn ask_window(&self) -> BoxFuture<'_, Option<u32>>;

    /// Whether requests carry the reply's schema natively
    /// ([`Provider::takes_schema`]); the dialects do, unless told not to.
    fn takes_schema(&self) -> bool {
        true
    }

    /// Checks that the server answers, for Settings' "Test connection".
    fn check(&self) -> BoxFuture<'_, Result<String, ProviderError>>;

    /// Sends `request` with `budget` and reads its stream, calling
    /// `on_delta` with each piece of text.
    fn exchange<'a>(
        &'a self,
        request: &'a LlmRequest,
        budget: Budget,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<Streamed, ProviderError>>;
}

/// The model's context window of `dialect`: the configured one, else what
/// the server says, learned once.
pub async fn context_window<D: Dialect>(dialect: &D) -> Option<u32> {
    if let Some(w) = dialect.window_cache().get() {
        return w;
    }
    let mut w = dialect.configured_window();
    if w.is_none() {
        w = dialect.ask_window().await;
    }
    dialect.window_cache().set(w);
    w
}

async fn complete<D: Dialect>(
    dialect: &D,
    request: &LlmRequest,
    on_delta: DeltaSink<'_>,
) -> Result<LlmReply, ProviderError> {
    let endpoint = dialect.client().endpoint();
    let role_budget = endpoint
        .budgets
        .max_tokens(&request.role, endpoint.max_tokens);
    let window = context_window(dialect).await;
    let tokens = super::context::check(request, &endpoint.model, window, role_budget)?;
    // Set when the window, not the role's budget, limits the reply.
    let window = window.filter(|_| tokens < role_budget);
    let budget = Budget { tokens, window };
    let streamed = dialect.exchange(request, budget, on_delta).await?;
    if !streamed.finished {
        return Err(dialect.client().truncated());
    }
    if streamed.cut {
        return Err(ProviderError::BudgetExceeded {
            role: request.role.key(),
            budget: budget.tokens,
            window: budget.window,
        });
    }
    Ok(LlmReply {
        text: streamed.text,
    })
}

impl<D: Dialect> Provider for D {
    fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        self.check()
    }

    fn name(&self) -> &str {
        D::NAME
    }

    fn model(&self) -> &str {
        &self.client().endpoint().model
    }

    fn context_window(&self) -> BoxFuture<'_, Option<u32>> {
        Box::pin(context_window(self))
    }

    fn takes_schema(&self) -> bool {
        Dialect::takes_schema(self)
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(complete(self, request, on_delta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback server that closes its first `drops` connections once it
    /// has read a request, and answers `{}` on the others; the number of
    /// connections it accepted.
    async fn dropping_server(
        drops: usize,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let n = count.fetch_add(1, Ordering::SeqCst);
                let mut buf = vec![0u8; 4096];
                let _ = socket.read(&mut buf).await;
                if n >= drops {
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
                    let _ = socket.write_all(answer.as_bytes()).await;
                }
            }
        });
        (base, accepted)
    }

    #[tokio::test]
    async fn a_connection_closed_before_the_answer_is_sent_once_more_then_reported() {
        use std::sync::atomic::Ordering;
        let (base, accepted) = dropping_server(1).await;
        let client = HttpClient::new("Test", Endpoint::new(base, "m")).expect("client");
        let response = client.post_json("/x", &[], &serde_json::json!({})).await;
        assert_eq!(
            response
                .expect("answered on the second connection")
                .status(),
            200
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 2);

        // Once only: a server that always drops is reported, not retried forever.
        let (base, accepted) = dropping_server(usize::MAX).await;
        let client = HttpClient::new("Test", Endpoint::new(base, "m")).expect("client");
        let err = client
            .post_json("/x", &[], &serde_json::json!({}))
            .await
            .expect_err("dropped");
        assert!(err.to_string().contains("closed"), "{err}");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates_against_a_fixed_clock() {
        use std::time::UNIX_EPOCH;
        // 2015-10-21T07:28:00Z, the example date of RFC 9110.
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        assert_eq!(retry_after_value("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            retry_after_value(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after_value("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        // A date in the past means retry at once, not "no hint".
        assert_eq!(
            retry_after_value("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after_value("-3", now), None);
        assert_eq!(retry_after_value("soon", now), None);
    }

    #[test]
    fn keys_never_show_in_debug() {
        let k = ApiKey::new("sk-secret-123").expect("key");
        assert!(!format!("{k:?}").contains("secret"));
        assert_eq!(ApiKey::new("  "), None);
    }

    #[test]
    fn error_details_come_from_each_vendor_shape() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"bad model","type":"x"}}"#),
            "bad model"
        );
        assert_eq!(
            error_detail(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(error_detail("plain\n text"), "plain text");
        assert!(error_detail(&"x".repeat(1000)).chars().count() <= 301);
    }

    #[test]
    fn errors_are_scrubbed_of_the_key() {
        let c = HttpClient::new(
            "OpenAI",
            Endpoint::new("http://x", "m").with_key(ApiKey::new("sk-planted")),
        )
        .expect("client");
        let e = c.fail("echo sk-planted back");
        assert!(!e.to_string().contains("sk-planted"), "{e}");
    }
}
