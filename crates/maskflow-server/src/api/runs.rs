//! Runs of approved workflows, build gates and session folders:
//! `/api/workflows/{id}/runs`, `/api/runs/{run_id}/outputs/{name}`,
//! `/api/workflows/{id}/versions/{version_id}/gate` and `…/sessions…`.
//! One service call per handler.

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use maskflow_core::service::{GateRequest, RunInputs, RunView, SessionIteration, WorkflowView};

use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// Runs the workflow's approved version on the given inputs.
#[utoipa::path(post, path = "/api/workflows/{id}/runs", tag = "runs",
    params(("id" = String, Path, description = "Workflow id")),
    request_body = RunInputs,
    responses(
        (status = 201, description = "The finished run (it may have failed: see `status`)", body = RunView),
        (status = 400, description = "Bad inputs", body = ErrorBody),
        (status = 404, description = "No such workflow", body = ErrorBody),
        (status = 409, description = "No approved version", body = ErrorBody),
    ))]
pub async fn create(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(inputs): ApiJson<RunInputs>,
) -> Result<(StatusCode, ApiJson<RunView>), AppError> {
    Ok((
        StatusCode::CREATED,
        ApiJson(state.service.run_workflow(&id, inputs).await?),
    ))
}

/// Lists a workflow's runs, newest first.
#[utoipa::path(get, path = "/api/workflows/{id}/runs", tag = "runs",
    params(("id" = String, Path, description = "Workflow id")),
    responses(
        (status = 200, description = "The runs", body = Vec<RunView>),
        (status = 404, description = "No such workflow", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<Vec<RunView>>, AppError> {
    Ok(ApiJson(state.service.list_runs(&id)?))
}

/// Downloads one output file of a run.
#[utoipa::path(get, path = "/api/runs/{run_id}/outputs/{name}", tag = "runs",
    params(("run_id" = String, Path, description = "Run id"), ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream"),
        (status = 404, description = "No such run or output", body = ErrorBody),
    ))]
pub async fn output(
    State(state): State<AppState>,
    ApiPath((run_id, name)): ApiPath<(String, String)>,
) -> Result<Response, AppError> {
    let path = state.service.run_output(&run_id, &name)?;
    let bytes = tokio::fs::read(&path).await.map_err(AppError::internal)?;
    let file = name.rsplit('/').next().unwrap_or("output").replace('"', "");
    Response::builder()
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{file}\""),
        )
        .body(Body::from(bytes))
        .map_err(AppError::internal)
}

/// Resolves a build gate waiting for the user.
#[utoipa::path(post, path = "/api/workflows/{id}/versions/{version_id}/gate", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id")),
    request_body = GateRequest,
    responses(
        (status = 200, description = "The workflow; the build continues in the background", body = WorkflowView),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
        (status = 409, description = "No gate is waiting", body = ErrorBody),
    ))]
pub async fn gate(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
    ApiJson(request): ApiJson<GateRequest>,
) -> Result<ApiJson<WorkflowView>, AppError> {
    Ok(ApiJson(state.service.resolve_gate(
        &id,
        &version_id,
        request,
    )?))
}

/// Lists a version's build session folder.
#[utoipa::path(get, path = "/api/workflows/{id}/versions/{version_id}/sessions", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id")),
    responses(
        (status = 200, description = "The iterations and their files", body = Vec<SessionIteration>),
        (status = 404, description = "No such workflow or version", body = ErrorBody),
    ))]
pub async fn sessions(
    State(state): State<AppState>,
    ApiPath((id, version_id)): ApiPath<(String, String)>,
) -> Result<ApiJson<Vec<SessionIteration>>, AppError> {
    Ok(ApiJson(state.service.sessions(&id, &version_id)?))
}

/// One file of a build session folder, as text (`…/sessions/{iteration}/{*path}`).
pub async fn session_file(
    State(state): State<AppState>,
    ApiPath((id, version_id, iteration, path)): ApiPath<(String, String, u32, String)>,
) -> Result<Response, AppError> {
    let text = state
        .service
        .session_file(&id, &version_id, iteration, &path)?;
    Response::builder()
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Body::from(text))
        .map_err(AppError::internal)
}
