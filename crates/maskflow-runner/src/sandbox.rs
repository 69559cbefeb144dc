//! The operating-system side of containment: the cgroups or systemd scope
//! of [`super::cgroup`], resource limits, a network namespace, the Landlock
//! ruleset and socket filter of [`super::isolation`], and killing a whole
//! process tree. The only module of Maskflow with `unsafe` code: the
//! `pre_exec` hook that runs in the forked child before `exec`, and
//! `kill(2)`. Everything in that hook is async-signal-safe (raw system calls
//! on pre-built buffers; no allocation).
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::thread::JoinHandle;

use super::Limits;
use super::cgroup::{self, Cgroup, Choice, Controllers, Mechanism, Offer, Scope, ScopeRequest};
use super::confine;
use super::isolation::Plan;
pub use super::signal::ended_unreaped;
use super::signal::{group_alive, kill};

/// What the child reported from its `pre_exec` hook.
const NET_ISOLATED: u32 = 1;
const PIDS_JOINED: u32 = 2;
const MEMORY_JOINED: u32 = 4;
const FS_ISOLATED: u32 = 8;
const SOCKETS_FILTERED: u32 = 16;
const MOUNTS_READ_ONLY: u32 = 32;
const METADATA_FILTERED: u32 = 64;
const CAPS_NONE: u32 = 128;
const CAPS_BOUNDING_EMPTY: u32 = 256;
const FDS_CLOEXEC: u32 = 512;
const PID_NAMESPACE: u32 = 1024;
const INPUTS_BOUND: u32 = 2048;
const INPUTS_LINKED: u32 = 4096;

/// What the scope helper tells the waiting child: the scope holds memory,
/// processes (else the child sets the rlimit).
const SCOPE_MEMORY: u8 = 1;
const SCOPE_PIDS: u8 = 2;

/// The containment prepared for one child, before it is spawned.
#[derive(Debug)]
pub struct Prepared {
    /// Which mechanism was chosen for memory and for processes.
    choice: Choice,
    /// The run's cgroup v2, when one was made.
    v2: Option<Cgroup>,
    /// The run's cgroup v1 `memory` group.
    v1_memory: Option<Cgroup>,
    /// The run's cgroup v1 `pids` group.
    v1_pids: Option<Cgroup>,
    /// The thread asking systemd for a scope while the child waits.
    scope_helper: Option<JoinHandle<Option<Scope>>>,
    /// The scope, once made.
    scope: Option<Scope>,
    /// Counters of the scope seen while it ran (systemd removes its cgroup
    /// as soon as it is empty): `oom_kill`, and `max` of `pids.events`.
    scope_oom_kills: u64,
    scope_pids_max: u64,
    reader: std::io::PipeReader,
    /// Whether the filter refuses every socket family (no network).
    no_network: bool,
}

/// What the child confirmed before `exec`.
#[derive(Debug, Clone, Copy)]
pub struct Confirmed {
    /// It is in a network namespace of its own.
    pub network_namespace: bool,
    /// Its filter refuses `socket(2)` (every family without network, else
    /// `AF_UNIX`), `setsid(2)` and `setpgid(2)`.
    pub sockets_filtered: bool,
    /// Whether that filter refuses every socket family (no network).
    pub every_family: bool,
    /// Every mount is read-only to it but its own folders (metadata outside
    /// them cannot change).
    pub mounts_read_only: bool,
    /// Metadata calls are no-ops to it (where no mount namespace was made).
    pub metadata_filtered: bool,
    /// It holds no capability (effective, permitted, inheritable, ambient).
    pub capabilities_none: bool,
    /// Its bounding set is empty and root's privileges are off.
    pub bounding_emptied: bool,
    /// Every descriptor it inherited past stderr is closed at `exec`.
    pub descriptors_closed: bool,
    /// It is PID 1 of its own PID namespace (a stand-in waits outside).
    pub pid_namespace: bool,
    /// Its Landlock ruleset is enforced.
    pub file_system_isolated: bool,
    /// What holds its memory.
    pub memory: Mechanism,
    /// What holds its processes.
    pub processes: Mechanism,
    /// Its input files are bound read-only into its folder.
    pub inputs_bound: bool,
    /// Its input files are symbolic links held by Landlock read rules
    /// (binding was not possible).
    pub inputs_linked: bool,
}

