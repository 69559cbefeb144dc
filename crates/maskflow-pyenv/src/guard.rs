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

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A folder shaped like a venv: `pyvenv.cfg`, a package, two links.
    fn venv() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("dir");
        let site = dir.path().join("lib/python3.11/site-packages/pkg");
        std::fs::create_dir_all(&site).expect("site");
        std::fs::write(site.join("__init__.py"), "X = 1\n").expect("init");
        std::fs::write(dir.path().join("pyvenv.cfg"), "home = /usr/bin\n").expect("cfg");
        std::fs::create_dir_all(dir.path().join("bin")).expect("bin");
        std::os::unix::fs::symlink("/usr/bin/python3", dir.path().join("bin/python"))
            .expect("link");
        std::os::unix::fs::symlink("lib", dir.path().join("lib64")).expect("lib64");
        dir
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn a_sealed_folder_passes_and_each_change_is_named() {
        let dir = venv();
        let seal = seal_of(dir.path()).expect("seal");
        assert_eq!(seal.links.len(), 2);
        assert!(check(dir.path(), &seal).is_err(), "still writable");
        freeze(dir.path()).expect("freeze");
        assert_eq!(check(dir.path(), &seal), Ok(()));

        let init = dir
            .path()
            .join("lib/python3.11/site-packages/pkg/__init__.py");
        chmod(&init, 0o664);
        let why = check(dir.path(), &seal).expect_err("group-writable");
        assert!(why.contains("__init__.py is writable (mode 664)"), "{why}");
        chmod(&init, 0o444);

        let folder = dir.path().join("lib/python3.11/site-packages");
        chmod(&folder, 0o757);
        let why = check(dir.path(), &seal).expect_err("world-writable folder");
        assert!(why.contains("site-packages is writable"), "{why}");
        chmod(&folder, 0o555);
        assert_eq!(check(dir.path(), &seal), Ok(()));

        // A link bent elsewhere, or a new one.
        chmod(&dir.path().join("bin"), 0o755);
        std::fs::remove_file(dir.path().join("bin/python")).expect("rm");
        std::os::unix::fs::symlink("/tmp/evil", dir.path().join("bin/python")).expect("link");
        chmod(&dir.path().join("bin"), 0o555);
        let why = check(dir.path(), &seal).expect_err("link");
        assert!(why.contains("bin/python"), "{why}");
        chmod(&dir.path().join("bin"), 0o755);
        std::fs::remove_file(dir.path().join("bin/python")).expect("rm");
        std::os::unix::fs::symlink("/usr/bin/python3", dir.path().join("bin/python"))
            .expect("link");
        std::os::unix::fs::symlink("/etc", dir.path().join("bin/extra")).expect("extra");
        chmod(&dir.path().join("bin"), 0o555);
        assert!(
            check(dir.path(), &seal)
                .expect_err("new link")
                .contains("bin/extra")
        );
        remove(dir.path()).expect("clean up");
    }

    #[test]
    fn a_changed_pyvenv_cfg_is_refused() {
        let dir = venv();
        let seal = seal_of(dir.path()).expect("seal");
        let cfg = dir.path().join("pyvenv.cfg");
        std::fs::write(&cfg, "home = /tmp/evil\n").expect("write");
        freeze(dir.path()).expect("freeze");
        assert_eq!(
            check(dir.path(), &seal),
            Err("its pyvenv.cfg was changed".to_owned())
        );
        remove(dir.path()).expect("clean up");
    }

    #[test]
    fn a_file_of_another_user_is_refused() {
        if current_user() != 0 {
            return; // only root can give a file away
        }
        let dir = venv();
        let seal = seal_of(dir.path()).expect("seal");
        freeze(dir.path()).expect("freeze");
        let init = dir
            .path()
            .join("lib/python3.11/site-packages/pkg/__init__.py");
        std::os::unix::fs::lchown(&init, Some(1), None).expect("chown");
        let why = check(dir.path(), &seal).expect_err("another owner");
        assert!(why.contains("belongs to user 1"), "{why}");
        remove(dir.path()).expect("clean up");
    }

    #[test]
    fn a_read_only_folder_is_removed() {
        let dir = venv();
        let env = dir.path().to_path_buf();
        freeze(&env).expect("freeze");
        let mode = std::fs::metadata(env.join("lib"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o222, 0, "folders are read-only");
        remove(&env).expect("remove");
        assert!(!env.exists());
        assert!(Path::new("/usr/bin").exists(), "no link was followed");
    }
}
