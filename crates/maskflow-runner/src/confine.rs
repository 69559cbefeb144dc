//! The child's side of the side doors (Linux), called from `sandbox`'s
//! `pre_exec` hook before Landlock and the filters: a mount namespace in
//! which every mount is read-only but the run's own folders (so no
//! `chmod`, `chown`, `utime` or `setxattr` reaches a file outside them —
//! bubblewrap's approach, with a user namespace where the user is not
//! root), no capabilities (bounding set emptied, root's privileges off),
//! and every inherited descriptor past stderr marked close-on-exec (no
//! socket or file of the server reaches the script). Everything here is
//! async-signal-safe: raw system calls on buffers built in the parent.
#![allow(unsafe_code)]

use std::ffi::CString;

/// `MOUNT_ATTR_RDONLY` and `AT_RECURSIVE` of `mount_setattr(2)`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// Securebits: root gets no capabilities at `exec`, no ambient ones can be
/// raised, both locked (`SECBIT_NOROOT`, `SECBIT_NO_CAP_AMBIENT_RAISE` and
/// their locks).
const SECUREBITS: libc::c_ulong = 0x01 | 0x02 | 0x40 | 0x80;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The folders that stay writable in the run's mount namespace (the
/// working folder first, where the child returns afterwards), prepared in
/// the parent.
#[derive(Debug)]
pub struct Writable {
    folders: Vec<CString>,
}

impl Writable {
    /// `work` and `shared`, as C strings (a path with a NUL byte is left out,
    /// so it stays read-only).
    pub fn new(work: &std::path::Path, shared: &[std::path::PathBuf]) -> Self {
        let c = |p: &std::path::Path| CString::new(p.as_os_str().as_encoded_bytes()).ok();
        Self {
            folders: std::iter::once(work)
                .chain(shared.iter().map(std::path::PathBuf::as_path))
                .filter_map(c)
                .collect(),
        }
    }
}

/// Which namespaces the child entered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Entered {
    /// A network namespace of its own.
    pub network: bool,
    /// A mount namespace of its own.
    pub mounts: bool,
    /// In it, every mount read-only but the run's folders.
    pub read_only: bool,
}

/// Enters the run's namespaces and, given `writable` folders, makes every
/// other mount read-only ([`read_only_but`]); without them (a test's
/// switch), a network namespace alone.
///
/// # Safety
/// Async-signal-safe, as [`enter_namespaces`] and [`read_only_but`].
pub unsafe fn enter(writable: Option<&Writable>, network: bool) -> Entered {
    // SAFETY: only the async-signal-safe calls below.
    unsafe {
        match writable {
            Some(w) => {
                let mut entered = enter_namespaces(network);
                entered.read_only = entered.mounts && read_only_but(w);
                entered
            }
            None => Entered {
                network: network
                    && (libc::unshare(libc::CLONE_NEWNET) == 0
                        || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0),
                mounts: false,
                read_only: false,
            },
        }
    }
}

/// Enters a mount namespace (and a network namespace when `network`):
/// directly where the process may (root), else inside a new user namespace;
/// failing that, a network namespace alone.
///
/// # Safety
/// Async-signal-safe: only `unshare(2)`.
pub unsafe fn enter_namespaces(network: bool) -> Entered {
    let net = if network { libc::CLONE_NEWNET } else { 0 };
    // SAFETY: unshare(2) takes flags and touches no memory.
    unsafe {
        for flags in [
            libc::CLONE_NEWNS | net,
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | net,
        ] {
            if libc::unshare(flags) == 0 {
                return Entered {
                    network,
                    mounts: true,
                    read_only: false,
                };
            }
        }
        let network = network
            && (libc::unshare(libc::CLONE_NEWNET) == 0
                || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0);
        Entered {
            network,
            mounts: false,
            read_only: false,
        }
    }
}

