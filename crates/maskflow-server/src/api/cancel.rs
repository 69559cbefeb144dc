//! `POST /api/workflows/{id}/cancel`: stops the LLM call of the message in
//! flight. One service call.

use axum::extract::State;
use maskflow_core::service::CancelReply;

use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// Stops the message in flight on a workflow: its LLM request is dropped,
/// the ledger records the call as cancelled, and the sender gets an error
/// saying so; the workflow takes the next message at once.
#[utoipa::path(post, path = "/api/workflows/{id}/cancel", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "Whether a message was in flight (and is now stopped)", body = CancelReply),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
pub async fn cancel_message(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<CancelReply>, AppError> {
    Ok(ApiJson(state.service.cancel_message(&id)?))
}
