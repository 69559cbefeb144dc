//! The per-machine "run scripts without isolation" setting: off (the
//! default), a script that cannot be isolated is refused; on, it runs, and
//! every run then says so in red. Read on every run, so a change takes
//! effect at once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_runner::isolation_status;

/// The settings key (a JSON boolean).
const KEY: &str = "allow_unisolated_scripts";

/// The isolation setting as the settings screen shows it.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct IsolationView {
    /// Whether scripts may run where isolation cannot be established.
    pub allow_unisolated: bool,
    /// Whether this machine can isolate scripts.
    pub available: bool,
    /// How scripts are isolated here, or what is missing, in words.
    pub detail: String,
}

/// `PUT /api/settings/isolation`'s body.
#[derive(Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct IsolationInput {
    /// Whether scripts may run without isolation on this machine.
    pub allow_unisolated: bool,
}

impl Service {
    pub(super) fn allow_unisolated(&self) -> bool {
        store::settings::get(&self.db(), KEY)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<bool>(&v).ok())
            .unwrap_or(false)
    }

    /// The isolation setting and what this machine can do.
    pub fn isolation(&self) -> Result<IsolationView> {
        let (available, detail) = match isolation_status() {
            Ok(how) => (true, how),
            Err(missing) => (false, missing),
        };
        Ok(IsolationView {
            allow_unisolated: self.allow_unisolated(),
            available,
            detail,
        })
    }

    /// Allows or forbids running scripts without isolation on this machine.
    pub fn set_isolation(&self, input: IsolationInput) -> Result<IsolationView> {
        let value = serde_json::to_string(&input.allow_unisolated)
            .map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), KEY, &value, &now)?;
        self.isolation()
    }
}
