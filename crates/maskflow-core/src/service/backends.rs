//! How a shell opens the service: from the stored settings, with an explicit
//! override of the back ends (a replay file) for tests and demos. Both shells
//! call [`ServiceConfig::with_backends`], so neither builds a provider.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::ServiceConfig;
use maskflow_llm::{Provider, ProviderError, ReplayProvider, Roles};

/// The variable the desktop app reads its replay file from.
pub const REPLAY_VAR: &str = "MASKFLOW_REPLAY";

/// Where every LLM call's back end comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Backends {
    /// The stored settings (the manual back end on a fresh data folder).
    #[default]
    Settings,
    /// Every role answered from this replay file (tests and demos).
    Replay(PathBuf),
}

impl Backends {
    /// A replay file when one is given (`--replay FILE`), else the settings.
    pub fn replay(path: Option<&Path>) -> Self {
        path.map_or(Self::Settings, |p| Self::Replay(p.to_path_buf()))
    }

    /// A replay file when `MASKFLOW_REPLAY` names one, else the settings.
    pub fn from_env() -> Self {
        let path = std::env::var_os(REPLAY_VAR)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        Self::replay(path.as_deref())
    }
}

/// Why the back ends asked for could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BackendsError {
    /// The replay file is missing or is not a replay file.
    #[error("reading the replay file {}: {cause}", path.display())]
    Replay {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        cause: ProviderError,
    },
}

impl ServiceConfig {
    /// The configuration every shell opens the service with: each call's
    /// back end comes from the stored settings of `home`, unless `backends`
    /// overrides them explicitly.
    pub fn with_backends(
        home: impl Into<PathBuf>,
        backends: &Backends,
    ) -> Result<Self, BackendsError> {
        let config = Self::from_settings(home);
        match backends {
            Backends::Settings => Ok(config),
            Backends::Replay(path) => {
                let provider: Arc<dyn Provider> =
                    Arc::new(ReplayProvider::from_file(path).map_err(|cause| {
                        BackendsError::Replay {
                            path: path.clone(),
                            cause,
                        }
                    })?);
                Ok(config.overriding(Roles::all(provider)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_replay_file_is_an_error_that_names_it() {
        let path = PathBuf::from("/nonexistent/maskflow-replay.json");
        let err = ServiceConfig::with_backends("/tmp", &Backends::Replay(path))
            .expect_err("missing file");
        assert!(
            err.to_string()
                .starts_with("reading the replay file /nonexistent/maskflow-replay.json: "),
            "{err}"
        );
        assert_eq!(Backends::replay(None), Backends::Settings);
    }
}
