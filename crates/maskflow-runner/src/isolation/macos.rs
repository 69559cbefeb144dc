//! What a script may touch (macOS): a Seatbelt profile run through
//! `/usr/bin/sandbox-exec` — deny by default; read the system, the Python
//! runtime and the working folder; write only the working folder (and
//! `/dev/null`); no network — plus resource limits. Paths reach the profile
//! as `-D` parameters, never spliced into its text. Written from Apple's
//! `sandbox-exec(1)` and the SBPL conventions; it cannot be built or run on
//! the Linux machines Maskflow is tested on.
#![allow(unsafe_code)]

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::seatbelt;
use crate::{LimitState, Limits, mib};

/// The program that applies a Seatbelt profile, then runs the command.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The `sandbox-exec` arguments that run `program` under the profile, or
/// `None` where `sandbox-exec` is missing (the run is then not isolated).
pub fn seatbelt_args(
    program: &Path,
    work: &Path,
    shared: &[PathBuf],
    runtime: &[PathBuf],
    no_network: bool,
) -> Option<Vec<OsString>> {
    if !Path::new(SANDBOX_EXEC).is_file() {
        return None;
    }
    // Seatbelt matches resolved paths (/tmp is /private/tmp).
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let read: Vec<PathBuf> = seatbelt::SYSTEM_READ
        .iter()
        .map(PathBuf::from)
        .chain(runtime.iter().cloned())
        .chain(program.parent().map(Path::to_path_buf))
        .filter(|p| p.exists())
        .map(|p| real(&p))
        .collect();
    let write: Vec<PathBuf> = std::iter::once(work.to_path_buf())
        .chain(shared.iter().cloned())
        .map(|p| real(&p))
        .collect();
    Some(seatbelt::args(program, &read, &write, no_network))
}

/// Sets the resource limits in the child before `exec` and puts it in a
/// process group of its own (killed as one at the time-out).
pub fn set_limits(cmd: &mut Command, limits: &Limits) {
    let rlimits: [(libc::c_int, u64); 6] = [
        (libc::RLIMIT_CPU, limits.cpu_seconds),
        (libc::RLIMIT_FSIZE, limits.output_bytes),
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_AS, limits.memory_bytes),
        (libc::RLIMIT_DATA, limits.memory_bytes),
        (libc::RLIMIT_NPROC, limits.max_processes),
    ];
    // SAFETY: setrlimit(2) on a stack value is async-signal-safe; nothing
    // is allocated in the hook.
    unsafe {
        cmd.pre_exec(move || {
            for (resource, value) in rlimits {
                let lim = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: if resource == libc::RLIMIT_CPU {
                        value + 1
                    } else {
                        value
                    },
                };
                libc::setrlimit(resource, &lim);
            }
            Ok(())
        });
    }
    cmd.process_group(0);
}

/// The sentence of a refused run on macOS.
pub fn refusal() -> String {
    format!(
        "Maskflow did not run the script: {SANDBOX_EXEC} (Seatbelt), which isolates scripts on \
         macOS, is missing. Generated scripts are untrusted code, so they only run isolated. To \
         run them without isolation anyway, turn on \"Run scripts without isolation\" in \
         Settings (on this machine only; every run then shows it)."
    )
}

/// The limits report of a run on macOS; `seatbelt` says whether the profile
/// was applied.
pub fn report(limits: &Limits, seatbelt: bool, root: bool) -> Vec<LimitState> {
    let state =
        |name: &str, limit: String, mechanism: Option<&str>, note: Option<&str>| LimitState {
            name: name.into(),
            limit,
            mechanism: mechanism.map(str::to_owned),
            note: note.map(str::to_owned),
        };
    const NOT_ISOLATED: &str = "NOT ISOLATED: run without isolation, as allowed in Settings";
    vec![
        state(
            "file_system",
            "its working folder, its inputs and the Python runtime".into(),
            seatbelt.then_some("Seatbelt (read-write: the working folder; read-only: the runtime)"),
            (!seatbelt).then_some(NOT_ISOLATED),
        ),
        state(
            "memory",
            mib(limits.memory_bytes),
            Some("rlimit (RLIMIT_AS, RLIMIT_DATA)"),
            None,
        ),
        state(
            "cpu",
            format!("{} s", limits.cpu_seconds),
            Some("RLIMIT_CPU"),
            None,
        ),
        state(
            "processes",
            limits.max_processes.to_string(),
            (!root).then_some("rlimit (RLIMIT_NPROC, counts all of the user's processes)"),
            root.then_some("RLIMIT_NPROC does not bind root"),
        ),
        state(
            "output",
            mib(limits.output_bytes),
            Some("RLIMIT_FSIZE and a check of the whole run folder"),
            None,
        ),
        state(
            "network",
            if limits.no_network { "none" } else { "allowed" }.into(),
            (seatbelt && limits.no_network).then_some("Seatbelt (no network)"),
            (!seatbelt && limits.no_network).then_some(NOT_ISOLATED),
        ),
    ]
}

/// Whether the current user is root (RLIMIT_NPROC does not bind root).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}
