//! `/api/backups…`: the database backups Settings lists, takes on demand,
//! restores and deletes (two steps), and their retention. One service call
//! per handler.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maskflow_core::service::{BackupsView, DeleteReply, RestoreReply};
use maskflow_core::store::backups::{Backup, Retention};

use super::deletes::{Confirm, ConfirmQuery, respond, token};
use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// Every recorded backup (newest first), the retention counts and the folder.
#[utoipa::path(get, path = "/api/backups", tag = "backups",
    responses((status = 200, description = "The backups", body = BackupsView)))]
pub async fn list(State(state): State<AppState>) -> Result<ApiJson<BackupsView>, AppError> {
    Ok(ApiJson(state.service.backups()?))
}

/// Takes a backup of the database now (`reason: manual`).
#[utoipa::path(post, path = "/api/backups", tag = "backups",
    responses((status = 201, description = "The new backup", body = Backup)))]
pub async fn create(
    State(state): State<AppState>,
) -> Result<(StatusCode, ApiJson<Backup>), AppError> {
    Ok((StatusCode::CREATED, ApiJson(state.service.create_backup()?)))
}

/// Sets how many pre-migration and pre-run backups are kept (older ones go at once).
#[utoipa::path(put, path = "/api/backups/retention", tag = "backups",
    request_body = Retention,
    responses(
        (status = 200, description = "The backups after pruning", body = BackupsView),
        (status = 400, description = "A count out of range", body = ErrorBody),
    ))]
pub async fn put_retention(
    State(state): State<AppState>,
    ApiJson(retention): ApiJson<Retention>,
) -> Result<ApiJson<BackupsView>, AppError> {
    Ok(ApiJson(state.service.set_backup_retention(retention)?))
}

/// Restores a backup over the database, after backing up the current one
/// (`reason: pre_restore`). Refused while a message, build or run is in progress.
#[utoipa::path(post, path = "/api/backups/{id}/restore", tag = "backups",
    params(("id" = String, Path, description = "Backup id (`bak_…`)")),
    responses(
        (status = 200, description = "Restored; `previous` is the backup of the database as it was", body = RestoreReply),
        (status = 400, description = "The backup file is missing, damaged or from a newer Maskflow", body = ErrorBody),
        (status = 404, description = "No such backup", body = ErrorBody),
        (status = 409, description = "Something is in progress", body = ErrorBody),
    ))]
pub async fn restore(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<RestoreReply>, AppError> {
    Ok(ApiJson(state.service.restore_backup(&id)?))
}

/// Deletes a backup's file and record, in two steps: without
/// `?confirm=TOKEN`, 409 `confirmation_required` with `would_delete`
/// (`backups`, `bytes`), `confirm_token` and `expires_at`; with it, 200.
#[utoipa::path(delete, path = "/api/backups/{id}", tag = "backups",
    params(("id" = String, Path, description = "Backup id"), Confirm),
    responses(
        (status = 200, description = "Deleted", body = DeleteReply),
        (status = 404, description = "No such backup", body = ErrorBody),
        (status = 409, description = "`confirmation_required` with the preview", body = DeleteReply),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    query: ConfirmQuery,
) -> Result<Response, AppError> {
    Ok(respond(
        state.service.delete_backup(&id, token(query)?.as_deref())?,
    ))
}