impl Confirmed {
    /// Whether the child cannot reach the network (a namespace or the filter).
    pub fn network_isolated(&self) -> bool {
        self.network_namespace || (self.sockets_filtered && self.every_family)
    }

    /// Why the side doors (UNIX sockets, `setsid`, metadata) stay open, if
    /// they do.
    pub fn side_doors_open(&self) -> Option<&'static str> {
        if !self.sockets_filtered {
            Some(
                "the kernel refused the seccomp filter that closes UNIX sockets and keeps every process in the run's group",
            )
        } else if !(self.mounts_read_only || self.metadata_filtered) {
            Some("neither a read-only mount namespace nor the metadata filter could be made")
        } else {
            None
        }
    }
}

/// Writes `0` into a `cgroup.procs`: the calling process joins that group.
///
/// # Safety
/// Async-signal-safe (open, write, close on a pre-built path).
unsafe fn join(procs: &CStr) -> bool {
    // SAFETY: plain system calls on a valid NUL-terminated path and a
    // static buffer.
    unsafe {
        let f = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if f < 0 {
            return false;
        }
        let ok = libc::write(f, b"0".as_ptr().cast(), 1) == 1;
        libc::close(f);
        ok
    }
}

/// Makes `cmd`'s child join the cgroup whose `cgroup.procs` is `procs`
/// before `exec` (tests of the cgroup mechanics).
#[cfg(test)]
pub fn join_before_exec(cmd: &mut Command, procs: CString) {
    // SAFETY: the hook only calls `join`, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if join(&procs) {
                Ok(())
            } else {
                Err(std::io::Error::from_raw_os_error(libc::EACCES))
            }
        });
    }
}

/// The cgroups (or scope) of a run, chosen by [`cgroup::choose`] from what
/// this machine offers; the cheap mechanisms are tried first, and the
/// user's systemd is asked only when no own cgroup holds a limit.
fn limit_groups(limits: &Limits) -> (Choice, Option<Cgroup>, Option<Cgroup>, Option<Cgroup>) {
    let mut offer = Offer::default();
    let v2 = cgroup::create_v2(limits.memory_bytes, limits.max_processes).map(|(g, c)| {
        offer.v2 = c;
        g
    });
    let v1_memory = (!offer.v2.memory)
        .then(|| cgroup::create_v1_memory(limits.memory_bytes))
        .flatten();
    let v1_pids = (!offer.v2.pids)
        .then(|| cgroup::create_v1_pids(limits.max_processes))
        .flatten();
    offer.v1 = Controllers {
        memory: v1_memory.is_some(),
        pids: v1_pids.is_some(),
    };
    let uncovered = !(offer.v2.memory || offer.v1.memory) || !(offer.v2.pids || offer.v1.pids);
    offer.systemd_scope = uncovered && cgroup::systemd_scope_available();
    let choice = cgroup::choose(&offer);
    // Groups the choice does not use are dropped (removed) here.
    let keep = |g: Option<Cgroup>, used: bool| g.filter(|_| used);
    let v2_used = choice.memory == Mechanism::CgroupV2 || choice.processes == Mechanism::CgroupV2;
    (
        choice,
        keep(v2, v2_used),
        keep(v1_memory, choice.memory == Mechanism::CgroupV1),
        keep(v1_pids, choice.processes == Mechanism::CgroupV1),
    )
}

