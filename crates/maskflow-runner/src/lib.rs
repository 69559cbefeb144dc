//! The sandboxed script runner: runs a generated Python script in a fresh
//! working folder on copies of its inputs, under limits (wall clock, memory,
//! CPU, processes, output size, no network), and reports what happened and
//! which limits were actually enforced.
//!
//! The contract between a script and the runner is [`CONTRACT`], written
//! here once and put into the builder's prompt. The runner does no masking
//! and sends nothing anywhere: its results (stdout, stderr, output previews)
//! hold real data and stay local; callers mask before anything is sent.

#![deny(missing_docs)]

#[cfg(target_os = "linux")]
mod cgroup;
mod isolation;
mod outputs;
mod python;
#[cfg(target_os = "linux")]
mod report;
#[cfg(target_os = "linux")]
mod sandbox;
mod workdir;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use outputs::{OutputFile, PREVIEW_ROWS, total_size as folder_size};
pub use python::{MIN_VERSION, Python, find_python, missing_packages, module_of};

/// Set (to anything), the runner behaves as on a kernel without Landlock:
/// a test-only switch for the refusal and the Settings override.
pub const SIMULATE_NO_LANDLOCK: &str = "MASKFLOW_TEST_NO_LANDLOCK";

/// How a generated script is run: the contract between script and runner.
pub const CONTRACT: &str = "The script is run as `python3 script.py <inputs.json>` in its own, fresh working folder. \
`inputs.json` (its path is also the first argument, `sys.argv[1]`) holds {\"fields\": {\"<field name>\": <the value, or the path of the input file, or a list of paths>}}. \
Input files are read-only copies. The script writes its results into the `outputs/` folder inside the working folder (create nothing elsewhere) \
and exits with status 0 on success; any other status is a failure, and its error output is shown. \
It sees only its working folder, its inputs and the Python runtime (no home folder, no other files), \
has no network access, limited memory, CPU time, processes and output size. It may import the packages `execution.requirements` \
lists: Maskflow installs them into a locked environment before the script runs.";

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
    /// Total size of `outputs/` (and of any one file written), in bytes.
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
    /// One file (copied read-only into the working folder).
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
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS,
)]
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
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
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
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
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
    /// The files it wrote under `outputs/`.
    pub outputs: Vec<OutputFile>,
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
    /// Behave as on a kernel without Landlock ([`SIMULATE_NO_LANDLOCK`]).
    simulate_no_landlock: bool,
}

impl Runner {
    /// A runner using `python` when given, else `python3`/`python` on `PATH`.
    pub fn new(python: Option<PathBuf>) -> Self {
        Self {
            python_setting: python,
            python: OnceLock::new(),
            simulate_no_landlock: std::env::var_os(SIMULATE_NO_LANDLOCK)
                .is_some_and(|v| !v.is_empty()),
        }
    }

    /// This runner, behaving as on a kernel without Landlock (tests).
    #[doc(hidden)]
    pub fn simulating_no_landlock(mut self) -> Self {
        self.simulate_no_landlock = true;
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
        let work = workdir::prepare(request)?;
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
                limits: Vec::new(),
                network_isolated: false,
                isolated: false,
            });
        }
        execute(&python, request, &work, cancel, self.simulate_no_landlock)
    }
}

/// Bounded capture of one stream.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
    done: bool,
}

fn capture(mut stream: impl Read + Send + 'static, cap: usize) -> Arc<Mutex<Capture>> {
    let shared = Arc::new(Mutex::new(Capture::default()));
    let out = shared.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut c = out.lock().unwrap_or_else(|e| e.into_inner());
                    let room = cap.saturating_sub(c.bytes.len());
                    if n > room {
                        c.truncated = true;
                    }
                    let take = n.min(room);
                    c.bytes.extend_from_slice(&buf[..take]);
                }
            }
        }
        out.lock().unwrap_or_else(|e| e.into_inner()).done = true;
    });
    shared
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes / (1 << 20))
}

