//! API keys: kept only in the operating system's keyring (Secret Service on
//! Linux through `keyring-core`), never in the database, the ledger, a log
//! line, an error or an HTTP response. Where no keyring can be opened (a
//! headless server), a key may come from `MASKFLOW_<PROVIDER>_API_KEY`, and
//! the error says so.
//!
//! The service sees keys only through the [`Credentials`] trait; tests use
//! `keyring_core::mock::Store` behind `KeyringCredentials::with_store`.
//! The OS keyring back end (`KeyringCredentials`) is behind the `keyring`
//! feature; the trait, the lookup order and the environment's secrets are
//! always here.

use std::fmt::Debug;
#[cfg(feature = "keyring")]
use std::sync::{Arc, OnceLock};

#[cfg(feature = "keyring")]
use keyring_core::{CredentialStore, Error as KeyringError};

/// The keyring service name entries are stored under.
pub const SERVICE: &str = "maskflow";

/// Why a key could not be read, stored or removed.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// No keyring service could be opened on this machine.
    #[error(
        "no system keyring is available here ({reason}); set the key in the environment variable {env_var} instead"
    )]
    NoKeyring {
        /// What the keyring said.
        reason: String,
        /// The environment variable to use instead.
        env_var: String,
    },
    /// The keyring refused the operation.
    #[error("the system keyring failed: {0}")]
    Keyring(String),
    /// The key given is unusable.
    #[error("{0}")]
    Invalid(String),
}

/// Where a provider's key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The system keyring.
    Keyring,
    /// The `MASKFLOW_<PROVIDER>_API_KEY` environment variable.
    Environment,
    /// No key is set.
    None,
}

/// A place keys are kept, by provider id.
pub trait Credentials: Send + Sync + Debug {
    /// The stored key of `provider_id`, if any.
    fn get(&self, provider_id: &str) -> Result<Option<String>, KeyError>;
    /// Stores `key` for `provider_id`.
    fn set(&self, provider_id: &str, key: &str) -> Result<(), KeyError>;
    /// Removes the key of `provider_id` (absent is fine).
    fn delete(&self, provider_id: &str) -> Result<(), KeyError>;
}

/// The environment variable for a provider: `MASKFLOW_<NAME>_API_KEY`, the
/// name upper-cased with non-alphanumerics as `_`.
pub fn env_var(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("MASKFLOW_{upper}_API_KEY")
}

/// Credentials in a `keyring-core` store: the platform's native store by
/// default, opened on first use.
#[cfg(feature = "keyring")]
#[derive(Debug, Default)]
pub struct KeyringCredentials {
    store: OnceLock<Result<Arc<CredentialStore>, String>>,
}

#[cfg(feature = "keyring")]
impl KeyringCredentials {
    /// Credentials in `store` (e.g. `keyring_core::mock::Store` in tests).
    pub fn with_store(store: Arc<CredentialStore>) -> Self {
        let cell = OnceLock::new();
        let _ = cell.set(Ok(store));
        Self { store: cell }
    }

    fn store(&self, provider_id: &str) -> Result<&Arc<CredentialStore>, KeyError> {
        self.store
            .get_or_init(native_store)
            .as_ref()
            .map_err(|reason| KeyError::NoKeyring {
                reason: reason.clone(),
                env_var: env_var(provider_id),
            })
    }

    fn entry(&self, provider_id: &str) -> Result<keyring_core::Entry, KeyError> {
        self.store(provider_id)?
            .build(SERVICE, provider_id, None)
            .map_err(|e| describe(e, provider_id))
    }
}

#[cfg(all(feature = "keyring", target_os = "linux"))]
fn native_store() -> Result<Arc<CredentialStore>, String> {
    zbus_secret_service_keyring_store::Store::new()
        .map(|s| s as Arc<CredentialStore>)
        .map_err(|e| e.to_string())
}

#[cfg(all(feature = "keyring", not(target_os = "linux")))]
fn native_store() -> Result<Arc<CredentialStore>, String> {
    Err("this build has no native keyring store for this platform".into())
}

#[cfg(feature = "keyring")]
fn describe(e: KeyringError, provider_id: &str) -> KeyError {
    match e {
        KeyringError::NoStorageAccess(inner) | KeyringError::PlatformFailure(inner) => {
            KeyError::NoKeyring {
                reason: inner.to_string(),
                env_var: env_var(provider_id),
            }
        }
        other => KeyError::Keyring(other.to_string()),
    }
}

