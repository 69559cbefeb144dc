//! The preflight (issue 28, point 5): what a build will need on this
//! machine — Python, `uv`, script isolation and free disk — checked when a
//! workflow is created and again before its first message, so what is
//! missing is found before any LLM call, with its fix. A workflow's first
//! message is refused while something is missing unless the user said "go
//! ahead" ([`SendMessage::go_ahead`]). Also here: retrying a build whose
//! environment failed, without asking the builder again.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::builds::Drive;
use super::{MessageReply, SendMessage, Service, move_version};
use crate::builder::BuildState;
use crate::error::{CoreError, Result};
use crate::store::{self, builds as rows};
use crate::versions::{Status, VersionEvent};
use maskflow_llm::ChatRole;

/// Free disk (in the data folder) below which a build is refused: room for
/// an environment and a test run.
pub const DISK_FLOOR_BYTES: u64 = 128 << 20;

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

/// The preflight: every item, and whether all are there.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct PreflightView {
    /// Whether nothing is missing.
    pub ready: bool,
    /// Python, uv, isolation, disk, in that order.
    pub items: Vec<PreflightItem>,
}

impl PreflightView {
    /// The missing items as one sentence ("uv: … (fix: …); disk: …").
    pub fn missing_sentence(&self) -> String {
        self.items
            .iter()
            .filter(|i| !i.ok)
            .map(|i| {
                let name = serde_json::to_value(i.check)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                match &i.fix {
                    Some(fix) => format!("{name}: {} (fix: {fix})", i.detail),
                    None => format!("{name}: {}", i.detail),
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn item(check: PreflightCheck, ok: bool, detail: String) -> PreflightItem {
    PreflightItem {
        check,
        ok,
        detail,
        fix: None,
        action: None,
    }
}

fn missing(
    check: PreflightCheck,
    detail: String,
    fix: &str,
    action: Option<PreflightAction>,
) -> PreflightItem {
    PreflightItem {
        fix: Some(fix.to_owned()),
        action,
        ..item(check, false, detail)
    }
}

impl Service {
    /// Checks Python, `uv`, isolation and free disk. Blocking: it starts
    /// the interpreter and `uv` to ask their versions.
    pub fn preflight(&self) -> Result<PreflightView> {
        use PreflightCheck as C;
        let mut items = Vec::new();
        let python = self.python()?;
        let base = self.runner().python().ok();
        items.push(match (&python.error, &python.version) {
            (None, Some(v)) => item(C::Python, true, format!("Python {v}")),
            (error, _) => missing(
                C::Python,
                error.clone().unwrap_or_else(|| "no Python 3 found".into()),
                "install Python 3 or choose an interpreter in Settings → Python",
                Some(PreflightAction::OpenSettings),
            ),
        });
        items.push(match self.environments().uv(base.as_ref()) {
            Ok((path, version)) => item(C::Uv, true, format!("{} ({version})", path.display())),
            Err(e) if base.is_some() => missing(
                C::Uv,
                e.to_string(),
                "install uv with one click (pip install uv into the data folder), or run python3 -m pip install uv",
                Some(PreflightAction::InstallUv),
            ),
            Err(e) => missing(
                C::Uv,
                e.to_string(),
                "install Python 3 first, then uv",
                None,
            ),
        });
        let isolation = self.isolation()?;
        items.push(if isolation.available {
            item(C::Isolation, true, isolation.detail)
        } else if isolation.allow_unisolated {
            item(
                C::Isolation,
                true,
                format!(
                    "{}; scripts run without isolation (your choice in Settings)",
                    isolation.detail
                ),
            )
        } else {
            missing(
                C::Isolation,
                isolation.detail,
                "install bubblewrap (bwrap) or allow user namespaces; or, knowingly, allow scripts without isolation in Settings → Isolation",
                Some(PreflightAction::OpenSettings),
            )
        });
        let free = crate::disk::available_space(self.home());
        let shown = crate::disk::human_bytes(free);
        items.push(if free >= DISK_FLOOR_BYTES {
            item(C::Disk, true, format!("{shown} free in the data folder"))
        } else {
            missing(
                C::Disk,
                format!(
                    "only {shown} free in the data folder ({} needed)",
                    crate::disk::human_bytes(DISK_FLOOR_BYTES)
                ),
                "free some space (Settings → Storage clears old runs and sessions)",
                Some(PreflightAction::OpenSettings),
            )
        });
        Ok(PreflightView {
            ready: items.iter().all(|i| i.ok),
            items,
        })
    }

    /// The user's message as both shells send it: a workflow's first
    /// message is refused (409 `PREFLIGHT_MISSING`, before any LLM call)
    /// while the preflight finds something missing, unless `go_ahead`.
    pub async fn send_user_message(
        &self,
        workflow_id: &str,
        message: SendMessage,
    ) -> Result<MessageReply> {
        // A malformed message is refused as such first (400), whatever the preflight says.
        super::checked_content(&message.content)?;
        if !message.go_ahead && self.is_first_message(workflow_id)? {
            let service = self.clone();
            let view = tokio::task::spawn_blocking(move || service.preflight())
                .await
                .map_err(|e| CoreError::Corrupt(format!("the preflight stopped: {e}")))??;
            if !view.ready {
                return Err(CoreError::PreflightMissing(format!(
                    "not sent: this machine is missing what a build needs — {}. Fix it, or send again with \"go ahead\" (go_ahead: true)",
                    view.missing_sentence()
                )));
            }
        }
        self.send_message_cancellable(workflow_id, &message.content, message.confirm_privacy)
            .await
    }

    /// Whether the workflow's conversation has no message of the user's yet.
    fn is_first_message(&self, workflow_id: &str) -> Result<bool> {
        self.versions_or_404(&self.db(), workflow_id)?;
        Ok(!self
            .history(workflow_id)?
            .iter()
            .any(|m| m.role == ChatRole::User))
    }

    /// Retries a failed build whose Python environment (or test run) could
    /// not be made — uv missing, the index unreachable — with the script and
    /// requirements the builder already wrote: only the environment and the
    /// test run again, and the builder is not asked unless the test fails.
    pub fn retry_build(&self, workflow_id: &str, version_id: &str) -> Result<super::WorkflowView> {
        self.check_version_of(workflow_id, version_id)?;
        let _busy = self.claim(workflow_id)?;
        let now = self.now();
        let mut db = self.db();
        let tx = db.transaction()?;
        let mut version = store::get_version(&tx, version_id)?
            .ok_or_else(|| CoreError::not_found("version", version_id))?;
        if version.status != Status::Failed {
            return Err(CoreError::Conflict(format!(
                "version {} is {:?}, not failed; only a failed build can be retried",
                version.version, version.status
            )));
        }
        let state: BuildState = rows::get_build(&tx, version_id)?
            .and_then(|r| serde_json::from_value(r.state).ok())
            .unwrap_or_default();
        if !state.environment_failed() {
            return Err(CoreError::Conflict(format!(
                "version {}'s build did not fail on its environment or test run; edit the request to build again",
                version.version
            )));
        }
        move_version(&tx, &mut version, VersionEvent::Retry, &now)?;
        tx.commit()?;
        drop(db);
        self.publish_status(workflow_id, version_id, version.status, None);
        let service = self.clone();
        let (wf, vid) = (workflow_id.to_owned(), version_id.to_owned());
        tokio::spawn(async move { service.run_build(&wf, &vid, Drive::RetryEnvironment).await });
        self.get_workflow(workflow_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_each_missing_item_with_its_fix_and_only_those() {
        let view = PreflightView {
            ready: false,
            items: vec![
                item(PreflightCheck::Python, true, "Python 3.11".into()),
                missing(
                    PreflightCheck::Uv,
                    "uv was not found".into(),
                    "install uv",
                    Some(PreflightAction::InstallUv),
                ),
                missing(
                    PreflightCheck::Disk,
                    "only 1 MB free".into(),
                    "free some space",
                    None,
                ),
            ],
        };
        assert_eq!(
            view.missing_sentence(),
            "uv: uv was not found (fix: install uv); disk: only 1 MB free (fix: free some space)"
        );
    }
}
