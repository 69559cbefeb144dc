//! A run's outputs as untrusted files: once every process of the run has
//! ended, the regular files under the script's `outputs/` are copied into
//! `workdir/outputs/`, a folder the script could never write, and only
//! those copies are listed, previewed, downloaded or handed to a flow.
//! Each file is opened without following a link (`O_NOFOLLOW`) and checked
//! on its open descriptor: a symbolic link (to `maskflow.db`, say), a fifo,
//! a device, a socket or a file with other hard links is not copied, nor is
//! a name with a control character, a path separator, `.` or `..`; each
//! refusal is reported with its reason. The copies stop at the run's output
//! limit, a depth and a number of files.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Folders deeper than this under `outputs/` are not copied.
const MAX_DEPTH: usize = 16;
/// At most this many files and folders are copied.
const MAX_ENTRIES: usize = 10_000;

/// An entry of `outputs/` that was not copied, and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RefusedOutput {
    /// Its path under `outputs/`, control characters escaped.
    pub name: String,
    /// Why it was not copied ("a symbolic link", "a hard link to another
    /// file"…).
    pub reason: String,
}

/// What copying found.
#[derive(Debug, Default)]
pub struct Copied {
    /// The entries not copied.
    pub refused: Vec<RefusedOutput>,
}

/// Copies the regular files under `from` into `to` (made fresh: whatever
/// is there is removed first), at most `budget` bytes in all.
pub fn copy_outputs(from: &Path, to: &Path, budget: u64) -> std::io::Result<Copied> {
    if let Ok(meta) = std::fs::symlink_metadata(to) {
        if meta.is_dir() {
            std::fs::remove_dir_all(to)?;
        } else {
            std::fs::remove_file(to)?;
        }
    }
    std::fs::create_dir(to)?;
    let mut walk = Walk {
        budget,
        entries: 0,
        copied: Copied::default(),
    };
    match std::fs::symlink_metadata(from) {
        Ok(m) if m.is_dir() => walk.folder(from, to, "", 0),
        Ok(_) => walk.refuse("", "outputs/ is not a folder"),
        Err(_) => {}
    }
    Ok(walk.copied)
}

/// The state of one copy.
struct Walk {
    budget: u64,
    entries: usize,
    copied: Copied,
}

impl Walk {
    fn refuse(&mut self, name: &str, reason: &str) {
        self.copied.refused.push(RefusedOutput {
            name: name.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// Copies the folder `from` (`prefix` under `outputs/`) into `to`.
    fn folder(&mut self, from: &Path, to: &Path, prefix: &str, depth: usize) {
        let Ok(entries) = std::fs::read_dir(from) else {
            self.refuse(prefix, "the folder could not be read");
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let raw = entry.file_name();
            let shown = format!("{prefix}{}", raw.to_string_lossy().escape_debug());
            if let Err(reason) = check_name(&raw) {
                self.refuse(&shown, reason);
                continue;
            }
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                self.refuse(&shown, "more files than an output may hold");
                continue;
            }
            let (src, dst) = (from.join(&raw), to.join(&raw));
            let Ok(meta) = std::fs::symlink_metadata(&src) else {
                self.refuse(&shown, "it could not be read");
                continue;
            };
            let kind = meta.file_type();
            if kind.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    self.refuse(&shown, "folders nested too deep");
                } else if std::fs::create_dir(&dst).is_ok() {
                    self.folder(&src, &dst, &format!("{shown}/"), depth + 1);
                } else {
                    self.refuse(&shown, "the folder could not be made");
                }
            } else if kind.is_file() {
                if let Err(reason) = self.file(&src, &dst) {
                    let _ = std::fs::remove_file(&dst);
                    self.refuse(&shown, &reason);
                }
            } else {
                self.refuse(&shown, kind_name(kind));
            }
        }
    }