/// In the run's own mount namespace: makes every mount read-only but the
/// `writable` folders (bind-mounted onto themselves), and goes back into
/// the working folder through its new mount. False when any step failed
/// (then the metadata filter stands in).
///
/// # Safety
/// Async-signal-safe: mount(2), mount_setattr(2), chdir(2) on C strings
/// built in the parent.
pub unsafe fn read_only_but(writable: &Writable) -> bool {
    let root = c"/";
    // SAFETY: plain system calls on NUL-terminated strings and a stack
    // struct whose size is passed along.
    unsafe {
        // Nothing done here propagates back to the machine's mounts.
        if libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        for folder in &writable.folders {
            if libc::mount(
                folder.as_ptr(),
                folder.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) != 0
            {
                return false;
            }
        }
        let set = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        if mount_setattr(root.as_ptr(), AT_RECURSIVE, &set) != 0 {
            return false;
        }
        let clear = MountAttr {
            attr_set: 0,
            attr_clr: MOUNT_ATTR_RDONLY,
            propagation: 0,
            userns_fd: 0,
        };
        for folder in &writable.folders {
            if mount_setattr(folder.as_ptr(), 0, &clear) != 0 {
                return false;
            }
        }
        // The working directory was set on the mount below the new one.
        match writable.folders.first() {
            Some(work) => libc::chdir(work.as_ptr()) == 0,
            None => true,
        }
    }
}

/// The input files to bind read-only into the run folder (source, then
/// placeholder), prepared in the parent.
#[derive(Debug, Default)]
pub struct Inputs {
    files: Vec<(CString, CString)>,
    /// Whether a symbolic link (held by a Landlock read rule) may stand in
    /// where binding fails.
    pub or_rule: bool,
}

impl Inputs {
    /// `files` as (the user's file, its placeholder); `None` when a path
    /// holds a NUL byte (nothing can be bound then).
    pub fn new(files: &[(std::path::PathBuf, std::path::PathBuf)], or_rule: bool) -> Option<Self> {
        let c = |p: &std::path::Path| CString::new(p.as_os_str().as_encoded_bytes()).ok();
        let files = files
            .iter()
            .map(|(s, t)| Some((c(s)?, c(t)?)))
            .collect::<Option<Vec<_>>>()?;
        Some(Self { files, or_rule })
    }

    /// Whether there is nothing to bind.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// In the run's read-only mount namespace: binds each input file onto its
/// placeholder and makes that mount read-only (so no write, truncation,
/// `chmod` or `utime` reaches the user's file; a rename or unlink of the
/// mount point fails with `EBUSY`). All or nothing: on any failure the
/// mounts made are detached again and false is returned.
///
/// # Safety
/// Async-signal-safe: mount(2), mount_setattr(2), umount2(2).
pub unsafe fn bind_inputs(inputs: &Inputs) -> bool {
    let read_only = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: system calls on NUL-terminated strings built in the parent
    // and a stack struct.
    unsafe {
        for (i, (source, target)) in inputs.files.iter().enumerate() {
            let bound = libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) == 0;
            if !bound || mount_setattr(target.as_ptr(), 0, &read_only) != 0 {
                let made = if bound { i + 1 } else { i };
                for (_, t) in &inputs.files[..made] {
                    libc::umount2(t.as_ptr(), libc::MNT_DETACH);
                }
                return false;
            }
        }
        true
    }
}

/// Where binding is not possible: replaces each placeholder with a
/// symbolic link to the user's file (the Landlock ruleset lets the script
/// read that file only). False when any step failed.
///
/// # Safety
/// Async-signal-safe: unlink(2), symlink(2).
pub unsafe fn link_inputs(inputs: &Inputs) -> bool {
    // SAFETY: system calls on NUL-terminated strings built in the parent.
    unsafe {
        inputs.files.iter().all(|(source, target)| {
            libc::unlink(target.as_ptr()) == 0
                && libc::symlink(source.as_ptr(), target.as_ptr()) == 0
        })
    }
}

/// # Safety
/// `path` is NUL-terminated; `attr` lives across the call.
unsafe fn mount_setattr(path: *const libc::c_char, flags: libc::c_uint, attr: &MountAttr) -> i64 {
    // SAFETY: the kernel reads `size_of::<MountAttr>()` bytes of `attr`.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            flags,
            attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    }
}

