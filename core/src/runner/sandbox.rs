//! The operating-system side of containment: cgroups (v1 `pids` and
//! `memory`, where writable), resource limits, a network namespace, the
//! Landlock ruleset and socket filter of [`super::isolation`], and killing a
//! whole process tree. The only module of Maskflow with `unsafe`
//! code: the `pre_exec` hook that runs in the forked child before `exec`,
//! and `kill(2)`. Everything in that hook is async-signal-safe (raw system
//! calls on pre-built buffers; no allocation).
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Limits;
use super::isolation::Plan;

/// What the child reported from its `pre_exec` hook.
const NET_ISOLATED: u8 = 1;
const PIDS_JOINED: u8 = 2;
const MEMORY_JOINED: u8 = 4;
const FS_ISOLATED: u8 = 8;
const SOCKETS_FILTERED: u8 = 16;

/// The cgroup v1 hierarchies the runner uses.
const PIDS_ROOT: &str = "/sys/fs/cgroup/pids";
const MEMORY_ROOT: &str = "/sys/fs/cgroup/memory";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One cgroup made for one run (removed on drop).
#[derive(Debug)]
pub struct Cgroup {
    /// Its folder.
    pub dir: PathBuf,
}

impl Cgroup {
    fn create(root: &str, settings: &[(&str, String)]) -> Option<Cgroup> {
        let root = PathBuf::from(root);
        if !root.join("cgroup.procs").exists() {
            return None;
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("maskflow-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let group = Cgroup { dir };
        for (file, value) in settings {
            if std::fs::write(group.dir.join(file), value).is_err()
                && *file != "memory.memsw.limit_in_bytes"
            {
                return None; // dropped: removed
            }
        }
        Some(group)
    }

    /// The pids now in the group.
    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// A counter file's value, e.g. `memory.failcnt`; for key-value files
    /// (`pids.events`, `memory.oom_control`) the value of `key`.
    pub fn read_counter(&self, file: &str, key: Option<&str>) -> u64 {
        let text = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        match key {
            None => text.trim().parse().unwrap_or(0),
            Some(k) => text
                .lines()
                .filter_map(|l| l.split_once(' '))
                .find(|(name, _)| *name == k)
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0),
        }
    }

    /// Kills every process in the group.
    pub fn kill_all(&self) {
        for _ in 0..50 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                kill(pid, libc::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.kill_all();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Sends `signal` to `pid` (negative: a process group).
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// The containment prepared for one child, before it is spawned.
#[derive(Debug)]
pub struct Prepared {
    /// The `pids` cgroup, when one could be made.
    pub pids: Option<Cgroup>,
    /// The `memory` cgroup, when one could be made.
    pub memory: Option<Cgroup>,
    reader: std::io::PipeReader,
}

/// What the child confirmed before `exec`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Confirmed {
    /// It is in a network namespace of its own.
    pub network_namespace: bool,
    /// Its socket filter refuses every family but `AF_UNIX`.
    pub sockets_filtered: bool,
    /// Its Landlock ruleset is enforced.
    pub file_system_isolated: bool,
    /// It joined the `pids` cgroup.
    pub pids_cgroup: bool,
    /// It joined the `memory` cgroup.
    pub memory_cgroup: bool,
}

impl Confirmed {
    /// Whether the child cannot reach the network (a namespace or the filter).
    pub fn network_isolated(&self) -> bool {
        self.network_namespace || self.sockets_filtered
    }
}

/// Makes the cgroups and installs the `pre_exec` hook on `cmd`: join the
/// cgroups, set the resource limits, enter a new network namespace, apply
/// `plan` (Landlock, then the socket filter), and report which of these
/// worked through a pipe. When `required`, a child that could not be
/// isolated (file system, and network when `limits.no_network`) does not
/// exec: spawning fails, and [`Prepared::confirmed`] says what was missing.
pub fn prepare(
    cmd: &mut Command,
    limits: &Limits,
    plan: Plan,
    required: bool,
) -> std::io::Result<Prepared> {
    let pids = Cgroup::create(PIDS_ROOT, &[("pids.max", limits.max_processes.to_string())]);
    let memory = Cgroup::create(
        MEMORY_ROOT,
        &[
            ("memory.limit_in_bytes", limits.memory_bytes.to_string()),
            (
                "memory.memsw.limit_in_bytes",
                limits.memory_bytes.to_string(),
            ),
        ],
    );
    let procs = |g: &Option<Cgroup>| {
        g.as_ref().and_then(|g| {
            CString::new(
                g.dir
                    .join("cgroup.procs")
                    .into_os_string()
                    .into_encoded_bytes(),
            )
            .ok()
        })
    };
    let pids_procs = procs(&pids);
    let memory_procs = procs(&memory);
    let mut rlimits: Vec<(libc::__rlimit_resource_t, u64)> = vec![
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_FSIZE, limits.output_bytes),
        (libc::RLIMIT_CORE, 0),
    ];
    if memory.is_none() {
        rlimits.push((libc::RLIMIT_AS, limits.memory_bytes));
    }
    if pids.is_none() {
        rlimits.push((libc::RLIMIT_NPROC, limits.max_processes));
    }
    let network = limits.no_network;
    let mut ruleset = plan.landlock.ok();
    let filter = plan.seccomp.ok().filter(|_| network);
    let (reader, writer) = std::io::pipe()?;
    let fd = writer.as_raw_fd();
    // The writer must stay open in the parent until spawn; it is moved into
    // the closure so it lives as long as the Command, and dropped with it.
    let keep = writer;
    // SAFETY: the hook only makes system calls (open, write, close,
    // setrlimit, unshare, prctl, landlock_restrict_self, seccomp) on values
    // prepared above; it does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            let _ = &keep;
            let mut flags: u8 = 0;
            for (path, flag) in [(&pids_procs, PIDS_JOINED), (&memory_procs, MEMORY_JOINED)] {
                if let Some(path) = path {
                    let f = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if f >= 0 {
                        if libc::write(f, b"0".as_ptr().cast(), 1) == 1 {
                            flags |= flag;
                        }
                        libc::close(f);
                    }
                }
            }
            for (resource, value) in &rlimits {
                let hard = if *resource == libc::RLIMIT_CPU {
                    value + 1
                } else {
                    *value
                };
                let lim = libc::rlimit {
                    rlim_cur: *value,
                    rlim_max: hard,
                };
                libc::setrlimit(*resource, &lim);
            }
            if network
                && (libc::unshare(libc::CLONE_NEWNET) == 0
                    || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0)
            {
                flags |= NET_ISOLATED;
            }
            // Landlock first (it sets no_new_privs, which seccomp needs).
            if let Some(r) = ruleset.take()
                && let Ok(status) = r.restrict_self()
                && !matches!(status.ruleset, landlock::RulesetStatus::NotEnforced)
            {
                flags |= FS_ISOLATED;
            }
            if let Some(f) = &filter
                && seccompiler::apply_filter(f).is_ok()
            {
                flags |= SOCKETS_FILTERED;
            }
            libc::write(fd, (&flags as *const u8).cast(), 1);
            let network_ok = !network || flags & (NET_ISOLATED | SOCKETS_FILTERED) != 0;
            if required && (flags & FS_ISOLATED == 0 || !network_ok) {
                return Err(std::io::Error::from_raw_os_error(libc::EPERM));
            }
            Ok(())
        });
    }
    cmd.process_group(0);
    Ok(Prepared {
        pids,
        memory,
        reader,
    })
}

impl Prepared {
    /// Reads what the child confirmed. Call after spawn, once the `Command`
    /// (and with it the parent's write end of the pipe) is dropped.
    pub fn confirmed(&mut self) -> Confirmed {
        let mut byte = [0u8; 1];
        let flags = match self.reader.read(&mut byte) {
            Ok(1) => byte[0],
            _ => 0,
        };
        Confirmed {
            network_namespace: flags & NET_ISOLATED != 0,
            sockets_filtered: flags & SOCKETS_FILTERED != 0,
            file_system_isolated: flags & FS_ISOLATED != 0,
            pids_cgroup: flags & PIDS_JOINED != 0,
            memory_cgroup: flags & MEMORY_JOINED != 0,
        }
    }

    /// Kills the process group `pgid` and everything in the cgroups.
    pub fn kill_tree(&self, pgid: i32) {
        kill(-pgid, libc::SIGKILL);
        for g in [&self.pids, &self.memory].into_iter().flatten() {
            g.kill_all();
        }
    }
}

/// Whether the current user is root (RLIMIT_NPROC does not bind root).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}
