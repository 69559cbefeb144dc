//! The per-machine "run scripts without isolation" setting: off (the
//! default), a script that cannot be isolated is refused; on, it runs, and
//! every run then says so in red. Read on every run, so a change takes
//! effect at once.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_runner::{Limits, isolation_status};

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

/// A run's memory limit on a machine of `total` bytes (issue 43 point 4):
/// a quarter of it, at least the former fixed 2 GiB, at most half the
/// machine; 2 GiB where the system does not say.
pub fn memory_share(total: Option<u64>) -> u64 {
    const FLOOR: u64 = 2 << 30;
    match total {
        Some(t) if t > 0 => (t / 4).max(FLOOR).min(t / 2),
        _ => FLOOR,
    }
}

impl Service {
    fn allow_unisolated(&self) -> bool {
        store::settings::get(&self.db(), KEY)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<bool>(&v).ok())
            .unwrap_or(false)
    }

    /// The limits of a script run, with the isolation setting applied and
    /// the memory limit a share of this machine's ([`memory_share`]).
    pub(super) fn run_limits(&self) -> Limits {
        Limits {
            allow_unisolated: self.allow_unisolated(),
            memory_bytes: memory_share(super::models::total_memory()),
            ..Limits::default()
        }
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

#[cfg(test)]
mod share_tests {
    use super::memory_share;

    #[test]
    fn the_memory_limit_is_a_share_of_the_machine() {
        const GIB: u64 = 1 << 30;
        assert_eq!(memory_share(Some(24 * GIB)), 6 * GIB);
        assert_eq!(memory_share(Some(64 * GIB)), 16 * GIB);
        assert_eq!(memory_share(Some(6 * GIB)), 2 * GIB, "the floor");
        assert_eq!(
            memory_share(Some(2 * GIB)),
            GIB,
            "never past half the machine"
        );
        assert_eq!(memory_share(None), 2 * GIB);
    }
}
