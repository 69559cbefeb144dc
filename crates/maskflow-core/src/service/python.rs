//! The Python interpreter setting (`python_path`): what the settings screen
//! shows and changes. The runner follows it from the next run on.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use super::builds::PYTHON_SETTING;
use crate::error::{CoreError, Result};
use crate::store;
use maskflow_runner::find_python;

/// The Python interpreter as the settings screen shows it.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct PythonView {
    /// The configured interpreter; none means `python3` on `PATH`.
    pub path: Option<String>,
    /// The interpreter that this setting finds (when it works).
    pub program: Option<String>,
    /// Its version, e.g. `3.11` (when it works).
    pub version: Option<String>,
    /// Why it does not work, in words.
    pub error: Option<String>,
}

/// `PUT /api/settings/python`'s body.
#[derive(Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct PythonInput {
    /// The interpreter's path; empty or none for `python3` on `PATH`.
    pub path: Option<String>,
}

/// Probes `path` (none: `PATH`) and describes the result.
fn describe(path: Option<String>) -> PythonView {
    match find_python(path.as_deref().map(Path::new)) {
        Ok(p) => PythonView {
            path,
            program: Some(p.program.display().to_string()),
            version: Some(format!("{}.{}", p.version.0, p.version.1)),
            error: None,
        },
        Err(e) => PythonView {
            path,
            program: None,
            version: None,
            error: Some(e.to_string()),
        },
    }
}

impl Service {
    fn python_setting(&self) -> Option<String> {
        store::settings::get(&self.db(), PYTHON_SETTING)
            .ok()
            .flatten()
            .and_then(|v| serde_json::from_str::<String>(&v).ok())
            .filter(|s| !s.is_empty())
    }

    /// The Python interpreter setting and what it finds.
    pub fn python(&self) -> Result<PythonView> {
        Ok(describe(self.python_setting()))
    }

    /// Sets the Python interpreter (it must start and be recent enough);
    /// empty means `python3` on `PATH`. Used from the next run on, without a restart.
    pub fn set_python(&self, input: PythonInput) -> Result<PythonView> {
        let path = input
            .path
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty());
        if let Some(p) = &path
            && !PathBuf::from(p).is_absolute()
        {
            return Err(CoreError::InvalidRequest(format!(
                "give the interpreter's full path (e.g. /usr/bin/python3), not {p:?}"
            )));
        }
        let view = describe(path.clone());
        if let Some(e) = &view.error {
            return Err(CoreError::InvalidRequest(e.clone()));
        }
        let value = serde_json::to_string(&path.unwrap_or_default())
            .map_err(|e| CoreError::Corrupt(e.to_string()))?;
        let now = self.now();
        store::settings::put(&self.db(), PYTHON_SETTING, &value, &now)?;
        Ok(view)
    }
}
