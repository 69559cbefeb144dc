//! Running a `script` step: a small trait the engine calls. The service
//! hands the engine its sandboxed runner
//! (`service::flow_scripts::SandboxedScripts`); a plain `python3` child
//! process exists only for tests (the `testing` feature).

use std::path::PathBuf;
use std::time::Duration;

use maskflow_llm::BoxFuture;

/// A script to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRequest {
    /// The Python file.
    pub file: PathBuf,
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
            let mut cmd = tokio::process::Command::new(&self.program);
            cmd.arg(&request.file)
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
