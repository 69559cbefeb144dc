//! An environment's folder as Maskflow leaves it, and the check before each
//! use: every file and folder read-only and owned by the user Maskflow runs
//! as, its links and `pyvenv.cfg` exactly as `uv venv` made them (recorded
//! in the marker as a [`Seal`]). Reads and changes permissions only; never
//! starts anything, never follows a link.
//!
//! The interpreter of an environment never starts outside the sandbox, so
//! a changed environment cannot run code here; the check keeps a changed
//! one (made writable, given to another user, its interpreter link bent)
//! from being used at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What an environment looked like when it was made.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seal {
    /// SHA-256 of `pyvenv.cfg`.
    pub pyvenv_sha256: String,
    /// Every symbolic link, relative path → target.
    pub links: BTreeMap<String, String>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every entry under `dir` (not `dir` itself), depth first, links not followed.
fn walk(dir: &Path, out: &mut Vec<(PathBuf, std::fs::Metadata)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let meta = std::fs::symlink_metadata(&path)?;
        let is_dir = meta.is_dir();
        out.push((path.clone(), meta));
        if is_dir {
            walk(&path, out)?;
        }
    }
    Ok(())
}

fn entries(dir: &Path) -> std::io::Result<Vec<(PathBuf, std::fs::Metadata)>> {
    let mut out = vec![(dir.to_path_buf(), std::fs::symlink_metadata(dir)?)];
    walk(dir, &mut out)?;
    Ok(out)
}

fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The seal of the environment in `dir` as it is now.
pub(crate) fn seal_of(dir: &Path) -> std::io::Result<Seal> {
    let cfg = std::fs::read(dir.join("pyvenv.cfg"))?;
    let mut links = BTreeMap::new();
    for (path, meta) in entries(dir)? {
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path)?;
            links.insert(relative(dir, &path), target.to_string_lossy().into_owned());
        }
    }
    Ok(Seal {
        pyvenv_sha256: hex(&Sha256::digest(&cfg)),
        links,
    })
}

/// Removes every write permission under `dir` (links are left alone).
pub(crate) fn freeze(dir: &Path) -> std::io::Result<()> {
    for (path, meta) in entries(dir)?.into_iter().rev() {
        if meta.file_type().is_symlink() {
            continue;
        }
        let mut perms = meta.permissions();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            perms.set_mode(perms.mode() & !0o222);
        }
        #[cfg(not(unix))]
        perms.set_readonly(true);
        std::fs::set_permissions(&path, perms)?;
    }
    Ok(())
}

/// Gives the owner write permission on the folders under `dir` again, so
/// that it can be removed.
pub(crate) fn thaw(dir: &Path) -> std::io::Result<()> {
    for (path, meta) in entries(dir)? {
        if !meta.is_dir() {
            continue;
        }
        let mut perms = meta.permissions();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            perms.set_mode(perms.mode() | 0o700);
        }
        #[cfg(not(unix))]
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms)?;
    }
    Ok(())
}

/// Removes `dir` and everything in it, read-only or not, following no link.
pub(crate) fn remove(dir: &Path) -> std::io::Result<()> {
    thaw(dir)?;
    std::fs::remove_dir_all(dir)
}

/// The user Maskflow runs as.
#[cfg(unix)]
#[allow(unsafe_code)] // geteuid: no preconditions, cannot fail
fn current_user() -> u32 {
    // SAFETY: geteuid takes nothing and only returns the effective user id.
    unsafe { libc::geteuid() }
}

/// Whether the environment in `dir` is as it was sealed: `Err` says the
/// first thing that differs, with its path.
pub(crate) fn check(dir: &Path, seal: &Seal) -> Result<(), String> {
    let all = entries(dir).map_err(|e| format!("{} cannot be read: {e}", dir.display()))?;
    #[cfg(unix)]
    let me = current_user();
    let mut links = BTreeMap::new();
    for (path, meta) in &all {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if meta.uid() != me {
                return Err(format!(
                    "{} belongs to user {}, not to the user Maskflow runs as ({me})",
                    path.display(),
                    meta.uid()
                ));
            }
            if !meta.file_type().is_symlink() && meta.mode() & 0o222 != 0 {
                return Err(format!(
                    "{} is writable (mode {:o})",
                    path.display(),
                    meta.mode() & 0o7777
                ));
            }
        }
        #[cfg(not(unix))]
        if !meta.file_type().is_symlink() && !meta.permissions().readonly() {
            return Err(format!("{} is writable", path.display()));
        }
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(path)
                .map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
            links.insert(relative(dir, path), target.to_string_lossy().into_owned());
        }
    }
    if links != seal.links {
        let changed = links
            .iter()
            .find(|(k, v)| seal.links.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .or_else(|| seal.links.keys().find(|k| !links.contains_key(*k)).cloned())
            .unwrap_or_default();
        return Err(format!("its link {changed} is not the one uv venv made"));
    }
    let cfg = std::fs::read(dir.join("pyvenv.cfg"))
        .map_err(|e| format!("its pyvenv.cfg cannot be read: {e}"))?;
    if hex(&Sha256::digest(&cfg)) != seal.pyvenv_sha256 {
        return Err("its pyvenv.cfg was changed".into());
    }
    Ok(())
}