/// What dropping the capabilities achieved.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dropped {
    /// No effective, permitted, inheritable or ambient capability is left.
    pub none_held: bool,
    /// The bounding set is empty and root's privileges are off, so `exec`
    /// cannot give any back (not possible, nor needed, for an ordinary user
    /// outside a user namespace: `no_new_privs` holds there).
    pub bounding_emptied: bool,
}

/// Drops every capability: securebits first (needs `CAP_SETPCAP`), then
/// the bounding set, the ambient set and the effective, permitted and
/// inheritable sets; then reads them back.
///
/// # Safety
/// Async-signal-safe: prctl(2), capset(2), capget(2) on stack buffers.
pub unsafe fn drop_capabilities() -> Dropped {
    // SAFETY: plain system calls on stack structs.
    unsafe {
        let secured = libc::prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) == 0;
        let mut bounding = true;
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) == 1
                && libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0
            {
                bounding = false;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let zero = [CapData::default(); 2];
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            zero.as_ptr(),
        );
        let mut now = [CapData::default(); 2];
        let read = libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            now.as_mut_ptr(),
        ) == 0;
        let none = read
            && now
                .iter()
                .all(|d| d.effective == 0 && d.permitted == 0 && d.inheritable == 0);
        let ambient = (0..64).all(|cap| {
            libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_IS_SET, cap, 0, 0) != 1
        });
        let bounding_empty =
            (0..64).all(|cap| libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) != 1);
        Dropped {
            none_held: none && ambient,
            bounding_emptied: bounding && bounding_empty && secured,
        }
    }
}

/// Marks every descriptor from 3 up close-on-exec, so that only the
/// script's stdin, stdout and stderr survive `exec`.
///
/// # Safety
/// Async-signal-safe: close_range(2), or fcntl(2) where it is missing.
pub unsafe fn close_on_exec_from_3() -> bool {
    // SAFETY: plain system calls on integers.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return true;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return false;
        }
        let top = i32::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20);
        for fd in 3..top {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        true
    }
}

/// What entering a PID namespace gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidNamespace {
    /// This process is the namespace's first process (PID 1): when it
    /// ends, the kernel ends every other process of the run.
    First,
    /// No PID namespace could be made; nothing changed.
    Unavailable,
    /// The namespace was made but the fork into it failed: the run must not
    /// start (its first child would become the namespace's init).
    Failed,
}

/// Makes a PID namespace and forks into it: the new process goes on to
/// `exec` the script as PID 1; this one stays outside as its stand-in for
/// the runner (closes every descriptor, waits, and ends as it ended), so
/// the runner's `Child` and process group stay what they were.
///
/// # Safety
/// Async-signal-safe: unshare(2), a raw clone(2) (no `atfork` handlers), and
/// in the stand-in only close_range(2), waitpid(2), signals and `_exit`.
pub unsafe fn enter_pid_namespace() -> PidNamespace {
    // SAFETY: system calls on integers; the forked child only goes on with
    // the rest of the `pre_exec` hook (raw system calls) and `exec`.
    unsafe {
        if libc::unshare(libc::CLONE_NEWPID) != 0 {
            return PidNamespace::Unavailable;
        }
        let flags = libc::c_ulong::try_from(libc::SIGCHLD).unwrap_or(17);
        let pid = libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize);
        match pid {
            0 => PidNamespace::First,
            p if p < 0 => PidNamespace::Failed,
            p => stand_in(i32::try_from(p).unwrap_or(-1)),
        }
    }
}

