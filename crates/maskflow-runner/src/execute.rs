//! One run of a script, in three steps: [`spawn`] starts it isolated (the
//! platform's sandbox prepared, refusing when isolation is required and
//! missing), [`supervise`] watches it until it ends or a limit, the time-out
//! or a cancel stops the whole tree, and [`collect`] reads its streams,
//! copies its outputs out of its folder ([`crate::copies`]) and names what
//! ended it. On Linux the main process is not reaped before its whole
//! process group has been killed (no process of the run can leave the
//! group: `setsid`/`setpgid` are refused), so the group's id cannot be
//! reused meanwhile, and nothing of the run is left when the outputs are
//! copied.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::workdir::{Given, InPlace, Way};
use crate::{
    LimitState, Limits, Python, RunRequest, RunResult, RunStatus, RunnerError, Simulate, copies,
    io, isolation, mib, outputs, workdir,
};
#[cfg(target_os = "linux")]
use crate::{cgroup, report, sandbox};

/// How inputs can be read in place here: a read-only bind mount where a
/// mount namespace can be made (a Landlock read rule standing in where
/// binding fails and Landlock holds truncation), else the Landlock rule,
/// else a hard link where safe or a copy.
#[cfg(target_os = "linux")]
pub(crate) fn in_place(simulate: Simulate) -> InPlace {
    static TRUNCATION_HELD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let rule = !simulate.no_landlock && *TRUNCATION_HELD.get_or_init(isolation::truncate_held);
    if !simulate.no_mount_namespace && sandbox::mount_namespace_available() {
        InPlace::Bind { or_rule: rule }
    } else if rule {
        InPlace::Rule
    } else {
        InPlace::Neither {
            uid: Some(sandbox::euid()),
        }
    }
}

/// Elsewhere: copies (a hard link could be written through).
#[cfg(not(target_os = "linux"))]
pub(crate) fn in_place(_: Simulate) -> InPlace {
    InPlace::Neither { uid: None }
}

/// Runs `request` in the prepared working folder.
pub(crate) fn execute(
    python: &Python,
    request: &RunRequest,
    prepared: workdir::Prepared,
    cancel: &AtomicBool,
    simulate: Simulate,
) -> Result<RunResult, RunnerError> {
    let mut run = spawn(python, request, prepared, simulate)?;
    let ended = supervise(&mut run, &request.limits, cancel);
    collect(run, ended, &request.limits)
}

/// The platform's containment of one run, held until it has ended.
struct Sandbox {
    #[cfg(target_os = "linux")]
    prepared: sandbox::Prepared,
    #[cfg(target_os = "linux")]
    confirmed: sandbox::Confirmed,
    #[cfg(target_os = "macos")]
    seatbelt: bool,
    #[cfg(windows)]
    job: Option<isolation::windows::Job>,
}

/// A started script.
struct Running {
    child: Child,
    started: Instant,
    /// The process group of the tree (0 when unknown).
    pgid: i32,
    stdout: Option<Shared>,
    stderr: Option<Shared>,
    /// The script's folder.
    work: PathBuf,
    /// What the folder held before the script started (its inputs).
    baseline: u64,
    /// Its input files, and how each was given.
    inputs: Vec<Given>,
    sandbox: Sandbox,
}

impl Running {
    /// What the script has written into its folder so far.
    fn disk_used(&self) -> u64 {
        outputs::disk_usage(&self.work).saturating_sub(self.baseline)
    }
}

/// How supervision ended.
struct Ended {
    status: Option<ExitStatus>,
    duration_ms: u64,
    cancelled: bool,
    timed_out: bool,
    output_over: bool,
    /// Whether the run was in a Job Object (Windows).
    #[cfg(windows)]
    job_held: bool,
}

/// The interpreter to start: the environment's executable when known.
fn program_of(python: &Python) -> &Path {
    if python.executable.as_os_str().is_empty() {
        &python.program
    } else {
        &python.executable
    }
}

