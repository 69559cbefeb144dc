//! The output budget of each LLM role (`llm_budgets` in the settings table):
//! what the settings screen shows and changes. Stored budgets are put in
//! force in the service's [`Budgets`], which every back end it builds reads,
//! when the service opens and whenever they change.

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_llm::budget::{Budgets, BudgetsView, RoleBudgets};

/// The settings key of the budgets.
pub const BUDGETS_SETTING: &str = "llm_budgets";

impl Service {
    fn stored_budgets(&self) -> Result<RoleBudgets> {
        let text = store::settings::get(&self.db(), BUDGETS_SETTING)
            .ok()
            .flatten();
        match text {
            None => Ok(RoleBudgets::default()),
            Some(t) => serde_json::from_str(&t)
                .map_err(|e| CoreError::Corrupt(format!("the LLM output budgets: {e}"))),
        }
    }

    /// Puts the stored budgets in force (at start); damaged ones are
    /// reported and the defaults used, so Maskflow still opens.
    pub(super) fn apply_budgets(&self) {
        let budgets = self.stored_budgets().unwrap_or_else(|e| {
            eprintln!("maskflow: {e}; using the default output budgets");
            RoleBudgets::default()
        });
        self.inner.budgets.set(budgets);
    }

    /// The output budgets in force for this service's back ends.
    pub fn budgets(&self) -> &Budgets {
        &self.inner.budgets
    }

    /// The output budget of each role, and the defaults.
    pub fn role_budgets(&self) -> Result<BudgetsView> {
        Ok(BudgetsView::of(self.stored_budgets()?))
    }

    /// Sets the output budgets (each within bounds) and puts them in force.
    pub fn set_role_budgets(&self, budgets: RoleBudgets) -> Result<BudgetsView> {
        budgets.validate().map_err(CoreError::InvalidRequest)?;
        let value =
            serde_json::to_string(&budgets).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), BUDGETS_SETTING, &value, &now)?;
        self.inner.budgets.set(budgets.clone());
        Ok(BudgetsView::of(budgets))
    }
}