/// Makes the cgroups (or starts the scope helper) and installs the
/// `pre_exec` hook on `cmd`: wait until systemd put the child into its scope
/// (when one is used), join the cgroups, set the resource limits (memory
/// and processes only where no cgroup holds them), enter a new network
/// namespace, apply `plan` (Landlock, then the socket filter), and report
/// which of these worked through a pipe. When `required`, a child that could
/// not be isolated (file system, and network when `limits.no_network`) does
/// not exec: spawning fails, and [`Prepared::confirmed`] says what was
/// missing.
pub fn prepare(
    cmd: &mut Command,
    limits: &Limits,
    plan: Plan,
    required: bool,
    cgroups: bool,
) -> std::io::Result<Prepared> {
    let (choice, v2, v1_memory, v1_pids) = if cgroups {
        limit_groups(limits)
    } else {
        let rlimits = Choice {
            memory: Mechanism::Rlimit,
            processes: Mechanism::Rlimit,
        };
        (rlimits, None, None, None)
    };
    let groups = Groups {
        v2,
        v1_memory,
        v1_pids,
    };
    prepare_with(
        cmd,
        limits,
        plan,
        required,
        choice,
        groups,
        cgroup::start_scope,
    )
}

/// The run's own cgroups.
#[derive(Debug, Default)]
struct Groups {
    v2: Option<Cgroup>,
    v1_memory: Option<Cgroup>,
    v1_pids: Option<Cgroup>,
}

/// What puts a waiting child into a scope ([`cgroup::start_scope`]; tests
/// stand in for systemd).
type ScopeStarter = fn(&ScopeRequest, u32) -> Option<Scope>;

/// [`prepare`] with the mechanisms already chosen and made.
fn prepare_with(
    cmd: &mut Command,
    limits: &Limits,
    plan: Plan,
    required: bool,
    choice: Choice,
    groups: Groups,
    start_scope: ScopeStarter,
) -> std::io::Result<Prepared> {
    let joins = joins(&choice, &groups);
    let Groups {
        v2,
        v1_memory,
        v1_pids,
    } = groups;
    let (rlimits, network) = (rlimits(limits), limits.no_network);
    let (scope_helper, scope_fds) = match start_scope_helper(&choice, limits, start_scope)? {
        Some((helper, fds)) => (Some(helper), Some(fds)),
        None => (None, None),
    };
    let mut ruleset = plan.landlock.ok();
    // A second descriptor of the same ruleset, for the rules the child adds
    // about its own limits (kept open in the parent until spawn).
    let ruleset_fd: Option<std::os::fd::OwnedFd> = ruleset
        .as_ref()
        .and_then(|r| r.try_clone().ok())
        .and_then(Into::into);
    let filter = plan.seccomp.ok();
    let metadata_filter = plan.metadata.ok();
    let writable = plan.writable;
    let inputs = plan.inputs.filter(|i| !i.is_empty());
    let (reader, writer) = std::io::pipe()?;
    let fd = writer.as_raw_fd();
    // The write ends must stay open in the parent until spawn; they are
    // moved into the closure so they live as long as the Command, and are
    // dropped with it.
    let keep = (writer, scope_fds.as_ref().map(|(f, _, _)| *f));
    let scope_pipes = scope_fds.map(|(_, w, r)| (w, r));
    // SAFETY: the hook only makes system calls (getpid, read, open, write,
    // close, setrlimit, unshare, mount, mount_setattr, chdir, prctl,
    // capset, landlock_add_rule, landlock_restrict_self, seccomp,
    // close_range, fcntl) on values
    // prepared above; it does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            let _ = (&keep, &scope_pipes, &ruleset_fd);
            // `held`: limits a cgroup holds, whose rlimits are not set.
            let (mut flags, mut held) = (0u32, 0u32);
            if let Some((pid_fd, go_fd, go_write_fd)) = keep.1 {
                held |= wait_for_scope(pid_fd, go_fd, go_write_fd);
            }
            for (path, joined) in &joins {
                if join(path) {
                    flags |= joined;
                    held |= joined;
                }
            }
            set_rlimits(&rlimits, held);
            let entered = confine::enter(writable.as_ref(), network);
            if entered.network {
                flags |= NET_ISOLATED;
            }
            if entered.read_only {
                flags |= MOUNTS_READ_ONLY;
            }
            let given = inputs
                .as_ref()
                .map_or(0, |i| give_inputs(i, entered.read_only));
            flags |= given;
            if inputs.is_some() && given == 0 {
                // Its inputs would be empty placeholders: it never runs.
                return Err(refuse(fd, flags));
            }
            flags |= pid_namespace()?;
            flags |= drop_capabilities();
            // What tells this process its own limits (after its last fork
            // and its cgroups), for the libraries that size themselves.
            let limits_fd = match &ruleset_fd {
                Some(r) if ruleset.is_some() => confine::allow_own_limits(r.as_raw_fd()),
                _ => -1,
            };
            flags |= restrict(
                ruleset.take(),
                filter.as_ref(),
                metadata_filter
                    .as_ref()
                    .filter(|_| flags & MOUNTS_READ_ONLY == 0),
            );
            if confine::close_on_exec_from_3() {
                flags |= FDS_CLOEXEC;
            }
            if limits_fd >= 0 {
                confine::keep_across_exec(limits_fd);
            }
            let bytes = flags.to_ne_bytes();
            libc::write(fd, bytes.as_ptr().cast(), bytes.len());
            let network_ok = !network || flags & (NET_ISOLATED | SOCKETS_FILTERED) != 0;
            let doors_ok = flags & SOCKETS_FILTERED != 0
                && flags & (MOUNTS_READ_ONLY | METADATA_FILTERED) != 0;
            if required && (flags & FS_ISOLATED == 0 || !network_ok || !doors_ok) {
                return Err(std::io::Error::from_raw_os_error(libc::EPERM));
            }
            Ok(())
        });
    }
    cmd.process_group(0);
    Ok(Prepared {
        choice,
        v2,
        v1_memory,
        v1_pids,
        scope_helper,
        scope: None,
        scope_oom_kills: 0,
        scope_pids_max: 0,
        reader,
        no_network: network,
    })
}

