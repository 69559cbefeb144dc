//! Running a `script` step: a small trait the engine calls. The service
//! hands the engine its sandboxed runner
//! (`service::flow_scripts::SandboxedScripts`), which alone can run a
//! [`ScriptSource::Workflow`]: it resolves the workflow's approved version
//! and its Python environment; this crate never reads the app's tables. A
//! plain `python3` child process exists only for tests (the `testing`
//! feature).

use std::path::PathBuf;
use std::time::Duration;

use maskflow_llm::BoxFuture;

pub use crate::definition::ScriptSource;

/// A script to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRequest {
    /// What runs: a Python file (resolved against the working folder) or
    /// an approved workflow, which the runner resolves.
    pub source: ScriptSource,
    /// Its arguments.
    pub args: Vec<String>,
    /// The folder it runs in.
    pub working_folder: Option<PathBuf>,
    /// The time limit.
    pub timeout: Duration,
}

/// What it did.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOutput {
    /// The exit code (`None`: killed by a signal).
    pub exit_code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Why a script could not be run.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScriptError {
    /// The interpreter could not be started.
    #[error("cannot start {program}: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// The time limit passed; the script was killed.
    #[error("the script ran longer than {0} s and was stopped")]
    TimedOut(u64),
    /// The step's workflow cannot run (unknown, no approved version, its
    /// Python environment cannot be made, or this runner cannot resolve it).
    #[error("cannot run workflow {workflow}: {message}")]
    Workflow {
        /// The workflow id the step names.
        workflow: String,
        /// Why.
        message: String,
    },
}

/// Runs scripts for `script` steps.
pub trait ScriptRunner: Send + Sync + std::fmt::Debug {
    /// Runs `request` to the end (or its time limit).
    fn run<'a>(
        &'a self,
        request: &'a ScriptRequest,
    ) -> BoxFuture<'a, Result<ScriptOutput, ScriptError>>;
}

/// `python3 FILE ARGS…` as a plain child process, killed at its time limit
/// or when the step is cancelled. Unsandboxed: for tests only.
#[cfg(any(test, feature = "testing"))]
#[derive(Debug, Clone)]
pub struct PythonProcess {
    /// The interpreter (default `python3`).
    pub program: String,
}

#[cfg(any(test, feature = "testing"))]
impl Default for PythonProcess {
    fn default() -> Self {
        Self {
            program: "python3".into(),
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl ScriptRunner for PythonProcess {
    fn run<'a>(
        &'a self,
        request: &'a ScriptRequest,
    ) -> BoxFuture<'a, Result<ScriptOutput, ScriptError>> {
        Box::pin(async move {
            let file = match &request.source {
                ScriptSource::File(file) => file,
                ScriptSource::Workflow(id) => {
                    return Err(ScriptError::Workflow {
                        workflow: id.clone(),
                        message: "a plain python3 cannot run a workflow; the app's sandboxed \
                                  runner resolves it with its version's environment"
                            .into(),
                    });
                }
            };
            let mut cmd = tokio::process::Command::new(&self.program);
            cmd.arg(file)
                .args(&request.args)
                .stdin(std::process::Stdio::null())
                .kill_on_drop(true);
            if let Some(dir) = &request.working_folder {
                cmd.current_dir(dir);
            }
            let child = cmd.output();
            match tokio::time::timeout(request.timeout, child).await {
                Err(_) => Err(ScriptError::TimedOut(request.timeout.as_secs())),
                Ok(Err(e)) => Err(ScriptError::Spawn {
                    program: self.program.clone(),
                    message: e.to_string(),
                }),
                Ok(Ok(out)) => Ok(ScriptOutput {
                    exit_code: out.status.code(),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                }),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_plain_python_refuses_a_workflow_it_cannot_resolve() {
        let request = ScriptRequest {
            source: ScriptSource::Workflow("wf_1".into()),
            args: Vec::new(),
            working_folder: None,
            timeout: Duration::from_secs(5),
        };
        let err = PythonProcess::default()
            .run(&request)
            .await
            .expect_err("refused");
        assert!(
            err.to_string().starts_with("cannot run workflow wf_1: "),
            "{err}"
        );
    }
}
