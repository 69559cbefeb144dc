//! Output budgets: the most reply tokens each role may use. A structured
//! reply of a validator or clarifier is a few dozen tokens; a model that is
//! not following the format rambles until its budget, so the budget is what
//! bounds a bad reply's cost (a 135M model at ~20 tokens/s took 199 s to
//! fill Anthropic's old fixed 8,192). A reply that reaches its budget is
//! [`super::ProviderError::BudgetExceeded`], which [`super::ask_json`] counts
//! as the role's one repair.
//!
//! Defaults were measured with SmolLM2-135M on llama.cpp (see
//! `crates/maskflow-core/tests/it/real_roles.rs`): well-formed validator and clarifier replies
//! took 38 and 48 tokens, rambling ones 200–500 before the model stopped, a
//! builder's workflow 258. 512 leaves ten times a good reply's length (room
//! for cloud reasoning models that count thinking in the budget) while
//! cutting a ramble short; the builder keeps room for a long script.

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

use super::Role;

/// The most reply tokens of each role; `None` keeps the default.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct RoleBudgets {
    /// The validator (feasibility) reply.
    pub validator: Option<u32>,
    /// The clarifier's questions.
    pub clarifier: Option<u32>,
    /// The builder's workflow (script included).
    pub builder: Option<u32>,
    /// A flow agent's turn.
    pub agent: Option<u32>,
}

/// The budgets as the settings screen shows them: those set, and the
/// defaults that apply where none is.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetsView {
    /// The budgets set (`null`: the default).
    pub budgets: RoleBudgets,
    /// Every role's default.
    pub defaults: RoleBudgets,
}

impl BudgetsView {
    /// The view of `budgets`.
    pub fn of(budgets: RoleBudgets) -> Self {
        Self {
            budgets,
            defaults: RoleBudgets {
                validator: Some(VALIDATOR_DEFAULT),
                clarifier: Some(CLARIFIER_DEFAULT),
                builder: Some(BUILDER_DEFAULT),
                agent: Some(AGENT_DEFAULT),
            },
        }
    }
}

/// The validator's default budget.
pub const VALIDATOR_DEFAULT: u32 = 512;
/// The clarifier's default budget.
pub const CLARIFIER_DEFAULT: u32 = 512;
/// The builder's default budget (a whole script fits).
pub const BUILDER_DEFAULT: u32 = 8192;
/// A flow agent's default budget.
pub const AGENT_DEFAULT: u32 = 4096;
/// The smallest budget accepted from settings.
pub const MIN_BUDGET: u32 = 16;
/// The largest budget accepted from settings.
pub const MAX_BUDGET: u32 = 131_072;

impl RoleBudgets {
    /// The budget of `role`: the setting, else the default.
    pub fn for_role(&self, role: &Role) -> u32 {
        match role {
            Role::Validator => self.validator.unwrap_or(VALIDATOR_DEFAULT),
            Role::Clarifier => self.clarifier.unwrap_or(CLARIFIER_DEFAULT),
            Role::Builder => self.builder.unwrap_or(BUILDER_DEFAULT),
            Role::Agent(_) => self.agent.unwrap_or(AGENT_DEFAULT),
        }
    }

    /// Checks every budget set is within bounds; the error names the role.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("validator", self.validator),
            ("clarifier", self.clarifier),
            ("builder", self.builder),
            ("agent", self.agent),
        ] {
            if let Some(v) = v
                && !(MIN_BUDGET..=MAX_BUDGET).contains(&v)
            {
                return Err(format!(
                    "the {name}'s output budget {v} is outside {MIN_BUDGET}..={MAX_BUDGET} tokens"
                ));
            }
        }
        Ok(())
    }
}

/// The budgets in force, shared: the service owns one and hands it to every
/// back end it builds (on the [`super::Endpoint`]), so a change in Settings
/// reaches them at their next request. Cheap to clone; clones share. Two
/// services each have their own.
#[derive(Clone, Debug, Default)]
pub struct Budgets(Arc<RwLock<RoleBudgets>>);

impl Budgets {
    /// Puts `budgets` in force for every later request.
    pub fn set(&self, budgets: RoleBudgets) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = budgets;
    }

    /// The budgets in force.
    pub fn current(&self) -> RoleBudgets {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The `max_tokens` a back end sends for `role`: the role's budget,
    /// capped by the back end's own `max_tokens` when one is set.
    pub fn max_tokens(&self, role: &Role, endpoint_cap: Option<u32>) -> u32 {
        let b = self.current().for_role(role);
        endpoint_cap.map_or(b, |c| c.min(b))
    }
}

/// Equal when the budgets in force are (two endpoints compare by settings).
impl PartialEq for Budgets {
    fn eq(&self, other: &Self) -> bool {
        self.current() == other.current()
    }
}

/// The words of [`super::ProviderError::BudgetExceeded`].
pub fn exceeded_message(role: &str, budget: u32, window: Option<u32>) -> String {
    let n = thousands(u64::from(budget));
    match window {
        None => format!(
            "the {role}'s reply passed {n} tokens; the model is not following the format \
(or the budget is too small: raise it in Settings)"
        ),
        Some(w) => format!(
            "the {role}'s reply passed {n} tokens, all the room the prompt left in the model's \
{}-token context window; use a model with a larger context or smaller files",
            thousands(u64::from(w))
        ),
    }
}

/// Formats a count with thousands separators: `1,024`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_small_for_structured_roles_and_large_for_the_builder() {
        let b = RoleBudgets::default();
        assert_eq!(b.for_role(&Role::Validator), VALIDATOR_DEFAULT);
        assert!(b.for_role(&Role::Builder) > b.for_role(&Role::Clarifier));
        let set = RoleBudgets {
            validator: Some(64),
            ..Default::default()
        };
        assert_eq!(set.for_role(&Role::Validator), 64);
        assert_eq!(set.for_role(&Role::Agent("a".into())), AGENT_DEFAULT);
    }

    #[test]
    fn each_handle_has_its_own_budgets_and_clones_share_them() {
        let (a, b) = (Budgets::default(), Budgets::default());
        let seen_by_a_back_end = a.clone();
        a.set(RoleBudgets {
            validator: Some(200),
            ..Default::default()
        });
        assert_eq!(seen_by_a_back_end.max_tokens(&Role::Validator, None), 200);
        assert_eq!(
            seen_by_a_back_end.max_tokens(&Role::Validator, Some(100)),
            100
        );
        assert_eq!(b.max_tokens(&Role::Validator, None), VALIDATOR_DEFAULT);
    }

    #[test]
    fn out_of_range_budgets_are_refused_by_role() {
        let bad = RoleBudgets {
            clarifier: Some(2),
            ..Default::default()
        };
        let e = bad.validate().expect_err("too small");
        assert!(e.contains("clarifier") && e.contains('2'), "{e}");
        assert!(RoleBudgets::default().validate().is_ok());
    }

    #[test]
    fn the_message_names_the_role_and_what_set_the_limit() {
        let m = exceeded_message("validator", 1024, None);
        assert!(
            m.starts_with(
                "the validator's reply passed 1,024 tokens; the model is not following the format"
            ),
            "{m}"
        );
        let m = exceeded_message("builder", 233, Some(2048));
        assert!(
            m.contains("233 tokens") && m.contains("2,048-token context window"),
            "{m}"
        );
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1024), "1,024");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