#[cfg(feature = "keyring")]
impl Credentials for KeyringCredentials {
    fn get(&self, provider_id: &str) -> Result<Option<String>, KeyError> {
        match self.entry(provider_id)?.get_password() {
            Ok(k) => Ok(Some(k)),
            Err(KeyringError::NoEntry) => Ok(None),
            Err(e) => Err(describe(e, provider_id)),
        }
    }

    fn set(&self, provider_id: &str, key: &str) -> Result<(), KeyError> {
        let key = key.trim();
        if key.is_empty() {
            return Err(KeyError::Invalid("the key is empty".into()));
        }
        if key.chars().any(char::is_control) || key.len() > 4096 {
            return Err(KeyError::Invalid(
                "the key has control characters or is too long".into(),
            ));
        }
        self.entry(provider_id)?
            .set_password(key)
            .map_err(|e| describe(e, provider_id))
    }

    fn delete(&self, provider_id: &str) -> Result<(), KeyError> {
        match self.entry(provider_id)?.delete_credential() {
            Ok(()) | Err(KeyringError::NoEntry) => Ok(()),
            Err(e) => Err(describe(e, provider_id)),
        }
    }
}

/// Looks up the key of provider `id` (kind `kind`): the keyring first, then
/// `MASKFLOW_<ID>_API_KEY`, then `MASKFLOW_<KIND>_API_KEY`. A keyring that
/// cannot be opened is not an error when the environment has the key; when
/// it has not, the keyring's error (which names the variable) is returned.
pub fn resolve(
    creds: &dyn Credentials,
    id: &str,
    kind: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(Option<String>, KeySource), KeyError> {
    let from_keyring = creds.get(id);
    if let Ok(Some(k)) = &from_keyring {
        return Ok((Some(k.clone()), KeySource::Keyring));
    }
    for name in [id, kind] {
        if let Some(k) = env(&env_var(name)).filter(|k| !k.trim().is_empty()) {
            return Ok((Some(k.trim().to_owned()), KeySource::Environment));
        }
    }
    match from_keyring {
        Err(KeyError::NoKeyring { reason, .. }) => Err(KeyError::NoKeyring {
            reason,
            env_var: env_var(kind),
        }),
        Err(e) => Err(e),
        Ok(_) => Ok((None, KeySource::None)),
    }
}

/// Secrets taken from the environment at start ([`take_env_secrets`]).
///
/// Process-wide on purpose, not a value the service owns: the environment
/// it stands in for is process-wide, and once the binary has removed the
/// variables (before any thread or child exists) this is the only place
/// they remain, for every reader of the environment (the service's key
/// lookup, the server's `MASKFLOW_TOKEN`). It is written once, first thing
/// in `main`, and only read after.
static TAKEN: std::sync::OnceLock<std::collections::HashMap<String, String>> =
    std::sync::OnceLock::new();

/// Whether `name` is a secret Maskflow reads from its environment:
/// `MASKFLOW_<PROVIDER>_API_KEY` or `MASKFLOW_TOKEN`.
pub fn is_secret_var(name: &str) -> bool {
    name == "MASKFLOW_TOKEN" || (name.starts_with("MASKFLOW_") && name.ends_with("_API_KEY"))
}

/// Keeps the secrets of the process environment in memory and returns
/// their names, so the binary can remove them from the environment before
/// any child (a script, tesseract, uv) could inherit them. Call once, first.
pub fn take_env_secrets() -> Vec<String> {
    let found: std::collections::HashMap<String, String> =
        std::env::vars().filter(|(k, _)| is_secret_var(k)).collect();
    let names = found.keys().cloned().collect();
    let _ = TAKEN.set(found);
    names
}

/// Keeps the secrets of the process environment in memory
/// ([`take_env_secrets`]) and removes them from the environment, so no
/// child process (a script, uv, tesseract) inherits them. Every binary
/// calls it first thing in `main`.
///
/// # Safety
///
/// No other thread may exist (or read the environment) while it runs.
#[allow(unsafe_code)]
pub unsafe fn forget_env_secrets() {
    for name in take_env_secrets() {
        // SAFETY: the caller guarantees that no other thread exists.
        unsafe { std::env::remove_var(&name) };
    }
}

/// Reads a variable: the secrets taken at start, else the process environment.
pub fn process_env(name: &str) -> Option<String> {
    TAKEN
        .get()
        .and_then(|t| t.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_and_the_token_are_secret_variables() {
        assert!(is_secret_var("MASKFLOW_OPENAI_API_KEY"));
        assert!(is_secret_var("MASKFLOW_MY_LLM_API_KEY"));
        assert!(is_secret_var("MASKFLOW_TOKEN"));
        assert!(!is_secret_var("MASKFLOW_HOME"));
        assert!(!is_secret_var("OPENAI_API_KEY"));
    }

    /// Set in the copy of this test binary that the test below starts.
    const CHILD: &str = "MASKFLOW_TEST_FORGET_SECRETS_CHILD";

    #[test]
    #[allow(unsafe_code)]
    fn forgotten_secrets_stay_readable_and_no_child_inherits_them() {
        if std::env::var_os(CHILD).is_some() {
            // SAFETY: this process runs this one test (`--exact`,
            // `--test-threads=1`); the harness's main thread only waits.
            unsafe { forget_env_secrets() };
            assert_eq!(
                process_env("MASKFLOW_CANARY_API_KEY").as_deref(),
                Some("sk-canary-4471")
            );
            assert_eq!(
                process_env("MASKFLOW_TOKEN").as_deref(),
                Some("tok-canary-9")
            );
            let env = std::process::Command::new("env").output().expect("env");
            let env = String::from_utf8_lossy(&env.stdout);
            assert!(!env.contains("canary"), "{env}");
            assert!(env.contains(CHILD), "other variables stay");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().expect("exe"))
            .args([
                "--exact",
                "keys::tests::forgotten_secrets_stay_readable_and_no_child_inherits_them",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .env("MASKFLOW_CANARY_API_KEY", "sk-canary-4471")
            .env("MASKFLOW_TOKEN", "tok-canary-9")
            .output()
            .expect("start the test binary");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
    }

    #[cfg(feature = "keyring")]
    fn mock() -> KeyringCredentials {
        let store = keyring_core::mock::Store::new().expect("mock store");
        KeyringCredentials::with_store(store)
    }

    #[cfg(feature = "keyring")]
    #[test]
    fn keys_round_trip_through_the_store() {
        let c = mock();
        assert_eq!(c.get("openai"), Ok(None));
        c.set("openai", " sk-123 ").expect("set");
        assert_eq!(c.get("openai"), Ok(Some("sk-123".into())));
        c.delete("openai").expect("delete");
        c.delete("openai").expect("delete twice is fine");
        assert_eq!(c.get("openai"), Ok(None));
        assert!(matches!(c.set("x", "  "), Err(KeyError::Invalid(_))));
    }

    #[cfg(feature = "keyring")]
    #[test]
    fn the_environment_is_the_fallback_and_the_error_names_it() {
        let c = mock();
        let env = |name: &str| (name == "MASKFLOW_ANTHROPIC_API_KEY").then(|| "env-key".to_owned());
        assert_eq!(
            resolve(&c, "claude", "anthropic", &env),
            Ok((Some("env-key".into()), KeySource::Environment))
        );
        c.set("claude", "ring-key").expect("set");
        assert_eq!(
            resolve(&c, "claude", "anthropic", &env),
            Ok((Some("ring-key".into()), KeySource::Keyring))
        );

        #[derive(Debug)]
        struct Broken;
        impl Credentials for Broken {
            fn get(&self, id: &str) -> Result<Option<String>, KeyError> {
                Err(KeyError::NoKeyring {
                    reason: "no D-Bus".into(),
                    env_var: env_var(id),
                })
            }
            fn set(&self, _: &str, _: &str) -> Result<(), KeyError> {
                Ok(())
            }
            fn delete(&self, _: &str) -> Result<(), KeyError> {
                Ok(())
            }
        }
        let none = |_: &str| None;
        let err = resolve(&Broken, "claude", "anthropic", &none).expect_err("no key");
        assert!(
            err.to_string().contains("MASKFLOW_ANTHROPIC_API_KEY"),
            "{err}"
        );
        assert_eq!(
            resolve(&Broken, "claude", "anthropic", &env).map(|r| r.1),
            Ok(KeySource::Environment)
        );
    }

    #[test]
    fn env_var_names_are_tidy() {
        assert_eq!(env_var("openai"), "MASKFLOW_OPENAI_API_KEY");
        assert_eq!(env_var("my-llama.cpp"), "MASKFLOW_MY_LLAMA_CPP_API_KEY");
    }
}
