//! Provider configuration: the back ends the user set up (kind, base URL,
//! model) and which one each role uses (seed 001's `ai_providers: role →
//! provider`), their validation, building a [`Provider`] from a setting,
//! "test connection", and looking for a local Ollama or OpenAI-compatible
//! server. Keys are not here: they live in the keyring ([`crate::keys`]).
//!
//! Storing the document is the app's business (maskflow-core keeps it as
//! JSON in its `settings` table); nothing here touches a database.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::anthropic::{self, AnthropicProvider};
use crate::http::{ApiKey, Endpoint};
use crate::keys::KeySource;
use crate::manual::ManualProvider;
use crate::ollama::{self, OllamaProvider};
use crate::openai::OpenAiProvider;
use crate::{Provider, ProviderError, Role};

/// The id of the built-in manual back end.
pub const MANUAL_ID: &str = "manual";
/// OpenAI's base URL.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Where a local llama.cpp / OpenAI-compatible server usually listens.
pub const LOCAL_OPENAI_BASE_URL: &str = "http://127.0.0.1:8080/v1";
/// The roles every settings document must map.
pub const REQUIRED_ROLES: [&str; 3] = ["validator", "clarifier", "builder"];

/// The kind of a back end.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama's native API.
    Ollama,
    /// The user pastes answers from any AI tool.
    Manual,
    /// The embedded model (llama.cpp in this process); `model` is the
    /// absolute path of its GGUF file.
    Local,
}

impl ProviderKind {
    /// The kind's name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Manual => "manual",
            ProviderKind::Local => "local",
        }
    }

    /// Parses a kind name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai" => Some(Self::Openai),
            "anthropic" => Some(Self::Anthropic),
            "ollama" => Some(Self::Ollama),
            "manual" => Some(Self::Manual),
            "local" => Some(Self::Local),
            _ => None,
        }
    }

    /// The base URL used when the setting gives none.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Openai => Some(OPENAI_BASE_URL),
            ProviderKind::Anthropic => Some(anthropic::DEFAULT_BASE_URL),
            ProviderKind::Ollama => Some(ollama::DEFAULT_BASE_URL),
            ProviderKind::Manual | ProviderKind::Local => None,
        }
    }
}

/// The smallest context window accepted in Settings (smaller models cannot
/// hold even a prompt's instructions).
pub const MIN_CONTEXT_WINDOW: u32 = 256;
/// The largest context window accepted in Settings.
pub const MAX_CONTEXT_WINDOW: u32 = 10_000_000;

/// One configured back end.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// A short id the roles refer to, e.g. `local-llama`.
    pub id: String,
    /// Which protocol it speaks.
    pub kind: ProviderKind,
    /// The server's base URL (the kind's default when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model to ask (required for every kind but manual).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most reply tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens, overriding what the server
    /// reports (left out: learned from the server or the known-model table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

impl ProviderConfig {
    /// The manual back end.
    pub fn manual() -> Self {
        Self {
            id: MANUAL_ID.into(),
            kind: ProviderKind::Manual,
            base_url: None,
            model: None,
            temperature: None,
            max_tokens: None,
            context_window: None,
        }
    }

    /// The base URL in use.
    pub fn effective_base_url(&self) -> Option<String> {
        self.base_url
            .clone()
            .or_else(|| self.kind.default_base_url().map(str::to_owned))
    }
}

/// The role key of the flow agents' default back end (an agent without its
/// own `agent:<name>` role uses it; without it, the builder's).
pub const FLOWS_ROLE: &str = "flows";

/// The whole LLM settings document.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// The configured back ends.
    pub providers: Vec<ProviderConfig>,
    /// Role key (`validator`, `clarifier`, `builder`, `agent:<name>`) → provider id.
    pub roles: BTreeMap<String, String>,
}

impl Default for LlmSettings {
    /// Manual for every role: works offline on first run.
    fn default() -> Self {
        Self::every_role(ProviderConfig::manual())
    }
}

impl LlmSettings {
    /// `provider` (plus manual) with every role on `provider`.
    pub fn every_role(provider: ProviderConfig) -> Self {
        let id = provider.id.clone();
        let mut providers = vec![provider];
        if id != MANUAL_ID {
            providers.push(ProviderConfig::manual());
        }
        Self {
            providers,
            roles: REQUIRED_ROLES
                .iter()
                .map(|r| ((*r).to_owned(), id.clone()))
                .collect(),
        }
    }