/// Drops every capability of the child; returns the flags of what it reached.
///
/// # Safety
/// As [`confine::drop_capabilities`]: for the child between fork and exec.
unsafe fn drop_capabilities() -> u32 {
    // SAFETY: the caller is the pre-exec hook; it only makes system calls.
    let dropped = unsafe { confine::drop_capabilities() };
    let mut flags = 0;
    if dropped.none_held {
        flags |= CAPS_NONE;
    }
    if dropped.bounding_emptied {
        flags |= CAPS_BOUNDING_EMPTY;
    }
    flags
}

/// Applies, in the child before exec, the Landlock ruleset, then the socket
/// filter and the metadata filter (where the mounts are not read-only);
/// returns the flags of what took hold. Landlock goes first: it sets
/// no_new_privs, which seccomp needs.
fn restrict(
    ruleset: Option<landlock::RulesetCreated>,
    filter: Option<&seccompiler::BpfProgram>,
    metadata_filter: Option<&seccompiler::BpfProgram>,
) -> u32 {
    let mut flags = 0;
    if let Some(r) = ruleset
        && let Ok(status) = r.restrict_self()
        && !matches!(status.ruleset, landlock::RulesetStatus::NotEnforced)
    {
        flags |= FS_ISOLATED;
    }
    if let Some(f) = filter
        && seccompiler::apply_filter(f).is_ok()
    {
        flags |= SOCKETS_FILTERED;
    }
    if let Some(f) = metadata_filter
        && seccompiler::apply_filter(f).is_ok()
    {
        flags |= METADATA_FILTERED;
    }
    flags
}

/// In the child: binds the inputs read-only where the mounts are the run's
/// own and read-only, else links them where a Landlock rule holds them;
/// the flag of what was done, 0 when neither was possible.
///
/// # Safety
/// Async-signal-safe, as [`confine::bind_inputs`] and [`confine::link_inputs`].
unsafe fn give_inputs(inputs: &confine::Inputs, read_only: bool) -> u32 {
    // SAFETY: see above.
    unsafe {
        if read_only && confine::bind_inputs(inputs) {
            INPUTS_BOUND
        } else if inputs.or_rule && confine::link_inputs(inputs) {
            INPUTS_LINKED
        } else {
            0
        }
    }
}

