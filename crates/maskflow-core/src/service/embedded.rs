//! The embedded model's settings (issue 32): how long an idle model stays
//! loaded (`embedded_idle_minutes` in the settings table), and what this
//! build and machine run it with, for Settings. Applied before the back
//! ends are built, so a change reaches the next call.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_llm::local;

/// The settings key (a JSON number of minutes).
const KEY: &str = "embedded_idle_minutes";

/// The embedded model's settings as the settings screen shows them.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct EmbeddedView {
    /// Whether this build can run a model in the process at all.
    pub supported: bool,
    /// Minutes without a call after which the model is unloaded.
    pub idle_minutes: u32,
    /// CPU threads a model runs on (from this machine's cores).
    pub threads: u32,
    /// Whether layers are offloaded to a GPU (Metal, CUDA, Vulkan builds).
    pub gpu_offload: bool,
}

/// `PUT /api/settings/embedded`'s body.
#[derive(Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedInput {
    /// Minutes without a call after which the model is unloaded (1–1440).
    pub idle_minutes: u32,
}

impl Service {
    fn stored_idle_minutes(&self) -> u32 {
        store::settings::get(&self.db(), KEY)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<u32>(&v).ok())
            .unwrap_or(local::DEFAULT_IDLE_MINUTES)
    }

    /// Puts the stored idle timeout in force for the back ends built next.
    pub(super) fn apply_embedded(&self) {
        local::set_idle_minutes(self.stored_idle_minutes());
    }

    /// The embedded model's settings and what this machine runs it with.
    pub fn embedded(&self) -> Result<EmbeddedView> {
        let caps = local::capabilities();
        Ok(EmbeddedView {
            supported: caps.supported,
            idle_minutes: self.stored_idle_minutes(),
            threads: caps.threads,
            gpu_offload: caps.gpu_offload,
        })
    }

    /// Sets how long an idle embedded model stays loaded; the back ends are
    /// rebuilt with it (a loaded model is unloaded and loads again on the
    /// next call).
    pub fn set_embedded(&self, input: EmbeddedInput) -> Result<EmbeddedView> {
        if !(1..=local::MAX_IDLE_MINUTES).contains(&input.idle_minutes) {
            return Err(CoreError::InvalidRequest(format!(
                "the idle time of the embedded model must be 1–{} minutes (it is {})",
                local::MAX_IDLE_MINUTES,
                input.idle_minutes
            )));
        }
        let value = serde_json::to_string(&input.idle_minutes)
            .map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), KEY, &value, &now)?;
        self.reload_providers()?;
        self.embedded()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::tests::service_with;

    #[test]
    fn the_idle_time_is_stored_checked_and_put_in_force() {
        let home = tempfile::tempdir().expect("home");
        let s = service_with(home.path(), std::sync::Arc::new(maskflow_llm::Unconfigured));
        assert_eq!(
            s.embedded().expect("view").idle_minutes,
            local::DEFAULT_IDLE_MINUTES
        );
        let e = s
            .set_embedded(EmbeddedInput { idle_minutes: 0 })
            .expect_err("zero");
        assert!(e.to_string().contains("1–1440 minutes"), "{e}");
        let v = s
            .set_embedded(EmbeddedInput { idle_minutes: 3 })
            .expect("set");
        assert_eq!(v.idle_minutes, 3);
        s.apply_embedded();
        assert_eq!(local::idle_minutes(), 3);
        assert_eq!(v.supported, cfg!(feature = "local"));
    }
}
