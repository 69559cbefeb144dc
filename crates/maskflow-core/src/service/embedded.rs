//! The embedded model's settings (issue 32): how long an idle model stays
//! loaded (`embedded_idle_minutes` in the settings table), and what this
//! build and machine run it with, for Settings. Applied before the back
//! ends are built, so a change reaches the next call.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use std::path::Path;

use super::Service;
use super::models::gguf;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_llm::config::{LlmSettings, ProviderConfig, ProviderKind};
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
    /// The context the embedded back end's model runs with; `None` when no
    /// back end is of kind `local` (or this build has none).
    pub context: Option<EmbeddedContext>,
}

/// The context size of the model an embedded back end names.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct EmbeddedContext {
    /// The back end: the builder's when it is embedded, else the first embedded one.
    pub provider: String,
    /// Its GGUF file.
    pub model: String,
    /// Tokens of context; `None` when the file cannot tell (see `problem`).
    pub tokens: Option<u32>,
    /// The context the model was trained on, from its GGUF header.
    pub trained: Option<u32>,
    /// Whether the back end's own setting fixes the size (else it comes
    /// from the model and this computer's free memory).
    pub from_setting: bool,
    /// Why the size is not known (an unreadable or foreign file).
    pub problem: Option<String>,
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

    /// Puts the stored idle timeout, and the installed models' records
    /// their files are checked against before loading, in force for the
    /// back ends built next.
    pub(super) fn apply_embedded(&self) {
        local::set_idle_minutes(self.stored_idle_minutes());
        local::set_known_models(&self.known_models_folder(), self.known_models());
    }

    /// The embedded model's settings and what this machine runs it with.
    pub fn embedded(&self) -> Result<EmbeddedView> {
        let caps = local::capabilities();
        let context = if caps.supported {
            let settings = crate::settings::load(&self.db())?;
            embedded_context(&settings)
        } else {
            None
        };
        Ok(EmbeddedView {
            supported: caps.supported,
            idle_minutes: self.stored_idle_minutes(),
            threads: caps.threads,
            gpu_offload: caps.gpu_offload,
            context,
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

/// The context of the builder's embedded back end (else the first one):
/// its setting's size, or the engine's rule over the GGUF header's trained
/// context and KV size and the free memory (read from the header alone, so
/// Settings shows it before the model is ever loaded).
fn embedded_context(settings: &LlmSettings) -> Option<EmbeddedContext> {
    let embedded = |p: &&ProviderConfig| p.kind == ProviderKind::Local;
    let builder = settings.roles.get("builder");
    let p = settings
        .providers
        .iter()
        .filter(embedded)
        .find(|p| Some(&p.id) == builder)
        .or_else(|| settings.providers.iter().find(embedded))?;
    let model = p.model.clone().unwrap_or_default();
    let mut view = EmbeddedContext {
        provider: p.id.clone(),
        model: model.clone(),
        tokens: p.context_window,
        trained: None,
        from_setting: p.context_window.is_some(),
        problem: None,
    };
    match gguf::read(Path::new(&model)) {
        Ok(info) => {
            view.trained = info.context_length.and_then(|n| u32::try_from(n).ok());
            if view.tokens.is_none() {
                match (view.trained, info.kv_bytes_per_token()) {
                    (Some(trained), Some(kv)) => view.tokens = local::context_for(trained, kv),
                    _ => {
                        view.problem = Some(format!(
                            "{model} does not state its trained context and attention shape; \
                             the size is known once it loads"
                        ));
                    }
                }
            }
        }
        Err(e) if !view.from_setting => view.problem = Some(e.to_string()),
        Err(_) => {}
    }
    Some(view)
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

#[cfg(test)]
mod context_tests {
    use super::*;

    fn settings(providers: serde_json::Value, builder: &str) -> LlmSettings {
        serde_json::from_value(serde_json::json!({
            "providers": providers,
            "roles": {"builder": builder},
        }))
        .expect("settings")
    }

    #[test]
    fn the_context_comes_from_the_header_and_the_machine_or_the_setting() {
        let dir = tempfile::tempdir().expect("dir");
        let model = dir.path().join("smol.gguf");
        // SmolLM2-135M's shape: 30 layers, 576 wide, 9 heads, 3 KV heads, 8192 trained.
        let ints = [
            ("block_count", 30),
            ("embedding_length", 576),
            ("attention.head_count", 9),
            ("attention.head_count_kv", 3),
            ("context_length", 8192),
        ];
        std::fs::write(&model, gguf::fake_header("llama", &ints)).expect("write");
        let path = model.display().to_string();
        assert_eq!(
            embedded_context(&settings(
                serde_json::json!([{"id": "manual", "kind": "manual"}]),
                "manual"
            )),
            None,
            "no embedded back end, no context"
        );
        let two = serde_json::json!([
            {"id": "first", "kind": "local", "model": "/nonexistent/first.gguf"},
            {"id": "mine", "kind": "local", "model": path},
        ]);
        let v = embedded_context(&settings(two.clone(), "mine")).expect("the builder's");
        assert_eq!(
            (v.provider.as_str(), v.trained, v.from_setting),
            ("mine", Some(8192), false)
        );
        assert_eq!(v.problem, None);
        if cfg!(feature = "local") {
            let tokens = v.tokens.expect("worked out from the header");
            assert!((512..=8192).contains(&tokens), "{tokens}");
        } else {
            assert_eq!(v.tokens, None);
        }
        // Not the builder's: the first embedded one, whose file is missing.
        let v = embedded_context(&settings(two, "manual")).expect("the first");
        assert_eq!(v.provider, "first");
        assert_eq!(v.tokens, None);
        assert!(
            v.problem
                .as_deref()
                .is_some_and(|p| p.contains("/nonexistent/first.gguf")),
            "{v:?}"
        );
        // The back end's own setting wins over the header.
        let set = serde_json::json!([{"id": "mine", "kind": "local", "model": path, "context_window": 2048}]);
        let v = embedded_context(&settings(set, "mine")).expect("set");
        assert_eq!(
            (v.tokens, v.trained, v.from_setting),
            (Some(2048), Some(8192), true)
        );
    }
}
