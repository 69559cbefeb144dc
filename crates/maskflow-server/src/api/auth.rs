//! Access control of `maskflow serve`: the `Host` a request names, the
//! `Origin` it comes from, and the token it carries. No cookie is ever set
//! or read: cookies are not scoped by port, so a browser would hand one to
//! every other server on 127.0.0.1 the user visits (issue 26, break 8).
//!
//! - **Host**: a request that names a host (its `Host` header, or an
//!   absolute request target) must name this server as the user's browser
//!   reaches it: `127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT`. Any
//!   other name is refused with 421, which stops DNS rebinding (a page of
//!   `evil.example` whose name was re-pointed at 127.0.0.1). A request with
//!   no host at all (not a browser: every browser sends one) passes on to
//!   the token check.
//! - **Origin**: a request with an `Origin` must come from the server's own
//!   origin. A state-changing request (POST, PUT, PATCH, DELETE) that a
//!   browser sent without `Origin` but marked `Sec-Fetch-Site` other than
//!   `same-origin` or `none` is refused too. Clients that are not browsers
//!   (the CLI, curl, schemathesis) send neither and keep working.
//! - **Token**: every `/api/…` request carries `Authorization: Bearer
//!   <token>`. The UI's files (`/`, `/assets/…`) need none: they hold no
//!   data, and the page must load before it can read the token from the
//!   URL's fragment (`/#token=…`, never sent to a server) into its tab's
//!   `sessionStorage`.
//! - **The event WebSocket** cannot carry a header from a browser, so the
//!   token rides in `Sec-WebSocket-Protocol` as `maskflow.bearer.<token>`,
//!   offered beside the plain `maskflow` protocol, which is the one the
//!   server selects (the token is never echoed back). Chosen over a
//!   single-use ticket in the URL because it keeps no state on the server,
//!   puts nothing in a URL (URLs land in logs and history), has no expiry
//!   to race on reconnect, and the browser sends the header only to the
//!   origin the socket was opened to (Kubernetes carries its bearer token
//!   the same way). It is accepted on `/api/events` only.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::error::AppError;

/// The WebSocket subprotocol the server selects on `/api/events`.
pub const WS_PROTOCOL: &str = "maskflow";

/// The prefix of the subprotocol that carries the token to `/api/events`.
pub const WS_TOKEN_PREFIX: &str = "maskflow.bearer.";

/// The one route that takes the token in `Sec-WebSocket-Protocol`.
const EVENTS_PATH: &str = "/api/events";

/// Where this server may be reached from: the `Host` names and the browser
/// origins of its loopback address and bound port.
#[derive(Clone, Debug)]
pub struct Reach {
    /// Accepted `Host` values, lower case (`127.0.0.1:PORT`, …).
    pub hosts: Vec<String>,
    /// Accepted `Origin` values (`http://127.0.0.1:PORT`, …).
    pub origins: Vec<String>,
}

impl Reach {
    /// The names of a server listening on loopback at `port`.
    pub fn loopback(port: u16) -> Self {
        let names = ["127.0.0.1", "localhost", "[::1]"];
        let mut hosts: Vec<String> = names.iter().map(|n| format!("{n}:{port}")).collect();
        if port == 80 {
            hosts.extend(names.iter().map(|n| (*n).to_owned()));
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Self { hosts, origins }
    }

    fn host_ok(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        self.hosts.contains(&host)
    }

    fn origin_ok(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o == origin)
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The token offered as a `maskflow.bearer.<token>` WebSocket subprotocol.
fn subprotocol_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|p| p.trim().strip_prefix(WS_TOKEN_PREFIX))
}

/// Compares without an early exit, so timing does not reveal the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// The host a request names, from its `Host` header and its target; a
/// refusal when either is not one of `reach`'s.
fn check_host(request: &Request, reach: &Reach) -> Result<(), AppError> {
    let header = match request.headers().get(header::HOST) {
        Some(v) => Some(v.to_str().unwrap_or("(not text)")),
        None => None,
    };
    let target = request.uri().authority().map(|a| a.as_str());
    for named in [header, target].into_iter().flatten() {
        if !reach.host_ok(named) {
            let shown: String = named.chars().take(80).collect();
            return Err(AppError::new(
                StatusCode::MISDIRECTED_REQUEST,
                "misdirected",
                format!(
                    "this server answers only to {}; the request named the host {shown:?}",
                    reach.hosts.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// A refusal when a browser sent the request from another site.
fn check_origin(request: &Request, reach: &Reach) -> Result<(), AppError> {
    let headers = request.headers();
    let refused = || {
        AppError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "requests from other web sites are refused",
        )
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        return match origin.to_str() {
            Ok(o) if reach.origin_ok(o) => Ok(()),
            _ => Err(refused()),
        };
    }
    let changes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let cross = headers
        .get("sec-fetch-site")
        .is_some_and(|s| !matches!(s.to_str(), Ok("same-origin" | "none")));
    if changes && cross {
        return Err(refused());
    }
    Ok(())
}

/// Checks the host, the origin, and (under `/api/`) the token of every request.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Err(e) =
        check_host(&request, &state.reach).and_then(|()| check_origin(&request, &state.reach))
    {
        return e.into_response();
    }
    let path = request.uri().path();
    if !path.starts_with("/api/") {
        // The UI's own files: public, and needed before the page has the token.
        return next.run(request).await;
    }
    let headers = request.headers();
    let given = bearer(headers).or_else(|| {
        (path == EVENTS_PATH)
            .then(|| subprotocol_token(headers))
            .flatten()
    });
    if !given.is_some_and(|t| same(t, &state.token)) {
        return unauthorized();
    }
    next.run(request).await
}

fn unauthorized() -> Response {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "a valid token is required: open the URL printed by `maskflow serve` (its `#token=…` part), or send `Authorization: Bearer <token>`",
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_origins_carry_the_port() {
        let reach = Reach::loopback(8421);
        assert!(reach.host_ok("127.0.0.1:8421"));
        assert!(reach.host_ok("LOCALHOST:8421"));
        assert!(reach.host_ok("[::1]:8421"));
        assert!(!reach.host_ok("127.0.0.1:8422"));
        assert!(!reach.host_ok("127.0.0.1"));
        assert!(!reach.host_ok("evil.example:8421"));
        assert!(reach.origin_ok("http://localhost:8421"));
        assert!(!reach.origin_ok("http://127.0.0.1:9999"));
        assert!(!reach.origin_ok("null"));
        assert!(Reach::loopback(80).host_ok("localhost"));
    }

    #[test]
    fn the_token_is_read_from_the_header_and_the_subprotocol() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "bearer abc".parse().expect("value"));
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().expect("value"));
        assert_eq!(bearer(&h), None);
        h.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            "maskflow, maskflow.bearer.tok-1".parse().expect("value"),
        );
        assert_eq!(subprotocol_token(&h), Some("tok-1"));
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