/// Starts the script with an allowlisted environment, isolated as the
/// platform allows; refuses when isolation is required and not possible.
fn spawn(
    python: &Python,
    request: &RunRequest,
    prepared: workdir::Prepared,
    simulate: Simulate,
) -> Result<Running, RunnerError> {
    let workdir::Prepared {
        work,
        mut inputs,
        in_place,
    } = prepared;
    let work = work.as_path();
    let limits = &request.limits;
    let program = program_of(python);
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
    allowlisted(&mut cmd, program, work);
    #[cfg(not(target_os = "linux"))]
    let _ = simulate;
    #[cfg(target_os = "linux")]
    let mut prepared = linux_sandbox(&mut cmd, python, request, work, &inputs, in_place, simulate)?;
    #[cfg(target_os = "macos")]
    {
        if required && seatbelt.is_none() {
            return Err(RunnerError::NotIsolated(isolation::macos::refusal()));
        }
        isolation::macos::set_limits(&mut cmd, limits);
    }
    #[cfg(windows)]
    let job = windows_job(&mut cmd, limits, required)?;
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    unsandboxed(&mut cmd, required)?;
    let baseline = outputs::disk_usage(work);
    let started = Instant::now();
    let spawned = cmd.spawn();
    drop(cmd);
    #[cfg(target_os = "linux")]
    let confirmed = prepared.confirmed();
    #[cfg(not(target_os = "linux"))]
    let _ = in_place;
    #[cfg(target_os = "linux")]
    let unbound = inputs.iter().any(|g| g.way == Way::BindMount)
        && !(confirmed.inputs_bound || confirmed.inputs_linked);
    let mut child = match spawned {
        Ok(child) => child,
        #[cfg(target_os = "linux")]
        Err(e) if unbound => {
            return Err(io(
                "giving the script its input files read-only (no read-only bind mount could be made, \
                 and this kernel's Landlock cannot hold them read-only)",
            )(e));
        }
        #[cfg(target_os = "linux")]
        Err(_)
            if required
                && (!confirmed.file_system_isolated
                    || (limits.no_network && !confirmed.network_isolated())
                    || confirmed.side_doors_open().is_some()) =>
        {
            return Err(RunnerError::NotIsolated(isolation::refusal(
                (!confirmed.file_system_isolated)
                    .then_some("the kernel refused the Landlock ruleset"),
                (limits.no_network && !confirmed.network_isolated())
                    .then_some("the kernel refused both the socket filter and a network namespace"),
                confirmed.side_doors_open(),
            )));
        }
        Err(e) => return Err(io(format!("starting {}", program.display()))(e)),
    };
    // The child is in the job before it has read its script (a Python
    // interpreter takes tens of milliseconds to start).
    #[cfg(windows)]
    let job = job.filter(|j| j.assign(&child).is_ok());
    #[cfg(target_os = "linux")]
    relabel_linked(&mut inputs, &confirmed);
    workdir::seal_inputs(work, &inputs);
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let stdout = child.stdout.take().map(|s| capture(s, limits.stdio_bytes));
    let stderr = child.stderr.take().map(|s| capture(s, limits.stdio_bytes));
    Ok(Running {
        child,
        started,
        pgid,
        stdout,
        stderr,
        work: work.to_path_buf(),
        baseline,
        inputs,
        sandbox: Sandbox {
            #[cfg(target_os = "linux")]
            prepared,
            #[cfg(target_os = "linux")]
            confirmed,
            #[cfg(target_os = "macos")]
            seatbelt: seatbelt.is_some(),
            #[cfg(windows)]
            job,
        },
    })
}

/// Prepares the Linux sandbox of a run on `cmd` (refusing when isolation
/// is required and Landlock is missing), with its inputs given in place.
#[cfg(target_os = "linux")]
fn linux_sandbox(
    cmd: &mut Command,
    python: &Python,
    request: &RunRequest,
    work: &Path,
    inputs: &[Given],
    in_place: InPlace,
    simulate: Simulate,
) -> Result<sandbox::Prepared, RunnerError> {
    let limits = &request.limits;
    let required = !limits.allow_unisolated;
    let mut plan = isolation::plan(
        work,
        &request.shared_folders,
        &python.runtime,
        !simulate.no_landlock,
        limits.no_network,
    );
    if simulate.no_mount_namespace {
        plan.writable = None;
    }
    if simulate.no_socket_filter {
        plan.seccomp = Err("the socket filter is not available (simulated)".into());
    }
    give_in_place(&mut plan, inputs, in_place)?;
    if required && let Err(why) = &plan.landlock {
        return Err(RunnerError::NotIsolated(isolation::refusal(
            Some(why),
            None,
            None,
        )));
    }
    sandbox::prepare(cmd, limits, plan, required, !simulate.no_cgroups)
        .map_err(io("preparing the sandbox"))
}

