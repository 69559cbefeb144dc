//! Access control of `maskflow serve`: the token it prints (as a bearer
//! header, or the cookie set by opening `/?token=…`), and refusal of any
//! request whose `Origin` is not the server's own.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::AppState;
use super::error::AppError;

/// The cookie that carries the token for browsers.
pub const COOKIE: &str = "maskflow_token";

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v)
}

/// Compares without an early exit, so timing does not reveal the token.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Checks `Origin` and the token on every request.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| state.origins.iter().any(|a| a == o));
        if !allowed {
            return AppError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "requests from other web sites are refused",
            )
            .into_response();
        }
    }
    // Opening the printed URL: set the cookie and go to the clean URL.
    if request.uri().path() == "/"
        && let Some(t) = query_token(request.uri().query())
    {
        if same(t, &state.token) {
            let cookie = format!(
                "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
                state.token
            );
            let mut response = Redirect::to("/").into_response();
            if let Ok(value) = cookie.parse() {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            return response;
        }
        return unauthorized();
    }
    let given = bearer(headers).or_else(|| cookie(headers));
    if !given.is_some_and(|t| same(t, &state.token)) {
        return unauthorized();
    }
    next.run(request).await
}

fn unauthorized() -> Response {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "a valid token is required: open the URL printed by `maskflow serve`, or send `Authorization: Bearer <token>`",
    )
    .into_response()
}
