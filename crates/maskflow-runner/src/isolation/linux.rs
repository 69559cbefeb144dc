//! What a script may touch (Linux): a Landlock ruleset — its working folder
//! read-write; the Python runtime, the system libraries and a few device
//! files read-only; nothing else, so no home folder, no Maskflow data folder,
//! no other upload and no `/proc` of any process — and a seccomp filter that
//! refuses every socket family but `AF_UNIX`, so "no network" holds even
//! where no network namespace can be made. Both are built here, in the
//! parent (they allocate), and applied by `sandbox`'s `pre_exec` hook in the
//! child before `exec`.

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
    /// The socket filter to apply, or why there is none.
    pub seccomp: Result<BpfProgram, String>,
}

/// Builds the isolation of a run in `work` (read-write, with `shared`),
/// whose interpreter reads `runtime` (its prefixes and `sys.path`).
/// `landlock` false behaves as on a kernel without Landlock (the runner's
/// test-only switch).
pub fn plan(work: &Path, shared: &[PathBuf], runtime: &[PathBuf], landlock: bool) -> Plan {
    Plan {
        landlock: if landlock {
            ruleset(work, shared, runtime)
        } else {
            Err("Landlock is not available (simulated old kernel)".into())
        },
        seccomp: socket_filter(),
    }
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

/// A filter that makes `socket(2)` fail with `EPERM` for every family but
/// `AF_UNIX`, and refuses `io_uring` (which could open sockets past it).
fn socket_filter() -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(|e| e.to_string())?;
    let rules = BTreeMap::from([
        (
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(|e| e.to_string())?],
        ),
        (libc::SYS_io_uring_setup, vec![]),
    ]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

/// The sentence of a refused run: what is missing and how to enable it.
pub fn refusal(file_system: Option<&str>, network: Option<&str>) -> String {
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
    format!(
        "Maskflow did not run the script: it could not establish {} on this machine. \
         Generated scripts are untrusted code, so they only run isolated. To run them without \
         isolation anyway, turn on \"Run scripts without isolation\" in Settings (on this \
         machine only; every run then shows it).",
        missing.join(" and ")
    )
}