fn execute(
    python: &Python,
    request: &RunRequest,
    work: &Path,
    cancel: &AtomicBool,
    simulate_no_landlock: bool,
) -> Result<RunResult, RunnerError> {
    let limits = &request.limits;
    let program = if python.executable.as_os_str().is_empty() {
        &python.program
    } else {
        &python.executable
    };
    let required = !limits.allow_unisolated;
    #[cfg(target_os = "macos")]
    let seatbelt = isolation::macos::seatbelt_args(
        program,
        work,
        &request.shared_folders,
        &python.runtime,
        limits.no_network,
    );
    #[cfg(target_os = "macos")]
    let mut cmd = match &seatbelt {
        Some(args) => {
            let mut cmd = Command::new(isolation::macos::SANDBOX_EXEC);
            cmd.args(args);
            cmd
        }
        None => Command::new(program),
    };
    #[cfg(not(target_os = "macos"))]
    let mut cmd = Command::new(program);
    // An allowlisted environment: never the server's (its keys, its token).
    cmd.arg("script.py")
        .arg(work.join("inputs.json"))
        .current_dir(work)
        .env_clear()
        .env("PATH", script_path(program))
        .env("HOME", work.join("home"))
        .env("TMPDIR", work.join("tmp"))
        .env("PYTHONIOENCODING", "utf-8")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(target_os = "linux")]
    let mut prepared = {
        let plan = isolation::plan(
            work,
            &request.shared_folders,
            &python.runtime,
            !simulate_no_landlock,
        );
        if required && let Err(why) = &plan.landlock {
            return Err(RunnerError::NotIsolated(isolation::refusal(
                Some(why),
                None,
            )));
        }
        sandbox::prepare(&mut cmd, limits, plan, required).map_err(io("preparing the sandbox"))?
    };
    #[cfg(not(target_os = "linux"))]
    let _ = simulate_no_landlock;
    #[cfg(target_os = "macos")]
    {
        if required && seatbelt.is_none() {
            return Err(RunnerError::NotIsolated(isolation::macos::refusal()));
        }
        isolation::macos::set_limits(&mut cmd, limits);
    }
    #[cfg(windows)]
    let job = {
        if let Some(v) = std::env::var_os("SYSTEMROOT") {
            cmd.env("SYSTEMROOT", v);
        }
        if required {
            return Err(RunnerError::NotIsolated(isolation::windows::refusal()));
        }
        isolation::windows::Job::new(limits).ok()
    };
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        if required {
            return Err(RunnerError::NotIsolated(format!(
                "Maskflow did not run the script: it has no file-system and network isolation \
                 for scripts on {} yet. Generated scripts are untrusted code, so they only run \
                 isolated. To run them without isolation anyway, turn on \"Run scripts without \
                 isolation\" in Settings (on this machine only; every run then shows it).",
                std::env::consts::OS
            )));
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
    }
    let started = Instant::now();
    let spawned = cmd.spawn();
    drop(cmd);
    #[cfg(target_os = "linux")]
    let confirmed = prepared.confirmed();
    let mut child = match spawned {
        Ok(child) => child,
        #[cfg(target_os = "linux")]
        Err(_)
            if required
                && (!confirmed.file_system_isolated
                    || (limits.no_network && !confirmed.network_isolated())) =>
        {
            return Err(RunnerError::NotIsolated(isolation::refusal(
                (!confirmed.file_system_isolated)
                    .then_some("the kernel refused the Landlock ruleset"),
                (limits.no_network && !confirmed.network_isolated())
                    .then_some("the kernel refused both the socket filter and a network namespace"),
            )));
        }
        Err(e) => return Err(io(format!("starting {}", program.display()))(e)),
    };
    // The child is in the job before it has read its script (a Python
    // interpreter takes tens of milliseconds to start).
    #[cfg(windows)]
    let job = job.filter(|j| j.assign(&child).is_ok());
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let stdout = child.stdout.take().map(|s| capture(s, limits.stdio_bytes));
    let stderr = child.stderr.take().map(|s| capture(s, limits.stdio_bytes));

    let outputs_dir = work.join("outputs");
    let mut timed_out = false;
    let mut cancelled = false;
    let mut output_over = false;
    let mut ticks: u32 = 0;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if cancel.load(Ordering::Relaxed) {
            cancelled = true;
        } else if started.elapsed() >= limits.timeout {
            timed_out = true;
        } else if ticks % 10 == 9 && outputs::total_size(&outputs_dir) > limits.output_bytes {
            output_over = true;
        }
        #[cfg(target_os = "linux")]
        prepared.observe();
        if cancelled || timed_out || output_over {
            let _ = child.kill();
            #[cfg(windows)]
            if let Some(job) = &job {
                job.terminate();
            }
            kill_tree(
                pgid,
                #[cfg(target_os = "linux")]
                &prepared,
            );
            break child.wait().ok();
        }
        ticks = ticks.wrapping_add(1);
        std::thread::sleep(Duration::from_millis(20));
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // Stragglers (children left behind) go with the tree.
    kill_tree(
        pgid,
        #[cfg(target_os = "linux")]
        &prepared,
    );
    #[cfg(windows)]
    let job_held = job.is_some();
    #[cfg(windows)]
    drop(job); // KILL_ON_JOB_CLOSE: stragglers go with it
    let take = |c: Option<Arc<Mutex<Capture>>>| -> (String, bool) {
        let Some(c) = c else {
            return (String::new(), false);
        };
        for _ in 0..100 {
            if c.lock().unwrap_or_else(|e| e.into_inner()).done {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let c = c.lock().unwrap_or_else(|e| e.into_inner());
        (String::from_utf8_lossy(&c.bytes).into_owned(), c.truncated)
    };
    let (stdout, out_cut) = take(stdout);
    let (stderr, err_cut) = take(stderr);
    if outputs::total_size(&outputs_dir) > limits.output_bytes {
        output_over = true;
    }

    let signal = signal_of(status);
    let exit_code = status.and_then(|s| s.code());

    let mut report = vec![LimitState {
        name: "wall_clock".into(),
        limit: format!("{} s", limits.timeout.as_secs()),
        mechanism: Some("process tree killed at the time-out".into()),
        note: None,
    }];
    let memory_error = stderr.contains("MemoryError");
    // A refused fork or thread shows as EAGAIN, which Python names
    // BlockingIOError (Windows: "not enough quota", error 1816).
    let fork_refused = [&stdout, &stderr].iter().any(|t| {
        t.contains("BlockingIOError")
            || t.contains("Resource temporarily unavailable")
            || t.contains("WinError 1816")
    });
    #[cfg(target_os = "linux")]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        let network_isolated = confirmed.network_isolated();
        report.extend(report::linux(limits, &confirmed));
        let mut memory_hit = memory_error || prepared.oom_killed();
        // systemd removes a scope's cgroup as soon as it is empty, so its
        // `oom_kill` may go unseen: a SIGKILL nobody else sent is the memory
        // limit (the CPU limit's SIGKILL comes only once its time is spent).
        memory_hit |= confirmed.memory == cgroup::Mechanism::SystemdScope
            && signal == Some(libc::SIGKILL)
            && !(timed_out || cancelled || output_over)
            && !cpu_exhausted(limits, duration_ms);
        // Root without a pids cgroup has no process limit at all.
        let unbound = sandbox::is_root() && confirmed.processes == cgroup::Mechanism::Rlimit;
        let process_hit = (fork_refused && !unbound) || prepared.pids_refused();
        (
            network_isolated,
            confirmed.file_system_isolated && (network_isolated || !limits.no_network),
            memory_hit,
            process_hit,
        )
    };
    #[cfg(target_os = "macos")]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        let root = isolation::macos::is_root();
        report.extend(isolation::macos::report(limits, seatbelt.is_some(), root));
        (
            seatbelt.is_some() && limits.no_network,
            seatbelt.is_some(),
            memory_error,
            fork_refused && !root,
        )
    };
    #[cfg(windows)]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        report.extend(isolation::windows::report(limits, job_held));
        (false, false, memory_error, fork_refused)
    };
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        for name in ["memory", "cpu", "processes", "network"] {
            report.push(LimitState {
                name: name.into(),
                limit: String::new(),
                mechanism: None,
                note: Some("not enforced on this operating system".into()),
            });
        }
        report.push(LimitState {
            name: "output".into(),
            limit: mib(limits.output_bytes),
            mechanism: Some("a check of outputs/".into()),
            note: None,
        });
        let _ = fork_refused;
        (false, false, memory_error, false)
    };
    let outputs = outputs::list(&outputs_dir);
    const SIGKILL: i32 = 9;
    const SIGXCPU: i32 = 24;
    const SIGXFSZ: i32 = 25;
    let (status, message) = if cancelled {
        (
            RunStatus::Cancelled,
            "the run was cancelled; every process of it was stopped".to_owned(),
        )
    } else if timed_out {
        (
            RunStatus::TimedOut,
            format!(
                "the script ran longer than {} s and was stopped",
                limits.timeout.as_secs()
            ),
        )
    } else if output_over || signal == Some(SIGXFSZ) || stderr.contains("File too large") {
        (
            RunStatus::OutputLimit,
            format!(
                "the script wrote more than {} of output and was stopped",
                mib(limits.output_bytes)
            ),
        )
    } else if memory_hit && exit_code != Some(0) {
        (
            RunStatus::MemoryLimit,
            format!(
                "the script used more than {} of memory and was stopped",
                mib(limits.memory_bytes)
            ),
        )
    } else if signal == Some(SIGXCPU)
        || (signal == Some(SIGKILL) && !memory_hit && cpu_exhausted(limits, duration_ms))
    {
        (
            RunStatus::CpuLimit,
            format!(
                "the script used more than {} s of CPU time and was stopped",
                limits.cpu_seconds
            ),
        )
    } else if process_hit && exit_code != Some(0) {
        (
            RunStatus::ProcessLimit,
            format!(
                "the script tried to start more than {} processes",
                limits.max_processes
            ),
        )
    } else if exit_code == Some(0) {
        (RunStatus::Succeeded, "the script succeeded".to_owned())
    } else if let Some(code) = exit_code {
        (
            RunStatus::Failed,
            format!("the script failed with exit status {code}"),
        )
    } else {
        (
            RunStatus::Failed,
            format!("the script was stopped by signal {}", signal.unwrap_or(0)),
        )
    };
    Ok(RunResult {
        status,
        message,
        exit_code,
        signal,
        duration_ms,
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        outputs,
        limits: report,
        network_isolated,
        isolated,
    })
}

