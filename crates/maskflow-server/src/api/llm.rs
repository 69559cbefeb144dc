//! `/api/settings`, `/api/providers…`, `/api/ledger` and `/api/manual…`: LLM
//! settings and keys, "test connection", local server detection, the egress
//! ledger and the manual back end's pending prompts. One service call per
//! handler; a key is taken in and never answered back.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maskflow_core::privacy::LedgerEntry;
use maskflow_core::providers::manual::ManualPrompt;
use maskflow_core::settings::{ConnectionTest, Detected, LlmSettings, SettingsView};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::error::{AppError, ErrorBody};
use super::{ApiJson, ApiPath, AppState};

/// The LLM settings: back ends and which one each role uses.
#[utoipa::path(get, path = "/api/settings", tag = "settings",
    responses((status = 200, description = "The settings (keys are never shown, only where they come from)", body = SettingsView)))]
pub async fn get_settings(
    State(state): State<AppState>,
) -> Result<ApiJson<SettingsView>, AppError> {
    Ok(ApiJson(state.service.settings()?))
}

/// Replaces the LLM settings.
#[utoipa::path(put, path = "/api/settings", tag = "settings",
    request_body = LlmSettings,
    responses(
        (status = 200, description = "The new settings", body = SettingsView),
        (status = 400, description = "The settings are not valid", body = ErrorBody),
    ))]
pub async fn put_settings(
    State(state): State<AppState>,
    ApiJson(settings): ApiJson<LlmSettings>,
) -> Result<ApiJson<SettingsView>, AppError> {
    Ok(ApiJson(state.service.update_settings(settings)?))
}

/// An API key to store.
#[derive(Deserialize, Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyInput {
    /// The key (kept in the system keyring; never echoed).
    pub key: String,
}

/// Stores a provider's API key in the system keyring.
#[utoipa::path(put, path = "/api/providers/{id}/key", tag = "settings",
    params(("id" = String, Path, description = "Provider id")),
    request_body = KeyInput,
    responses(
        (status = 204, description = "Stored"),
        (status = 400, description = "The key is unusable", body = ErrorBody),
        (status = 404, description = "No such provider", body = ErrorBody),
        (status = 503, description = "No system keyring here; the message names the environment variable to use", body = ErrorBody),
    ))]
pub async fn put_key(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(input): ApiJson<KeyInput>,
) -> Result<StatusCode, AppError> {
    let service = state.service.clone();
    tokio::task::spawn_blocking(move || service.set_key(&id, &input.key))
        .await
        .map_err(AppError::internal)??;
    Ok(StatusCode::NO_CONTENT)
}

/// Removes a provider's API key from the system keyring.
#[utoipa::path(delete, path = "/api/providers/{id}/key", tag = "settings",
    params(("id" = String, Path, description = "Provider id")),
    responses(
        (status = 204, description = "Removed (or there was none)"),
        (status = 404, description = "No such provider", body = ErrorBody),
        (status = 503, description = "No system keyring here", body = ErrorBody),
    ))]
pub async fn delete_key(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, AppError> {
    let service = state.service.clone();
    tokio::task::spawn_blocking(move || service.delete_key(&id))
        .await
        .map_err(AppError::internal)??;
    Ok(StatusCode::NO_CONTENT)
}

/// Tries a provider: does its server answer and accept the key?
#[utoipa::path(post, path = "/api/providers/{id}/test", tag = "settings",
    params(("id" = String, Path, description = "Provider id")),
    responses(
        (status = 200, description = "The outcome, in words", body = ConnectionTest),
        (status = 404, description = "No such provider", body = ErrorBody),
    ))]
pub async fn test_provider(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiJson<ConnectionTest>, AppError> {
    Ok(ApiJson(state.service.test_provider(&id).await?))
}

/// Local LLM servers found now (Ollama on 11434, OpenAI-compatible on 8080).
#[utoipa::path(get, path = "/api/providers/detected", tag = "settings",
    responses((status = 200, description = "What answers locally", body = Vec<Detected>)))]
pub async fn detected(State(state): State<AppState>) -> ApiJson<Vec<Detected>> {
    ApiJson(state.service.detect_providers().await)
}

