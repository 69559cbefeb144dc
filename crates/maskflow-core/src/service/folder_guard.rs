//! The privacy guard's index of flow runs' working folders (issue 26, break
//! 10): a flow's `script` step runs in the sandbox with its run's working
//! folder readable (and writable), so it can read files that were never
//! uploaded, and its output feeds later agent steps. Two layers keep their
//! values from an LLM:
//!
//! 1. **Masking, complete by construction** (the engine, `maskflow-flows`
//!    `engine/context.rs`): every value a script step produces is local and
//!    reaches a prompt only masked as an extract's samples are, object keys
//!    included. It does not depend on knowing what the script read — which
//!    cannot be known completely: the sandbox also lets it read the system's
//!    files (`/etc/passwd` names the machine's users), and where the user
//!    switched isolation off it reads the whole disk.
//! 2. **The guard, by check** (this module): every regular file under the
//!    working folder — what the sandbox lets a step read besides the system —
//!    is indexed before the step runs ([`FolderGuards::refresh`], called by
//!    `flow_scripts` before each script starts) and again before each agent
//!    call of the run, and the call is checked against it as well as against
//!    the uploaded files. Keys are only ever added: a file a step read and
//!    then deleted stays indexed. A prompt holding one of those values is
//!    refused at egress; the engine names the step and asks a person.
//!
//! Files are indexed once per (size, modification time); symbolic links are
//! not followed (the sandbox does not follow them out of the folder either).
//! A folder past [`MAX_FILES`] files or [`MAX_BYTES`] bytes is indexed up to
//! there and the rest noted in the index's `skipped`: the guard is then
//! incomplete there, and the masking of layer 1 is what holds. The indexes
//! of the [`MAX_FOLDERS`] folders used last are kept (a long-running server
//! must not grow with every folder ever used, issue 19); a folder that fell
//! out is indexed afresh from what it holds then.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use maskflow_privacy::guard::GuardIndex;

/// Most files of one working folder indexed.
pub const MAX_FILES: usize = 20_000;
/// Most bytes of one working folder indexed (all files together).
pub const MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// How many working folders' indexes are kept.
pub const MAX_FOLDERS: usize = 8;
/// Deepest folder nesting walked under a working folder.
const MAX_DEPTH: usize = 32;

/// A file as it was when it was indexed.
type Stamp = (u64, Option<SystemTime>);

/// One working folder's index and what it holds.
#[derive(Debug, Default)]
struct Folder {
    seen: HashMap<PathBuf, Stamp>,
    bytes: u64,
    index: Arc<GuardIndex>,
    /// When it was last refreshed (a counter), to forget the oldest.
    used: u64,
}

/// The indexes of the working folders flow runs used in this process.
#[derive(Debug, Default)]
pub(crate) struct FolderGuards {
    folders: Mutex<HashMap<PathBuf, Folder>>,
    uses: std::sync::atomic::AtomicU64,
}

