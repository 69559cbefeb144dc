//! Signals to processes: the one `kill(2)` call both the sandbox and the
//! cgroups use, in its own module so that neither imports the other for it;
//! and what the sandbox needs to kill a run's process group safely (whether
//! the script ended, not yet reaped; whether its group still lives).
#![allow(unsafe_code)]

/// Sends `signal` to `pid` (negative: a process group).
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Whether the child `pid` has ended, without reaping it: its pid, which is
/// the run's process group id, stays taken until `wait`.
pub fn ended_unreaped(pid: i32) -> std::io::Result<bool> {
    let id =
        libc::id_t::try_from(pid).map_err(|_| std::io::Error::from_raw_os_error(libc::ECHILD))?;
    // SAFETY: waitid(2) writes into the zeroed `siginfo_t` we own.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        if libc::waitid(
            libc::P_PID,
            id,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(info.si_pid() != 0)
    }
}

/// Whether a process of group `pgid` is alive (not a zombie), from `/proc`.
pub fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // After the command's closing parenthesis: state, ppid, pgrp.
        let mut fields = stat
            .rsplit_once(") ")
            .map(|(_, r)| r)
            .unwrap_or("")
            .split(' ');
        let state = fields.next().unwrap_or("Z");
        let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
        group == Some(pgid) && !matches!(state, "Z" | "X")
    })
}

/// A descriptor that becomes readable when a child ends (`pidfd_open(2)`,
/// Linux 5.3): the supervisor wakes at the script's end instead of on its
/// next polling tick, and never reaps it.
#[derive(Debug)]
pub struct ExitWatch(std::os::fd::OwnedFd);

impl ExitWatch {
    /// A watch on the child `pid`; `None` where the kernel has no pidfd.
    pub fn new(pid: i32) -> Option<Self> {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open(2) takes integers; a descriptor it returns is
        // ours alone and is owned from here on.
        unsafe {
            let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
            let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
            Some(Self(std::os::fd::OwnedFd::from_raw_fd(fd)))
        }
    }

    /// Waits until the child ends or `timeout` passes.
    pub fn wait(&self, timeout: std::time::Duration) {
        use std::os::fd::AsRawFd;
        let mut poll = libc::pollfd {
            fd: self.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: poll(2) on one pollfd we own, for its length.
        unsafe {
            libc::poll(&mut poll, 1, ms);
        }
    }
}
