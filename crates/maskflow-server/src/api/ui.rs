//! The built UI (`ui/dist`), embedded in the binary and served at `/` and
//! its asset paths, with a strict content security policy. Unknown paths
//! outside `/api` get `index.html`'s 404 from the router's fallback.

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};

static UI: Dir<'static> = include_dir!("$MASKFLOW_UI_DIR");

/// Changes whenever the embedded files change, so cargo rebuilds this crate.
pub const STAMP: &str = env!("MASKFLOW_UI_STAMP");

/// Everything from this server only; WebSocket back to it; no framing.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'";

fn mime(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// The embedded file at the request's path (`/` is `index.html`), or `None`.
pub fn file(path: &str) -> Option<Response> {
    let rel = path.trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    let f = UI.get_file(rel)?;
    let mut response = (StatusCode::OK, f.contents()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime(rel)));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let cache = if rel.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    Some(response)
}

/// Serves `/` and the UI's files.
pub async fn serve(request: Request) -> Response {
    match file(request.uri().path()) {
        Some(r) => r,
        None => super::error::AppError::not_found("no such route").into_response(),
    }
}
