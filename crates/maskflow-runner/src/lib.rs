//! The sandboxed script runner: runs a generated Python script in a fresh
//! working folder on its inputs, read in place and read-only, under limits (wall clock, memory,
//! CPU, processes, output size, no network), and reports what happened and
//! which limits were actually enforced.
//!
//! The script is an outside party's code: besides the file system and the
//! network, the Linux sandbox closes the side doors (no UNIX socket, no
//! metadata change outside the run folder, no capability, no process that
//! outlives the run, the whole run folder counted against the disk limit),
//! and its outputs are untrusted files, copied out of the run folder
//! ([`run_folder`]) once every process of the run has ended.
//!
//! The contract between a script and the runner is [`CONTRACT`], written
//! here once and put into the builder's prompt. The runner does no masking
//! and sends nothing anywhere: its results (stdout, stderr, output previews)
//! hold real data and stay local; callers mask before anything is sent.
//!
//! It must never depend on another Maskflow crate, the network or a database
//! (checked by `scripts/structure.py`): it only runs what it is given.

#![deny(missing_docs)]

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod confine;
mod copies;
mod execute;
mod isolation;
mod outputs;
mod python;
#[cfg(target_os = "linux")]
mod report;
#[cfg(target_os = "linux")]
mod sandbox;
#[cfg(target_os = "linux")]
mod signal;
mod workdir;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use copies::RefusedOutput;
pub use outputs::{OutputFile, PREVIEW_ROWS, total_size as folder_size};
pub use python::{MIN_VERSION, Python, find_python, missing_packages, module_of};

/// Set (to anything), the runner behaves as on a kernel without Landlock:
/// a test-only switch for the refusal and the Settings override.
pub const SIMULATE_NO_LANDLOCK: &str = "MASKFLOW_TEST_NO_LANDLOCK";

/// How a generated script is run: the contract between script and runner.
pub const CONTRACT: &str = "The script runs as `python3 script.py <inputs.json>` in a fresh working folder; `inputs.json` \
(also `sys.argv[1]`) holds {\"fields\": {\"<field name>\": <the value, or an input file's path, or a list of paths>}}. \
Input files are read-only. The script writes its results into `outputs/` in the working folder (nothing elsewhere) and exits 0 \
on success; any other status is a failure, and its error output is shown. It sees only its working folder, its inputs and the \
Python runtime, with no network and limited memory, CPU time, processes and output size; the packages `execution.requirements` \
lists are installed into a locked environment before it runs.";

/// The limits of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Wall-clock time before the whole process tree is killed.
    pub timeout: Duration,
    /// Memory, in bytes.
    pub memory_bytes: u64,
    /// CPU time, in seconds.
    pub cpu_seconds: u64,
    /// Processes (and threads) at once.
    pub max_processes: u64,
    /// Total size of everything the script writes in its folder (outputs,
    /// `tmp/`, `home/`, anything; and of any one file), in bytes.
    pub output_bytes: u64,
    /// How much of stdout and of stderr is kept.
    pub stdio_bytes: usize,
    /// Whether to cut the script off the network.
    pub no_network: bool,
    /// Whether the script may run where isolation (file system, network)
    /// cannot be established: the user's per-machine "run without
    /// isolation" setting. Off, such a run is refused.
    #[serde(default)]
    pub allow_unisolated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            memory_bytes: 2 << 30,
            cpu_seconds: 300,
            max_processes: 64,
            output_bytes: 1 << 30,
            stdio_bytes: 64 << 10,
            no_network: true,
            allow_unisolated: false,
        }
    }
}

/// One input of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum InputValue {
    /// A plain value (text, number, boolean, date…).
    Value(Value),
    /// One file (given read-only in the working folder's `inputs/`).
    File(PathBuf),
    /// Several files.
    Files(Vec<PathBuf>),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The Python source of `script.py`.
    pub script: String,
    /// The inputs, by field name.
    pub inputs: BTreeMap<String, InputValue>,
    /// Packages the script declares (checked before it runs).
    pub requirements: Vec<String>,
    /// The fresh working folder to create (must not exist yet, or be empty).
    pub workdir: PathBuf,
    /// The limits.
    pub limits: Limits,
    /// Folders outside the working folder the script may also read and
    /// write: a flow's own working folder, which the user chose for it.
    pub shared_folders: Vec<PathBuf>,
}