    /// Copies one regular file, checked on its open descriptor.
    fn file(&mut self, src: &Path, dst: &Path) -> Result<(), String> {
        let mut input = open_no_follow(src).map_err(|e| format!("it could not be opened: {e}"))?;
        let meta = input
            .metadata()
            .map_err(|e| format!("it could not be read: {e}"))?;
        if !meta.file_type().is_file() {
            return Err(kind_name(meta.file_type()).to_owned());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if meta.nlink() != 1 {
                return Err("a hard link to another file".into());
            }
        }
        if meta.len() > self.budget {
            return Err("past the run's output limit".into());
        }
        let mut output = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(dst)
            .map_err(|e| format!("the copy could not be made: {e}"))?;
        let mut limited = (&mut input).take(self.budget + 1);
        let n = std::io::copy(&mut limited, &mut output)
            .map_err(|e| format!("the copy failed: {e}"))?;
        if n > self.budget {
            return Err("past the run's output limit".into());
        }
        output
            .flush()
            .map_err(|e| format!("the copy failed: {e}"))?;
        self.budget -= n;
        Ok(())
    }
}

/// Opens `path` for reading, refusing a symbolic link as its last part and
/// never blocking on a fifo.
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Why a name of an output is refused, if it is.
fn check_name(name: &std::ffi::OsStr) -> Result<(), &'static str> {
    let Some(text) = name.to_str() else {
        return Err("its name is not valid UTF-8");
    };
    if text.is_empty() || text == "." || text == ".." {
        return Err("its name is empty, `.` or `..`");
    }
    if text.chars().any(char::is_control) {
        return Err("its name has control characters");
    }
    if text.contains(['/', '\\']) {
        return Err("its name has a path separator");
    }
    if text.len() > 255 {
        return Err("its name is too long");
    }
    Ok(())
}

/// What a file that is neither a folder nor a regular file is.
fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a fifo";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    "not a regular file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_copied_and_everything_else_is_refused_with_a_reason() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (from, to) = (dir.path().join("outputs"), dir.path().join("copies"));
        std::fs::create_dir_all(from.join("charts")).expect("mkdir");
        std::fs::write(from.join("out.csv"), "a,b\n1,2\n").expect("write");
        std::fs::write(from.join("charts/c.svg"), "<svg/>").expect("write");
        let secret = dir.path().join("maskflow.db");
        std::fs::write(&secret, "SQLite format 3").expect("write");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, from.join("db.csv")).expect("symlink");
            std::fs::hard_link(&secret, from.join("linked.csv")).expect("hard link");
            std::fs::write(from.join("bell\u{7}.csv"), "x").expect("write");
        }
        let copied = copy_outputs(&from, &to, 1 << 20).expect("copy");
        assert_eq!(
            std::fs::read_to_string(to.join("out.csv")).expect("copy"),
            "a,b\n1,2\n"
        );
        assert!(to.join("charts/c.svg").is_file());
        #[cfg(unix)]
        {
            let reason = |n: &str| {
                copied
                    .refused
                    .iter()
                    .find(|r| r.name == n)
                    .map(|r| r.reason.clone())
            };
            assert_eq!(reason("db.csv").as_deref(), Some("a symbolic link"));
            assert_eq!(
                reason("linked.csv").as_deref(),
                Some("a hard link to another file")
            );
            assert_eq!(
                reason("bell\\u{7}.csv").as_deref(),
                Some("its name has control characters")
            );
            for name in ["db.csv", "linked.csv"] {
                assert!(!to.join(name).exists(), "{name} was copied");
            }
        }
    }

    #[test]
    fn copies_stop_at_the_budget() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (from, to) = (dir.path().join("outputs"), dir.path().join("copies"));
        std::fs::create_dir_all(&from).expect("mkdir");
        std::fs::write(from.join("a.bin"), vec![1u8; 600]).expect("write");
        std::fs::write(from.join("b.bin"), vec![2u8; 600]).expect("write");
        let copied = copy_outputs(&from, &to, 1000).expect("copy");
        assert!(to.join("a.bin").is_file());
        assert!(!to.join("b.bin").exists());
        assert_eq!(copied.refused.len(), 1, "{:?}", copied.refused);
    }

    #[test]
    fn a_link_in_place_of_the_copies_folder_is_replaced_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (from, to) = (dir.path().join("outputs"), dir.path().join("copies"));
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&from).expect("mkdir");
        std::fs::create_dir_all(&elsewhere).expect("mkdir");
        std::fs::write(from.join("out.csv"), "x").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&elsewhere, &to).expect("symlink");
        copy_outputs(&from, &to, 1 << 20).expect("copy");
        assert!(to.join("out.csv").is_file());
        assert!(!elsewhere.join("out.csv").exists());
    }
}
