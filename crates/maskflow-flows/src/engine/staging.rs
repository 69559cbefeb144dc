//! A step's file writes in the run's working folder, kept only when its
//! postconditions pass (seed 002: a transaction per step, rollback on
//! failure). Before a step with postconditions runs, the folder is copied
//! aside (`<home>/staging/<run>/`); when a postcondition fails, the folder
//! is put back as it was (files the step made are removed, files it changed
//! or removed come back with their times) before the retry or the person's
//! look. A folder too large to copy is not staged, and the transcript says so.
//! Symbolic links are kept as links (never followed).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Most bytes a folder may hold to be staged.
pub(super) const MAX_STAGED_BYTES: u64 = 256 * 1024 * 1024;
/// Most entries a folder may hold to be staged.
pub(super) const MAX_STAGED_ENTRIES: usize = 20_000;

/// What was in the folder: a file's length and time, or a link's target.
#[derive(Debug, Clone, PartialEq)]
enum Entry {
    File {
        len: u64,
        modified: Option<SystemTime>,
    },
    Link(PathBuf),
}

/// A copy of the folder taken before a step; dropped, the copy goes.
#[derive(Debug)]
pub(super) struct Staged {
    folder: PathBuf,
    copy: PathBuf,
    entries: BTreeMap<PathBuf, Entry>,
    dirs: BTreeSet<PathBuf>,
}

/// Why a folder was not staged.
#[derive(Debug)]
pub(super) enum NotStaged {
    /// It holds more than the limits.
    TooLarge { bytes: u64, entries: usize },
    /// It could not be read or copied.
    Io(io::Error),
}

impl std::fmt::Display for NotStaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotStaged::TooLarge { bytes, entries } => write!(
                f,
                "the folder holds {entries}+ entries or {bytes}+ bytes (staging takes at most \
                 {MAX_STAGED_ENTRIES} entries and {MAX_STAGED_BYTES} bytes)"
            ),
            NotStaged::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A folder copied aside before a step, or why it was not.
pub(super) type Stage = std::result::Result<Staged, NotStaged>;

impl From<io::Error> for NotStaged {
    fn from(e: io::Error) -> Self {
        NotStaged::Io(e)
    }
}

/// Lists `root` (relative paths): files and links, and directories.
fn list(
    root: &Path,
    entries: &mut BTreeMap<PathBuf, Entry>,
    dirs: &mut BTreeSet<PathBuf>,
    limit: Option<(&mut u64, usize)>,
) -> std::result::Result<(), NotStaged> {
    let mut stack = vec![PathBuf::new()];
    let mut bytes = 0u64;
    let max_entries = limit.as_ref().map(|(_, n)| *n);
    while let Some(rel) = stack.pop() {
        for item in fs::read_dir(root.join(&rel))? {
            let item = item?;
            let path = rel.join(item.file_name());
            let meta = fs::symlink_metadata(item.path())?;
            if meta.file_type().is_symlink() {
                entries.insert(path, Entry::Link(fs::read_link(item.path())?));
            } else if meta.is_dir() {
                dirs.insert(path.clone());
                stack.push(path);
            } else {
                bytes += meta.len();
                entries.insert(
                    path,
                    Entry::File {
                        len: meta.len(),
                        modified: meta.modified().ok(),
                    },
                );
            }
            if let Some(max) = max_entries
                && (entries.len() + dirs.len() > max || bytes > MAX_STAGED_BYTES)
            {
                return Err(NotStaged::TooLarge {
                    bytes,
                    entries: entries.len() + dirs.len(),
                });
            }
        }
    }
    if let Some((total, _)) = limit {
        *total = bytes;
    }
    Ok(())
}

impl Staged {
    /// Copies `folder` into `copy` (made afresh).
    pub(super) fn take(folder: &Path, copy: &Path) -> Stage {
        let mut entries = BTreeMap::new();
        let mut dirs = BTreeSet::new();
        let mut bytes = 0;
        list(
            folder,
            &mut entries,
            &mut dirs,
            Some((&mut bytes, MAX_STAGED_ENTRIES)),
        )?;
        if copy.exists() {
            fs::remove_dir_all(copy)?;
        }
        fs::create_dir_all(copy)?;
        let staged = Staged {
            folder: folder.to_owned(),
            copy: copy.to_owned(),
            entries,
            dirs,
        };
        for dir in &staged.dirs {
            fs::create_dir_all(copy.join(dir))?;
        }
        for (rel, entry) in &staged.entries {
            if matches!(entry, Entry::File { .. }) {
                fs::copy(folder.join(rel), copy.join(rel))?;
            }
        }
        Ok(staged)
    }

