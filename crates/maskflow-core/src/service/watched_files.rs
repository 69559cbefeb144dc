//! The files of a watched folder, which another account may write to
//! (issue 39): each is looked at without following links (`lstat`), a link
//! or special file is skipped with a reason, an input is read through the
//! one descriptor that was checked (opened with `O_NOFOLLOW`, then
//! `fstat`ed), hashed and copied from it into a private staging file that
//! the run reads, and an output is written into a new file (`O_EXCL`,
//! `O_NOFOLLOW`) with the input's permissions at most, then renamed over
//! its name — so a link an attacker left at that name is replaced, never
//! written through. Blocking I/O: the scheduler calls it off its thread.

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Largest file a watched folder runs on (a sparse 1 TiB file would hold
/// the scan for many minutes).
pub const MAX_WATCHED_FILE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// What a folder entry is, looked at without following it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file: its size and modification time.
    File {
        /// Bytes.
        size: i64,
        /// Milliseconds since the epoch.
        mtime_ms: i64,
    },
    /// Not run: why (a link, a special file, too big).
    Skipped(String),
}

fn mtime_ms(meta: &Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

/// `path` as it is in the folder (`None`: gone, or a subfolder).
pub fn look(path: &Path) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let t = meta.file_type();
    let skipped = |why: String| Some(Entry::Skipped(why));
    if t.is_dir() {
        None
    } else if t.is_symlink() {
        skipped("a symbolic link (Maskflow does not follow links in a watched folder)".into())
    } else if !t.is_file() {
        skipped("a special file (a pipe, socket or device), not a regular file".into())
    } else if meta.len() > MAX_WATCHED_FILE_BYTES {
        skipped(too_big(meta.len()))
    } else {
        Some(Entry::File {
            size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
            mtime_ms: mtime_ms(&meta),
        })
    }
}

fn too_big(len: u64) -> String {
    format!("{len} bytes, more than the {MAX_WATCHED_FILE_BYTES} a watched folder runs on")
}

/// Opens `path` for reading without following a link at its name (nor
/// blocking on a pipe), and answers it only if it is a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<(File, Metadata)> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok((file, meta))
}

/// The permission bits of `meta` (0o600 where there are none to read).
pub fn mode_of(meta: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o777
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0o600
    }
}

/// A file read through its checked descriptor: its state, its SHA-256 and
/// its permissions; `copy_to` also receives its bytes (the staging file).
#[derive(Debug, Clone)]
pub struct ReadFile {
    /// Bytes.
    pub size: i64,
    /// Milliseconds since the epoch.
    pub mtime_ms: i64,
    /// Hex SHA-256 of what was read.
    pub sha256: String,
    /// Its permission bits.
    pub mode: u32,
}

/// Hashes `path` (a regular file, not followed) and, with `copy_to`,
/// copies the same bytes into a new private file there.
pub fn read(path: &Path, copy_to: Option<&Path>) -> std::io::Result<ReadFile> {
    let (mut file, meta) = open_regular(path)?;
    if meta.len() > MAX_WATCHED_FILE_BYTES {
        return Err(std::io::Error::other(too_big(meta.len())));
    }
    let mut out = match copy_to {
        Some(dst) => Some(create_new(dst, 0o600)?),
        None => None,
    };
    let mut hasher = Sha256::new();
    let mut buf = vec![0_u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_WATCHED_FILE_BYTES {
            return Err(std::io::Error::other(
                "the file grew past the limit while read",
            ));
        }
        hasher.update(&buf[..n]);
        if let Some(out) = out.as_mut() {
            out.write_all(&buf[..n])?;
        }
    }
    Ok(ReadFile {
        size: i64::try_from(meta.len()).unwrap_or(i64::MAX),
        mtime_ms: mtime_ms(&meta),
        sha256: format!("{:x}", hasher.finalize()),
        mode: mode_of(&meta),
    })
}

/// A new file at `path` (never an existing one, never through a link),
/// with permissions `mode`.
fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    options.open(path)
}

/// Writes `src`'s bytes to `dst` as a new file with permissions `mode` at
/// most: into a hidden temporary name beside it, then renamed over `dst`
/// (replacing whatever entry is there, a link included, without writing
/// through it).
pub fn place(src: &Path, dst: &Path, mode: u32, unique: &str) -> std::io::Result<()> {
    let dir = dst.parent().unwrap_or(Path::new("."));
    let name = dst
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = dir.join(format!(".{name}.{unique}.part"));
    let written = write_then_rename(src, &tmp, dst, mode & 0o666);
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn write_then_rename(src: &Path, tmp: &Path, dst: &Path, mode: u32) -> std::io::Result<()> {
    let mut input = File::open(src)?;
    let mut out = create_new(tmp, mode)?;
    std::io::copy(&mut input, &mut out)?;
    out.sync_all()?;
    std::fs::rename(tmp, dst)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn links_and_pipes_are_skipped_and_a_link_at_an_output_is_replaced() {
        let dir = tempfile::tempdir().expect("tmp");
        let d = dir.path();
        std::fs::write(d.join("private.csv"), "secret\n").expect("write");
        std::fs::set_permissions(
            d.join("private.csv"),
            std::fs::Permissions::from_mode(0o600),
        )
        .expect("chmod");
        std::os::unix::fs::symlink(d.join("private.csv"), d.join("in.csv")).expect("link");
        assert!(matches!(look(&d.join("in.csv")), Some(Entry::Skipped(w)) if w.contains("link")));
        assert!(read(&d.join("in.csv"), None).is_err(), "not followed");
        let fifo = d.join("pipe.csv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        assert!(matches!(look(&fifo), Some(Entry::Skipped(w)) if w.contains("special")));
        assert!(
            read(&fifo, None).is_err(),
            "a pipe is not read (nor waited on)"
        );

        let got = read(&d.join("private.csv"), Some(&d.join("staged"))).expect("read");
        assert_eq!(got.mode, 0o600);
        assert_eq!(
            std::fs::read_to_string(d.join("staged")).expect("staged"),
            "secret\n"
        );

        std::fs::write(d.join("victim"), "mine\n").expect("victim");
        std::os::unix::fs::symlink(d.join("victim"), d.join("out.csv")).expect("link");
        place(&d.join("staged"), &d.join("out.csv"), got.mode, "t1").expect("place");
        assert_eq!(
            std::fs::read_to_string(d.join("victim")).expect("victim"),
            "mine\n"
        );
        let meta = std::fs::symlink_metadata(d.join("out.csv")).expect("out");
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}
