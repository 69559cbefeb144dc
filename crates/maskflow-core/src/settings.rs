//! Storing the LLM settings: the provider configuration
//! ([`maskflow_llm::config::LlmSettings`]) kept as one JSON document under
//! the `llm` key of the `settings` table. What the document means (kinds,
//! validation, building providers) is the LLM crate's; this module only
//! reads and writes it.

use rusqlite::Connection;

use crate::CoreError;
use maskflow_llm::config::LlmSettings;

/// The `settings` key the document is stored under.
pub const SETTINGS_KEY: &str = "llm";

/// Reads the settings (the default when none are stored).
pub fn load(conn: &Connection) -> Result<LlmSettings, CoreError> {
    let text = crate::store::settings::get(conn, SETTINGS_KEY)?;
    match text {
        None => Ok(LlmSettings::default()),
        Some(t) => serde_json::from_str(&t)
            .map_err(|e| CoreError::Corrupt(format!("the LLM settings: {e}"))),
    }
}

/// Stores the settings (validated first).
pub fn save(conn: &Connection, settings: &LlmSettings, now: &str) -> Result<(), CoreError> {
    settings.validate().map_err(CoreError::InvalidRequest)?;
    let text = serde_json::to_string(settings).map_err(|e| CoreError::Corrupt(e.to_string()))?;
    crate::store::settings::put(conn, SETTINGS_KEY, &text, now)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_llm::Role;
    use maskflow_llm::config::{MANUAL_ID, ProviderConfig, ProviderKind};

    #[test]
    fn the_default_is_manual_for_every_role_and_round_trips() {
        let conn = crate::store::open_in_memory().expect("db");
        let s = load(&conn).expect("load");
        assert_eq!(s, LlmSettings::default());
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
        s.roles.insert("agent:critic".into(), "local".into());
        save(&conn, &s, "t").expect("save");
        assert_eq!(load(&conn).expect("load"), s);
        assert_eq!(
            s.provider_for(&Role::Validator).map(|p| p.id.as_str()),
            Some("manual")
        );
        assert_eq!(
            s.provider_for(&Role::Agent("x".into()))
                .map(|p| p.id.as_str()),
            Some("local")
        );
    }

    #[test]
    fn bad_settings_are_refused_before_they_are_stored() {
        let conn = crate::store::open_in_memory().expect("db");
        let mut s = LlmSettings::default();
        s.roles.insert("critic".into(), "manual".into());
        assert!(
            save(&conn, &s, "t")
                .expect_err("role")
                .to_string()
                .contains("unknown role")
        );
        assert_eq!(load(&conn).expect("load"), LlmSettings::default());
    }
}