    /// Puts the folder back as it was when staged; says what it undid
    /// (`removed x`, `restored y`), in path order.
    pub(super) fn restore(&self) -> io::Result<Vec<String>> {
        let mut now = BTreeMap::new();
        let mut now_dirs = BTreeSet::new();
        list(&self.folder, &mut now, &mut now_dirs, None).map_err(|e| match e {
            NotStaged::Io(e) => e,
            other => io::Error::other(other.to_string()),
        })?;
        let mut undone = Vec::new();
        // What the step made: its files, then its folders (outermost only).
        for rel in now.keys() {
            if !self.entries.contains_key(rel) {
                let inside_new = rel
                    .ancestors()
                    .skip(1)
                    .any(|a| !a.as_os_str().is_empty() && !self.dirs.contains(a));
                if !inside_new {
                    fs::remove_file(self.folder.join(rel))?;
                    undone.push(format!("removed {}", rel.display()));
                }
            }
        }
        for dir in &now_dirs {
            let outermost = !self.dirs.contains(dir)
                && dir
                    .ancestors()
                    .skip(1)
                    .all(|a| a.as_os_str().is_empty() || self.dirs.contains(a));
            if outermost {
                fs::remove_dir_all(self.folder.join(dir))?;
                undone.push(format!("removed {}/", dir.display()));
            }
        }
        for dir in &self.dirs {
            let path = self.folder.join(dir);
            if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
                fs::remove_file(&path)?;
            }
            fs::create_dir_all(&path)?;
        }
        // What the step changed or removed comes back.
        for (rel, entry) in &self.entries {
            if now.get(rel) == Some(entry) {
                continue;
            }
            let path = self.folder.join(rel);
            match fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => fs::remove_dir_all(&path)?,
                Ok(_) => fs::remove_file(&path)?,
                Err(_) => {}
            }
            match entry {
                Entry::File { modified, .. } => {
                    fs::copy(self.copy.join(rel), &path)?;
                    if let Some(t) = modified {
                        fs::File::options()
                            .write(true)
                            .open(&path)?
                            .set_modified(*t)?;
                    }
                }
                Entry::Link(target) => link(target, &path)?,
            }
            undone.push(format!("restored {}", rel.display()));
        }
        undone.sort();
        Ok(undone)
    }
}

/// The transcript's note of a rollback: what was undone, or why nothing was.
pub(super) fn rollback_note(staged: std::result::Result<&Staged, &NotStaged>) -> String {
    match staged.map(Staged::restore) {
        Ok(Ok(undone)) if undone.is_empty() => {
            "The step's writes were rolled back: it had changed nothing in the folder.".into()
        }
        Ok(Ok(undone)) => format!("The step's writes were rolled back: {}.", undone.join(", ")),
        Ok(Err(e)) => format!(
            "The step's writes could not all be rolled back ({e}); check the working folder."
        ),
        Err(why) => format!(
            "The step's writes were kept: the working folder was not staged before it ran ({why})."
        ),
    }
}

#[cfg(unix)]
fn link(target: &Path, path: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, path)
}

#[cfg(not(unix))]
fn link(target: &Path, path: &Path) -> io::Result<()> {
    fs::copy(target, path).map(|_| ())
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.copy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_undoes_new_changed_and_removed_files_and_folders() {
        let work = tempfile::tempdir().expect("work");
        let aside = tempfile::tempdir().expect("aside");
        let w = work.path();
        fs::write(w.join("keep.txt"), "kept").expect("write");
        fs::write(w.join("change.txt"), "before").expect("write");
        fs::create_dir(w.join("sub")).expect("dir");
        fs::write(w.join("sub/gone.txt"), "there").expect("write");
        let before = fs::metadata(w.join("change.txt"))
            .and_then(|m| m.modified())
            .expect("time");
        let staged = Staged::take(w, &aside.path().join("run")).expect("staged");

        fs::write(w.join("change.txt"), "after, longer").expect("write");
        fs::remove_file(w.join("sub/gone.txt")).expect("remove");
        fs::write(w.join("new.txt"), "new").expect("write");
        fs::create_dir_all(w.join("made/deeper")).expect("dirs");
        fs::write(w.join("made/deeper/x.txt"), "x").expect("write");

        let undone = staged.restore().expect("restored");
        assert_eq!(
            undone,
            [
                "removed made/",
                "removed new.txt",
                "restored change.txt",
                "restored sub/gone.txt"
            ]
        );
        assert_eq!(
            fs::read_to_string(w.join("change.txt")).expect("read"),
            "before"
        );
        assert_eq!(
            fs::metadata(w.join("change.txt"))
                .and_then(|m| m.modified())
                .expect("time"),
            before
        );
        assert_eq!(
            fs::read_to_string(w.join("sub/gone.txt")).expect("read"),
            "there"
        );
        assert_eq!(
            fs::read_to_string(w.join("keep.txt")).expect("read"),
            "kept"
        );
        assert!(!w.join("new.txt").exists() && !w.join("made").exists());
        // Nothing to undo a second time; the copy goes with the stage.
        assert!(staged.restore().expect("again").is_empty());
        let copy = staged.copy.clone();
        drop(staged);
        assert!(!copy.exists());
    }
}
