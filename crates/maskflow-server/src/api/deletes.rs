//! The HTTP shape of two-step deletes (issue 18, seed 002): `DELETE` without
//! a valid `?confirm=TOKEN` deletes nothing and answers **409**
//! `{"error": "confirmation_required", "message", "deleted": false,
//! "would_delete": {…}, "confirm_token", "expires_at"}`; the same `DELETE`
//! with `?confirm=TOKEN` deletes and answers **200** with `"deleted": true`
//! and the counts. Used by the workflow, flow-run and backup routes.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maskflow_core::service::DeleteReply;
use serde::{Deserialize, Serialize};

use super::error::AppError;

/// `?confirm=TOKEN`.
#[derive(Deserialize, Debug, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Confirm {
    /// The token from the first call's 409 answer.
    #[serde(default)]
    pub confirm: Option<String>,
}

/// The query as handlers take it (a bad query is the API's 400).
pub type ConfirmQuery = Result<Query<Confirm>, QueryRejection>;

/// The token of a [`ConfirmQuery`], or the API's error for a malformed query.
pub fn token(query: ConfirmQuery) -> Result<Option<String>, AppError> {
    let Query(q) = query.map_err(|e| AppError::invalid(e.body_text()))?;
    Ok(q.confirm.filter(|t| !t.is_empty()))
}

#[derive(Serialize)]
struct Body<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(flatten)]
    reply: &'a DeleteReply,
}

/// 200 when deleted, else 409 `confirmation_required` with the preview.
pub fn respond(reply: DeleteReply) -> Response {
    if reply.deleted {
        let body = Body {
            error: None,
            reply: &reply,
        };
        (StatusCode::OK, axum::Json(&body)).into_response()
    } else {
        let body = Body {
            error: Some("confirmation_required"),
            reply: &reply,
        };
        (StatusCode::CONFLICT, axum::Json(&body)).into_response()
    }
}
