//! `/api/flows…` and `/api/flow-runs…`: seed 004's flow routes. One
//! [`maskflow_core::flows::FlowEngine`] call per handler; transcript turns
//! stream over `/api/events` as `flow_turn` and `flow_status` events.

use axum::extract::State;
use axum::http::StatusCode;
use maskflow_core::flows::bundle::{FlowBundle, ImportRequest};
use maskflow_core::flows::{
    FlowList, FlowSummary, GateAnswer, RunList, RunPatch, RunView, StartFlow, Started,
};
use serde_json::Value;

use maskflow_core::service::DeleteReply;

use super::deletes::{Confirm, ConfirmQuery, respond, token};
use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// Every flow in `flows/` (re-read now); invalid ones are `disabled` with their `error`.
#[utoipa::path(get, path = "/api/flows", tag = "flows",
    responses((status = 200, description = "The flows", body = FlowList)))]
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<FlowList>, AppError> {
    Ok(ApiJson(state.service.flows().list()?))
}

/// A flow's definition.
#[utoipa::path(get, path = "/api/flows/{name}", tag = "flows",
    params(("name" = String, Path, description = "The flow's file stem")),
    responses(
        (status = 200, description = "The definition", body = Object),
        (status = 400, description = "The flow is invalid", body = ErrorBody),
        (status = 404, description = "No such flow", body = ErrorBody),
    ))]
pub async fn definition(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiJson<Value>, AppError> {
    Ok(ApiJson(state.service.flows().definition(&name)?))
}

/// Starts a run, or resumes one (`conversationId`, optional `resumeStepPath`).
#[utoipa::path(post, path = "/api/flows/{name}/run", tag = "flows",
    params(("name" = String, Path, description = "The flow's file stem")),
    request_body = StartFlow,
    responses(
        (status = 202, description = "Started", body = Started),
        (status = 400, description = "Invalid flow, command, path or folder (`invalid_request`), or `agent_mismatch`", body = ErrorBody),
        (status = 404, description = "No such flow or run", body = ErrorBody),
        (status = 409, description = "`RUN_IN_PROGRESS`, or the run waits for an answer", body = ErrorBody),
        (status = 410, description = "The run is archived", body = ErrorBody),
    ))]
pub async fn run(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<StartFlow>,
) -> Result<(StatusCode, ApiJson<Started>), AppError> {
    Ok((
        StatusCode::ACCEPTED,
        ApiJson(state.service.flows().start(&name, request)?),
    ))
}

/// A flow's runs, newest first.
#[utoipa::path(get, path = "/api/flows/{name}/runs", tag = "flows",
    params(("name" = String, Path, description = "The flow's file stem")),
    responses((status = 200, description = "The runs", body = RunList)))]
pub async fn runs(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiJson<RunList>, AppError> {
    Ok(ApiJson(state.service.flows().runs(&name)?))
}

/// A run: status, `flags.flow` (resume state), transcript, pending question.
#[utoipa::path(get, path = "/api/flow-runs/{conversationId}", tag = "flows",
    params(("conversationId" = String, Path, description = "The run (`flow_…`)")),
    responses(
        (status = 200, description = "The run", body = RunView),
        (status = 404, description = "No such run", body = ErrorBody),
    ))]
pub async fn get_run(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<RunView>, AppError> {
    Ok(ApiJson(state.service.flows().get_run(&id)?))
}

/// Renames or (un)archives a run.
#[utoipa::path(patch, path = "/api/flow-runs/{conversationId}", tag = "flows",
    params(("conversationId" = String, Path, description = "The run")),
    request_body = RunPatch,
    responses(
        (status = 200, description = "The run", body = RunView),
        (status = 400, description = "Bad request", body = ErrorBody),
        (status = 404, description = "No such run", body = ErrorBody),
        (status = 409, description = "`RUN_IN_PROGRESS`", body = ErrorBody),
    ))]
pub async fn patch_run(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(patch): ApiJson<RunPatch>,
) -> Result<ApiJson<RunView>, AppError> {
    Ok(ApiJson(state.service.flows().patch(&id, patch)?))
}