/// Ledger search and paging.
#[derive(Deserialize, Debug, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LedgerQuery {
    /// Text to look for in bodies, replies, roles, providers, models.
    pub q: Option<String>,
    /// Most entries (1–500, default 50).
    pub limit: Option<u32>,
    /// Entries to skip.
    pub offset: Option<u32>,
}

/// Token totals from the ledger: in all, per role and per workflow.
#[utoipa::path(get, path = "/api/ledger/usage", tag = "privacy",
    responses((status = 200, description = "Token totals", body = maskflow_core::privacy::ledger::Usage)))]
pub async fn usage(
    State(state): State<AppState>,
) -> Result<ApiJson<maskflow_core::privacy::ledger::Usage>, AppError> {
    Ok(ApiJson(state.service.usage()?))
}

/// What left the machine: every outbound LLM request, newest first.
#[utoipa::path(get, path = "/api/ledger", tag = "privacy",
    params(LedgerQuery),
    responses(
        (status = 200, description = "Ledger entries", body = Vec<LedgerEntry>),
        (status = 400, description = "Bad query", body = ErrorBody),
    ))]
pub async fn ledger(
    State(state): State<AppState>,
    query: Result<Query<LedgerQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<ApiJson<Vec<LedgerEntry>>, AppError> {
    let Query(q) = query.map_err(|e| AppError::invalid(e.body_text()))?;
    Ok(ApiJson(state.service.ledger(
        q.q.as_deref(),
        q.limit.unwrap_or(50),
        q.offset.unwrap_or(0),
    )?))
}

/// Prompts waiting for the user to paste an answer (manual back end).
#[utoipa::path(get, path = "/api/manual", tag = "manual",
    responses((status = 200, description = "Pending prompts, oldest first", body = Vec<ManualPrompt>)))]
pub async fn manual_list(State(state): State<AppState>) -> ApiJson<Vec<ManualPrompt>> {
    ApiJson(state.service.manual_prompts())
}

/// A pasted answer.
#[derive(Deserialize, Debug, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManualAnswer {
    /// The AI tool's reply, as pasted.
    pub text: String,
}

/// Answers a pending manual prompt; the waiting conversation continues.
#[utoipa::path(post, path = "/api/manual/{id}/answer", tag = "manual",
    params(("id" = String, Path, description = "Prompt id (`mp_…`)")),
    request_body = ManualAnswer,
    responses(
        (status = 204, description = "Answered"),
        (status = 400, description = "The answer is empty", body = ErrorBody),
        (status = 404, description = "No such prompt waiting", body = ErrorBody),
    ))]
pub async fn manual_answer(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(answer): ApiJson<ManualAnswer>,
) -> Result<StatusCode, AppError> {
    state.service.answer_manual(&id, &answer.text)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Dismisses a pending manual prompt; its request fails as cancelled.
#[utoipa::path(delete, path = "/api/manual/{id}", tag = "manual",
    params(("id" = String, Path, description = "Prompt id (`mp_…`)")),
    responses(
        (status = 204, description = "Dismissed"),
        (status = 404, description = "No such prompt waiting", body = ErrorBody),
    ))]
pub async fn manual_dismiss(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, AppError> {
    state.service.dismiss_manual(&id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// The Python interpreter workflows run with, and what it finds.
#[utoipa::path(get, path = "/api/settings/python", tag = "settings",
    responses((status = 200, description = "The setting and the interpreter it finds", body = maskflow_core::service::PythonView)))]
pub async fn get_python(
    State(state): State<AppState>,
) -> Result<ApiJson<maskflow_core::service::PythonView>, AppError> {
    Ok(ApiJson(state.service.python()?))
}

/// Sets the Python interpreter (checked first; used from the next start).
#[utoipa::path(put, path = "/api/settings/python", tag = "settings",
    request_body = maskflow_core::service::PythonInput,
    responses(
        (status = 200, description = "The new setting", body = maskflow_core::service::PythonView),
        (status = 400, description = "The interpreter does not start or is too old", body = ErrorBody),
    ))]
pub async fn put_python(
    State(state): State<AppState>,
    ApiJson(input): ApiJson<maskflow_core::service::PythonInput>,
) -> Result<ApiJson<maskflow_core::service::PythonView>, AppError> {
    let service = state.service.clone();
    Ok(ApiJson(
        tokio::task::spawn_blocking(move || service.set_python(input))
            .await
            .map_err(AppError::internal)??,
    ))
}