/// The stand-in outside the namespace: waits for the script and ends the
/// same way (its exit status, or its signal).
///
/// # Safety
/// Async-signal-safe system calls only; never returns.
unsafe fn stand_in(pid: i32) -> ! {
    // SAFETY: system calls on integers and a stack status word.
    unsafe {
        // No pipe of the runner stays open through this process (spawn's
        // exec-error pipe, the streams): they end with the script.
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let signal = libc::WTERMSIG(status);
        libc::signal(signal, libc::SIG_DFL);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
}

/// `LANDLOCK_RULE_PATH_BENEATH` and `LANDLOCK_ACCESS_FS_READ_FILE` of
/// `landlock_add_rule(2)`.
const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;
const LANDLOCK_ACCESS_FS_READ_FILE: u64 = 1 << 2;

/// `struct landlock_path_beneath_attr` (packed, as the kernel declares it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The longest path of a limit file built here (a cgroup path is short).
const LIMIT_PATH_MAX: usize = 512;

/// The files that tell a process its own memory and CPU limits, from the
/// text of its `/proc/self/cgroup` (`id:controllers:path` lines): of the
/// cgroup v2 entry (`0::path`) its `memory.max` and `cpu.max`; of a v1
/// `memory` hierarchy its `memory.limit_in_bytes`; of a v1 `cpu` hierarchy
/// its `cpu.cfs_quota_us` and `cpu.cfs_period_us` — what DuckDB (and JVMs,
/// Go's and .NET's runtimes) read to size themselves. Each path is written
/// NUL-terminated into `buf` and handed to `each`; nothing is allocated
/// (this runs in the child before `exec`).
pub fn each_limit_file(text: &[u8], buf: &mut [u8; LIMIT_PATH_MAX], each: &mut dyn FnMut(&[u8])) {
    for line in text.split(|b| *b == b'\n') {
        let mut parts = line.splitn(3, |b| *b == b':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !path.starts_with(b"/") || path.contains(&0) || path.windows(2).any(|w| w == b"..") {
            continue;
        }
        // `/` is the hierarchy's root: no second slash.
        let path: &[u8] = if path == b"/" { b"" } else { path };
        let has = |name: &[u8]| controllers.split(|b| *b == b',').any(|c| c == name);
        let mut emit = |parts: &[&[u8]]| {
            let mut n = 0;
            for p in parts {
                if n + p.len() >= LIMIT_PATH_MAX {
                    return;
                }
                buf[n..n + p.len()].copy_from_slice(p);
                n += p.len();
            }
            buf[n] = 0;
            each(&buf[..=n]);
        };
        if id == b"0" && controllers.is_empty() {
            emit(&[b"/sys/fs/cgroup", path, b"/memory.max"]);
            emit(&[b"/sys/fs/cgroup", path, b"/cpu.max"]);
        }
        if has(b"memory") {
            emit(&[b"/sys/fs/cgroup/memory", path, b"/memory.limit_in_bytes"]);
        }
        if has(b"cpu") {
            emit(&[b"/sys/fs/cgroup/cpu", path, b"/cpu.cfs_quota_us"]);
            emit(&[b"/sys/fs/cgroup/cpu", path, b"/cpu.cfs_period_us"]);
        }
    }
}

/// Adds a Landlock rule to `ruleset` letting the process read the file at
/// `path` (NUL-terminated), that file only; the `O_PATH` descriptor that
/// names it (close-on-exec), or -1 when the file is missing or the rule
/// was refused.
///
/// # Safety
/// Async-signal-safe: open(2), landlock_add_rule(2), close(2).
unsafe fn allow_read_file(ruleset: i32, path: &[u8]) -> i32 {
    if path.last() != Some(&0) {
        return -1;
    }
    // SAFETY: `path` is NUL-terminated; the attribute is a stack struct
    // whose layout is the kernel's.
    unsafe {
        let fd = libc::open(
            path.as_ptr().cast(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_NOCTTY,
        );
        if fd < 0 {
            return -1;
        }
        let attr = PathBeneathAttr {
            allowed_access: LANDLOCK_ACCESS_FS_READ_FILE,
            parent_fd: fd,
        };
        let added = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        ) == 0;
        if !added {
            libc::close(fd);
            return -1;
        }
        fd
    }
}

/// In the child, before its Landlock ruleset (`ruleset`, a descriptor of
/// it) is applied: lets it read what tells a process its own limits — its
/// `/proc/self/cgroup` and, of the cgroups named there, the memory and CPU
/// limit files ([`each_limit_file`]), each file alone (the rest of `/proc`
/// and `/sys/fs/cgroup` stays closed). Without them DuckDB cannot start
/// ("Cannot open file /proc/self/cgroup: Permission denied").
///
/// A `/proc/<pid>` file's inode lives only as long as its dentry, and a
/// Landlock rule holds the inode: the returned `O_PATH` descriptor of
/// `/proc/self/cgroup` is what keeps the dentry (and the rule's match)
/// alive, so the caller clears its close-on-exec flag once the other
/// descriptors were marked. -1 when the file could not be allowed.
///
/// # Safety
/// Async-signal-safe: open(2), read(2), close(2), landlock_add_rule(2) on
/// stack buffers. Call after the process's last fork (`/proc/self` is the
/// process that will `exec`) and after it joined its cgroups.
pub unsafe fn allow_own_limits(ruleset: i32) -> i32 {
    let own = c"/proc/self/cgroup";
    // SAFETY: see above; every buffer is on the stack.
    unsafe {
        let pinned = allow_read_file(ruleset, own.to_bytes_with_nul());
        if pinned < 0 {
            return -1;
        }
        let mut text = [0u8; 4096];
        let f = libc::open(own.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if f < 0 {
            return pinned;
        }
        let mut len = 0usize;
        while len < text.len() {
            let n = libc::read(f, text[len..].as_mut_ptr().cast(), text.len() - len);
            if n <= 0 {
                break;
            }
            len += n as usize;
        }
        libc::close(f);
        let mut buf = [0u8; LIMIT_PATH_MAX];
        each_limit_file(&text[..len], &mut buf, &mut |path| {
            let fd = allow_read_file(ruleset, path);
            if fd >= 0 {
                // A cgroup file system's inode is found again by its node:
                // the rule holds without the descriptor.
                libc::close(fd);
            }
        });
        pinned
    }
}

/// Lets `fd` survive `exec` (clears its close-on-exec flag).
///
/// # Safety
/// Async-signal-safe: fcntl(2).
pub unsafe fn keep_across_exec(fd: i32) {
    // SAFETY: fcntl(2) on an integer.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, 0);
    }
}

#[cfg(test)]
mod limit_file_tests {
    use super::*;

    fn files(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut buf = [0u8; LIMIT_PATH_MAX];
        each_limit_file(text.as_bytes(), &mut buf, &mut |p| {
            out.push(String::from_utf8_lossy(&p[..p.len() - 1]).into_owned());
        });
        out
    }

    #[test]
    fn the_limit_files_of_each_own_cgroup_are_named() {
        // A hybrid machine (this one): v1 memory and cpu, an empty v2 root.
        let hybrid = "9:name=systemd:/\n4:memory:/maskflow-7-1\n2:cpuacct:/\n1:cpu:/\n0::/\n";
        assert_eq!(
            files(hybrid),
            vec![
                "/sys/fs/cgroup/memory/maskflow-7-1/memory.limit_in_bytes",
                "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
                "/sys/fs/cgroup/memory.max",
                "/sys/fs/cgroup/cpu.max",
            ]
        );
        // cgroup v2 only: a systemd scope.
        assert_eq!(
            files("0::/user.slice/maskflow-run-1-2.scope\n"),
            vec![
                "/sys/fs/cgroup/user.slice/maskflow-run-1-2.scope/memory.max",
                "/sys/fs/cgroup/user.slice/maskflow-run-1-2.scope/cpu.max",
            ]
        );
        // Combined v1 controllers; nothing else of the cgroup is named.
        assert_eq!(
            files("3:cpu,cpuacct:/a\n5:pids:/b\n"),
            vec![
                "/sys/fs/cgroup/cpu/a/cpu.cfs_quota_us",
                "/sys/fs/cgroup/cpu/a/cpu.cfs_period_us"
            ]
        );
    }

    #[test]
    fn a_strange_cgroup_path_names_nothing() {
        assert!(files("0::/../../etc\n4:memory:relative\n4:memory\n\n").is_empty());
        let long = format!("0::/{}\n", "a".repeat(LIMIT_PATH_MAX));
        assert!(files(&long).is_empty(), "too long for the buffer: left out");
    }
}