/// How a run ended.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Exit status 0.
    Succeeded,
    /// A non-zero exit status or a signal.
    Failed,
    /// Killed at the wall-clock limit.
    TimedOut,
    /// Stopped by the caller.
    Cancelled,
    /// Stopped at the memory limit.
    MemoryLimit,
    /// Stopped at the CPU-time limit.
    CpuLimit,
    /// Stopped at the output-size limit.
    OutputLimit,
    /// Could not start more processes than allowed.
    ProcessLimit,
    /// A declared package is not installed; the script did not run.
    MissingPackages,
}

/// One limit and how it was enforced (`mechanism` is `None` when it was not).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LimitState {
    /// `wall_clock`, `memory`, `cpu`, `processes`, `output`, `network`.
    pub name: String,
    /// The limit, in words ("256 MiB").
    pub limit: String,
    /// How it was enforced ("cgroup v1 pids"), or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// Why it was not enforced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a run did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunResult {
    /// How it ended.
    pub status: RunStatus,
    /// What happened, in one sentence.
    pub message: String,
    /// The exit status, when the script exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// Its standard output (bounded).
    pub stdout: String,
    /// Its standard error (bounded).
    pub stderr: String,
    /// Whether stdout or stderr was cut.
    pub truncated: bool,
    /// The files it wrote under `outputs/`, as copied out of its folder
    /// once every process of the run had ended.
    pub outputs: Vec<OutputFile>,
    /// What it left in `outputs/` that was not copied (a link, a device,
    /// a name with control characters…), each with the reason.
    #[serde(default)]
    pub refused_outputs: Vec<RefusedOutput>,
    /// Every limit and whether it was enforced.
    pub limits: Vec<LimitState>,
    /// Whether the script ran without network access.
    pub network_isolated: bool,
    /// Whether it ran isolated (file system and network): false only when
    /// the user allowed running without isolation, shown in red.
    #[serde(default)]
    pub isolated: bool,
}

impl RunResult {
    /// Whether the run succeeded.
    pub fn succeeded(&self) -> bool {
        self.status == RunStatus::Succeeded
    }

    /// The limit named `name`, if reported.
    pub fn limit(&self, name: &str) -> Option<&LimitState> {
        self.limits.iter().find(|l| l.name == name)
    }
}

/// Why a run could not even be attempted.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum RunnerError {
    /// No usable Python.
    #[error("{0}")]
    NoPython(String),
    /// The request is unusable (a missing input file, a used working folder).
    #[error("{0}")]
    BadRequest(String),
    /// The script could not be isolated and running it so is not allowed:
    /// the sentence says what is missing and how to enable it.
    #[error("{0}")]
    NotIsolated(String),
    /// A file or folder could not be prepared.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunnerError {
    let context = context.into();
    move |source| RunnerError::Io { context, source }
}

/// Runs scripts. Finds Python once, on first use.
#[derive(Debug, Default)]
pub struct Runner {
    python_setting: Option<PathBuf>,
    python: OnceLock<Result<Python, String>>,
    simulate: Simulate,
}

/// What a runner pretends this machine lacks (tests).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Simulate {
    /// Behave as on a kernel without Landlock ([`SIMULATE_NO_LANDLOCK`]).
    pub no_landlock: bool,
    /// Use no cgroup and no systemd scope: rlimits and the process group.
    pub no_cgroups: bool,
    /// Make no mount namespace: the metadata filter stands in.
    pub no_mount_namespace: bool,
    /// Apply no socket and process-group filter (as on a kernel without
    /// seccomp).
    pub no_socket_filter: bool,
}

/// The folder a run's script sees and writes, inside the request's
/// `workdir`: `script.py`, `inputs/`, `inputs.json`, `outputs/`, `home/`,
/// `tmp/`. After the run, the runner copies the regular files of its
/// `outputs/` into `workdir/outputs/`, which the script could never write:
/// previews, downloads and flows read only those copies.
pub fn run_folder(workdir: &std::path::Path) -> PathBuf {
    workdir.join("sandbox")
}

