//! What a script may touch, per operating system: Landlock and seccomp on
//! Linux, a Seatbelt profile on macOS, a Job Object on Windows (which has
//! no file-system or network isolation here, so its runs are "not
//! isolated" and refused unless the user allowed that).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(target_os = "macos")]
pub mod macos;
#[cfg(any(target_os = "macos", test))]
mod seatbelt;

#[cfg(windows)]
pub mod windows;
