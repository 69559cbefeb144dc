//! The HTTP shape of two-step deletes (issue 18, seed 002): `DELETE` without
//! a valid `?confirm=TOKEN` deletes nothing and answers **409**
//! `{"error": "confirmation_required", "message", "deleted": false,
//! "would_delete": {…}, "confirm_token", "expires_at"}`; the same `DELETE`
//! with `?confirm=TOKEN` deletes and answers **200** with `"deleted": true`
//! and the counts. Used by the workflow, flow-run and backup routes (the `delete` reply of
//! the list of calls).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maskflow_core::service::DeleteReply;
use serde::Serialize;

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