/// Where the child linked its inputs instead of binding them, says so.
#[cfg(target_os = "linux")]
fn relabel_linked(inputs: &mut [Given], confirmed: &sandbox::Confirmed) {
    if confirmed.inputs_linked {
        for g in inputs.iter_mut().filter(|g| g.way == Way::BindMount) {
            g.way = Way::LandlockRule;
        }
    }
}

/// Adds the Landlock read rule of each input read in place, and the binds
/// the child makes.
#[cfg(target_os = "linux")]
fn give_in_place(
    plan: &mut isolation::Plan,
    inputs: &[Given],
    in_place: InPlace,
) -> Result<(), RunnerError> {
    let files: Vec<PathBuf> = inputs
        .iter()
        .filter(|g| matches!(g.way, Way::BindMount | Way::LandlockRule))
        .map(|g| g.source.clone())
        .collect();
    isolation::read_in_place(plan, &files);
    let binds: Vec<(PathBuf, PathBuf)> = inputs
        .iter()
        .filter(|g| g.way == Way::BindMount)
        .map(|g| (g.source.clone(), g.target.clone()))
        .collect();
    if !binds.is_empty() {
        let or_rule = matches!(in_place, InPlace::Bind { or_rule: true });
        plan.inputs = Some(crate::confine::Inputs::new(&binds, or_rule).ok_or_else(|| {
            RunnerError::BadRequest("an input file's path holds a NUL byte".into())
        })?);
    }
    Ok(())
}

/// The script's arguments, folder, streams and environment: an allowlist,
/// never the server's (its keys, its token).
fn allowlisted(cmd: &mut Command, program: &Path, work: &Path) {
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
}

/// Windows: no isolation, so a run needs the override; a Job Object holds
/// its limits when one can be made.
#[cfg(windows)]
fn windows_job(
    cmd: &mut Command,
    limits: &Limits,
    required: bool,
) -> Result<Option<isolation::windows::Job>, RunnerError> {
    if let Some(v) = std::env::var_os("SYSTEMROOT") {
        cmd.env("SYSTEMROOT", v);
    }
    if required {
        return Err(RunnerError::NotIsolated(isolation::windows::refusal()));
    }
    Ok(isolation::windows::Job::new(limits).ok())
}

/// Elsewhere: no isolation at all, so a run needs the override.
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn unsandboxed(cmd: &mut Command, required: bool) -> Result<(), RunnerError> {
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
    #[cfg(not(unix))]
    let _ = cmd;
    Ok(())
}