    /// The provider a role uses: its own; a flow agent falls back to the
    /// flows default ([`FLOWS_ROLE`]), then to the builder's.
    pub fn provider_for(&self, role: &Role) -> Option<&ProviderConfig> {
        let id = self.roles.get(&role.key()).or_else(|| {
            matches!(role, Role::Agent(_))
                .then(|| {
                    self.roles
                        .get(FLOWS_ROLE)
                        .or_else(|| self.roles.get("builder"))
                })
                .flatten()
        })?;
        self.providers.iter().find(|p| &p.id == id)
    }

    /// Checks the document; the error says what to fix.
    pub fn validate(&self) -> Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for p in &self.providers {
            let ok_id = !p.id.is_empty()
                && p.id.len() <= 40
                && p.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok_id {
                return Err(format!(
                    "provider id {:?} must be 1–40 letters, digits, - or _",
                    p.id
                ));
            }
            if !seen.insert(p.id.as_str()) {
                return Err(format!("provider id {:?} is used twice", p.id));
            }
            if p.kind != ProviderKind::Manual {
                if p.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                    return Err(format!("provider {:?} needs a model", p.id));
                }
                if p.kind == ProviderKind::Local {
                    local_setting_ok(p)?;
                }
                if let Some(url) = &p.base_url
                    && !(url.starts_with("http://") || url.starts_with("https://"))
                {
                    return Err(format!(
                        "the base URL of provider {:?} must start with http:// or https://",
                        p.id
                    ));
                }
            }
            if let Some(w) = p.context_window
                && !(MIN_CONTEXT_WINDOW..=MAX_CONTEXT_WINDOW).contains(&w)
            {
                return Err(format!(
                    "the context window of provider {:?} must be {MIN_CONTEXT_WINDOW}–{MAX_CONTEXT_WINDOW} tokens (it is {w})",
                    p.id
                ));
            }
            if let Some(t) = p.temperature
                && !(0.0..=2.0).contains(&t)
            {
                return Err(format!(
                    "the temperature of provider {:?} must be 0–2",
                    p.id
                ));
            }
        }
        for (role, id) in &self.roles {
            if Role::parse(role).is_none() && role != FLOWS_ROLE {
                return Err(format!(
                    "unknown role {role:?}; use validator, clarifier, builder, flows or agent:<name>"
                ));
            }
            if !seen.contains(id.as_str()) {
                return Err(format!(
                    "role {role:?} uses provider {id:?}, which is not configured"
                ));
            }
        }
        for role in REQUIRED_ROLES {
            if !self.roles.contains_key(role) {
                return Err(format!("role {role:?} has no provider"));
            }
        }
        Ok(())
    }
}

/// A back end as the settings screen shows it.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderView {
    /// The setting.
    #[serde(flatten)]
    pub config: ProviderConfig,
    /// Where its key comes from (the key itself is never shown).
    pub key: KeySource,
    /// Why the key could not be looked up, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_error: Option<String>,
}

/// The settings as `GET /api/settings` answers.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SettingsView {
    /// The configured back ends.
    pub providers: Vec<ProviderView>,
    /// Role key → provider id.
    pub roles: BTreeMap<String, String>,
}

/// The result of "test connection".
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectionTest {
    /// Whether the server answered and accepted the key.
    pub ok: bool,
    /// What happened, in words.
    pub message: String,
}

/// Builds the back end of a setting with its key and the output budgets in force.
pub fn build_provider(
    config: &ProviderConfig,
    key: Option<ApiKey>,
    manual: &Arc<ManualProvider>,
    budgets: &crate::budget::Budgets,
) -> Result<Arc<dyn Provider>, ProviderError> {
    let endpoint = || {
        let mut e = Endpoint::new(
            config.effective_base_url().unwrap_or_default(),
            config.model.clone().unwrap_or_default(),
        )
        .with_key(key.clone())
        .with_budgets(budgets.clone());
        e.temperature = config.temperature;
        e.max_tokens = config.max_tokens;
        e.context_window = config.context_window;
        e
    };
    Ok(match config.kind {
        ProviderKind::Manual => manual.clone(),
        ProviderKind::Openai => Arc::new(OpenAiProvider::new(endpoint())?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(endpoint())?),
        ProviderKind::Ollama => Arc::new(OllamaProvider::new(endpoint())?),
        ProviderKind::Local => crate::local::build(local_settings(config), budgets)?,
    })
}

