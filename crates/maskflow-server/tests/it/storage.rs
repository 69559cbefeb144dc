//! Issue 19, bounded disk: uploads that join no workflow expire (at
//! start-up and hourly), the storage settings show and clear what the data
//! folder keeps, and a full disk is a clear `507 disk_full` that loses no
//! stored state (on a real, small tmpfs when the test runs as root).

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use common::{app, call, send, upload};
use maskflow_clock::UlidGen;
use maskflow_core::testing::OffsetClock;
use maskflow_core::{Service, ServiceConfig};
use serde_json::{Value, json};

fn open(home: &Path, clock: Arc<OffsetClock>) -> Service {
    let mut config = ServiceConfig::from_settings(home);
    config.ids = Arc::new(UlidGen::new(clock.clone()));
    config.clock = clock;
    Service::open(config).expect("service")
}

/// A CSV as people keep them: names, dates, amounts and a prose column.
fn customers(rows: usize, seed: usize) -> Vec<u8> {
    let first = [
        "Maria",
        "John",
        "Aiko",
        "Oluwaseun",
        "Grace",
        "Pedro",
        "Ingrid",
    ];
    let last = [
        "Okafor",
        "Smith",
        "Tanaka",
        "Lindqvist",
        "Moreau",
        "Alvarez",
    ];
    let mut out = String::from("customer,signed_up,balance,notes\n");
    for i in 0..rows {
        let n = i + seed * rows;
        out.push_str(&format!(
            "{} {},2024-{:02}-{:02},{}.{:02},\"Called on {} about invoice INV-{:06}; asked to move the meeting.\"\n",
            first[n % first.len()],
            last[n % last.len()],
            n % 12 + 1,
            n % 28 + 1,
            n * 37 % 9000,
            n % 100,
            ["Monday", "Friday"][n % 2],
            n
        ));
    }
    out.into_bytes()
}

fn kind<'a>(view: &'a Value, kind: &str) -> &'a Value {
    view["kinds"]
        .as_array()
        .and_then(|k| k.iter().find(|k| k["kind"] == kind))
        .unwrap_or_else(|| panic!("no {kind} in {view}"))
}

fn bytes(view: &Value, k: &str) -> u64 {
    kind(view, k)["bytes"].as_u64().expect("bytes")
}