/// In the child, refusing to `exec`: reports `flags` through `fd` first.
///
/// # Safety
/// Async-signal-safe: write(2) of a stack buffer.
unsafe fn refuse(fd: i32, flags: u32) -> std::io::Error {
    let bytes = flags.to_ne_bytes();
    // SAFETY: a write of a stack buffer to a descriptor this process owns.
    unsafe {
        libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    }
    std::io::Error::from_raw_os_error(libc::EPERM)
}

/// In the child: makes the script PID 1 of its own namespace (this process
/// stays outside as its stand-in and never returns); `PID_NAMESPACE`, or 0
/// where none can be made.
///
/// # Safety
/// Async-signal-safe, as [`confine::enter_pid_namespace`].
unsafe fn pid_namespace() -> std::io::Result<u32> {
    // SAFETY: see above.
    match unsafe { confine::enter_pid_namespace() } {
        confine::PidNamespace::First => Ok(PID_NAMESPACE),
        confine::PidNamespace::Unavailable => Ok(0),
        confine::PidNamespace::Failed => Err(std::io::Error::from_raw_os_error(libc::EAGAIN)),
    }
}

/// The `cgroup.procs` files the child joins, each with the flags it holds
/// once joined.
fn joins(choice: &Choice, groups: &Groups) -> Vec<(CString, u32)> {
    let mut joins: Vec<(CString, u32)> = Vec::new();
    if let Some(path) = groups.v2.as_ref().and_then(Cgroup::procs_file) {
        let mut flags = 0;
        if choice.memory == Mechanism::CgroupV2 {
            flags |= MEMORY_JOINED;
        }
        if choice.processes == Mechanism::CgroupV2 {
            flags |= PIDS_JOINED;
        }
        joins.push((path, flags));
    }
    if let Some(path) = groups.v1_memory.as_ref().and_then(Cgroup::procs_file) {
        joins.push((path, MEMORY_JOINED));
    }
    if let Some(path) = groups.v1_pids.as_ref().and_then(Cgroup::procs_file) {
        joins.push((path, PIDS_JOINED));
    }
    joins
}

/// A resource limit: the resource, its value, and the flag under which a
/// cgroup holds it instead (0: always set).
type Rlimit = (libc::__rlimit_resource_t, u64, u32);

/// The resource limits of a run.
fn rlimits(limits: &Limits) -> Vec<Rlimit> {
    vec![
        (libc::RLIMIT_CPU, limits.cpu_seconds, 0),
        (libc::RLIMIT_FSIZE, limits.output_bytes, 0),
        (libc::RLIMIT_CORE, 0, 0),
        (libc::RLIMIT_AS, limits.memory_bytes, MEMORY_JOINED),
        (libc::RLIMIT_NPROC, limits.max_processes, PIDS_JOINED),
    ]
}

/// In the child: sets every limit no cgroup holds (`held`). The CPU
/// limit's hard value is a second higher, so SIGXCPU comes before SIGKILL.
fn set_rlimits(rlimits: &[Rlimit], held: u32) {
    for (resource, value, held_by) in rlimits {
        if *held_by != 0 && held & held_by != 0 {
            continue;
        }
        let hard = if *resource == libc::RLIMIT_CPU {
            value + 1
        } else {
            *value
        };
        let lim = libc::rlimit {
            rlim_cur: *value,
            rlim_max: hard,
        };
        // SAFETY: setrlimit is async-signal-safe and reads only `lim`.
        unsafe {
            libc::setrlimit(*resource, &lim);
        }
    }
}

/// The scope helper's pipes as the parent keeps them until spawn: the
/// child's descriptors (pid write, go read, go write), the pid pipe's write
/// end and the go pipe's read end.
type ScopeFds = ((i32, i32, i32), std::io::PipeWriter, std::io::PipeReader);