/// The embedded back end's settings of a `local` provider.
fn local_settings(config: &ProviderConfig) -> crate::local::LocalSettings {
    crate::local::LocalSettings {
        model: config.model.clone().unwrap_or_default().into(),
        temperature: config.temperature,
        max_tokens: config.max_tokens,
        context_window: config.context_window,
        idle_minutes: crate::local::idle_minutes(),
    }
}

/// A `local` setting names an absolute `.gguf` path and no URL.
fn local_setting_ok(p: &ProviderConfig) -> Result<(), String> {
    let model = p.model.as_deref().unwrap_or_default();
    if !std::path::Path::new(model).is_absolute() {
        return Err(format!(
            "the model of local provider {:?} must be the absolute path of a GGUF file (it is {model:?})",
            p.id
        ));
    }
    if p.base_url.is_some() {
        return Err(format!(
            "local provider {:?} runs in this process and takes no base URL",
            p.id
        ));
    }
    Ok(())
}

/// Tries a setting: lists the server's models with the key.
pub async fn test_connection(config: &ProviderConfig, key: Option<ApiKey>) -> ConnectionTest {
    let mut endpoint = Endpoint::new(
        config.effective_base_url().unwrap_or_default(),
        config.model.clone().unwrap_or_default(),
    )
    .with_key(key);
    endpoint.http.read_timeout = Duration::from_secs(15);
    endpoint.http.connect_timeout = Duration::from_secs(5);
    // One probe per back end (`Provider::probe`): where it connected and,
    // where the server lists them, its models.
    let provider: Result<Box<dyn Provider>, ProviderError> = match config.kind {
        ProviderKind::Manual => {
            return ConnectionTest {
                ok: true,
                message: "the manual back end needs no connection".to_owned(),
            };
        }
        ProviderKind::Local => {
            let model = config.model.clone().unwrap_or_default();
            return match crate::local::check(std::path::Path::new(&model)) {
                Ok(message) => ConnectionTest { ok: true, message },
                Err(e) => ConnectionTest {
                    ok: false,
                    message: e.to_string(),
                },
            };
        }
        ProviderKind::Openai => OpenAiProvider::new(endpoint).map(|p| Box::new(p) as _),
        ProviderKind::Anthropic => AnthropicProvider::new(endpoint).map(|p| Box::new(p) as _),
        ProviderKind::Ollama => OllamaProvider::new(endpoint).map(|p| Box::new(p) as _),
    };
    let result = match provider {
        Ok(p) => p.probe().await,
        Err(e) => Err(e),
    };
    match result {
        Ok(message) => ConnectionTest { ok: true, message },
        Err(e) => ConnectionTest {
            ok: false,
            message: e.to_string(),
        },
    }
}

/// A local server found at start.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Detected {
    /// Which protocol it speaks.
    pub kind: ProviderKind,
    /// Where it listens.
    pub base_url: String,
    /// The models it lists.
    pub models: Vec<String>,
}

/// Looks for a local Ollama (127.0.0.1:11434) and an OpenAI-compatible
/// server such as llama.cpp's (127.0.0.1:8080).
pub async fn detect() -> Vec<Detected> {
    detect_at(ollama::DEFAULT_BASE_URL, LOCAL_OPENAI_BASE_URL).await
}

