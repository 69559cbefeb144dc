//! `/api/settings/budgets`: the most reply tokens each LLM role may use. One
//! service call per handler.

use axum::extract::State;
use maskflow_core::providers::budget::{BudgetsView, RoleBudgets};

use super::error::{AppError, ErrorBody};
use super::{ApiJson, AppState};

/// The output budget of each role (`null`: the default).
#[utoipa::path(get, path = "/api/settings/budgets", tag = "settings",
    responses((status = 200, description = "The budgets, in tokens", body = BudgetsView)))]
pub async fn get_budgets(State(state): State<AppState>) -> Result<ApiJson<BudgetsView>, AppError> {
    Ok(ApiJson(state.service.role_budgets()?))
}

/// Sets the output budgets (each from 16 to 131,072 tokens).
#[utoipa::path(put, path = "/api/settings/budgets", tag = "settings",
    request_body = RoleBudgets,
    responses(
        (status = 200, description = "The new budgets", body = BudgetsView),
        (status = 400, description = "A budget is out of bounds", body = ErrorBody),
    ))]
pub async fn put_budgets(
    State(state): State<AppState>,
    ApiJson(budgets): ApiJson<RoleBudgets>,
) -> Result<ApiJson<BudgetsView>, AppError> {
    Ok(ApiJson(state.service.set_role_budgets(budgets)?))
}
