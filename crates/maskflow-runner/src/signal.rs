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
