//! Memory and process limits on Linux, and which mechanism holds them: a
//! per-run cgroup v2 (where `/sys/fs/cgroup` is a writable cgroup2 mount,
//! i.e. as root), a per-run cgroup v1 (`memory`, `pids` hierarchies, as
//! root on older systems), a transient scope of the user's own systemd
//! (cgroup v2 delegated to the user: how a user who is not root gets real
//! limits), else resource limits (`RLIMIT_AS`, `RLIMIT_NPROC`). Unlike file
//! and network isolation these fail soft: a missing mechanism falls back to
//! the next, and the run's limits report names the one that held.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::signal::kill;

/// The cgroup v2 mount the runner uses (as root).
const V2_ROOT: &str = "/sys/fs/cgroup";
/// The cgroup v1 hierarchies the runner uses (as root).
const V1_PIDS_ROOT: &str = "/sys/fs/cgroup/pids";
const V1_MEMORY_ROOT: &str = "/sys/fs/cgroup/memory";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What can hold a run's memory or its processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup v2 the runner made (`memory.max`, `pids.max`).
    CgroupV2,
    /// A cgroup v1 the runner made (`memory`, `pids` hierarchies).
    CgroupV1,
    /// A transient scope of the user's systemd (`MemoryMax`, `TasksMax`).
    SystemdScope,
    /// Resource limits of the process (`RLIMIT_AS`, `RLIMIT_NPROC`).
    Rlimit,
}

impl Mechanism {
    /// How the limits report names it for memory.
    pub fn memory_label(self) -> &'static str {
        match self {
            Mechanism::CgroupV2 => "cgroup v2 (memory.max)",
            Mechanism::CgroupV1 => "cgroup v1 memory",
            Mechanism::SystemdScope => "systemd scope (cgroup v2, MemoryMax)",
            Mechanism::Rlimit => "rlimit (RLIMIT_AS)",
        }
    }

    /// How the limits report names it for processes.
    pub fn processes_label(self) -> &'static str {
        match self {
            Mechanism::CgroupV2 => "cgroup v2 (pids.max)",
            Mechanism::CgroupV1 => "cgroup v1 pids",
            Mechanism::SystemdScope => "systemd scope (cgroup v2, TasksMax)",
            Mechanism::Rlimit => "rlimit (RLIMIT_NPROC, counts all of the user's processes)",
        }
    }
}

/// Which cgroup controllers a mechanism offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Controllers {
    /// Memory (`memory.max` / `memory.limit_in_bytes`).
    pub memory: bool,
    /// Processes (`pids.max`).
    pub pids: bool,
}

/// What this machine offers for one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offer {
    /// A cgroup v2 the runner could make.
    pub v2: Controllers,
    /// cgroup v1 groups the runner could make.
    pub v1: Controllers,
    /// Whether the user's systemd answers on a cgroup v2 machine.
    pub systemd_scope: bool,
}

/// The mechanism chosen for each limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// For memory.
    pub memory: Mechanism,
    /// For processes.
    pub processes: Mechanism,
}

/// Chooses, per limit: a cgroup of the runner's own (v2, then v1: no other
/// process involved), else a systemd scope, else rlimits.
pub fn choose(offer: &Offer) -> Choice {
    let pick = |v2: bool, v1: bool| {
        if v2 {
            Mechanism::CgroupV2
        } else if v1 {
            Mechanism::CgroupV1
        } else if offer.systemd_scope {
            Mechanism::SystemdScope
        } else {
            Mechanism::Rlimit
        }
    };
    Choice {
        memory: pick(offer.v2.memory, offer.v1.memory),
        processes: pick(offer.v2.pids, offer.v1.pids),
    }
}

/// One cgroup of a run: made by the runner (removed on drop), or the
/// scope systemd made (systemd removes it).
#[derive(Debug)]
pub struct Cgroup {
    /// Its folder.
    pub dir: PathBuf,
    /// Whether the runner made it (and removes it).
    owned: bool,
}

