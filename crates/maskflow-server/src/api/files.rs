//! The routes that are not plain JSON, written by hand: output downloads
//! (a run's, a version's test run's) and one file of a build session folder
//! (a wildcard path). The desktop has its own versions of these: it hands
//! over a local path instead of the bytes.

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;

use super::error::{AppError, HttpError};
use super::{ApiPath, AppState};

/// Downloads one output file of a run.
#[utoipa::path(get, path = "/api/runs/{run_id}/outputs/{name}", tag = "runs",
    params(("run_id" = String, Path, description = "Run id"), ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream"),
        (status = 404, description = "No such run or output", body = HttpError),
    ))]
pub async fn run_output(
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

/// Downloads an output of the version's latest test run.
#[utoipa::path(get, path = "/api/workflows/{id}/versions/{version_id}/outputs/{name}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id"),
           ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream"),
        (status = 404, description = "No such workflow, version or output", body = HttpError),
    ))]
pub async fn test_output(
    State(state): State<AppState>,
    ApiPath((id, version_id, name)): ApiPath<(String, String, String)>,
) -> Result<Response, AppError> {
    let path = state.service.test_output(&id, &version_id, &name)?;
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
