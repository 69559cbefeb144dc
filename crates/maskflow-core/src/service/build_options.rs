//! A workflow's build choices ([`BuildOptions`]: plan first, AI review, AI
//! approval of the gates), kept in the settings table under the workflow's
//! own key and read by every build of the workflow when it starts.

use super::Service;
use crate::builder::options::BuildOptions;
use crate::error::{CoreError, Result};
use crate::store;

/// The settings key of a workflow's build choices.
fn key(workflow_id: &str) -> String {
    format!("build_options:{workflow_id}")
}

impl Service {
    /// The build choices of a workflow (all off until set).
    pub fn build_options(&self, workflow_id: &str) -> Result<BuildOptions> {
        if store::get_workflow(&self.db(), workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        self.build_options_of(workflow_id)
    }

    /// Sets the build choices of a workflow; the next build (or message
    /// that starts one) uses them.
    pub fn set_build_options(
        &self,
        workflow_id: &str,
        options: BuildOptions,
    ) -> Result<BuildOptions> {
        let db = self.db();
        if store::get_workflow(&db, workflow_id)?.is_none() {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        let text = serde_json::to_string(&options)
            .map_err(|e| CoreError::Corrupt(format!("build options: {e}")))?;
        store::settings::put(&db, &key(workflow_id), &text, &self.now())?;
        Ok(options)
    }

    /// The stored choices; a stored value that no longer reads is the
    /// default (all off), not an error that would stop every build.
    pub(super) fn build_options_of(&self, workflow_id: &str) -> Result<BuildOptions> {
        let stored = store::settings::get(&self.db(), &key(workflow_id))?;
        Ok(stored
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }
}