/// [`detect`] at the given base URLs.
pub async fn detect_at(ollama_url: &str, openai_url: &str) -> Vec<Detected> {
    let Ok(client) = reqwest::Client::builder()
        .connect_timeout(Duration::from_millis(500))
        .timeout(Duration::from_secs(2))
        .no_proxy()
        .build()
    else {
        return Vec::new();
    };
    let list = |url: String, array: &'static str, field: &'static str| {
        let client = client.clone();
        async move {
            let response = client.get(&url).send().await.ok()?;
            if !response.status().is_success() {
                return None;
            }
            let body: serde_json::Value = response.json().await.ok()?;
            Some(
                body[array]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|m| m[field].as_str().map(str::to_owned))
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default(),
            )
        }
    };
    let (o, a) = tokio::join!(
        list(format!("{ollama_url}/api/tags"), "models", "name"),
        list(format!("{openai_url}/models"), "data", "id"),
    );
    let mut found = Vec::new();
    if let Some(models) = o {
        found.push(Detected {
            kind: ProviderKind::Ollama,
            base_url: ollama_url.to_owned(),
            models,
        });
    }
    if let Some(models) = a {
        found.push(Detected {
            kind: ProviderKind::Openai,
            base_url: openai_url.to_owned(),
            models,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_manual_for_every_role_and_agents_fall_back() {
        let s = LlmSettings::default();
        assert_eq!(s.validate(), Ok(()));
        assert_eq!(
            s.provider_for(&Role::Builder).map(|p| p.kind),
            Some(ProviderKind::Manual)
        );
        let mut s = LlmSettings::every_role(ProviderConfig {
            id: "local".into(),
            kind: ProviderKind::Openai,
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: Some("smollm2".into()),
            temperature: Some(0.0),
            max_tokens: None,
            context_window: None,
        });
        s.roles.insert("validator".into(), MANUAL_ID.into());
        assert_eq!(
            s.provider_for(&Role::Validator).map(|p| p.id.as_str()),
            Some("manual")
        );
        // An agent without its own role: the flows default, else the builder's.
        assert_eq!(
            s.provider_for(&Role::Agent("x".into()))
                .map(|p| p.id.as_str()),
            Some("local")
        );
        s.roles.insert(FLOWS_ROLE.into(), MANUAL_ID.into());
        assert_eq!(
            s.provider_for(&Role::Agent("x".into()))
                .map(|p| p.id.as_str()),
            Some("manual")
        );
        s.roles.insert("agent:x".into(), "local".into());
        assert_eq!(
            s.provider_for(&Role::Agent("x".into()))
                .map(|p| p.id.as_str()),
            Some("local")
        );
        assert_eq!(s.validate(), Ok(()));
        let text = serde_json::to_string(&s).expect("json");
        assert_eq!(
            serde_json::from_str::<LlmSettings>(&text).expect("read back"),
            s
        );
    }

    #[test]
    fn bad_settings_are_refused_with_a_reason() {
        let mut s = LlmSettings::default();
        s.roles.insert("critic".into(), "manual".into());
        assert!(s.validate().expect_err("role").contains("unknown role"));
        let mut s = LlmSettings::default();
        s.roles.insert("builder".into(), "nope".into());
        assert!(
            s.validate()
                .expect_err("missing")
                .contains("not configured")
        );
        let mut s = LlmSettings::default();
        s.roles.remove("builder");
        assert!(s.validate().expect_err("required").contains("builder"));
        let mut s = LlmSettings::every_role(ProviderConfig {
            id: "o".into(),
            kind: ProviderKind::Ollama,
            base_url: None,
            model: None,
            temperature: None,
            max_tokens: None,
            context_window: None,
        });
        assert!(s.validate().expect_err("model").contains("needs a model"));
        s.providers[0].model = Some("llama3".into());
        s.providers[0].base_url = Some("ftp://x".into());
        assert!(s.validate().expect_err("url").contains("http://"));
        s.providers[0].base_url = None;
        s.providers[0].context_window = Some(100);
        let e = s.validate().expect_err("window");
        assert!(
            e.contains("context window of provider \"o\"") && e.contains("100"),
            "{e}"
        );
        s.providers[0].context_window = Some(4096);
        assert!(s.validate().is_ok());
        s.providers.push(ProviderConfig::manual());
        assert!(s.validate().expect_err("dup").contains("twice"));
    }

    #[test]
    fn a_local_setting_names_an_absolute_model_file_and_no_url() {
        let mut p = ProviderConfig::manual();
        p.id = "embedded".into();
        p.kind = ProviderKind::Local;
        p.model = Some("models/smol.gguf".into());
        let s = LlmSettings::every_role(p.clone());
        assert!(
            s.validate()
                .expect_err("relative")
                .contains("absolute path")
        );
        p.model = Some("/models/smol.gguf".into());
        p.base_url = Some("http://127.0.0.1:8080".into());
        let s = LlmSettings::every_role(p.clone());
        assert!(s.validate().expect_err("url").contains("no base URL"));
        p.base_url = None;
        assert_eq!(LlmSettings::every_role(p).validate(), Ok(()));
        assert_eq!(ProviderKind::parse("local"), Some(ProviderKind::Local));
        assert_eq!(ProviderKind::Local.as_str(), "local");
    }

    #[tokio::test]
    async fn nothing_is_detected_where_nothing_listens() {
        // Port 9 (discard) on loopback has no HTTP server.
        assert!(
            detect_at("http://127.0.0.1:9", "http://127.0.0.1:9/v1")
                .await
                .is_empty()
        );
    }
}