impl FolderGuards {
    /// The index of `folder` after indexing every file in it that is new or
    /// changed since the last refresh; `allowed` is Maskflow's own text
    /// (never data), `max_file_bytes` the most read of one file.
    pub(crate) fn refresh(
        &self,
        folder: &Path,
        allowed: &str,
        max_file_bytes: u64,
    ) -> Arc<GuardIndex> {
        let key = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
        let mut folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        if !folders.contains_key(&key) && folders.len() >= MAX_FOLDERS {
            let oldest = folders
                .iter()
                .min_by_key(|(_, f)| f.used)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                folders.remove(&k);
            }
        }
        let used = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let entry = folders.entry(key.clone()).or_insert_with(|| {
            let mut index = GuardIndex::new();
            index.allow(allowed);
            Folder {
                index: Arc::new(index),
                ..Folder::default()
            }
        });
        entry.used = used;
        let mut files = Vec::new();
        let mut skipped = Vec::new();
        walk(&key, 0, &mut files, &mut skipped);
        let mut changed = Vec::new();
        for (path, stamp) in files {
            if entry.seen.get(&path) == Some(&stamp) {
                continue;
            }
            changed.push((path, stamp));
        }
        if changed.is_empty() && skipped.is_empty() {
            return entry.index.clone();
        }
        let index = Arc::make_mut(&mut entry.index);
        index.skipped.extend(skipped);
        for (path, stamp) in changed {
            let known = entry.seen.len();
            if (known >= MAX_FILES || entry.bytes >= MAX_BYTES) && !entry.seen.contains_key(&path) {
                index.skipped.push(format!(
                    "{}: not indexed, the working folder {} has more than {MAX_FILES} files or \
                     {MAX_BYTES} bytes",
                    path.display(),
                    key.display()
                ));
                continue;
            }
            let name = path
                .strip_prefix(&key)
                .unwrap_or(&path)
                .display()
                .to_string();
            index.add_file(&path, &name, max_file_bytes);
            entry.bytes = entry.bytes.saturating_add(stamp.0.min(max_file_bytes));
            entry.seen.insert(path, stamp);
        }
        entry.index.clone()
    }
}

/// Every regular file under `dir` (not through symbolic links) with its stamp.
fn walk(dir: &Path, depth: usize, out: &mut Vec<(PathBuf, Stamp)>, skipped: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        skipped.push(format!(
            "{}: deeper than {MAX_DEPTH} folders, not indexed",
            dir.display()
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            skipped.push(format!("{}: cannot be listed: {e}", dir.display()));
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(&path, depth + 1, out, skipped);
        } else if meta.is_file() {
            out.push((path, (meta.len(), meta.modified().ok())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(index: &GuardIndex, text: &str) -> bool {
        !index.check_text(text).is_empty()
    }

    #[test]
    fn every_file_of_the_folder_is_indexed_and_stays_indexed_once_removed() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(dir.path().join("in/deep")).expect("mkdir");
        std::fs::write(
            dir.path().join("in/deep/people.csv"),
            "name,city\nJohn Okonkwo,Lagos\nMary Brown,Leeds\n",
        )
        .expect("csv");
        let guards = FolderGuards::default();
        let index = guards.refresh(dir.path(), "", u64::MAX);
        assert!(blocks(&index, "the row is John Okonkwo"));
        assert!(!blocks(&index, "3 rows, 2 columns"));
        // A file added later is indexed at the next refresh; a removed one stays.
        std::fs::write(
            dir.path().join("later.csv"),
            "id,email\n1,zed.quist@example.org\n",
        )
        .expect("csv");
        std::fs::remove_file(dir.path().join("in/deep/people.csv")).expect("rm");
        let index = guards.refresh(dir.path(), "", u64::MAX);
        assert!(blocks(&index, "write to zed.quist@example.org"));
        assert!(
            blocks(&index, "John Okonkwo"),
            "a removed file stays indexed"
        );
    }

    #[test]
    fn only_the_folders_used_last_are_kept() {
        let guards = FolderGuards::default();
        let dirs: Vec<_> = (0..=MAX_FOLDERS)
            .map(|_| tempfile::tempdir().expect("tmp"))
            .collect();
        for d in &dirs {
            guards.refresh(d.path(), "", u64::MAX);
        }
        let folders = guards.folders.lock().expect("lock");
        assert_eq!(folders.len(), MAX_FOLDERS);
        let first = std::fs::canonicalize(dirs[0].path()).expect("path");
        assert!(!folders.contains_key(&first), "the oldest was forgotten");
    }

    #[test]
    #[cfg(unix)]
    fn a_symbolic_link_out_of_the_folder_is_not_followed() {
        let dir = tempfile::tempdir().expect("tmp");
        let outside = tempfile::tempdir().expect("tmp");
        std::fs::write(outside.path().join("x.csv"), "name\nZebulon Quarrington\n").expect("csv");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        let index = FolderGuards::default().refresh(dir.path(), "", u64::MAX);
        assert!(index.is_empty(), "nothing outside the folder was read");
    }
}
