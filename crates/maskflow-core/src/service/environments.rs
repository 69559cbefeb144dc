//! The service's side of managed Python environments: the build engine's
//! and the runs' environments (with progress published as events), the
//! lock stored with each version, and what Settings shows and removes.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use utoipa::ToSchema;

use super::Service;
use super::{GateChoice, GateRequest};
use crate::builder::BuildState;
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::store::{self, python_locks};
use crate::versions::Status;
use maskflow_pyenv::{EnvProgress, EnvironmentInfo, Environments, Lock, ProgressSink};
use maskflow_runner::Python;

/// The environments as Settings shows them.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct EnvironmentsView {
    /// `uv` in use (path and version), if found.
    pub uv: Option<String>,
    /// Why no `uv` was found.
    pub uv_error: Option<String>,
    /// Where the environments live.
    pub folder: String,
    /// Every environment, with its size and whether a version still uses it.
    pub environments: Vec<EnvironmentEntry>,
}

/// One environment in Settings.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct EnvironmentEntry {
    /// Id, Python, packages and size.
    #[serde(flatten)]
    pub info: EnvironmentInfo,
    /// Whether a version that can still run or be built pins it.
    pub in_use: bool,
}

impl Service {
    /// The managed environments of this data folder.
    pub fn environments(&self) -> Environments {
        Environments::new(self.home())
    }

    /// A sink publishing install progress for a workflow (and version).
    pub(super) fn env_sink(&self, workflow_id: &str, version_id: Option<&str>) -> ProgressSink {
        let events = self.inner.events.clone();
        let (wf, vid) = (workflow_id.to_owned(), version_id.map(str::to_owned));
        ProgressSink(Arc::new(move |p: EnvProgress| {
            events.publish(Event::EnvironmentProgress {
                workflow_id: Some(wf.clone()),
                version_id: vid.clone(),
                stage: p.stage,
                message: p.message,
            })
        }))
    }

    /// Stores (or clears) the pinned set a version was built with.
    pub(super) fn store_lock(&self, version_id: &str, lock: Option<&Lock>) -> Result<()> {
        let db = self.db();
        match lock {
            Some(lock) => python_locks::put_lock(&db, version_id, lock, &self.now())?,
            None => python_locks::delete_lock(&db, version_id)?,
        }
        Ok(())
    }

    /// The interpreter a run of `version_id` uses: its locked environment
    /// (made if missing — from uv's cache, with no network, when it can),
    /// or the base interpreter when the script needs no package. A version
    /// built before locks existed is resolved now and its lock stored.
    pub(super) fn python_for_run(
        &self,
        workflow_id: &str,
        version_id: &str,
        requirements: &[String],
    ) -> Result<(Python, Option<EnvironmentInfo>)> {
        let runner = self.runner();
        let base = runner
            .python()
            .map_err(|e| CoreError::Conflict(e.to_string()))?;
        let stored = python_locks::get_lock(&self.db(), version_id)?;
        let wanted: Vec<String> = requirements
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        if stored.is_none() && wanted.is_empty() {
            return Ok((base, None));
        }
        let envs = self.environments();
        let sink = self.env_sink(workflow_id, None);
        let lock = match stored {
            Some(lock) => lock,
            None => {
                let lock = envs.resolve(&base, &wanted, &*sink.0)?;
                self.store_lock(version_id, Some(&lock))?;
                lock
            }
        };
        let (python, info) = envs.ensure(&base, &lock, &*sink.0)?;
        Ok((python, Some(info)))
    }

    /// The environments with their sizes, and the `uv` in use.
    pub fn list_environments(&self) -> Result<EnvironmentsView> {
        let envs = self.environments();
        let base = self.runner().python().ok();
        let (uv, uv_error) = match envs.uv(base.as_ref()) {
            Ok((path, version)) => (Some(format!("{} ({version})", path.display())), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let used: Vec<String> = match &base {
            Some(base) => python_locks::locks_in_use(&self.db())?
                .iter()
                .map(|l| l.environment_id(base))
                .collect(),
            None => Vec::new(),
        };
        Ok(EnvironmentsView {
            uv,
            uv_error,
            folder: envs.root().display().to_string(),
            environments: envs
                .list()
                .into_iter()
                .map(|info| EnvironmentEntry {
                    in_use: used.contains(&info.id),
                    info,
                })
                .collect(),
        })
    }

    /// Removes an environment no version uses any more.
    pub fn remove_environment(&self, id: &str) -> Result<EnvironmentsView> {
        let view = self.list_environments()?;
        let entry = view
            .environments
            .iter()
            .find(|e| e.info.id == id)
            .ok_or_else(|| CoreError::not_found("environment", id))?;
        if entry.in_use {
            return Err(CoreError::Conflict(format!(
                "environment {id} is still used by a workflow version; archive or delete those first"
            )));
        }
        self.environments().remove(id)?;
        self.list_environments()
    }

    /// Installs `uv` into the data folder with the Python in use (the user
    /// asked for it in Settings), publishing progress.
    pub fn install_uv(&self) -> Result<EnvironmentsView> {
        let base = self
            .runner()
            .python()
            .map_err(|e| CoreError::Conflict(e.to_string()))?;
        let events = self.inner.events.clone();
        let on = move |p: EnvProgress| {
            events.publish(Event::EnvironmentProgress {
                workflow_id: None,
                version_id: None,
                stage: p.stage,
                message: p.message,
            })
        };
        let path: PathBuf = self.environments().install_uv(&base, &on)?;
        let _ = path;
        self.resume_environment_gates()?;
        self.list_environments()
    }

    /// Continues every build waiting at its environment gate (issue 44):
    /// each checks again what it waited for and goes on, or waits again
    /// if it is still missing. Called once `uv` is installed.
    pub fn resume_environment_gates(&self) -> Result<usize> {
        let waiting: Vec<(String, String)> = {
            let db = self.db();
            store::versions_in(&db, Status::Building)?
                .into_iter()
                .filter(|v| {
                    store::builds::get_build(&db, &v.id)
                        .ok()
                        .flatten()
                        .and_then(|r| serde_json::from_value::<BuildState>(r.state).ok())
                        .is_some_and(|s| s.pending_gate && s.pending_environment.is_some())
                })
                .map(|v| (v.workflow_id, v.id))
                .collect()
        };
        let mut resumed = 0;
        for (workflow_id, version_id) in waiting {
            let request = GateRequest {
                decision: GateChoice::Approve,
                feedback: None,
                bindings: None,
                plan: None,
            };
            // Another caller may have taken the gate in the meantime.
            if self
                .resolve_gate(&workflow_id, &version_id, request)
                .is_ok()
            {
                resumed += 1;
            }
        }
        Ok(resumed)
    }
}