/// Whether scripts can be isolated on this machine: how, or what is missing.
pub fn isolation_status() -> Result<String, String> {
    #[cfg(target_os = "linux")]
    {
        let plan = isolation::plan(Path::new("/nonexistent"), &[], &[], true);
        match (&plan.landlock, &plan.seccomp) {
            (Ok(_), Ok(_)) => Ok("Landlock (files) and seccomp (network)".into()),
            (Err(why), _) => Err(isolation::refusal(Some(why), None)),
            (Ok(_), Err(why)) => Err(isolation::refusal(None, Some(why))),
        }
    }
    #[cfg(target_os = "macos")]
    {
        if Path::new(isolation::macos::SANDBOX_EXEC).is_file() {
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

/// The `PATH` of a script: the interpreter's folder, then the system's.
fn script_path(program: &Path) -> std::ffi::OsString {
    let mut path = std::ffi::OsString::new();
    if let Some(dir) = program.parent().filter(|d| !d.as_os_str().is_empty()) {
        path.push(dir);
        path.push(":");
    }
    path.push("/usr/local/bin:/usr/bin:/bin");
    path
}

fn cpu_exhausted(limits: &Limits, duration_ms: u64) -> bool {
    duration_ms / 1000 >= limits.cpu_seconds
}

fn kill_tree(pgid: i32, #[cfg(target_os = "linux")] prepared: &sandbox::Prepared) {
    #[cfg(target_os = "linux")]
    if pgid > 0 {
        prepared.kill_tree(pgid);
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    if pgid > 0 {
        let _ = Command::new("kill")
            .args(["-KILL", &format!("-{pgid}")])
            .status();
    }
    // Elsewhere (Windows) the Job Object and `Child::kill` end the tree.
    #[cfg(not(unix))]
    let _ = pgid;
}

/// The signal that ended a process (none outside Unix).
fn signal_of(status: Option<std::process::ExitStatus>) -> Option<i32> {
    #[cfg(unix)]
    {
        status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s))
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

#[cfg(test)]
mod tests;
