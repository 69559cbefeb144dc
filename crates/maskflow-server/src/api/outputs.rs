//! Outputs a person looks at: previews of a run's outputs, and a build's
//! test outputs (file and preview). One service call each; local only.

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::Response;
use maskflow_core::preview::OutputPreview;

use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// A preview of a run's output: an image, a table per sheet, or text.
#[utoipa::path(get, path = "/api/runs/{run_id}/previews/{name}", tag = "runs",
    params(("run_id" = String, Path, description = "Run id"), ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The preview", body = OutputPreview),
        (status = 404, description = "No such run or output", body = ErrorBody),
    ))]
pub async fn run_preview(
    State(state): State<AppState>,
    ApiPath((run_id, name)): ApiPath<(String, String)>,
) -> Result<ApiJson<OutputPreview>, AppError> {
    let service = state.service.clone();
    let preview = tokio::task::spawn_blocking(move || service.run_output_preview(&run_id, &name))
        .await
        .map_err(AppError::internal)??;
    Ok(ApiJson(preview))
}

/// A preview of an output of the version's latest test run.
#[utoipa::path(get, path = "/api/workflows/{id}/versions/{version_id}/previews/{name}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id"),
           ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The preview", body = OutputPreview),
        (status = 404, description = "No such workflow, version or output", body = ErrorBody),
    ))]
pub async fn test_preview(
    State(state): State<AppState>,
    ApiPath((id, version_id, name)): ApiPath<(String, String, String)>,
) -> Result<ApiJson<OutputPreview>, AppError> {
    let service = state.service.clone();
    let preview =
        tokio::task::spawn_blocking(move || service.test_output_preview(&id, &version_id, &name))
            .await
            .map_err(AppError::internal)??;
    Ok(ApiJson(preview))
}

/// Downloads an output of the version's latest test run.
#[utoipa::path(get, path = "/api/workflows/{id}/versions/{version_id}/outputs/{name}", tag = "workflows",
    params(("id" = String, Path, description = "Workflow id"), ("version_id" = String, Path, description = "Version id"),
           ("name" = String, Path, description = "Output name")),
    responses(
        (status = 200, description = "The file", content_type = "application/octet-stream"),
        (status = 404, description = "No such workflow, version or output", body = ErrorBody),
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