impl Cgroup {
    /// Makes `root/maskflow-<pid>-<n>` and writes `settings` into it; a
    /// setting whose file is missing or refuses the value fails the whole
    /// group, except those listed in `optional`.
    pub fn create(root: &Path, settings: &[(&str, String)], optional: &[&str]) -> Option<Cgroup> {
        if !root.join("cgroup.procs").exists() {
            return None;
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = root.join(format!("maskflow-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let group = Cgroup { dir, owned: true };
        for (file, value) in settings {
            if std::fs::write(group.dir.join(file), value).is_err() && !optional.contains(file) {
                return None; // dropped: removed
            }
        }
        Some(group)
    }

    /// A cgroup someone else made and removes (a systemd scope).
    pub fn borrowed(dir: PathBuf) -> Cgroup {
        Cgroup { dir, owned: false }
    }

    /// Its `cgroup.procs`, for the child to join by writing `0` into it.
    pub fn procs_file(&self) -> Option<std::ffi::CString> {
        std::ffi::CString::new(
            self.dir
                .join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .ok()
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
    /// (`pids.events`, `memory.events`, `memory.oom_control`) the value of
    /// `key`. 0 when unreadable.
    pub fn read_counter(&self, file: &str, key: Option<&str>) -> u64 {
        let text = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        counter(&text, key)
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
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if self.owned {
            self.kill_all();
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// The value of `key` in a counter file's text (or the whole text as a
/// number when `key` is `None`); 0 when absent.
pub fn counter(text: &str, key: Option<&str>) -> u64 {
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

/// Whether `mountinfo` (the text of `/proc/self/mountinfo`) mounts a
/// cgroup2 file system at `point`.
pub fn is_cgroup2_mount(mountinfo: &str, point: &str) -> bool {
    mountinfo.lines().any(|line| {
        let mut fields = line.split(' ');
        let mount_point = fields.nth(4);
        // After the optional fields, " - " then the file-system type.
        let fs_type = line.split(" - ").nth(1).and_then(|r| r.split(' ').next());
        mount_point == Some(point) && fs_type == Some("cgroup2")
    })
}

/// The cgroup v2 path of a process from its `/proc/<pid>/cgroup` text
/// (the `0::/path` line).
pub fn v2_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(str::trim)
        .filter(|p| p.starts_with('/'))
}

fn v2_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|info| is_cgroup2_mount(&info, V2_ROOT))
}

/// A cgroup v2 for one run under `/sys/fs/cgroup`, holding memory
/// (`memory.max`, `memory.swap.max` 0 where there is swap accounting) and
/// processes (`pids.max`) where those controllers are available; `None`
/// where it cannot be made (not cgroup v2, not writable: not root).
pub fn create_v2(memory_bytes: u64, max_processes: u64) -> Option<(Cgroup, Controllers)> {
    if !v2_mounted() {
        return None;
    }
    let root = Path::new(V2_ROOT);
    let available = std::fs::read_to_string(root.join("cgroup.controllers")).ok()?;
    let has = |c: &str| available.split_whitespace().any(|a| a == c);
    let wanted: Vec<&str> = ["memory", "pids"].into_iter().filter(|c| has(c)).collect();
    if wanted.is_empty() {
        return None;
    }
    // A child gets a controller's files only when its parent hands that
    // controller down. Fails (and the controller is missing below) where
    // the root holds processes itself (a container's own cgroup).
    let enabled = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|c| !enabled.split_whitespace().any(|e| e == **c))
        .map(|c| format!("+{c}"))
        .collect();
    if !missing.is_empty() {
        let _ = std::fs::write(root.join("cgroup.subtree_control"), missing.join(" "));
    }
    let group = Cgroup::create(root, &[], &[])?;
    let memory = group.dir.join("memory.max").exists()
        && std::fs::write(group.dir.join("memory.max"), memory_bytes.to_string()).is_ok();
    if memory && group.dir.join("memory.swap.max").exists() {
        let _ = std::fs::write(group.dir.join("memory.swap.max"), "0");
    }
    let pids = group.dir.join("pids.max").exists()
        && std::fs::write(group.dir.join("pids.max"), max_processes.to_string()).is_ok();
    (memory || pids).then_some((group, Controllers { memory, pids }))
}

/// A cgroup v1 `memory` group for one run (as root on a v1 or hybrid machine).
pub fn create_v1_memory(memory_bytes: u64) -> Option<Cgroup> {
    Cgroup::create(
        Path::new(V1_MEMORY_ROOT),
        &[
            ("memory.limit_in_bytes", memory_bytes.to_string()),
            ("memory.memsw.limit_in_bytes", memory_bytes.to_string()),
        ],
        &["memory.memsw.limit_in_bytes"],
    )
}

/// A cgroup v1 `pids` group for one run.
pub fn create_v1_pids(max_processes: u64) -> Option<Cgroup> {
    Cgroup::create(
        Path::new(V1_PIDS_ROOT),
        &[("pids.max", max_processes.to_string())],
        &[],
    )
}

/// Whether the user's systemd can give a run a scope: a cgroup v2 machine
/// (elsewhere systemd cannot apply `MemoryMax`), `busctl` and `systemd-run`
/// installed, and the user manager answering. Asked once per process.
pub fn systemd_scope_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        v2_mounted()
            && Command::new("systemd-run")
                .arg("--version")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            && Command::new("busctl")
                .args([
                    "--user",
                    "--timeout=2",
                    "get-property",
                    "org.freedesktop.systemd1",
                    "/org/freedesktop/systemd1",
                    "org.freedesktop.systemd1.Manager",
                    "Version",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    })
}

/// The limits a scope is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeRequest {
    /// The unit's name (`maskflow-run-<pid>-<n>.scope`).
    pub unit: String,
    /// `MemoryMax` (and `MemorySwapMax` 0), when the scope holds memory.
    pub memory_bytes: Option<u64>,
    /// `TasksMax`, when the scope holds processes.
    pub max_processes: Option<u64>,
}

impl ScopeRequest {
    /// A request with a fresh unit name.
    pub fn new(memory_bytes: Option<u64>, max_processes: Option<u64>) -> Self {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        Self {
            unit: format!("maskflow-run-{}-{n}.scope", std::process::id()),
            memory_bytes,
            max_processes,
        }
    }

    /// The `busctl` arguments that ask the user's systemd to start the scope
    /// with `pid` in it: what `systemd-run --user --scope -p MemoryMax=… -p
    /// TasksMax=…` does for itself, done here for a child that is waiting
    /// before `exec` (the sandbox is applied in that child, so `systemd-run`
    /// cannot be the program: it would run inside the sandbox).
    pub fn busctl_args(&self, pid: u32) -> Vec<String> {
        let mut props: Vec<[String; 3]> = vec![
            ["PIDs".into(), "au".into(), format!("1 {pid}")],
            // An empty or failed scope is removed, not kept as "failed".
            [
                "CollectMode".into(),
                "s".into(),
                "inactive-or-failed".into(),
            ],
        ];
        if let Some(bytes) = self.memory_bytes {
            props.push(["MemoryMax".into(), "t".into(), bytes.to_string()]);
            props.push(["MemorySwapMax".into(), "t".into(), "0".into()]);
        }
        if let Some(n) = self.max_processes {
            props.push(["TasksMax".into(), "t".into(), n.to_string()]);
        }
        let mut args: Vec<String> = [
            "--user",
            "--timeout=5",
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "StartTransientUnit",
            "ssa(sv)a(sa(sv))",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        args.push(self.unit.clone());
        args.push("fail".into());
        args.push(props.len().to_string());
        for [name, sig, value] in props {
            args.push(name);
            args.push(sig);
            args.extend(value.split(' ').map(String::from));
        }
        args.push("0".into()); // no auxiliary units
        args
    }
}

/// A scope systemd made for a run, and which limits it was confirmed to hold.
#[derive(Debug)]
pub struct Scope {
    /// Its cgroup.
    pub group: Cgroup,
    /// Its `memory.max` is the run's memory limit.
    pub memory: bool,
    /// Its `pids.max` is the run's process limit.
    pub pids: bool,
}

/// Puts `pid` (a child waiting before `exec`) into a new scope of the user's
/// systemd and checks that the scope's cgroup holds the limits asked for.
/// `None` when systemd refused or the child did not arrive in time.
pub fn start_scope(request: &ScopeRequest, pid: u32) -> Option<Scope> {
    let started = Command::new("busctl")
        .args(request.busctl_args(pid))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !started {
        return None;
    }
    // The job moves the process asynchronously: wait for it to arrive.
    let deadline = Instant::now() + Duration::from_secs(3);
    let suffix = format!("/{}", request.unit);
    let path = loop {
        let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        if let Some(p) = v2_path(&text).filter(|p| p.ends_with(&suffix)) {
            break p.to_owned();
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let group = Cgroup::borrowed(Path::new(V2_ROOT).join(path.trim_start_matches('/')));
    let holds = |file: &str, value: Option<u64>| {
        value.is_some_and(|v| {
            std::fs::read_to_string(group.dir.join(file))
                .is_ok_and(|t| t.trim().parse::<u64>().ok() == Some(v))
        })
    };
    let memory = holds("memory.max", request.memory_bytes);
    let pids = holds("pids.max", request.max_processes);
    Some(Scope {
        group,
        memory,
        pids,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Controllers = Controllers {
        memory: false,
        pids: false,
    };
    const BOTH: Controllers = Controllers {
        memory: true,
        pids: true,
    };

    #[test]
    fn own_cgroups_come_first_then_a_scope_then_rlimits() {
        let choice = |v2, v1, systemd_scope| {
            choose(&Offer {
                v2,
                v1,
                systemd_scope,
            })
        };
        let both = |m| Choice {
            memory: m,
            processes: m,
        };
        assert_eq!(choice(BOTH, BOTH, true), both(Mechanism::CgroupV2));
        assert_eq!(choice(NONE, BOTH, true), both(Mechanism::CgroupV1));
        assert_eq!(choice(NONE, NONE, true), both(Mechanism::SystemdScope));
        assert_eq!(choice(NONE, NONE, false), both(Mechanism::Rlimit));
        // Each limit on its own: a v2 root without the pids controller.
        let memory_only = Controllers {
            memory: true,
            pids: false,
        };
        assert_eq!(
            choice(memory_only, NONE, false),
            Choice {
                memory: Mechanism::CgroupV2,
                processes: Mechanism::Rlimit
            }
        );
        assert_eq!(
            choice(memory_only, NONE, true),
            Choice {
                memory: Mechanism::CgroupV2,
                processes: Mechanism::SystemdScope
            }
        );
    }

    #[test]
    fn labels_name_the_mechanism() {
        assert!(Mechanism::CgroupV2.memory_label().starts_with("cgroup v2"));
        assert!(
            Mechanism::SystemdScope
                .processes_label()
                .starts_with("systemd scope (cgroup v2")
        );
        assert!(Mechanism::Rlimit.memory_label().starts_with("rlimit"));
    }

    #[test]
    fn mountinfo_and_proc_cgroup_are_read() {
        let info = "25 30 0:22 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n\
                    26 30 0:23 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        assert!(is_cgroup2_mount(info, "/sys/fs/cgroup"));
        assert!(!is_cgroup2_mount(info, "/sys/fs/cgroup/memory"));
        let hybrid = "25 30 0:22 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
                      27 25 0:24 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert!(!is_cgroup2_mount(hybrid, "/sys/fs/cgroup"));
        assert_eq!(
            v2_path(
                "4:memory:/x\n0::/user.slice/user-1000.slice/user@1000.service/app.slice/maskflow-run-1-0.scope\n"
            ),
            Some("/user.slice/user-1000.slice/user@1000.service/app.slice/maskflow-run-1-0.scope")
        );
        assert_eq!(v2_path("4:memory:/x\n"), None);
        assert_eq!(counter("low 0\noom 2\noom_kill 1\n", Some("oom_kill")), 1);
        assert_eq!(counter("max 3\n", Some("max")), 3);
        assert_eq!(counter("", Some("max")), 0);
    }

    #[test]
    fn a_scope_is_asked_for_with_the_child_and_the_limits() {
        let request = ScopeRequest {
            unit: "maskflow-run-7-0.scope".into(),
            memory_bytes: Some(256 << 20),
            max_processes: Some(64),
        };
        let args = request.busctl_args(4242).join(" ");
        assert_eq!(
            args,
            "--user --timeout=5 call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
             org.freedesktop.systemd1.Manager StartTransientUnit ssa(sv)a(sa(sv)) \
             maskflow-run-7-0.scope fail 5 PIDs au 1 4242 CollectMode s inactive-or-failed \
             MemoryMax t 268435456 MemorySwapMax t 0 TasksMax t 64 0"
        );
        let pids_only = ScopeRequest {
            memory_bytes: None,
            ..request
        };
        assert!(
            pids_only
                .busctl_args(1)
                .join(" ")
                .contains(" fail 3 PIDs au 1 1 CollectMode s inactive-or-failed TasksMax t 64 0")
        );
    }

    /// The cgroup v2 mechanics for real — make a group, move a child into
    /// it before `exec` as a run does, kill what is in it, remove it — on
    /// a writable cgroup2 mount without controllers (this machine's hybrid
    /// `/sys/fs/cgroup/unified`); skipped where there is none.
    #[test]
    fn a_v2_group_is_joined_before_exec_and_removed() {
        let root = Path::new("/sys/fs/cgroup/unified");
        let mounted = std::fs::read_to_string("/proc/self/mountinfo")
            .is_ok_and(|i| is_cgroup2_mount(&i, "/sys/fs/cgroup/unified"));
        let Some(group) = mounted.then(|| Cgroup::create(root, &[], &[])).flatten() else {
            eprintln!("skipped: no writable cgroup2 mount at {}", root.display());
            return;
        };
        let dir = group.dir.clone();
        let procs = group.procs_file().expect("path");
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        crate::sandbox::join_before_exec(&mut cmd, procs);
        let mut child = cmd.spawn().expect("spawn");
        let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", child.id())).expect("read");
        let name = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert_eq!(v2_path(&cgroup), Some(format!("/{name}").as_str()));
        assert_eq!(group.pids(), vec![i32::try_from(child.id()).expect("pid")]);
        drop(group);
        let status = child.wait().expect("wait");
        assert!(!status.success(), "killed with the group");
        assert!(!dir.exists(), "{} was not removed", dir.display());
    }
}
