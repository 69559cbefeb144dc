//! The outputs a person looks at: a build's test outputs and a run's
//! outputs, as files to download and as previews ([`crate::preview`]).
//! Local only: nothing here goes to an LLM.

use std::path::PathBuf;

use super::Service;
use crate::builder::{self, TestReport};
use crate::error::{CoreError, Result};
use crate::preview::{OutputPreview, preview};
use crate::store::builds as rows;

impl Service {
    /// The local path of one output of a version's latest test run.
    pub fn test_output(&self, workflow_id: &str, version_id: &str, name: &str) -> Result<PathBuf> {
        self.check_version_of(workflow_id, version_id)?;
        let report: Option<TestReport> = rows::get_build(&self.db(), version_id)?
            .and_then(|r| r.test_report)
            .and_then(|r| serde_json::from_value(r).ok());
        let missing = || CoreError::not_found("output", name);
        let report = report.ok_or_else(missing)?;
        let listed = report
            .run
            .as_ref()
            .is_some_and(|run| run.outputs.iter().any(|o| o.name == name));
        if !listed
            || name
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..")
        {
            return Err(missing());
        }
        // The runner's copies of the run's outputs (never the script's own
        // folder), and never through a link.
        let path = builder::test_dir(self.home(), version_id)
            .join(format!("iteration-{}", report.iteration))
            .join("outputs")
            .join(name);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(missing());
        }
        Ok(path)
    }

    /// A preview of one output of a version's latest test run.
    pub fn test_output_preview(
        &self,
        workflow_id: &str,
        version_id: &str,
        name: &str,
    ) -> Result<OutputPreview> {
        let path = self.test_output(workflow_id, version_id, name)?;
        Ok(preview(&path, name))
    }

    /// A preview of one output of a run.
    pub fn run_output_preview(&self, run_id: &str, name: &str) -> Result<OutputPreview> {
        let path = self.run_output(run_id, name)?;
        Ok(preview(&path, name))
    }
}
