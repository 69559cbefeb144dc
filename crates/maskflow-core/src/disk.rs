//! Free space on the disk under the data folder: a write that would fill it
//! is refused before it starts, with what needed how much and where.

use std::path::Path;

use crate::error::{CoreError, Result};

/// Space left free beyond what a write needs: SQLite's journal and the
/// system's own files need room too.
const RESERVE_BYTES: u64 = 8 << 20;

/// Bytes free for this user on the disk holding `path` (its nearest existing
/// ancestor); `u64::MAX` when the system cannot tell, so nothing is refused
/// for want of a figure.
pub fn available_space(path: &Path) -> u64 {
    let mut at = Some(path);
    while let Some(p) = at {
        if p.exists() {
            return fs4::available_space(p).unwrap_or(u64::MAX);
        }
        at = p.parent();
    }
    u64::MAX
}

/// Refuses a write of `needed` bytes into `dir` when the disk cannot take it.
pub fn ensure_space_in(dir: &Path, needed: u64, what: &str) -> Result<()> {
    ensure_free(available_space(dir), dir, needed, what)
}

/// [`ensure_space_in`] with the free figure already measured.
pub fn ensure_free(free: u64, dir: &Path, needed: u64, what: &str) -> Result<()> {
    if free >= needed.saturating_add(RESERVE_BYTES) {
        return Ok(());
    }
    Err(CoreError::DiskFull(format!(
        "{what} needs {} but only {} is free on the disk holding {}; free some space \
         (Settings → Storage shows what Maskflow keeps and clears it)",
        human_bytes(needed.saturating_add(RESERVE_BYTES)),
        human_bytes(free),
        dir.display()
    )))
}

/// `1.5 MB`-style sizes for messages.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(1_500_000), "1.5 MB");
        assert_eq!(human_bytes(20_000_000_000), "20.0 GB");
    }

    #[test]
    fn a_write_larger_than_the_disk_is_refused_with_the_figures() {
        let dir = tempfile::tempdir().expect("tmp");
        let e = ensure_space_in(dir.path(), u64::MAX / 2, "the upload big.csv")
            .expect_err("no disk is that large");
        assert!(matches!(e, CoreError::DiskFull(_)));
        let text = e.to_string();
        assert!(text.starts_with("the upload big.csv needs "), "{text}");
        assert!(text.contains("is free on the disk holding"), "{text}");
        ensure_space_in(dir.path(), 1, "a byte").expect("a byte fits");
    }

    #[test]
    fn a_missing_folder_is_measured_on_its_nearest_ancestor() {
        let dir = tempfile::tempdir().expect("tmp");
        assert!(available_space(&dir.path().join("a/b/c")) > 0);
    }
}