/// Deletes a run with its subflow runs, transcript and checkpoints, in two
/// steps: without `?confirm=TOKEN` nothing is deleted and the answer is 409
/// `confirmation_required` with `would_delete`, `confirm_token` and
/// `expires_at`; with the token it is deleted (200).
#[utoipa::path(delete, path = "/api/flow-runs/{conversationId}", tag = "flows",
    params(("conversationId" = String, Path, description = "The run"), Confirm),
    responses(
        (status = 200, description = "Deleted; `would_delete` holds what was removed", body = DeleteReply),
        (status = 404, description = "No such run", body = ErrorBody),
        (status = 409, description = "`confirmation_required` with the preview, or `RUN_IN_PROGRESS`", body = DeleteReply),
    ))]
pub async fn delete_run(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    query: ConfirmQuery,
) -> Result<axum::response::Response, AppError> {
    Ok(respond(
        state
            .service
            .delete_flow_run(&id, token(query)?.as_deref())?,
    ))
}

/// Stops a run: the step in flight is cancelled and `stopped` recorded.
#[utoipa::path(post, path = "/api/flow-runs/{conversationId}/stop", tag = "flows",
    params(("conversationId" = String, Path, description = "The run")),
    responses(
        (status = 200, description = "The stopped run", body = RunView),
        (status = 404, description = "No such run", body = ErrorBody),
        (status = 409, description = "The run is not running or waiting", body = ErrorBody),
    ))]
pub async fn stop(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<RunView>, AppError> {
    Ok(ApiJson(state.service.flows().stop(&id).await?))
}

/// Answers the gate the run waits at (`{option, input?}`), or a run that
/// needs attention (`retry`, `skip`, `stop`).
#[utoipa::path(post, path = "/api/flow-runs/{conversationId}/gate", tag = "flows",
    params(("conversationId" = String, Path, description = "The run")),
    request_body = GateAnswer,
    responses(
        (status = 202, description = "Carrying on (or stopped)", body = Started),
        (status = 400, description = "Unknown option or missing input", body = ErrorBody),
        (status = 404, description = "No such run", body = ErrorBody),
        (status = 409, description = "The run is not waiting for an answer", body = ErrorBody),
        (status = 410, description = "The run is archived", body = ErrorBody),
    ))]
pub async fn gate(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(answer): ApiJson<GateAnswer>,
) -> Result<(StatusCode, ApiJson<Started>), AppError> {
    Ok((
        StatusCode::ACCEPTED,
        ApiJson(state.service.flows().answer(&id, answer)?),
    ))
}

/// A flow as a Mermaid `graph TD` with its `WORKFLOW_CONFIG` block (seed 003).
#[utoipa::path(get, path = "/api/flows/{name}/mermaid", tag = "flows",
    params(("name" = String, Path, description = "The flow's file stem")),
    responses(
        (status = 200, description = "The Mermaid text", body = String, content_type = "text/plain"),
        (status = 400, description = "The flow is invalid", body = ErrorBody),
        (status = 404, description = "No such flow", body = ErrorBody),
    ))]
pub async fn mermaid(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<([(axum::http::header::HeaderName, &'static str); 1], String), AppError> {
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        state.service.flows().mermaid(&name)?,
    ))
}

/// A flow with its agents as one JSON bundle (seed 003's export format).
#[utoipa::path(get, path = "/api/flows/{name}/export", tag = "flows",
    params(("name" = String, Path, description = "The flow's file stem")),
    responses(
        (status = 200, description = "The bundle", body = FlowBundle),
        (status = 400, description = "The flow is invalid", body = ErrorBody),
        (status = 404, description = "No such flow", body = ErrorBody),
    ))]
pub async fn export(
    State(state): State<AppState>,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiJson<FlowBundle>, AppError> {
    Ok(ApiJson(state.service.flows().export_bundle(&name)?))
}

/// Imports a bundle or a Mermaid diagram (`{bundle?, mermaid?, name?, overwrite?}`).
#[utoipa::path(post, path = "/api/flows/import", tag = "flows",
    request_body = ImportRequest,
    responses(
        (status = 200, description = "The imported flow", body = FlowSummary),
        (status = 400, description = "Invalid bundle, diagram or name", body = ErrorBody),
        (status = 409, description = "A flow or agent of that name exists (set overwrite)", body = ErrorBody),
    ))]
pub async fn import(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<ImportRequest>,
) -> Result<ApiJson<FlowSummary>, AppError> {
    Ok(ApiJson(state.service.flows().import_flow(request)?))
}
