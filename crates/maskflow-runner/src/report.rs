//! The limits report of a run on Linux: which mechanism held each limit and
//! each layer of the sandbox (file system, network, UNIX sockets, metadata,
//! capabilities, the process tree, descriptors, disk), as the child
//! confirmed it before `exec`.

use super::cgroup::Mechanism;
use super::sandbox::{Confirmed, is_root};
use super::{LimitState, Limits, mib};

/// Every limit but the wall clock, with what enforced it (or why nothing did).
pub fn linux(limits: &Limits, confirmed: &Confirmed) -> Vec<LimitState> {
    const NOT_ISOLATED: &str = "NOT ISOLATED: run without isolation, as allowed in Settings";
    let unbound = is_root() && confirmed.processes == Mechanism::Rlimit;
    let mut report = vec![
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
            mechanism: Some(
                "RLIMIT_FSIZE and a check of the whole run folder (outputs/, tmp/, home/, anything)"
                    .into(),
            ),
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
    ];
    report.extend(side_doors(confirmed));
    report
}

/// The side doors of issue 26: UNIX sockets, metadata, capabilities, the
/// process tree and inherited descriptors.
fn side_doors(c: &Confirmed) -> Vec<LimitState> {
    let layer = |name: &str, limit: &str, mechanism: Option<String>, missing: &str| LimitState {
        name: name.into(),
        limit: limit.into(),
        note: mechanism.is_none().then(|| missing.to_owned()),
        mechanism,
    };
    let caps = match (c.capabilities_none, c.bounding_emptied) {
        (true, true) => Some("all dropped (bounding set emptied, root's privileges off)".into()),
        (true, false) => Some("none held (an ordinary user; no_new_privs)".into()),
        _ => None,
    };
    let metadata = if c.mounts_read_only {
        Some("a mount namespace: every mount read-only but the run folder".into())
    } else if c.metadata_filtered {
        Some("seccomp (chmod, chown, utime, setxattr succeed without effect)".into())
    } else {
        None
    };
    vec![
        layer(
            "unix_sockets",
            "none (socketpair only)",
            c.sockets_filtered.then(|| {
                "seccomp (socket(2) of AF_UNIX refused) and Landlock's abstract-socket scope".into()
            }),
            "NOT HELD: the socket filter could not be applied",
        ),
        layer(
            "metadata",
            "no change outside the run folder",
            metadata,
            "NOT HELD: no mount namespace and no filter",
        ),
        layer(
            "capabilities",
            "none",
            caps,
            "NOT HELD: capabilities could not be dropped",
        ),
        layer(
            "process_tree",
            "every process ends with the run",
            process_tree(c),
            "NOT HELD: a process could leave the run's process group",
        ),
        layer(
            "descriptors",
            "stdin, stdout, stderr only",
            c.descriptors_closed
                .then(|| "every inherited descriptor past stderr closed at exec".into()),
            "NOT HELD: inherited descriptors could not be closed",
        ),
    ]
}

/// What ends every process of the run with it.
fn process_tree(c: &Confirmed) -> Option<String> {
    let group =
        "setsid/setpgid refused (seccomp), the process group killed before the script is reaped";
    match (c.pid_namespace, c.sockets_filtered) {
        (true, true) => Some(format!(
            "a PID namespace (its processes end with the script) and {group}"
        )),
        (true, false) => Some("a PID namespace (its processes end with the script)".into()),
        (false, true) => Some(group.into()),
        (false, false) => None,
    }
}

fn network_mechanism(c: &Confirmed) -> Option<String> {
    match (c.sockets_filtered && c.every_family, c.network_namespace) {
        (true, true) => {
            Some("seccomp (no socket of any family) and an own network namespace".into())
        }
        (true, false) => Some("seccomp (no socket of any family)".into()),
        (false, true) => Some("own network namespace".into()),
        (false, false) => None,
    }
}
