//! What a script may touch (Linux): a Landlock ruleset — its working folder
//! read-write; the Python runtime, the system libraries and a few device
//! files read-only; nothing else, so no home folder, no Maskflow data folder,
//! no other upload and no `/proc` of any process (but the few files that
//! tell the script its own limits, which the child adds in
//! `confine::allow_own_limits`) — and a seccomp filter that
//! refuses `socket(2)` of every family (so neither the network nor a
//! pathname or abstract UNIX socket — an ssh-agent, a D-Bus bus, X11,
//! `docker.sock` — is reachable; `socketpair(2)` stays allowed for
//! asyncio and multiprocessing), `io_uring` (which could open sockets past
//! it) and `setsid`/`setpgid` (so every process of a run stays in the
//! process group the runner kills). All are built here, in the parent
//! (they allocate), and applied by `sandbox`'s `pre_exec` hook in the child
//! before `exec`.
//!
//! Metadata outside the working folder (`chmod`, `chown`, `utime`,
//! `setxattr`, which Landlock does not mediate) is protected by a mount
//! namespace in which every mount is read-only but the working folder and
//! the shared folders (`sandbox`): a change outside fails with `EROFS`,
//! one inside works as on any folder, so `shutil.copy2` into `outputs/`
//! keeps its modes and times. Where no mount namespace can be made, the
//! [`metadata_filter`] makes those calls succeed without doing anything
//! (`SECCOMP_RET_ERRNO` with 0): a refusal (`EPERM`) cannot tell inside
//! from outside and would break `shutil.copy`'s `chmod` and `copy2`'s
//! `utime` into `outputs/`, which are ordinary; a no-op only loses the
//! copied mode and times.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The newest Landlock ABI whose rights this module asks for (best effort
/// beyond ABI 1, which is required).
const ABI_WANTED: ABI = ABI::V6;

/// System folders a Python interpreter and its libraries read (shared
/// libraries, the dynamic loader, time zones). Folders that do not exist are
/// skipped. `/etc` is limited to files without secrets.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/fonts",
    "/etc/matplotlibrc",
    "/sys/devices/system/cpu",
    // What native libraries read to size their memory use: jemalloc
    // (polars' allocator) the huge-page and overcommit settings, polars the
    // machine's memory. Polars aggregating a 1 GB CSV (issue 29): without
    // the huge-page setting 1.25–1.38× the wall time it took outside the
    // sandbox; with it but without `meminfo` 1.3× the CPU time, all of it
    // system time (page faults). Machine-wide figures, world-readable, no
    // user data; the rest of /proc stays closed.
    "/proc/sys/vm/overcommit_memory",
    "/proc/meminfo",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
];

/// Device files a script may also write to.
const DEVICE_WRITE: &[&str] = &["/dev/null"];

/// The isolation prepared for one run.
#[derive(Debug)]
pub struct Plan {
    /// The Landlock ruleset to apply, or why there is none.
    pub landlock: Result<RulesetCreated, String>,
    /// The socket and process-group filter to apply, or why there is none.
    pub seccomp: Result<BpfProgram, String>,
    /// The metadata filter applied where no mount namespace could be made.
    pub metadata: Result<BpfProgram, String>,
    /// The folders left writable in the run's mount namespace; `None`: no
    /// mount namespace (a test's switch).
    pub writable: Option<crate::confine::Writable>,
    /// The input files the child binds read-only into the run folder.
    pub inputs: Option<crate::confine::Inputs>,
}

/// Builds the isolation of a run in `work` (read-write, with `shared`),
/// whose interpreter reads `runtime` (its prefixes and `sys.path`).
/// `landlock` false behaves as on a kernel without Landlock (the runner's
/// test-only switch); `no_network` refuses every socket family, else only
/// `AF_UNIX`.
pub fn plan(
    work: &Path,
    shared: &[PathBuf],
    runtime: &[PathBuf],
    landlock: bool,
    no_network: bool,
) -> Plan {
    Plan {
        landlock: if landlock {
            ruleset(work, shared, runtime)
        } else {
            Err("Landlock is not available (simulated old kernel)".into())
        },
        seccomp: socket_filter(no_network),
        metadata: metadata_filter(),
        writable: Some(crate::confine::Writable::new(work, shared)),
        inputs: None,
    }
}

/// Lets the script read each of `files` (the file itself, not its folder):
/// the rule that holds an input read in place through a symbolic link.
pub fn read_in_place(plan: &mut Plan, files: &[PathBuf]) {
    if files.is_empty() {
        return;
    }
    let landlock = std::mem::replace(&mut plan.landlock, Err(String::new()));
    plan.landlock = landlock.and_then(|r| {
        r.add_rules(path_beneath_rules(files, AccessFs::from_read(ABI_WANTED)))
            .map_err(|e| e.to_string())
    });
}

