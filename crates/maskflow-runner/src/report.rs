//! The limits report of a run on Linux: which mechanism held each limit,
//! as the child confirmed it before `exec`.

use super::cgroup::Mechanism;
use super::sandbox::{Confirmed, is_root};
use super::{LimitState, Limits, mib};

/// Every limit but the wall clock, with what enforced it (or why nothing did).
pub fn linux(limits: &Limits, confirmed: &Confirmed) -> Vec<LimitState> {
    const NOT_ISOLATED: &str = "NOT ISOLATED: run without isolation, as allowed in Settings";
    let unbound = is_root() && confirmed.processes == Mechanism::Rlimit;
    vec![
        LimitState {
            name: "file_system".into(),
            limit: "its working folder, its inputs and the Python runtime".into(),
            mechanism: confirmed.file_system_isolated.then(|| {
                "Landlock (read-write: the working folder; read-only: the runtime)".to_owned()
            }),
            note: (!confirmed.file_system_isolated).then(|| NOT_ISOLATED.to_owned()),
        },
        LimitState {
            name: "memory".into(),
            limit: mib(limits.memory_bytes),
            mechanism: Some(confirmed.memory.memory_label().to_owned()),
            note: None,
        },
        LimitState {
            name: "cpu".into(),
            limit: format!("{} s", limits.cpu_seconds),
            mechanism: Some("RLIMIT_CPU".into()),
            note: None,
        },
        LimitState {
            name: "processes".into(),
            limit: limits.max_processes.to_string(),
            mechanism: (!unbound).then(|| confirmed.processes.processes_label().to_owned()),
            note: unbound.then(|| {
                "no writable pids cgroup or user systemd, and RLIMIT_NPROC does not bind root"
                    .to_owned()
            }),
        },
        LimitState {
            name: "output".into(),
            limit: mib(limits.output_bytes),
            mechanism: Some("RLIMIT_FSIZE and a check of outputs/".into()),
            note: None,
        },
        LimitState {
            name: "network".into(),
            limit: if limits.no_network { "none" } else { "allowed" }.into(),
            mechanism: network_mechanism(confirmed),
            note: (limits.no_network && !confirmed.network_isolated()).then(|| {
                "NOT ISOLATED: run without network isolation, as allowed in Settings".to_owned()
            }),
        },
    ]
}

fn network_mechanism(c: &Confirmed) -> Option<String> {
    match (c.sockets_filtered, c.network_namespace) {
        (true, true) => Some("seccomp (only AF_UNIX sockets) and an own network namespace".into()),
        (true, false) => Some("seccomp (only AF_UNIX sockets)".into()),
        (false, true) => Some("own network namespace".into()),
        (false, false) => None,
    }
}
