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
