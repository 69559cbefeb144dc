//! Opening a file an outside client names (issue 39): the root check and
//! the open are one operation. The canonical path is opened once without
//! following a link at its name; the descriptor's own path (Linux:
//! `/proc/self/fd`) must still be that canonical path — inside the
//! client's folders, outside the data folder — and the file must have one
//! hard link (another link may lie anywhere, the data folder's uploads
//! included). What is then read comes from that descriptor: its bytes are
//! copied into a private staging file that the run reads, so swapping the
//! name for a link after the check changes nothing.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::Service;
use super::clients::ClientContext;
use super::watched_files;
use crate::error::{CoreError, Result};

/// A client's file, read through its checked descriptor into a private
/// copy; the copy's folder is removed when this is dropped.
#[derive(Debug)]
pub struct ClientFile {
    /// Where the file lies (canonical): what the client is told.
    pub canonical: PathBuf,
    /// The private copy, under the same file name: what is read.
    pub staged: PathBuf,
    folder: PathBuf,
}

impl Drop for ClientFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// The path the kernel gives the open descriptor, where it can tell.
fn descriptor_path(file: &File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// Opens `path` (canonical) once and checks the descriptor: still that
/// path, a regular file with one hard link.
pub fn open_checked(path: &Path, raw: &str) -> Result<File> {
    let bad = |m: String| CoreError::InvalidRequest(m);
    let (file, meta) = watched_files::open_regular(path).map_err(|_| {
        bad(format!(
            "{raw} changed while Maskflow opened it (it is a link or not a regular file now); \
             ask again"
        ))
    })?;
    if let Some(real) = descriptor_path(&file)
        && real != path
    {
        return Err(bad(format!(
            "{raw} changed while Maskflow opened it (a folder on its path was replaced); ask again"
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(bad(format!(
                "{raw} has {} hard links, and Maskflow cannot tell where the others lie \
                 (perhaps outside the folders this client may read, or in Maskflow's data \
                 folder); give a copy of the file instead",
                meta.nlink()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    Ok(file)
}

impl Service {
    /// The file at `raw`, checked ([`Service::client_path`] then
    /// [`open_checked`]) and copied from its descriptor into a private file.
    pub(super) fn client_file(&self, ctx: &ClientContext, raw: &str) -> Result<ClientFile> {
        let canonical = self.client_path(ctx, raw, true)?;
        let mut file = open_checked(&canonical, raw)?;
        let folder = self.home().join("clients/staging").join(self.id("in"));
        let name = canonical
            .file_name()
            .map_or_else(|| "input".into(), |n| n.to_owned());
        let staged = folder.join(name);
        let made = ClientFile {
            canonical,
            staged,
            folder,
        };
        std::fs::create_dir_all(&made.folder)
            .map_err(|e| CoreError::io(format!("creating {}", made.folder.display()), e))?;
        let mut options = File::options();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut out = options
            .open(&made.staged)
            .map_err(|e| CoreError::io(format!("creating {}", made.staged.display()), e))?;
        std::io::copy(&mut file, &mut out)
            .map_err(|e| CoreError::io(format!("reading {raw}"), e))?;
        Ok(made)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_and_a_swapped_name_are_refused() {
        let dir = tempfile::tempdir().expect("tmp");
        let d = dir.path().canonicalize().expect("canonical");
        std::fs::write(d.join("a.csv"), "x\n").expect("write");
        assert!(open_checked(&d.join("a.csv"), "a.csv").is_ok());
        std::fs::hard_link(d.join("a.csv"), d.join("b.csv")).expect("link");
        let e = open_checked(&d.join("a.csv"), "a.csv").expect_err("two links");
        assert!(e.to_string().contains("2 hard links"), "{e}");
        std::os::unix::fs::symlink(d.join("b.csv"), d.join("c.csv")).expect("symlink");
        let e = open_checked(&d.join("c.csv"), "c.csv").expect_err("a link");
        assert!(e.to_string().contains("changed while"), "{e}");
        // A folder on the path replaced by a link to another folder.
        std::fs::create_dir(d.join("real")).expect("mkdir");
        std::fs::write(d.join("real/f.csv"), "x\n").expect("write");
        std::os::unix::fs::symlink(d.join("real"), d.join("via")).expect("symlink");
        let e = open_checked(&d.join("via/f.csv"), "via/f.csv").expect_err("swapped folder");
        assert!(e.to_string().contains("folder on its path"), "{e}");
    }
}
