//! What a build needs on this machine — Python, `uv`, script isolation,
//! free disk — as items, each with what was found or is missing and its
//! fix (a sentence and, where there is one, a button). The preflight
//! ([`crate::service::Service::preflight`]) lists them all; the build's
//! environment gate ([`crate::builder::BuildState::pending_environment`])
//! names the one a script waits for. Only values: nothing here runs a
//! program but [`uv_item`], which asks `uv --version`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use maskflow_pyenv::Environments;
use maskflow_runner::Python;

/// What a preflight checks.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PreflightCheck {
    /// A Python interpreter recent enough to run scripts.
    Python,
    /// `uv`, which makes the scripts' package environments.
    Uv,
    /// The sandbox scripts run in (or the user's choice to run without).
    Isolation,
    /// Free disk in the data folder.
    Disk,
}

/// A fix the UI can offer as a button.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PreflightAction {
    /// Install `uv` into the data folder (`POST /api/environments/uv`).
    InstallUv,
    /// Open Settings, where the setting named in `fix` is changed.
    OpenSettings,
}

/// One checked item.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct PreflightItem {
    /// What was checked.
    pub check: PreflightCheck,
    /// Whether it is there.
    pub ok: bool,
    /// What was found, or what is missing, in words.
    pub detail: String,
    /// How to fix it (when missing), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fix: Option<String>,
    /// The button that fixes it (when missing and there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub action: Option<PreflightAction>,
}

/// An item that is there.
pub fn found(check: PreflightCheck, detail: String) -> PreflightItem {
    PreflightItem {
        check,
        ok: true,
        detail,
        fix: None,
        action: None,
    }
}

/// An item that is missing, with its fix.
pub fn missing(
    check: PreflightCheck,
    detail: String,
    fix: &str,
    action: Option<PreflightAction>,
) -> PreflightItem {
    PreflightItem {
        check,
        ok: false,
        detail,
        fix: Some(fix.to_owned()),
        action,
    }
}

/// The fix for a missing Python on this operating system.
pub fn python_fix() -> &'static str {
    if cfg!(target_os = "macos") {
        "install Python 3 (brew install python3, or the installer from python.org), or choose an interpreter in Settings → Python"
    } else if cfg!(windows) {
        "install Python 3 (winget install Python.Python.3.12, or the installer from python.org), or choose an interpreter in Settings → Python"
    } else {
        "install Python 3 (on Debian or Ubuntu: sudo apt install python3; on Fedora: sudo dnf install python3), or choose an interpreter in Settings → Python"
    }
}

/// Python as an item: found with its version, or missing with the fix.
pub fn python_item(found_version: Result<String, String>) -> PreflightItem {
    match found_version {
        Ok(version) => found(PreflightCheck::Python, format!("Python {version}")),
        Err(error) => missing(
            PreflightCheck::Python,
            error,
            python_fix(),
            Some(PreflightAction::OpenSettings),
        ),
    }
}

/// `uv` as an item: where it was found, or missing with its one-click fix
/// (which needs a Python to install it with).
pub fn uv_item(envs: &Environments, base: Option<&Python>) -> PreflightItem {
    match envs.uv(base) {
        Ok((path, version)) => found(
            PreflightCheck::Uv,
            format!("{} ({version})", path.display()),
        ),
        Err(_) if base.is_some() => missing(
            PreflightCheck::Uv,
            "uv was not found; it is needed only by scripts that use Python packages".into(),
            "install uv with one click (Install uv: pip installs it into the data folder), or run python3 -m pip install uv",
            Some(PreflightAction::InstallUv),
        ),
        Err(_) => missing(
            PreflightCheck::Uv,
            "uv was not found; it is needed only by scripts that use Python packages".into(),
            "install Python 3 first, then uv",
            None,
        ),
    }
}