/// When systemd is to hold a limit, starts the thread that asks for the
/// scope once the child has sent its pid.
fn start_scope_helper(
    choice: &Choice,
    limits: &Limits,
    start_scope: ScopeStarter,
) -> std::io::Result<Option<(JoinHandle<Option<Scope>>, ScopeFds)>> {
    let scoped =
        choice.memory == Mechanism::SystemdScope || choice.processes == Mechanism::SystemdScope;
    if !scoped {
        return Ok(None);
    }
    let request = ScopeRequest::new(
        (choice.memory == Mechanism::SystemdScope).then_some(limits.memory_bytes),
        (choice.processes == Mechanism::SystemdScope).then_some(limits.max_processes),
    );
    let (pid_reader, pid_writer) = std::io::pipe()?;
    let (go_reader, go_writer) = std::io::pipe()?;
    let fds = (
        pid_writer.as_raw_fd(),
        go_reader.as_raw_fd(),
        go_writer.as_raw_fd(),
    );
    let helper =
        std::thread::spawn(move || scope_helper(&request, start_scope, pid_reader, go_writer));
    Ok(Some((helper, (fds, pid_writer, go_reader))))
}

/// In the child, before anything else: sends its pid to the scope helper and
/// waits for its answer (which limits the scope holds), as
/// `MEMORY_JOINED`/`PIDS_JOINED` bits; 0 when the helper gave up.
///
/// # Safety
/// Async-signal-safe: getpid, write, read, close on inherited descriptors.
unsafe fn wait_for_scope(pid_fd: i32, go_fd: i32, go_write_fd: i32) -> u32 {
    // SAFETY: plain system calls on descriptors this process inherited and
    // on stack buffers.
    unsafe {
        // The child's copy of the helper's end: closed, so that a helper
        // that gives up (drops its end) ends the wait below.
        libc::close(go_write_fd);
        let pid = libc::getpid().to_ne_bytes();
        if libc::write(pid_fd, pid.as_ptr().cast(), pid.len()) != 4 {
            return 0;
        }
        let mut answer = 0u8;
        loop {
            let n = libc::read(go_fd, (&mut answer as *mut u8).cast(), 1);
            if n == 1 {
                break;
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return 0;
        }
        let mut held = 0;
        if answer & SCOPE_MEMORY != 0 {
            held |= MEMORY_JOINED;
        }
        if answer & SCOPE_PIDS != 0 {
            held |= PIDS_JOINED;
        }
        held
    }
}

/// The parent's side of the scope: reads the waiting child's pid, asks
/// systemd for the scope, tells the child which limits it holds. Whatever
/// happens, the child is answered (or its pipe closed) and goes on.
fn scope_helper(
    request: &ScopeRequest,
    start_scope: ScopeStarter,
    mut pid_reader: std::io::PipeReader,
    mut go_writer: std::io::PipeWriter,
) -> Option<Scope> {
    let mut pid = [0u8; 4];
    pid_reader.read_exact(&mut pid).ok()?;
    let pid = u32::try_from(i32::from_ne_bytes(pid)).ok()?;
    let scope = start_scope(request, pid);
    let mut answer = 0;
    if let Some(s) = &scope {
        if s.memory {
            answer |= SCOPE_MEMORY;
        }
        if s.pids {
            answer |= SCOPE_PIDS;
        }
    }
    let _ = go_writer.write_all(&[answer]);
    scope
}

impl Prepared {
    /// Reads what the child confirmed. Call after spawn, once the `Command`
    /// (and with it the parent's write end of the pipe) is dropped.
    pub fn confirmed(&mut self) -> Confirmed {
        let mut bytes = [0u8; 4];
        let flags = match self.reader.read_exact(&mut bytes) {
            Ok(()) => u32::from_ne_bytes(bytes),
            _ => 0,
        };
        if let Some(helper) = self.scope_helper.take() {
            self.scope = helper.join().ok().flatten();
        }
        let scope = self.scope.as_ref();
        let held = |joined: bool, chosen: Mechanism, by_scope: bool| {
            if joined {
                chosen
            } else if by_scope {
                Mechanism::SystemdScope
            } else {
                Mechanism::Rlimit
            }
        };
        Confirmed {
            network_namespace: flags & NET_ISOLATED != 0,
            sockets_filtered: flags & SOCKETS_FILTERED != 0,
            every_family: self.no_network,
            file_system_isolated: flags & FS_ISOLATED != 0,
            mounts_read_only: flags & MOUNTS_READ_ONLY != 0,
            metadata_filtered: flags & METADATA_FILTERED != 0,
            capabilities_none: flags & CAPS_NONE != 0,
            bounding_emptied: flags & CAPS_BOUNDING_EMPTY != 0,
            descriptors_closed: flags & FDS_CLOEXEC != 0,
            pid_namespace: flags & PID_NAMESPACE != 0,
            inputs_bound: flags & INPUTS_BOUND != 0,
            inputs_linked: flags & INPUTS_LINKED != 0,
            memory: held(
                flags & MEMORY_JOINED != 0,
                self.choice.memory,
                scope.is_some_and(|s| s.memory),
            ),
            processes: held(
                flags & PIDS_JOINED != 0,
                self.choice.processes,
                scope.is_some_and(|s| s.pids),
            ),
        }
    }

    /// Samples the scope's counters while the run goes on (systemd removes
    /// its cgroup once the run's processes are gone).
    pub fn observe(&mut self) {
        if let Some(s) = &self.scope {
            let oom = s.group.read_counter("memory.events", Some("oom_kill"));
            let max = s.group.read_counter("pids.events", Some("max"));
            self.scope_oom_kills = self.scope_oom_kills.max(oom);
            self.scope_pids_max = self.scope_pids_max.max(max);
        }
    }

    /// Whether the kernel killed a process of the run at the memory limit.
    pub fn oom_killed(&mut self) -> bool {
        self.observe();
        let v2 = self
            .v2
            .as_ref()
            .map_or(0, |g| g.read_counter("memory.events", Some("oom_kill")));
        let v1 = self.v1_memory.as_ref().map_or(0, |g| {
            g.read_counter("memory.oom_control", Some("oom_kill"))
        });
        v2 + v1 + self.scope_oom_kills > 0
    }

    /// Whether a cgroup refused a new process of the run.
    pub fn pids_refused(&mut self) -> bool {
        self.observe();
        [&self.v2, &self.v1_pids]
            .into_iter()
            .flatten()
            .map(|g| g.read_counter("pids.events", Some("max")))
            .sum::<u64>()
            + self.scope_pids_max
            > 0
    }

    /// Kills the process group `pgid` and everything in the cgroups, until
    /// no live process is left in the group (its leader, unreaped, keeps
    /// the id from being reused meanwhile).
    pub fn kill_tree(&self, pgid: i32) {
        for _ in 0..100 {
            kill(-pgid, libc::SIGKILL);
            if !group_alive(pgid) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.kill_cgroups();
    }

    /// Kills everything in the run's cgroups (by pid: safe after the script
    /// was reaped, unlike its process group's id).
    pub fn kill_cgroups(&self) {
        let scope = self.scope.as_ref().map(|s| &s.group);
        for g in [&self.v2, &self.v1_memory, &self.v1_pids]
            .into_iter()
            .flatten()
            .chain(scope)
        {
            g.kill_all();
        }
    }
}

/// Whether the current user is root (RLIMIT_NPROC does not bind root).
pub fn is_root() -> bool {
    euid() == 0
}

/// The effective user id (the user a script runs as).
pub fn euid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// Whether this process's children can make a mount namespace of their
/// own (directly, or inside a user namespace) and make its mounts private:
/// where they can, inputs are bound read-only instead of linked or copied.
/// Probed once, by a forked child that only makes system calls.
pub fn mount_namespace_available() -> bool {
    static PROBED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PROBED.get_or_init(|| {
        // SAFETY: the forked child of this (possibly multi-threaded)
        // process makes only async-signal-safe system calls and `_exit`s;
        // the parent waits for it on a stack status word.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let entered = confine::enter_namespaces(false);
                let private = entered.mounts
                    && libc::mount(
                        std::ptr::null(),
                        c"/".as_ptr(),
                        std::ptr::null(),
                        libc::MS_REC | libc::MS_PRIVATE,
                        std::ptr::null(),
                    ) == 0;
                libc::_exit(i32::from(!private));
            }
            if pid < 0 {
                return false;
            }
            let mut status = 0;
            loop {
                let r = libc::waitpid(pid, &mut status, 0);
                if r == pid {
                    break;
                }
                if r < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    return false;
                }
            }
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
        }
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Where the stand-in for systemd moves the child: a cgroup v2 without
    /// controllers on this machine's hybrid mount, when it is writable.
    const FAKE_SCOPE_ROOT: &str = "/sys/fs/cgroup/unified";

    /// Stands in for systemd: moves the waiting child from outside, as the
    /// user manager does, and says the scope holds memory, not processes.
    fn fake_systemd(_: &ScopeRequest, pid: u32) -> Option<Scope> {
        let group = Cgroup::create(Path::new(FAKE_SCOPE_ROOT), &[], &[]);
        let dir = match group {
            Some(g) if std::fs::write(g.dir.join("cgroup.procs"), pid.to_string()).is_ok() => {
                let dir = g.dir.clone();
                std::mem::forget(g); // removed by the test, once empty
                dir
            }
            _ => Path::new("/nonexistent").to_path_buf(),
        };
        Some(Scope {
            group: Cgroup::borrowed(dir),
            memory: true,
            pids: false,
        })
    }

    fn refusing_systemd(_: &ScopeRequest, _: u32) -> Option<Scope> {
        None
    }

    /// Runs `bash` under a scope from `starter`; its output: its cgroup v2
    /// path, then its address-space and process rlimits.
    fn run_scoped(starter: ScopeStarter) -> (Confirmed, String, Option<std::path::PathBuf>) {
        let limits = Limits {
            memory_bytes: 512 << 20,
            max_processes: 48,
            no_network: false,
            ..Limits::default()
        };
        let choice = Choice {
            memory: Mechanism::SystemdScope,
            processes: Mechanism::SystemdScope,
        };
        let mut plan = crate::isolation::plan(Path::new("/nonexistent"), &[], &[], false, false);
        plan.writable = None;
        let mut cmd = Command::new("bash");
        cmd.args(["-c", "grep '^0::' /proc/self/cgroup; ulimit -v; ulimit -u"])
            .stdout(std::process::Stdio::piped());
        let mut prepared = prepare_with(
            &mut cmd,
            &limits,
            plan,
            false,
            choice,
            Groups::default(),
            starter,
        )
        .expect("prepare");
        let child = cmd.spawn().expect("spawn");
        drop(cmd);
        let confirmed = prepared.confirmed();
        let out = child.wait_with_output().expect("wait");
        let dir = prepared.scope.as_ref().map(|s| s.group.dir.clone());
        (
            confirmed,
            String::from_utf8_lossy(&out.stdout).into_owned(),
            dir,
        )
    }

    #[test]
    fn a_child_waits_for_its_scope_and_keeps_only_the_rlimits_it_lacks() {
        let (confirmed, out, dir) = run_scoped(fake_systemd);
        let dir = dir.expect("scope");
        // The child is gone: its scope is empty and removed first.
        let moved = std::fs::remove_dir(&dir).is_ok();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(confirmed.memory, Mechanism::SystemdScope, "{out}");
        assert_eq!(confirmed.processes, Mechanism::Rlimit, "{out}");
        // Memory held by the scope: no RLIMIT_AS; processes: RLIMIT_NPROC.
        assert_eq!(lines[lines.len() - 2], "unlimited", "{out}");
        assert_eq!(lines[lines.len() - 1], "48", "{out}");
        if moved {
            // It was moved before it ran a single instruction of `bash`.
            let name = dir
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            assert_eq!(lines[0], format!("0::/{name}"), "{out}");
        }
    }

    #[test]
    fn a_child_whose_scope_was_refused_runs_under_rlimits() {
        let (confirmed, out, dir) = run_scoped(refusing_systemd);
        assert!(dir.is_none());
        assert_eq!(confirmed.memory, Mechanism::Rlimit, "{out}");
        assert_eq!(confirmed.processes, Mechanism::Rlimit, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[lines.len() - 2], (512 << 10).to_string(), "{out}");
        assert_eq!(lines[lines.len() - 1], "48", "{out}");
    }
}
