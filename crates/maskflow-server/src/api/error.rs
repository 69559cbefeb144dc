//! The one error type of the HTTP API: every failure becomes core's
//! [`ErrorBody`] `{code, message, matches?, detail?}` plus `error`, with an
//! honest status code; internals (database, disk) are logged, never shown.

use axum::extract::multipart::MultipartError;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maskflow_core::api::ErrorBody;
use maskflow_core::{CoreError, ErrorCode};
use serde::Serialize;

/// The error body over HTTP: the shells' one [`ErrorBody`] plus `error`,
/// the code HTTP clients have read since seed 000. Where there is a finer
/// code, `code` is that one, as seed 004 writes it: `409 {error: "conflict",
/// code: "RUN_IN_PROGRESS"}` (it is also in `detail`); otherwise `code` is
/// `error` again.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct HttpError {
    /// The kind of failure: `invalid_request`, `not_found`, `conflict`, …
    pub error: String,
    /// The body both shells answer.
    #[serde(flatten)]
    pub body: ErrorBody,
}

/// An error answered to the client.
#[derive(Debug)]
pub struct AppError {
    status: StatusCode,
    body: ErrorBody,
}

impl AppError {
    /// An error with an explicit status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorBody::new(code, message),
        }
    }

    /// The code and sentence the client reads (for a WebSocket frame).
    pub fn code_and_message(&self) -> (&str, &str) {
        (&self.body.code, &self.body.message)
    }

    /// 400 `invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 500 `internal`, logging the cause.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        eprintln!("maskflow serve: internal error: {cause}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "something went wrong inside Maskflow; see the server's log",
        )
    }
}

/// The HTTP status of a service error's code.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::InvalidRequest | ErrorCode::AgentMismatch => StatusCode::BAD_REQUEST,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        // A cancel is the user's own doing: the request may be sent again.
        ErrorCode::Conflict | ErrorCode::Cancelled => StatusCode::CONFLICT,
        ErrorCode::Archived => StatusCode::GONE,
        ErrorCode::KeyringUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::ProviderError => StatusCode::BAD_GATEWAY,
        ErrorCode::ProviderTimeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::PrivacyBlocked => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::DiskFull => StatusCode::INSUFFICIENT_STORAGE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<CoreError> for AppError {
    fn from(e: CoreError) -> Self {
        let status = status_of(e.code());
        Self {
            status,
            body: ErrorBody::from_core(e, "server's log"),
        }
    }
}

impl From<QueryRejection> for AppError {
    fn from(r: QueryRejection) -> Self {
        Self::invalid(r.body_text())
    }
}

impl From<JsonRejection> for AppError {
    fn from(r: JsonRejection) -> Self {
        if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::new(
                r.status(),
                "payload_too_large",
                "the request body is too large",
            );
        }
        let status = match r {
            JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            _ => StatusCode::BAD_REQUEST,
        };
        Self::new(status, "invalid_request", r.body_text())
    }
}

impl From<PathRejection> for AppError {
    fn from(r: PathRejection) -> Self {
        Self::invalid(r.body_text())
    }
}

impl From<MultipartError> for AppError {
    fn from(e: MultipartError) -> Self {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return Self::new(e.status(), "payload_too_large", "the upload is too large");
        }
        Self::invalid(format!("bad multipart upload: {}", e.body_text()))
    }
}

impl From<axum::extract::multipart::MultipartRejection> for AppError {
    fn from(r: axum::extract::multipart::MultipartRejection) -> Self {
        Self::invalid(r.body_text())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut body = self.body;
        let error = body.code.clone();
        if let Some(finer) = &body.detail {
            body.code = finer.clone();
        }
        let body = HttpError { error, body };
        (self.status, axum::Json(body)).into_response()
    }
}
