//! `/api/environments`: the managed Python environments (list with sizes,
//! remove an unused one) and installing `uv` with the user's consent.
//! One service call each.

use axum::extract::State;
use maskflow_core::service::EnvironmentsView;

use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// The environments, their sizes, whether a version uses each, and `uv`.
#[utoipa::path(get, path = "/api/environments", tag = "settings",
    responses((status = 200, description = "The managed Python environments", body = EnvironmentsView)))]
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<EnvironmentsView>, AppError> {
    let service = state.service.clone();
    Ok(ApiJson(
        blocking(move || service.list_environments()).await?,
    ))
}

/// Removes an environment no version uses any more.
#[utoipa::path(delete, path = "/api/environments/{id}", tag = "settings",
    params(("id" = String, Path, description = "The environment's id")),
    responses(
        (status = 200, description = "The environments left", body = EnvironmentsView),
        (status = 404, description = "No such environment", body = ErrorBody),
        (status = 409, description = "A version still uses it", body = ErrorBody),
    ))]
pub async fn remove(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<EnvironmentsView>, AppError> {
    let service = state.service.clone();
    Ok(ApiJson(
        blocking(move || service.remove_environment(&id)).await?,
    ))
}

/// Installs `uv` (from the package index, with the Python in use) into the
/// data folder: the user's explicit consent. Progress comes as events.
#[utoipa::path(post, path = "/api/environments/uv", tag = "settings",
    responses(
        (status = 200, description = "uv installed", body = EnvironmentsView),
        (status = 409, description = "The install failed", body = ErrorBody),
    ))]
pub async fn install_uv(
    State(state): State<AppState>,
) -> Result<ApiJson<EnvironmentsView>, AppError> {
    let service = state.service.clone();
    Ok(ApiJson(blocking(move || service.install_uv()).await?))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> maskflow_core::error::Result<T> + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AppError::from(maskflow_core::CoreError::Corrupt(format!("stopped: {e}"))))?
        .map_err(AppError::from)
}
