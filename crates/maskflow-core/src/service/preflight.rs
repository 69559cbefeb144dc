//! The preflight (issue 28, point 5): what a build will need on this
//! machine — Python, `uv`, script isolation and free disk — checked when a
//! workflow is created, so what is missing is shown with its fix before
//! any LLM call. It never holds a conversation (issue 44): only a build
//! that needs what is missing waits, at its environment gate, and goes on
//! once it is fixed ([`Service::resume_environment_gates`]). Also here:
//! retrying a build whose environment failed, without asking the builder
//! again.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::builds::Drive;
use super::{MessageReply, SendMessage, Service, move_version};
use crate::builder::BuildState;
use crate::error::{CoreError, Result};
use crate::store::{self, builds as rows};
use crate::versions::{Status, VersionEvent};

/// Free disk (in the data folder) below which a build is refused: room for
/// an environment and a test run.
pub const DISK_FLOOR_BYTES: u64 = 128 << 20;

/// How long a preflight that found everything is reused when a workflow is
/// created: the probes start Python, `uv` and a sandboxed process (up to a
/// second on a machine with pyenv shims), and a user creating workflows one
/// after another has not uninstalled Python in between. A preflight that
/// found something missing is never reused, so a fix shows at once.
const READY_REUSED_FOR: std::time::Duration = std::time::Duration::from_secs(60);

pub use crate::needs::{PreflightAction, PreflightCheck, PreflightItem};
use crate::needs::{found as item_found, missing};

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

impl Service {
    /// Checks Python, `uv`, isolation and free disk. Blocking: it starts
    /// the interpreter and `uv` to ask their versions.
    pub fn preflight(&self) -> Result<PreflightView> {
        let view = self.preflight_now()?;
        *super::lock(&self.inner.ready_preflight) = view
            .ready
            .then(|| (std::time::Instant::now(), view.clone()));
        Ok(view)
    }

    /// The preflight shown when a workflow is created: a recent one that
    /// found everything, else a new one ([`READY_REUSED_FOR`]).
    pub(super) fn recent_preflight(&self) -> Result<PreflightView> {
        if let Some((at, view)) = &*super::lock(&self.inner.ready_preflight)
            && at.elapsed() < READY_REUSED_FOR
        {
            return Ok(view.clone());
        }
        self.preflight()
    }

    fn preflight_now(&self) -> Result<PreflightView> {
        use PreflightCheck as C;
        let mut items = Vec::new();
        let python = self.python()?;
        let base = self.runner().python().ok();
        items.push(crate::needs::python_item(
            match (&python.error, &python.version) {
                (None, Some(v)) => Ok(v.clone()),
                (error, _) => Err(error.clone().unwrap_or_else(|| "no Python 3 found".into())),
            },
        ));
        items.push(crate::needs::uv_item(&self.environments(), base.as_ref()));
        let isolation = self.isolation()?;
        items.push(if isolation.available {
            item_found(C::Isolation, isolation.detail)
        } else if isolation.allow_unisolated {
            item_found(
                C::Isolation,
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
            item_found(C::Disk, format!("{shown} free in the data folder"))
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

    /// The user's message as both shells send it. The preflight never
    /// holds it: the validator and the clarifier need nothing of what it
    /// checks, and a build that needs what is missing waits at its
    /// environment gate ([`crate::builder::BuildState::pending_environment`]).
    /// `go_ahead` is accepted as before and changes nothing.
    pub async fn send_user_message(
        &self,
        workflow_id: &str,
        message: SendMessage,
    ) -> Result<MessageReply> {
        super::checked_content(&message.content)?;
        self.send_message_cancellable(workflow_id, &message.content, message.confirm_privacy)
            .await
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
                item_found(PreflightCheck::Python, "Python 3.11".into()),
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

    /// Creating workflows one after another probes the machine once: a
    /// preflight that found everything is reused; one that found something
    /// missing never is, and an explicit preflight always probes.
    #[test]
    fn a_ready_preflight_is_reused_by_creation_and_a_missing_one_is_not() {
        let home = tempfile::tempdir().expect("home");
        let replay =
            maskflow_llm::ReplayProvider::from_value(&serde_json::json!({})).expect("replay");
        let s = crate::service::tests::service_with(home.path(), std::sync::Arc::new(replay));
        let marked = |ready: bool| PreflightView {
            ready,
            items: vec![item_found(PreflightCheck::Python, "marked".into())],
        };
        let reused = |s: &Service| {
            crate::service::tests::create(s)
                .preflight
                .is_some_and(|p| p.items[0].detail == "marked")
        };
        *crate::service::lock(&s.inner.ready_preflight) =
            Some((std::time::Instant::now(), marked(true)));
        assert!(
            reused(&s),
            "a ready preflight of a moment ago is shown again"
        );
        let old = std::time::Instant::now()
            .checked_sub(READY_REUSED_FOR * 2)
            .expect("instant");
        *crate::service::lock(&s.inner.ready_preflight) = Some((old, marked(true)));
        assert!(!reused(&s), "an old one is probed again");
        *crate::service::lock(&s.inner.ready_preflight) =
            Some((std::time::Instant::now(), marked(true)));
        let fresh = s.preflight().expect("preflight");
        assert_ne!(
            fresh.items[0].detail, "marked",
            "an explicit preflight probes"
        );
        let stored = crate::service::lock(&s.inner.ready_preflight).clone();
        assert_eq!(stored.is_some(), fresh.ready, "only a ready one is kept");
    }
}
