//! Signals to processes: the one `kill(2)` call both the sandbox and the
//! cgroups use, in its own module so that neither imports the other for it.
#![allow(unsafe_code)]

/// Sends `signal` to `pid` (negative: a process group).
pub fn kill(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, signal);
    }
}