/// Whether this kernel's Landlock holds truncation (ABI 3, Linux 6.2):
/// without it `truncate(2)` by path is not mediated, so a file the script
/// may only read could still be emptied, and inputs are not read in place
/// through a Landlock rule alone.
pub fn truncate_held() -> bool {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .and_then(|r| r.create())
        .is_ok()
}

fn ruleset(work: &Path, shared: &[PathBuf], runtime: &[PathBuf]) -> Result<RulesetCreated, String> {
    let err = |e: landlock::RulesetError| e.to_string();
    let read_only: Vec<PathBuf> = SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(runtime.iter().cloned())
        .collect();
    Ruleset::default()
        // Without ABI 1 there is no file-system isolation at all: refuse.
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .map_err(err)?
        // Newer rights (rename across folders, truncate, TCP, scoping of
        // abstract sockets and signals) where the kernel has them.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_WANTED))
        .map_err(err)?
        .handle_access(AccessNet::from_all(ABI_WANTED))
        .map_err(err)?
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(err)?
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(
            &read_only,
            AccessFs::from_read(ABI_WANTED),
        ))
        .map_err(err)?
        .add_rules(path_beneath_rules(
            DEVICE_WRITE,
            AccessFs::from_all(ABI_WANTED),
        ))
        .map_err(err)?
        .add_rules(path_beneath_rules(
            std::iter::once(work).chain(shared.iter().map(PathBuf::as_path)),
            AccessFs::from_all(ABI_WANTED),
        ))
        .map_err(err)
}

/// A filter that makes `socket(2)` (of every family when `no_network`,
/// else of `AF_UNIX`), `io_uring_setup(2)`, `setsid(2)` and `setpgid(2)`
/// fail with `EPERM`.
fn socket_filter(no_network: bool) -> Result<BpfProgram, String> {
    let e = |e: seccompiler::BackendError| e.to_string();
    let socket = if no_network {
        vec![]
    } else {
        let unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )
        .map_err(e)?;
        vec![SeccompRule::new(vec![unix]).map_err(e)?]
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = [
        libc::SYS_io_uring_setup,
        libc::SYS_setsid,
        libc::SYS_setpgid,
    ]
    .into_iter()
    .map(|c| (c, vec![]))
    .collect();
    rules.insert(libc::SYS_socket, socket);
    filter(rules, libc::EPERM as u32)
}

/// `setxattrat(2)` and `removexattrat(2)` (Linux 6.13; the same number on
/// every architecture since the syscall tables were unified).
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
/// `fchmodat2(2)` (Linux 6.6).
const SYS_FCHMODAT2: i64 = 452;

/// The calls that change a file's metadata.
fn metadata_calls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        SYS_FCHMODAT2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        SYS_SETXATTRAT,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    calls
}

/// Where no mount namespace holds metadata: a filter under which every
/// metadata call succeeds and changes nothing (see the module's doc).
pub fn metadata_filter() -> Result<BpfProgram, String> {
    filter(
        metadata_calls().into_iter().map(|c| (c, vec![])).collect(),
        0,
    )
}

/// A filter that answers each call of `rules` (when one of its rules
/// matches; no rule: always) with `errno` (0: success) and allows
/// everything else.
fn filter(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: u32) -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

/// The sentence of a refused run: what is missing and how to enable it.
pub fn refusal(
    file_system: Option<&str>,
    network: Option<&str>,
    side_doors: Option<&str>,
) -> String {
    let mut missing = Vec::new();
    if let Some(why) = file_system {
        missing.push(format!(
            "file-system isolation ({why}; it needs Linux 5.13 or newer with Landlock enabled — \
             check that `landlock` is listed in /sys/kernel/security/lsm, or add `lsm=landlock,…` \
             to the kernel command line)"
        ));
    }
    if let Some(why) = network {
        missing.push(format!(
            "network isolation ({why}; it needs seccomp or network namespaces, which every \
             current Linux kernel has)"
        ));
    }
    if let Some(why) = side_doors {
        missing.push(format!(
            "isolation from the machine's UNIX sockets, file metadata and processes ({why}; it \
             needs seccomp, which every current Linux kernel has)"
        ));
    }
    format!(
        "Maskflow did not run the script: it could not establish {} on this machine. \
         Generated scripts are untrusted code, so they only run isolated. To run them without \
         isolation anyway, turn on \"Run scripts without isolation\" in Settings (on this \
         machine only; every run then shows it).",
        missing.join(" and ")
    )
}