/// Waits for the script, stopping the whole tree on a cancel, the time-out
/// or too much output; then ends any stragglers.
fn supervise(run: &mut Running, limits: &Limits, cancel: &AtomicBool) -> Ended {
    #[cfg(target_os = "linux")]
    let exit_watch = crate::signal::ExitWatch::new(run.pgid);
    let mut timed_out = false;
    let mut cancelled = false;
    let mut output_over = false;
    let mut ticks: u32 = 0;
    let status = loop {
        #[cfg(target_os = "linux")]
        match sandbox::ended_unreaped(run.pgid) {
            // Its group goes first; only then is it reaped.
            Ok(true) => {
                kill_tree(run);
                break run.child.wait().ok();
            }
            Ok(false) => {}
            Err(_) => match run.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) => {}
                Err(_) => break None,
            },
        }
        #[cfg(not(target_os = "linux"))]
        match run.child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if cancel.load(Ordering::Relaxed) {
            cancelled = true;
        } else if run.started.elapsed() >= limits.timeout {
            timed_out = true;
        } else if ticks % 10 == 9 && run.disk_used() > limits.output_bytes {
            output_over = true;
        }
        #[cfg(target_os = "linux")]
        run.sandbox.prepared.observe();
        if cancelled || timed_out || output_over {
            // Killed, not reaped: the group (and cgroups) go before `wait`.
            let _ = run.child.kill();
            #[cfg(windows)]
            if let Some(job) = &run.sandbox.job {
                job.terminate();
            }
            kill_tree(run);
            break run.child.wait().ok();
        }
        ticks = ticks.wrapping_add(1);
        // A look every 20 ms (the limits, a cancel); the script's end wakes
        // the wait at once where the kernel has pidfds.
        #[cfg(target_os = "linux")]
        if let Some(watch) = &exit_watch {
            watch.wait(Duration::from_millis(20));
            continue;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let duration_ms = u64::try_from(run.started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // Stragglers (children left behind) go with the tree. On Linux the
    // group was killed before the script was reaped (its id may be reused
    // now): only the cgroups are swept again.
    #[cfg(target_os = "linux")]
    run.sandbox.prepared.kill_cgroups();
    #[cfg(not(target_os = "linux"))]
    kill_tree(run);
    // KILL_ON_JOB_CLOSE: closing the job takes its stragglers with it.
    #[cfg(windows)]
    let job_held = run.sandbox.job.take().is_some();
    Ended {
        status,
        duration_ms,
        cancelled,
        timed_out,
        output_over,
        #[cfg(windows)]
        job_held,
    }
}

/// What the platform enforced and saw.
struct Enforced {
    /// The limits' report.
    report: Vec<LimitState>,
    network_isolated: bool,
    isolated: bool,
    /// The script ran out of memory.
    memory_hit: bool,
    /// The script was refused a process.
    process_hit: bool,
}

/// What the script's streams say about the limits.
struct Signs {
    /// Python raised `MemoryError`.
    memory_error: bool,
    /// A fork or thread was refused.
    fork_refused: bool,
}

/// Reads the streams of an ended run, copies its outputs out of its folder
/// and says what ended it.
fn collect(mut run: Running, ended: Ended, limits: &Limits) -> Result<RunResult, RunnerError> {
    let (stdout, out_cut) = take(run.stdout.take());
    let (stderr, err_cut) = take(run.stderr.take());
    // Output written after the last look counts too.
    let ended = Ended {
        output_over: ended.output_over || run.disk_used() > limits.output_bytes,
        ..ended
    };
    // Every process of the run has ended: nothing can swap a file now.
    let copies_dir = run.work.parent().map_or_else(
        || run.work.join("..").join("outputs"),
        |p| p.join("outputs"),
    );
    let copied =
        copies::copy_outputs(&run.work.join("outputs"), &copies_dir, limits.output_bytes).map_err(
            io(format!("copying the outputs into {}", copies_dir.display())),
        )?;
    let signal = signal_of(ended.status);
    let exit_code = ended.status.and_then(|s| s.code());
    let signs = Signs {
        // Python's, or DuckDB's at its own memory limit (sized from the run's).
        memory_error: stderr.contains("MemoryError") || stderr.contains("OutOfMemoryException"),
        // A refused fork or thread shows as EAGAIN, which Python names
        // BlockingIOError (Windows: "not enough quota", error 1816).
        fork_refused: [&stdout, &stderr].iter().any(|t| {
            t.contains("BlockingIOError")
                || t.contains("Resource temporarily unavailable")
                || t.contains("WinError 1816")
        }),
    };
    let mut enforced = enforced(&mut run.sandbox, limits, &ended, signal, &signs);
    enforced.report.extend(workdir::report(&run.inputs));
    let (status, message) = classify(limits, &ended, signal, exit_code, &stderr, &enforced);
    Ok(RunResult {
        status,
        message,
        exit_code,
        signal,
        duration_ms: ended.duration_ms,
        stdout,
        stderr,
        truncated: out_cut || err_cut,
        outputs: outputs::list(&copies_dir),
        refused_outputs: copied.refused,
        limits: enforced.report,
        network_isolated: enforced.network_isolated,
        isolated: enforced.isolated,
    })
}

/// The platform's report of the limits and what it saw of them.
#[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
fn enforced(
    sandbox: &mut Sandbox,
    limits: &Limits,
    ended: &Ended,
    signal: Option<i32>,
    signs: &Signs,
) -> Enforced {
    let mut report = vec![LimitState {
        name: "wall_clock".into(),
        limit: format!("{} s", limits.timeout.as_secs()),
        mechanism: Some("process tree killed at the time-out".into()),
        note: None,
    }];
    #[cfg(target_os = "linux")]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        let confirmed = sandbox.confirmed;
        let network_isolated = confirmed.network_isolated();
        report.extend(report::linux(limits, &confirmed));
        let mut memory_hit = signs.memory_error || sandbox.prepared.oom_killed();
        // systemd removes a scope's cgroup as soon as it is empty, so its
        // `oom_kill` may go unseen: a SIGKILL nobody else sent is the memory
        // limit (the CPU limit's SIGKILL comes only once its time is spent).
        memory_hit |= confirmed.memory == cgroup::Mechanism::SystemdScope
            && signal == Some(libc::SIGKILL)
            && !(ended.timed_out || ended.cancelled || ended.output_over)
            && !cpu_exhausted(limits, ended.duration_ms);
        // Root without a pids cgroup has no process limit at all.
        let unbound = sandbox::is_root() && confirmed.processes == cgroup::Mechanism::Rlimit;
        let process_hit = (signs.fork_refused && !unbound) || sandbox.prepared.pids_refused();
        (
            network_isolated,
            confirmed.file_system_isolated
                && (network_isolated || !limits.no_network)
                && confirmed.side_doors_open().is_none(),
            memory_hit,
            process_hit,
        )
    };
    #[cfg(target_os = "macos")]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        let root = isolation::macos::is_root();
        report.extend(isolation::macos::report(limits, sandbox.seatbelt, root));
        (
            sandbox.seatbelt && limits.no_network,
            sandbox.seatbelt,
            signs.memory_error,
            signs.fork_refused && !root,
        )
    };
    #[cfg(windows)]
    let (network_isolated, isolated, memory_hit, process_hit) = {
        report.extend(isolation::windows::report(limits, ended.job_held));
        (false, false, signs.memory_error, signs.fork_refused)
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
            mechanism: Some("a check of the whole run folder".into()),
            note: None,
        });
        (false, false, signs.memory_error, false)
    };
    Enforced {
        report,
        network_isolated,
        isolated,
        memory_hit,
        process_hit,
    }
}

