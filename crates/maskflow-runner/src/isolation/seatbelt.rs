//! The Seatbelt profile of a run (macOS), as pure text and arguments so
//! that it is tested on every platform: deny by default; read the system,
//! the Python runtime and the working folder; write only the working folder
//! (and `/dev/null`); no network unless allowed. Paths reach the profile as
//! `sandbox-exec -D` parameters, never spliced into its text.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// System folders a Python interpreter reads (frameworks, the dynamic
/// loader's cache, Apple's and Homebrew's Pythons, time zones).
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/System",
    "/Library/Frameworks",
    "/Library/Developer/CommandLineTools",
    "/Applications/Xcode.app/Contents/Developer",
    "/opt/homebrew",
    "/private/var/db/dyld",
    "/private/var/db/timezone",
    "/private/etc/localtime",
    "/dev/urandom",
    "/dev/random",
];

/// The fixed part of the profile. `(param "R<n>")` / `(param "W<n>")` are
/// the readable and writable folders, appended per run.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-fork)
(allow process-exec)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
; stat() anywhere (path resolution needs it); contents only below.
(allow file-read-metadata)
(allow file-read* file-write-data (literal "/dev/null"))
"#;

/// The `sandbox-exec` arguments: `-D R<n>=…`/`-D W<n>=…` for the readable
/// and writable folders, `-p PROFILE`, then `program`.
pub fn args(
    program: &Path,
    read: &[PathBuf],
    write: &[PathBuf],
    no_network: bool,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut profile = String::from(BASE);
    for (i, p) in read.iter().enumerate() {
        args.push("-D".into());
        args.push(param(&format!("R{i}"), p));
        profile.push_str(&format!("(allow file-read* (subpath (param \"R{i}\")))\n"));
    }
    for (i, p) in write.iter().enumerate() {
        args.push("-D".into());
        args.push(param(&format!("W{i}"), p));
        profile.push_str(&format!(
            "(allow file-read* file-write* (subpath (param \"W{i}\")))\n"
        ));
    }
    if !no_network {
        profile.push_str("(allow network*)\n");
    }
    args.push("-p".into());
    args.push(profile.into());
    args.push(program.as_os_str().to_owned());
    args
}

fn param(name: &str, path: &Path) -> OsString {
    let mut s = OsString::from(format!("{name}="));
    s.push(path.as_os_str());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_denies_by_default_and_takes_paths_as_parameters() {
        let work = PathBuf::from("/Users/ada/Library/Maskflow/runs/1 \"quoted\")");
        let args = args(
            Path::new("/usr/bin/python3"),
            &[PathBuf::from("/usr"), PathBuf::from("/opt/py")],
            std::slice::from_ref(&work),
            true,
        );
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &text[..6],
            [
                "-D",
                "R0=/usr",
                "-D",
                "R1=/opt/py",
                "-D",
                &format!("W0={}", work.display())
            ]
        );
        assert_eq!(text[6], "-p");
        let profile = &text[7];
        assert!(
            profile.starts_with("(version 1)\n(deny default)\n"),
            "{profile}"
        );
        assert!(profile.contains("(allow file-read* (subpath (param \"R1\")))"));
        assert!(profile.contains("(allow file-read* file-write* (subpath (param \"W0\")))"));
        // No path in the text (a quote in one cannot break out of it), no network.
        assert!(!profile.contains("/opt/py") && !profile.contains("quoted"));
        assert!(!profile.contains("network"), "{profile}");
        assert!(!profile.contains("(allow file-write*") && !profile.contains("(allow default"));
        assert_eq!(text[8], "/usr/bin/python3");
        let open = args_text(true);
        assert!(!open.contains("network"));
        assert!(args_text(false).contains("(allow network*)"));
        // What every Python on macOS needs, and nothing of the user's.
        assert!(SYSTEM_READ.contains(&"/System") && SYSTEM_READ.contains(&"/usr"));
        assert!(!SYSTEM_READ.iter().any(|p| p.starts_with("/Users")));
    }

    fn args_text(no_network: bool) -> String {
        args(Path::new("/p"), &[], &[PathBuf::from("/w")], no_network)[3]
            .to_string_lossy()
            .into_owned()
    }
}
