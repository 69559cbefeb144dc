//! Issue 19, bounded disk: a backup is refused up front when the disk lacks
//! room for it, and a disk that fills while it is written leaves neither a
//! partial file nor a `database_backups` row.

use super::*;

/// A database of about `megabytes` MB (a large setting value).
fn database_of(megabytes: usize) -> Connection {
    let conn = crate::store::open_in_memory().expect("db");
    // A JSON string, as settings values are.
    let value = format!("\"{}\"", "x".repeat(megabytes << 20));
    crate::store::settings::put(&conn, "ballast", &value, "t").expect("put");
    conn
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

#[test]
fn a_backup_larger_than_the_free_space_is_refused_with_the_figures() {
    let home = tempfile::tempdir().expect("tmp");
    let conn = database_of(2);
    let e = take_with(
        &conn,
        home.path(),
        (Reason::Manual, None),
        "2025-01-01T00:00:00.000Z",
        |_| 1 << 20,
    )
    .expect_err("1 MB free is not enough for a 2 MB database");
    assert_eq!(e.code(), crate::error::ErrorCode::DiskFull, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with("a backup of the database needs "),
        "{text}"
    );
    assert!(text.contains("but only 1.0 MB is free"), "{text}");
    assert!(
        text.contains(&home.path().join("backups").display().to_string()),
        "{text}"
    );
    assert_eq!(files_in(&home.path().join("backups")), 0, "no file written");
    assert!(list(&conn).expect("list").is_empty(), "no row recorded");
    // With room, the same backup is taken and recorded.
    take(
        &conn,
        home.path(),
        Reason::Manual,
        None,
        "2025-01-01T00:00:01.000Z",
    )
    .expect("room");
    assert_eq!(list(&conn).expect("list").len(), 1);
}

/// A small tmpfs (root only; `None` elsewhere, and the test says so).
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(megabytes: u32) -> Option<Self> {
        let dir = tempfile::tempdir().expect("tmp");
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn a_disk_that_fills_while_a_backup_is_written_leaves_nothing_behind() {
    let Some(disk) = SmallDisk::mount(1) else {
        eprintln!("SKIPPED: mounting a tmpfs needs root (CI runs as root)");
        return;
    };
    let conn = database_of(3);
    // The up-front check is told there is room, so the write itself fails.
    let e = take_with(
        &conn,
        disk.0.path(),
        (Reason::PreFlowRun, Some("fr_1")),
        "2025-01-01T00:00:00.000Z",
        |_| u64::MAX,
    )
    .expect_err("3 MB do not fit on a 1 MB disk");
    assert_eq!(e.code(), crate::error::ErrorCode::DiskFull, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with("writing the backup ") && text.contains("the disk is full"),
        "{text}"
    );
    assert_eq!(
        files_in(&disk.0.path().join("backups")),
        0,
        "the partial backup file is removed"
    );
    assert!(list(&conn).expect("list").is_empty(), "no row recorded");
    // The database itself is untouched.
    let kept = crate::store::settings::get(&conn, "ballast").expect("get");
    assert_eq!(kept.map(|v| v.len()), Some((3 << 20) + 2));
}
