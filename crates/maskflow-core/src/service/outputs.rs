//! The outputs a person looks at: a build's test outputs and a run's
//! outputs, as files to download and as previews ([`maskflow_extractors::preview`]).
//! Local only: nothing here goes to an LLM.

use std::path::PathBuf;

use maskflow_extractors::preview::{OutputPreview, preview};

use super::Service;
use crate::builder::{self, TestReport};
use crate::error::{CoreError, Result};
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

#[cfg(all(test, unix))]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use crate::service::tests::{create, service_with};
    use crate::store::builds::RunRow;

    /// A run left `out.csv` as a link to the database in its outputs (a
    /// folder of the layout before the runner copied outputs out, or any
    /// tampering): it is never served, nor previewed; a regular file is.
    #[test]
    fn an_output_that_is_a_link_is_never_served() {
        let home = tempfile::tempdir().expect("tmp");
        let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let c = create(&s);
        let workdir = home.path().join("runs/run_01");
        let outputs = workdir.join("outputs");
        std::fs::create_dir_all(&outputs).expect("mkdir");
        std::fs::write(outputs.join("ok.csv"), "name\nAda\n").expect("write");
        std::os::unix::fs::symlink(home.path().join("maskflow.db"), outputs.join("out.csv"))
            .expect("symlink");
        let listed = json!([{"name": "out.csv", "size": 10}, {"name": "ok.csv", "size": 9}]);
        let run = RunRow {
            id: "run_01".into(),
            workflow_id: c.workflow_id.clone(),
            version_id: c.version_id.clone(),
            status: "succeeded".into(),
            inputs: json!({}),
            outputs: listed,
            result: None,
            workdir: workdir.display().to_string(),
            started_at: "2026-01-01T00:00:00Z".into(),
            finished_at: None,
            duration_ms: None,
        };
        crate::store::builds::put_run(&s.db(), &run).expect("run");
        // The link leads somewhere real: following it would serve the database.
        assert!(outputs.join("out.csv").is_file());
        let refused = s.run_output("run_01", "out.csv").expect_err("a link");
        assert_eq!(refused.code(), crate::ErrorCode::NotFound, "{refused}");
        assert!(s.run_output_preview("run_01", "out.csv").is_err());
        let served = s.run_output("run_01", "ok.csv").expect("a regular file");
        assert_eq!(
            std::fs::read_to_string(served).expect("read"),
            "name\nAda\n"
        );
    }
}