impl Runner {
    /// A runner using `python` when given, else `python3`/`python` on `PATH`.
    pub fn new(python: Option<PathBuf>) -> Self {
        Self {
            python_setting: python,
            python: OnceLock::new(),
            simulate: Simulate {
                no_landlock: std::env::var_os(SIMULATE_NO_LANDLOCK).is_some_and(|v| !v.is_empty()),
                ..Simulate::default()
            },
        }
    }

    /// This runner, behaving as on a kernel without Landlock (tests).
    #[doc(hidden)]
    pub fn simulating_no_landlock(mut self) -> Self {
        self.simulate.no_landlock = true;
        self
    }

    /// This runner, using no cgroup or systemd scope (tests of the fallback).
    #[doc(hidden)]
    pub fn simulating_no_cgroups(mut self) -> Self {
        self.simulate.no_cgroups = true;
        self
    }

    /// This runner, making no mount namespace (tests of the metadata filter).
    #[doc(hidden)]
    pub fn simulating_no_mount_namespace(mut self) -> Self {
        self.simulate.no_mount_namespace = true;
        self
    }

    /// This runner, applying no socket filter (tests of the refusal).
    #[doc(hidden)]
    pub fn simulating_no_socket_filter(mut self) -> Self {
        self.simulate.no_socket_filter = true;
        self
    }

    /// The Python in use (found on first call).
    pub fn python(&self) -> Result<Python, RunnerError> {
        self.python
            .get_or_init(|| find_python(self.python_setting.as_deref()).map_err(|e| e.to_string()))
            .clone()
            .map_err(RunnerError::NoPython)
    }

    /// Runs `request`; `cancel` set to true stops it (the whole tree is killed).
    pub fn run(&self, request: &RunRequest, cancel: &AtomicBool) -> Result<RunResult, RunnerError> {
        self.run_with(&self.python()?, request, cancel)
    }

    /// Runs `request` on `python` (a managed environment's interpreter,
    /// whose folders the sandbox then lets the script read).
    pub fn run_with(
        &self,
        python: &Python,
        request: &RunRequest,
        cancel: &AtomicBool,
    ) -> Result<RunResult, RunnerError> {
        let python = python.clone();
        let work = workdir::prepare(request, execute::in_place(self.simulate))?;
        let missing = missing_packages(&python, &request.requirements)?;
        if !missing.is_empty() {
            return Ok(RunResult {
                status: RunStatus::MissingPackages,
                message: format!(
                    "the script needs Python packages that are not installed: {} (install them with `{} -m pip install {}`)",
                    missing.join(", "),
                    python.program.display(),
                    missing.join(" ")
                ),
                exit_code: None,
                signal: None,
                duration_ms: 0,
                stdout: String::new(),
                stderr: String::new(),
                truncated: false,
                outputs: Vec::new(),
                refused_outputs: Vec::new(),
                limits: Vec::new(),
                network_isolated: false,
                isolated: false,
            });
        }
        execute::execute(&python, request, work, cancel, self.simulate)
    }
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes / (1 << 20))
}

/// Whether scripts can be isolated on this machine: how, or what is missing.
pub fn isolation_status() -> Result<String, String> {
    #[cfg(target_os = "linux")]
    {
        let plan = isolation::plan(std::path::Path::new("/nonexistent"), &[], &[], true, true);
        match (&plan.landlock, &plan.seccomp) {
            (Ok(_), Ok(_)) => Ok(
                "Landlock (files), seccomp (network, UNIX sockets, process groups) and a read-only mount namespace (metadata)"
                    .into(),
            ),
            (Err(why), _) => Err(isolation::refusal(Some(why), None, None)),
            (Ok(_), Err(why)) => Err(isolation::refusal(None, Some(why), None)),
        }
    }
    #[cfg(target_os = "macos")]
    {
        if std::path::Path::new(isolation::macos::SANDBOX_EXEC).is_file() {
            Ok("Seatbelt (files and network)".into())
        } else {
            Err(isolation::macos::refusal())
        }
    }
    #[cfg(windows)]
    {
        Err(isolation::windows::refusal())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        Err(format!(
            "Maskflow has no script isolation on {} yet",
            std::env::consts::OS
        ))
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, target_os = "linux"))]
mod side_door_tests;

#[cfg(all(test, target_os = "linux"))]
mod in_place_tests;
