//! `/api/workflows…`: seed 000's routes plus list, rename, delete, approve
//! and edit. One service call per handler.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maskflow_core::service::{
    CreateWorkflow, CreatedVersion, DeleteReply, MessageReply, SendMessage, VersionView,
    WorkflowPatch, WorkflowSummary, WorkflowView,
};

use super::deletes::{Confirm, ConfirmQuery, respond, token};
use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// Creates a workflow and its first version from approved extracts.
#[utoipa::path(post, path = "/api/workflows", tag = "workflows",
    request_body = CreateWorkflow,
    responses(
        (status = 201, description = "Created; the version is validating", body = CreatedVersion),
        (status = 400, description = "Bad request", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<CreateWorkflow>,
) -> Result<(StatusCode, ApiJson<CreatedVersion>), AppError> {
    Ok((
        StatusCode::CREATED,
        ApiJson(state.service.create_workflow(request)?),
    ))
}

/// Lists every workflow, newest first.
#[utoipa::path(get, path = "/api/workflows", tag = "workflows",
    responses((status = 200, description = "The workflows", body = Vec<WorkflowSummary>)))]
pub async fn list(
    State(state): State<AppState>,
) -> Result<ApiJson<Vec<WorkflowSummary>>, AppError> {
    Ok(ApiJson(state.service.list_workflows()?))
}

/// A workflow with its current version (poll this while building).
#[utoipa::path(get, path = "/api/workflows/{id}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id (`wf_…`)")),
    responses(
        (status = 200, description = "The workflow", body = WorkflowView),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
pub async fn get(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<WorkflowView>, AppError> {
    Ok(ApiJson(state.service.get_workflow(&id)?))
}

/// Renames, re-describes or relabels a workflow.
#[utoipa::path(patch, path = "/api/workflows/{id}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = WorkflowPatch,
    responses(
        (status = 200, description = "The updated workflow", body = WorkflowView),
        (status = 400, description = "Bad request", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
pub async fn update(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<WorkflowPatch>,
) -> Result<ApiJson<WorkflowView>, AppError> {
    Ok(ApiJson(state.service.update_workflow(&id, patch)?))
}

/// Deletes a workflow with its versions, conversation and runs, in two
/// steps: without `?confirm=TOKEN` nothing is deleted and the answer is 409
/// `confirmation_required` with `would_delete` (counts of versions,
/// messages, runs, and privacy-ledger entries kept), `confirm_token` and
/// `expires_at`; with the token it is deleted (200). The ledger entries stay,
/// marked with the workflow's name.
#[utoipa::path(delete, path = "/api/workflows/{id}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), Confirm),
    responses(
        (status = 200, description = "Deleted; `would_delete` holds what was removed", body = DeleteReply),
        (status = 404, description = "No such workflow", body = ErrorBody),
        (status = 409, description = "`confirmation_required` (with `would_delete`, `confirm_token`, `expires_at`), or a message is in progress (`conflict`)", body = DeleteReply),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    query: ConfirmQuery,
) -> Result<Response, AppError> {
    Ok(respond(
        state
            .service
            .delete_workflow(&id, token(query)?.as_deref())?,
    ))
}

/// Sends a message; routed by the draft's status (validator, clarifier, build).
#[utoipa::path(post, path = "/api/workflows/{id}/messages", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = SendMessage,
    responses(
        (status = 200, description = "The assistant's reply and the new status", body = MessageReply),
        (status = 400, description = "Bad request", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
        (status = 409, description = "A message is in progress, or the workflow is building or rejected", body = ErrorBody),
        (status = 422, description = "The privacy guard found values from the user's files (`privacy_blocked`, with `matches`); resend with `confirm_privacy: true` to send the user's own text anyway", body = ErrorBody),
        (status = 502, description = "The LLM back end failed", body = ErrorBody),
    ))]
pub async fn send_message(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(message): ApiJson<SendMessage>,
) -> Result<ApiJson<MessageReply>, AppError> {
    Ok(ApiJson(
        state
            .service
            .send_message_cancellable(&id, &message.content, message.confirm_privacy)
            .await?,
    ))
}

/// Approves a built version: it becomes active; the others are archived.
#[utoipa::path(post, path = "/api/workflows/{id}/versions/{version_id}/approve", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id (`wv_…`)")),
    responses(
        (status = 200, description = "The workflow", body = WorkflowView),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
        (status = 409, description = "The version is not pending approval", body = ErrorBody),
        (status = 410, description = "The version is archived", body = ErrorBody),
    ))]
pub async fn approve(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<ApiJson<WorkflowView>, AppError> {
    Ok(ApiJson(state.service.approve(&id, &version_id)?))
}

/// Edits a version: creates version N+1 (`validated`) with the same extracts.
#[utoipa::path(post, path = "/api/workflows/{id}/versions/{version_id}/edit", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id")),
    responses(
        (status = 201, description = "The new version", body = CreatedVersion),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
        (status = 409, description = "The version cannot be edited now", body = ErrorBody),
        (status = 410, description = "The version is archived", body = ErrorBody),
    ))]
pub async fn edit(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<(StatusCode, ApiJson<CreatedVersion>), AppError> {
    Ok((
        StatusCode::CREATED,
        ApiJson(state.service.edit(&id, &version_id)?),
    ))
}

/// Restores an earlier (archived) version: a new version (`building`) with
/// its script, fields and execution is tested on the real files, then waits
/// for approval. The workflow's draft, if any, is archived.
#[utoipa::path(post, path = "/api/workflows/{id}/versions/{version_id}/restore", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "The earlier version to restore")),
    responses(
        (status = 201, description = "The new version, building (its test runs in the background)", body = CreatedVersion),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
        (status = 409, description = "The version is not archived or was never built, or a build is running", body = ErrorBody),
    ))]
pub async fn restore(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<(StatusCode, ApiJson<CreatedVersion>), AppError> {
    Ok((
        StatusCode::CREATED,
        ApiJson(state.service.restore(&id, &version_id)?),
    ))
}

/// One version in full (its script, fields and extracts), archived ones too.
#[utoipa::path(get, path = "/api/workflows/{id}/versions/{version_id}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id")),
    responses(
        (status = 200, description = "The version", body = VersionView),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
    ))]
pub async fn get_version(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<ApiJson<VersionView>, AppError> {
    Ok(ApiJson(state.service.get_version(&id, &version_id)?))
}