/// What ended the run, and the sentence that says so.
fn classify(
    limits: &Limits,
    ended: &Ended,
    signal: Option<i32>,
    exit_code: Option<i32>,
    stderr: &str,
    enforced: &Enforced,
) -> (RunStatus, String) {
    const SIGKILL: i32 = 9;
    const SIGXCPU: i32 = 24;
    const SIGXFSZ: i32 = 25;
    let memory_hit = enforced.memory_hit;
    if ended.cancelled {
        (
            RunStatus::Cancelled,
            "the run was cancelled; every process of it was stopped".to_owned(),
        )
    } else if ended.timed_out {
        (
            RunStatus::TimedOut,
            format!(
                "the script ran longer than {} s and was stopped",
                limits.timeout.as_secs()
            ),
        )
    } else if ended.output_over || signal == Some(SIGXFSZ) || stderr.contains("File too large") {
        (
            RunStatus::OutputLimit,
            format!(
                "the script wrote more than {} into its folder and was stopped",
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
        || (signal == Some(SIGKILL) && !memory_hit && cpu_exhausted(limits, ended.duration_ms))
    {
        (
            RunStatus::CpuLimit,
            format!(
                "the script used more than {} s of CPU time and was stopped",
                limits.cpu_seconds
            ),
        )
    } else if enforced.process_hit && exit_code != Some(0) {
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
    }
}

/// Bounded capture of one stream.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    truncated: bool,
    done: bool,
}

/// A capture and the signal that its reader is done.
type Shared = Arc<(Mutex<Capture>, Condvar)>;

fn capture(mut stream: impl Read + Send + 'static, cap: usize) -> Shared {
    let shared: Shared = Arc::default();
    let out = shared.clone();
    std::thread::spawn(move || {
        let (capture, ended) = &*out;
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let mut c = capture.lock().unwrap_or_else(|e| e.into_inner());
                    let room = cap.saturating_sub(c.bytes.len());
                    if n > room {
                        c.truncated = true;
                    }
                    let take = n.min(room);
                    c.bytes.extend_from_slice(&buf[..take]);
                }
            }
        }
        capture.lock().unwrap_or_else(|e| e.into_inner()).done = true;
        ended.notify_all();
    });
    shared
}

/// A stream's text once its reader is done (waiting up to two seconds: a
/// process that escaped the run could hold the pipe open), and whether it
/// was cut. Woken as soon as the reader ends, not on a polling tick.
fn take(c: Option<Shared>) -> (String, bool) {
    let Some(c) = c else {
        return (String::new(), false);
    };
    let (capture, ended) = &*c;
    let c = capture.lock().unwrap_or_else(|e| e.into_inner());
    let (c, _) = ended
        .wait_timeout_while(c, Duration::from_secs(2), |c| !c.done)
        .unwrap_or_else(|e| e.into_inner());
    (String::from_utf8_lossy(&c.bytes).into_owned(), c.truncated)
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

fn kill_tree(run: &Running) {
    let pgid = run.pgid;
    #[cfg(target_os = "linux")]
    if pgid > 0 {
        run.sandbox.prepared.kill_tree(pgid);
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
fn signal_of(status: Option<ExitStatus>) -> Option<i32> {
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
