//! The one error type of the HTTP API: every failure becomes
//! `{"error": code, "message": sentence}` with an honest status code, and
//! internals (database, disk) are logged, never shown.

use axum::extract::multipart::MultipartError;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maskflow_core::{CoreError, ErrorCode};
use serde::Serialize;

/// The error body.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct ErrorBody {
    /// `invalid_request`, `unauthorized`, `forbidden`, `not_found`, `conflict`,
    /// `archived`, `payload_too_large`, `provider_error`, `privacy_blocked`,
    /// `keyring_unavailable` or `internal`.
    pub error: String,
    /// What went wrong, for people.
    pub message: String,
    /// For `privacy_blocked`: each value found, masked, and where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<maskflow_core::privacy::GuardMatch>>,
    /// A finer code the UI branches on, e.g. `RUN_IN_PROGRESS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// An error answered to the client.
#[derive(Debug)]
pub struct AppError {
    status: StatusCode,
    code: &'static str,
    message: String,
    matches: Option<Vec<maskflow_core::privacy::GuardMatch>>,
    detail: Option<&'static str>,
}

impl AppError {
    /// An error with an explicit status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            matches: None,
            detail: None,
        }
    }

    /// The code and sentence the client reads (for a WebSocket frame).
    pub fn code_and_message(&self) -> (&'static str, &str) {
        (self.code, &self.message)
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

impl From<CoreError> for AppError {
    fn from(e: CoreError) -> Self {
        let message = e.to_string();
        if let CoreError::Provider(maskflow_core::ProviderError::PrivacyBlocked(matches)) = e {
            let mut err = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "privacy_blocked", message);
            err.matches = Some(matches);
            return err;
        }
        let detail = e.detail_code();
        let mut err = match e.code() {
            ErrorCode::InvalidRequest => Self::invalid(message),
            ErrorCode::NotFound => Self::not_found(message),
            ErrorCode::Conflict => Self::new(StatusCode::CONFLICT, "conflict", message),
            ErrorCode::Archived => Self::new(StatusCode::GONE, "archived", message),
            ErrorCode::KeyringUnavailable => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "keyring_unavailable",
                message,
            ),
            ErrorCode::ProviderError => {
                Self::new(StatusCode::BAD_GATEWAY, "provider_error", message)
            }
            ErrorCode::AgentMismatch => {
                Self::new(StatusCode::BAD_REQUEST, "agent_mismatch", message)
            }
            ErrorCode::DiskFull => {
                Self::new(StatusCode::INSUFFICIENT_STORAGE, "disk_full", message)
            }
            _ => Self::internal(message),
        };
        err.detail = detail;
        err
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
        let body = ErrorBody {
            error: self.code.to_owned(),
            message: self.message,
            matches: self.matches,
            code: self.detail.map(str::to_owned),
        };
        (self.status, axum::Json(body)).into_response()
    }
}
