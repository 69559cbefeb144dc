//! `/api/settings/storage`: what the data folder holds by kind, the upload
//! expiry, and clearing a kind safely — one service call each.

use axum::extract::{Path, State};
use maskflow_core::service::{Cleared, StorageInput, StorageKind, StorageView};

use super::error::{AppError, ErrorBody};
use super::{ApiJson, AppState};

/// The data folder's disk use by kind, free space and the upload expiry.
#[utoipa::path(get, path = "/api/settings/storage", tag = "settings",
    responses((status = 200, description = "Disk use by kind", body = StorageView)))]
pub async fn get_storage(State(state): State<AppState>) -> Result<ApiJson<StorageView>, AppError> {
    Ok(ApiJson(state.service.storage()?))
}

/// Sets how long uploads that joined no workflow are kept.
#[utoipa::path(put, path = "/api/settings/storage", tag = "settings",
    request_body = StorageInput,
    responses(
        (status = 200, description = "The new setting and disk use", body = StorageView),
        (status = 400, description = "An expiry out of range or a malformed body", body = ErrorBody),
    ))]
pub async fn put_storage(
    State(state): State<AppState>,
    ApiJson(input): ApiJson<StorageInput>,
) -> Result<ApiJson<StorageView>, AppError> {
    Ok(ApiJson(state.service.set_storage(input)?))
}

/// Clears one kind: unattached uploads, finished runs' outputs or closed
/// versions' session folders (what each keeps is in the storage view).
#[utoipa::path(post, path = "/api/settings/storage/{kind}/clear", tag = "settings",
    params(("kind" = StorageKind, Path, description = "uploads, run_outputs or sessions")),
    responses(
        (status = 200, description = "What was removed", body = Cleared),
        (status = 400, description = "A kind that cannot be cleared here", body = ErrorBody),
    ))]
pub async fn clear_storage(
    State(state): State<AppState>,
    Path(kind): Path<StorageKind>,
) -> Result<ApiJson<Cleared>, AppError> {
    Ok(ApiJson(state.service.clear_storage(kind)?))
}
