//! `GET/PUT /api/settings/isolation`: the per-machine "run scripts without
//! isolation" switch, one service call each.

use axum::extract::State;
use maskflow_core::service::{IsolationInput, IsolationView};

use super::error::{AppError, ErrorBody};
use super::{ApiJson, AppState};

/// Whether scripts may run without isolation, and what this machine can do.
#[utoipa::path(get, path = "/api/settings/isolation", tag = "settings",
    responses((status = 200, description = "The setting and this machine's isolation", body = IsolationView)))]
pub async fn get_isolation(
    State(state): State<AppState>,
) -> Result<ApiJson<IsolationView>, AppError> {
    Ok(ApiJson(state.service.isolation()?))
}

/// Allows or forbids running scripts without isolation on this machine.
#[utoipa::path(put, path = "/api/settings/isolation", tag = "settings",
    request_body = IsolationInput,
    responses(
        (status = 200, description = "The new setting", body = IsolationView),
        (status = 400, description = "A malformed body", body = ErrorBody),
    ))]
pub async fn put_isolation(
    State(state): State<AppState>,
    ApiJson(input): ApiJson<IsolationInput>,
) -> Result<ApiJson<IsolationView>, AppError> {
    Ok(ApiJson(state.service.set_isolation(input)?))
}
