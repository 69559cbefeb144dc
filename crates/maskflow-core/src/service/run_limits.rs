//! The per-machine run limits (issue 43 point 4): the memory and the time a
//! script run gets. By default the memory is a share of this machine's
//! ([`memory_share`]) and the time five minutes; Settings can set either,
//! and clear it back to the default. Read on every run and every build, so
//! a change takes effect at once, and the builder is told the limits in
//! force.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_runner::Limits;

/// The settings key (a JSON [`RunLimitsInput`]).
const KEY: &str = "run_limits";
/// The smallest memory limit a user may set: below it Python and pandas
/// barely start.
const MIN_MEMORY_MIB: u64 = 256;
/// The time limit's bounds, in seconds: ten seconds to a day.
const TIME_SECONDS: std::ops::RangeInclusive<u64> = 10..=86_400;

/// A run's memory limit on a machine of `total` bytes: a quarter of it, at
/// least the former fixed 2 GiB, at most half the machine; 2 GiB where the
/// system does not say.
pub fn memory_share(total: Option<u64>) -> u64 {
    const FLOOR: u64 = 2 << 30;
    match total {
        Some(t) if t > 0 => (t / 4).max(FLOOR).min(t / 2),
        _ => FLOOR,
    }
}

/// The run limits as Settings shows them.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct RunLimitsView {
    /// The memory a run gets now (all its processes together), in bytes.
    #[ts(type = "number")]
    pub memory_bytes: u64,
    /// The default: a share of this machine's memory.
    #[ts(type = "number")]
    pub default_memory_bytes: u64,
    /// This machine's memory, when the system says.
    #[ts(type = "number | null")]
    pub machine_memory_bytes: Option<u64>,
    /// The time a run gets now (wall clock, and CPU time), in seconds.
    #[ts(type = "number")]
    pub time_seconds: u64,
    /// The default time.
    #[ts(type = "number")]
    pub default_time_seconds: u64,
    /// What is stored: `None` fields follow the default.
    pub stored: RunLimitsInput,
}

/// `PUT /api/settings/run-limits`'s body; a field left out or `null`
/// follows the default.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct RunLimitsInput {
    /// The memory limit in MiB (256 up to this machine's memory).
    #[serde(default)]
    #[ts(optional, type = "number | null")]
    pub memory_mib: Option<u64>,
    /// The time limit in seconds (10 to 86,400).
    #[serde(default)]
    #[ts(optional, type = "number | null")]
    pub time_seconds: Option<u64>,
}

impl Service {
    fn stored_run_limits(&self) -> RunLimitsInput {
        store::settings::get(&self.db(), KEY)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default()
    }

    /// The limits of a script run: the stored memory and time (else this
    /// machine's share and the default time), with the isolation setting.
    pub(super) fn run_limits(&self) -> Limits {
        let view = self.limits_view(self.stored_run_limits());
        let time = view.time_seconds;
        Limits {
            allow_unisolated: self.allow_unisolated(),
            memory_bytes: view.memory_bytes,
            timeout: Duration::from_secs(time),
            cpu_seconds: time,
            ..Limits::default()
        }
    }

    fn limits_view(&self, stored: RunLimitsInput) -> RunLimitsView {
        let machine = super::models::total_memory();
        let default_memory_bytes = memory_share(machine);
        let default_time_seconds = Limits::default().timeout.as_secs();
        RunLimitsView {
            memory_bytes: stored
                .memory_mib
                .map_or(default_memory_bytes, |m| m.saturating_mul(1 << 20)),
            default_memory_bytes,
            machine_memory_bytes: machine,
            time_seconds: stored.time_seconds.unwrap_or(default_time_seconds),
            default_time_seconds,
            stored,
        }
    }

    /// The run limits in force, their defaults and what is stored.
    pub fn run_limits_view(&self) -> Result<RunLimitsView> {
        Ok(self.limits_view(self.stored_run_limits()))
    }

    /// Sets the run limits (a `None` field: back to its default); checked
    /// against this machine before it is stored.
    pub fn set_run_limits(&self, input: RunLimitsInput) -> Result<RunLimitsView> {
        if let Some(mib) = input.memory_mib {
            let most = super::models::total_memory().map(|t| t >> 20);
            if mib < MIN_MEMORY_MIB || most.is_some_and(|m| mib > m) {
                let upper = most.map_or(String::new(), |m| {
                    format!(" up to {m} (this computer's memory)")
                });
                return Err(CoreError::InvalidRequest(format!(
                    "the memory limit of a run must be at least {MIN_MEMORY_MIB} MiB{upper}; it is {mib} MiB"
                )));
            }
        }
        if let Some(s) = input.time_seconds
            && !TIME_SECONDS.contains(&s)
        {
            return Err(CoreError::InvalidRequest(format!(
                "the time limit of a run must be {}–{} seconds (10 s to a day); it is {s}",
                TIME_SECONDS.start(),
                TIME_SECONDS.end()
            )));
        }
        let value = serde_json::to_string(&input).map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), KEY, &value, &now)?;
        self.run_limits_view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn set_limits_apply_to_every_run_and_clear_back_to_the_default() {
        let dir = tempfile::tempdir().expect("home");
        let service = crate::service::tests::service_with(
            dir.path(),
            std::sync::Arc::new(maskflow_llm::Unconfigured),
        );
        let default = service.run_limits_view().expect("view");
        assert_eq!(default.stored, RunLimitsInput::default());
        assert_eq!(default.memory_bytes, default.default_memory_bytes);
        assert_eq!(default.time_seconds, 300);

        let set = service
            .set_run_limits(RunLimitsInput {
                memory_mib: Some(512),
                time_seconds: Some(1_800),
            })
            .expect("set");
        assert_eq!(set.memory_bytes, 512 << 20);
        assert_eq!(set.time_seconds, 1_800);
        let limits = service.run_limits();
        assert_eq!(limits.memory_bytes, 512 << 20);
        assert_eq!(limits.timeout, Duration::from_secs(1_800));
        assert_eq!(limits.cpu_seconds, 1_800);

        let cleared = service
            .set_run_limits(RunLimitsInput {
                memory_mib: None,
                time_seconds: Some(60),
            })
            .expect("clear the memory");
        assert_eq!(cleared.memory_bytes, cleared.default_memory_bytes);
        assert_eq!(service.run_limits().timeout, Duration::from_secs(60));
    }

    #[test]
    fn limits_out_of_bounds_are_refused_saying_the_bounds() {
        let dir = tempfile::tempdir().expect("home");
        let service = crate::service::tests::service_with(
            dir.path(),
            std::sync::Arc::new(maskflow_llm::Unconfigured),
        );
        for (input, says) in [
            (
                RunLimitsInput {
                    memory_mib: Some(100),
                    time_seconds: None,
                },
                "at least 256 MiB",
            ),
            (
                RunLimitsInput {
                    memory_mib: Some(u64::MAX >> 20),
                    time_seconds: None,
                },
                "this computer's memory",
            ),
            (
                RunLimitsInput {
                    memory_mib: None,
                    time_seconds: Some(5),
                },
                "10–86400 seconds",
            ),
        ] {
            let e = service.set_run_limits(input).expect_err("out of bounds");
            assert!(e.to_string().contains(says), "{e}");
        }
        assert_eq!(
            service.run_limits_view().expect("view").stored,
            RunLimitsInput::default(),
            "nothing stored"
        );
    }
}