#[tokio::test]
async fn a_folder_flooded_with_orphan_uploads_returns_to_its_size_after_expiry() {
    let home = tempfile::tempdir().expect("tmp");
    let clock = Arc::new(OffsetClock::default());
    let service = open(home.path(), clock.clone());
    let api = app(service);

    let (s, start) = call(&api, "GET", "/api/settings/storage", None).await;
    assert_eq!(s, StatusCode::OK, "{start}");
    assert_eq!(start["upload_expiry_hours"], 24);
    assert_eq!(bytes(&start, "uploads"), 0);
    assert!(start["free_bytes"].as_u64().expect("free") > 0);

    // One file joins a workflow: it is kept whatever the expiry.
    let (s, kept) = send(&api, upload(&[("customers.csv", &customers(200, 0))])).await;
    assert_eq!(s, StatusCode::OK, "{kept}");
    let kept_id = kept[0]["file_id"].as_str().expect("id").to_owned();
    let (s, wf) = call(
        &api,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [kept_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{wf}");
    let (_, with_kept) = call(&api, "GET", "/api/settings/storage", None).await;
    let kept_bytes = bytes(&with_kept, "uploads");
    assert!(kept_bytes > 10_000, "{with_kept}");

    // The flood: uploads that never become part of a workflow.
    for i in 1..=30 {
        let (s, r) = send(
            &api,
            upload(&[(&format!("export-{i}.csv"), &customers(2000, i))]),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{r}");
    }
    // And a folder a crashed upload left without a row.
    std::fs::create_dir_all(home.path().join("files/file_crashed")).expect("mkdir");
    std::fs::write(
        home.path().join("files/file_crashed/half.csv"),
        vec![b'x'; 50_000],
    )
    .expect("write");

    let (_, flooded) = call(&api, "GET", "/api/settings/storage", None).await;
    assert!(
        bytes(&flooded, "uploads") > kept_bytes + 30 * 100_000,
        "{flooded}"
    );
    // Just uploaded: not even "Clear" takes them yet (one may be on its way
    // into a workflow), and nothing has expired.
    assert_eq!(kind(&flooded, "uploads")["clearable_bytes"], 0, "{flooded}");

    // The expiry is a setting, checked before it is stored.
    let (s, e) = call(
        &api,
        "PUT",
        "/api/settings/storage",
        Some(json!({"upload_expiry_hours": 100000})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["message"]
            .as_str()
            .expect("message")
            .contains("upload_expiry_hours"),
        "{e}"
    );
    let (s, set) = call(
        &api,
        "PUT",
        "/api/settings/storage",
        Some(json!({"upload_expiry_hours": 2})),
    )
    .await;
    assert_eq!(
        (s, &set["upload_expiry_hours"]),
        (StatusCode::OK, &json!(2)),
        "{set}"
    );

    // Three hours later the app starts again: the start-up sweep removes
    // every upload older than the expiry that joined no workflow.
    drop(api);
    clock.set_offset(3 * 3_600_000);
    let api = app(open(home.path(), clock.clone()));
    let (_, after) = call(&api, "GET", "/api/settings/storage", None).await;
    assert_eq!(bytes(&after, "uploads"), kept_bytes, "{after}");
    assert!(!home.path().join("files/file_crashed").exists());
    let entries = std::fs::read_dir(home.path().join("files"))
        .expect("files")
        .count();
    assert_eq!(entries, 1, "only the workflow's file is left");

    // The workflow and its file are untouched.
    let id = wf["workflow_id"].as_str().expect("wf");
    let (s, got) = call(&api, "GET", &format!("/api/workflows/{id}"), None).await;
    assert_eq!(s, StatusCode::OK, "{got}");
    let (s, again) = call(
        &api,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [kept[0]["file_id"]]})),
    )
    .await;
    assert_eq!(
        s,
        StatusCode::CREATED,
        "the kept file is still usable: {again}"
    );
}

#[tokio::test]
async fn clear_removes_old_unattached_uploads_and_refuses_what_it_cannot_clear() {
    let home = tempfile::tempdir().expect("tmp");
    let clock = Arc::new(OffsetClock::default());
    let api = app(open(home.path(), clock.clone()));
    for i in 0..3 {
        let (s, r) = send(
            &api,
            upload(&[(&format!("notes-{i}.csv"), &customers(100, i))]),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{r}");
    }
    let (s, none) = call(&api, "POST", "/api/settings/storage/uploads/clear", None).await;
    assert_eq!(
        (s, &none["removed"]),
        (StatusCode::OK, &json!(0)),
        "too new: {none}"
    );

    clock.set_offset(20 * 60_000);
    let (_, view) = call(&api, "GET", "/api/settings/storage", None).await;
    let clearable = kind(&view, "uploads")["clearable_bytes"]
        .as_u64()
        .expect("bytes");
    assert_eq!(clearable, bytes(&view, "uploads"), "{view}");
    let (s, done) = call(&api, "POST", "/api/settings/storage/uploads/clear", None).await;
    assert_eq!(s, StatusCode::OK, "{done}");
    assert_eq!(done["removed"], 3);
    assert_eq!(done["freed_bytes"].as_u64(), Some(clearable));
    let (_, view) = call(&api, "GET", "/api/settings/storage", None).await;
    assert_eq!(bytes(&view, "uploads"), 0, "{view}");

    let (s, e) = call(&api, "POST", "/api/settings/storage/database/clear", None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["message"]
            .as_str()
            .expect("message")
            .contains("cannot be cleared"),
        "{e}"
    );
    let (s, _) = call(&api, "POST", "/api/settings/storage/everything/clear", None).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn uvs_cache_is_counted_in_storage_and_cleared_from_it() {
    // Regression (#28): uv's cache lived outside the data folder and
    // Storage never showed it.
    let home = tempfile::tempdir().expect("tmp");
    // `<data folder>/cache/uv`, where Maskflow's own uv calls keep it.
    let cache = home.path().join("cache").join("uv");
    std::fs::create_dir_all(cache.join("wheels-v5")).expect("cache");
    std::fs::write(
        cache.join("wheels-v5").join("tabulate.whl"),
        vec![7u8; 4096],
    )
    .expect("wheel");
    let api = app(open(home.path(), Arc::new(OffsetClock::default())));
    let (s, view) = call(&api, "GET", "/api/settings/storage", None).await;
    assert_eq!(s, StatusCode::OK, "{view}");
    let k = kind(&view, "package_cache");
    assert_eq!(k["bytes"].as_u64(), Some(4096), "{view}");
    assert_eq!(k["clearable_bytes"].as_u64(), Some(4096), "{view}");
    assert!(
        k["label"]
            .as_str()
            .is_some_and(|l| l.contains("package cache")),
        "{view}"
    );
    let (s, done) = call(
        &api,
        "POST",
        "/api/settings/storage/package_cache/clear",
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{done}");
    assert_eq!(done["freed_bytes"].as_u64(), Some(4096), "{done}");
    assert!(!cache.exists());
    let (_, after) = call(&api, "GET", "/api/settings/storage", None).await;
    assert_eq!(bytes(&after, "package_cache"), 0, "{after}");
    // Clearing an empty cache is not an error.
    let (s, _) = call(
        &api,
        "POST",
        "/api/settings/storage/package_cache/clear",
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
}

/// A small tmpfs as the data folder; `None` where mounting is not allowed
/// (not root): the test then says so and checks nothing.
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

#[tokio::test]
async fn a_full_disk_is_a_clear_error_and_loses_nothing() {
    let Some(disk) = SmallDisk::mount(24) else {
        eprintln!("SKIPPED: mounting a tmpfs needs root (CI runs as root)");
        if std::env::var_os("CI").is_some() && is_root() {
            panic!("running as root in CI, yet no tmpfs could be mounted");
        }
        return;
    };
    let home = disk.0.path().join("maskflow");
    let api = app(open(&home, Arc::new(OffsetClock::default())));
    let (s, first) = send(&api, upload(&[("customers.csv", &customers(300, 0))])).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    let (s, wf) = call(
        &api,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [first[0]["file_id"]]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{wf}");

    // Larger than the disk: refused before a byte is written.
    let big = customers(400_000, 1);
    assert!(big.len() > 24 << 20);
    let (s, e) = send(&api, upload(&[("big.csv", &big)])).await;
    assert_eq!(
        (s, e["error"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("disk_full")),
        "{e}"
    );
    let message = e["message"].as_str().expect("message");
    assert!(
        message.contains("this upload needs") && message.contains("is free on the disk holding"),
        "{message}"
    );

    // Without a length up front, the disk fills while writing: the same
    // error, and the partial copy is gone.
    let mut no_length = upload(&[("big.csv", &big)]);
    no_length
        .headers_mut()
        .remove(axum::http::header::CONTENT_LENGTH);
    let (s, e) = send(&api, no_length).await;
    assert_eq!(
        (s, e["error"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("disk_full")),
        "{e}"
    );
    assert!(
        e["message"]
            .as_str()
            .expect("message")
            .contains("the disk is full"),
        "{e}"
    );
    let entries = std::fs::read_dir(home.join("files"))
        .expect("files")
        .count();
    assert_eq!(entries, 1, "no half-written upload is left");

    // The database on a full disk: the write is refused as disk_full, and
    // what was stored before is intact; with room again, writes work.
    let ballast = disk.0.path().join("ballast");
    let free = fs_free(disk.0.path());
    std::fs::write(&ballast, vec![0u8; free as usize]).ok();
    let mut created = 1;
    let refused = loop {
        let (s, r) = call(
            &api,
            "POST",
            "/api/workflows",
            Some(json!({"file_ids": [first[0]["file_id"]]})),
        )
        .await;
        if s != StatusCode::CREATED {
            break (s, r);
        }
        created += 1;
        assert!(created < 5000, "the database never ran out of room");
    };
    assert_eq!(
        (refused.0, refused.1["error"].as_str()),
        (StatusCode::INSUFFICIENT_STORAGE, Some("disk_full")),
        "{}",
        refused.1
    );
    std::fs::remove_file(&ballast).expect("rm");
    let (s, list) = call(&api, "GET", "/api/workflows", None).await;
    assert_eq!(s, StatusCode::OK, "{list}");
    assert_eq!(
        list.as_array().map(Vec::len),
        Some(created),
        "every stored workflow is there: {list}"
    );
    let (s, more) = send(&api, upload(&[("small.csv", &customers(50, 2))])).await;
    assert_eq!(s, StatusCode::OK, "{more}");
}

fn fs_free(path: &Path) -> u64 {
    let out = std::process::Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(path)
        .output()
        .expect("df");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df figure")
}

fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}
