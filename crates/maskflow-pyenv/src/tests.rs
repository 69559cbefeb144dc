//! Environments made with the real `uv` from PyPI (uv's cache under
//! `~/.cache/maskflow-test/uv`, so reruns are fast). Small pure-Python
//! packages keep them quick. The hostile ones (issue 26) use a package
//! index served on loopback by `python3 -m http.server` with a wheel made
//! here, whose `.pth` file writes a marker when any interpreter of the
//! environment starts with site processing.

use std::sync::Mutex;

use super::*;
use maskflow_runner::{find_python, missing_packages};

#[path = "tests_hostile.rs"]
mod hostile;

/// Whether `uv` is there; without it the uv tests skip loudly, unless
/// `MASKFLOW_REQUIRE_LLM_SERVERS=1` (CI), where they fail.
pub(crate) fn have_uv() -> bool {
    if uv::find(Path::new("/nonexistent"), Some(&base())).is_ok() {
        return true;
    }
    if std::env::var("MASKFLOW_REQUIRE_LLM_SERVERS").is_ok_and(|v| v == "1") {
        panic!("uv is needed: python3 -m pip install uv (or set MASKFLOW_UV)");
    }
    eprintln!("SKIPPED: uv was not found (python3 -m pip install uv, or set MASKFLOW_UV)");
    false
}

/// uv's cache shared by the tests of every run.
pub(crate) fn test_cache() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".cache").join("maskflow-test").join("uv")
}

pub(crate) fn base() -> Python {
    find_python(None).expect("python3 on PATH")
}

pub(crate) fn quiet() -> impl Fn(EnvProgress) + Send + Sync {
    |_| {}
}

#[test]
fn pinned_packages_are_read_from_the_lock() {
    let lock = Lock {
        python: "3.11".into(),
        requirements: vec!["xlsxwriter".into()],
        pinned: "et-xmlfile==2.0.0 \\\n    --hash=sha256:ab\n    # via openpyxl\nopenpyxl==3.1.5 ; python_version >= '3.8' \\\n    --hash=sha256:cd\n".into(),
    };
    assert_eq!(
        lock.packages(),
        vec!["et-xmlfile==2.0.0", "openpyxl==3.1.5"]
    );
    let py = base();
    let id = lock.environment_id(&py);
    assert_eq!(id.len(), 16);
    assert_eq!(id, lock.environment_id(&py), "stable");
    let other = Lock {
        pinned: lock.pinned.replace("3.1.5", "3.1.4"),
        ..lock.clone()
    };
    assert_ne!(
        id,
        other.environment_id(&py),
        "a different pin set, a different environment"
    );
}

#[test]
fn an_environment_is_made_once_then_reused_and_removed() {
    if !have_uv() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path()).with_cache(test_cache());
    let py = base();
    let seen = Mutex::new(Vec::<EnvProgress>::new());
    let record = |p: EnvProgress| seen.lock().expect("lock").push(p);
    let lock = envs
        .resolve(&py, &["XlsxWriter".into(), "et_xmlfile".into()], &record)
        .expect("resolve");
    let packages = lock.packages();
    assert_eq!(packages.len(), 2, "{packages:?}");
    assert!(packages[0].starts_with("et-xmlfile=="), "{packages:?}");
    assert!(lock.pinned.contains("--hash=sha256:"), "hashed");

    let (env_py, info) = envs.ensure(&py, &lock, &record).expect("ensure");
    assert_eq!(info.packages, packages);
    let dir = envs.root().join(&info.id);
    assert!(dir.join(MARKER).is_file());
    assert!(
        env_py.runtime.iter().any(|r| r.starts_with(&dir)),
        "{:?}",
        env_py.runtime
    );
    let ok = Command::new(&env_py.executable)
        .args(["-c", "import xlsxwriter, et_xmlfile"])
        .status()
        .expect("python");
    assert!(ok.success());
    assert_eq!(
        missing_packages(&env_py, &["XlsxWriter".into(), "tqdm".into()]).expect("check"),
        vec!["tqdm".to_owned()],
        "the environment's packages are found without starting its interpreter"
    );
    // A friend's script runs in the sandbox on the environment, described
    // from its files (never probed), importing its packages.
    let isolation = maskflow_runner::isolation_status();
    if let Err(why) = &isolation {
        eprintln!("SKIPPED the sandboxed run: {why}");
    }
    if isolation.is_ok() {
        let work = tempfile::tempdir().expect("work");
        let request = maskflow_runner::RunRequest {
            script: "import xlsxwriter\nwb = xlsxwriter.Workbook('outputs/x.xlsx')\nwb.add_worksheet().write(0, 0, 'ok')\nwb.close()\n".into(),
            inputs: Default::default(),
            requirements: vec!["XlsxWriter".into()],
            workdir: work.path().join("run"),
            limits: Default::default(),
            shared_folders: Vec::new(),
        };
        let run = maskflow_runner::Runner::new(None)
            .run_with(&env_py, &request, &Default::default())
            .expect("run");
        assert!(run.succeeded(), "{} {}", run.message, run.stderr);
        assert!(run.isolated, "{}", run.message);
    }
    let stages: Vec<String> = seen
        .lock()
        .expect("lock")
        .iter()
        .map(|p| p.stage.clone())
        .collect();
    for stage in ["resolving", "creating", "installing", "ready"] {
        assert!(stages.iter().any(|s| s == stage), "{stage} in {stages:?}");
    }
    // No temporary folder is left.
    let left: Vec<_> = std::fs::read_dir(envs.root())
        .expect("root")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from(&info.id)]);

    // Reuse: the same lock finds it, with nothing installed (no progress).
    seen.lock().expect("lock").clear();
    let (again, info2) = envs.ensure(&py, &lock, &record).expect("reuse");
    assert_eq!(info2.id, info.id);
    assert_eq!(again.executable, env_py.executable);
    assert!(seen.lock().expect("lock").is_empty());

    let listed = envs.list();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].size > 10_000, "{}", listed[0].size);
    assert_eq!(listed[0].packages, packages);

    assert!(matches!(envs.remove("../x"), Err(EnvError::Unknown(_))));
    envs.remove(&info.id).expect("remove");
    assert!(envs.list().is_empty());
    assert!(!dir.exists());
}

/// DuckDB, of the curated set, starts in the sandbox (it reads its own
/// cgroup's limits at `connect()`, issue 43), sizes itself to the run's
/// memory limit where a cgroup holds it, and spills a grouping larger than
/// its memory into its temporary folder inside the run folder (counted
/// against the disk limit), which it removes again.
#[test]
fn duckdb_runs_out_of_core_in_the_sandbox() {
    if !have_uv() {
        return;
    }
    if let Err(why) = maskflow_runner::isolation_status() {
        eprintln!("SKIPPED the DuckDB sandbox test: {why}");
        return;
    }
    assert!(curated::is_curated("duckdb"));
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path()).with_cache(test_cache());
    let py = base();
    let lock = envs
        .resolve(&py, &["duckdb".into()], &quiet())
        .expect("resolve duckdb");
    let (env_py, _) = envs.ensure(&py, &lock, &quiet()).expect("ensure duckdb");
    let script = r#"import json, os, threading, time
import duckdb
con = duckdb.connect()
memory, temp = con.execute("select current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
con.execute("SET memory_limit='48MB'")
con.execute("SET preserve_insertion_order=false")
seen = set()
def watch():
    while not done:
        if os.path.isdir('.tmp'):
            seen.update(os.listdir('.tmp'))
        time.sleep(0.005)
done = False
t = threading.Thread(target=watch); t.start()
groups = con.execute("select count(*), sum(n) from (select i % 1500000 as k, count(*) as n, list(i) as l from range(4500000) t(i) group by k)").fetchone()
done = True; t.join()
con.close()
with open('outputs/groups.json', 'w') as f:
    json.dump({'memory': memory, 'temp': temp, 'groups': groups, 'spilled': sorted(seen), 'left': os.path.exists('.tmp') and os.listdir('.tmp')}, f)
"#;
    let work = tempfile::tempdir().expect("work");
    let request = maskflow_runner::RunRequest {
        script: script.into(),
        inputs: Default::default(),
        requirements: vec!["duckdb".into()],
        workdir: work.path().join("run"),
        limits: maskflow_runner::Limits {
            memory_bytes: 1 << 30,
            ..Default::default()
        },
        shared_folders: Vec::new(),
    };
    let run = maskflow_runner::Runner::new(None)
        .run_with(&env_py, &request, &Default::default())
        .expect("run");
    assert!(run.succeeded(), "{} {}", run.message, run.stderr);
    assert!(run.isolated, "{}", run.message);
    let text = std::fs::read_to_string(work.path().join("run/outputs/groups.json")).expect("out");
    let seen: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        seen["groups"],
        serde_json::json!([1_500_000, 4_500_000]),
        "{seen}"
    );
    assert_eq!(seen["temp"], ".tmp", "inside the run folder: {seen}");
    assert!(
        seen["spilled"].as_array().is_some_and(|a| !a.is_empty()),
        "the grouping spilled to disk: {seen}"
    );
    assert!(
        matches!(&seen["left"], serde_json::Value::Bool(false))
            || seen["left"] == serde_json::json!([]),
        "its temporary files are removed: {seen}"
    );
    let held_by_cgroup = run
        .limit("memory")
        .and_then(|l| l.mechanism.as_deref())
        .is_some_and(|m| m.contains("cgroup"));
    if held_by_cgroup {
        // DuckDB's default: 80 % of the limit it found (1 GiB here).
        let memory = seen["memory"].as_str().unwrap_or_default();
        let mib: f64 = memory
            .strip_suffix(" MiB")
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        assert!(
            (512.0..1024.0).contains(&mib),
            "sized to the run's limit (819.1 MiB): {seen}"
        );
    }
}

#[test]
fn an_unknown_package_fails_clearly_and_leaves_nothing() {
    if !have_uv() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path()).with_cache(test_cache());
    let err = envs
        .resolve(
            &base(),
            &["surely-not-a-package-maskflow-xyz".into()],
            &quiet(),
        )
        .expect_err("unknown");
    let text = err.to_string();
    assert!(
        text.contains("resolving the Python packages surely-not-a-package-maskflow-xyz failed"),
        "{text}"
    );
    assert!(text.contains("not found"), "{text}");
    let left = std::fs::read_dir(envs.root()).expect("root").count();
    assert_eq!(left, 0);
}

#[test]
fn an_unreachable_index_fails_the_install_and_keeps_nothing() {
    if !have_uv() {
        return;
    }
    let home = tempfile::tempdir().expect("home");
    let cache = tempfile::tempdir().expect("empty cache");
    let envs = Environments::new(home.path())
        .with_cache(cache.path())
        .with_index("http://127.0.0.1:9/simple");
    let py = base();
    // A lock naming a version no cache holds, and an index nobody serves.
    let lock = Lock {
        python: format!("{}.{}", py.version.0, py.version.1),
        requirements: vec!["xlsxwriter".into()],
        pinned: "xlsxwriter==3.2.0 \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n".into(),
    };
    let err = envs.ensure(&py, &lock, &quiet()).expect_err("offline");
    let text = err.to_string();
    assert!(text.contains("installing the Python environment"), "{text}");
    assert!(text.contains("xlsxwriter==3.2.0"), "{text}");
    assert!(
        text.contains("127.0.0.1:9"),
        "the configured index was asked: {text}"
    );
    let left = std::fs::read_dir(envs.root()).expect("root").count();
    assert_eq!(left, 0, "the half-made environment was removed");
}

#[test]
fn uv_is_installed_into_the_data_folder_when_the_user_asks() {
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path());
    let lines = Mutex::new(0usize);
    let count = |_: EnvProgress| *lines.lock().expect("lock") += 1;
    let bin = envs.install_uv(&base(), &count).expect("install uv");
    assert_eq!(bin, uv::installed_path(home.path()));
    let out = Command::new(&bin)
        .arg("--version")
        .output()
        .expect("uv runs");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("uv "));
    assert!(
        *lines.lock().expect("lock") > 0,
        "pip's progress was passed on"
    );
    let left: Vec<_> = std::fs::read_dir(home.path().join("tools"))
        .expect("tools")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("uv")],
        "no temporary folder left"
    );
}

#[test]
fn a_lock_for_another_python_is_refused_with_what_to_do() {
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path());
    let lock = Lock {
        python: "3.8".into(),
        requirements: vec!["xlsxwriter".into()],
        pinned: "xlsxwriter==3.2.0\n".into(),
    };
    let err = envs
        .ensure(&base(), &lock, &quiet())
        .expect_err("another Python");
    let text = err.to_string();
    assert!(text.contains("locked for Python 3.8"), "{text}");
    assert!(text.contains("Settings"), "{text}");
    assert!(!envs.root().exists(), "nothing was made");
}

#[test]
fn uv_caches_under_the_data_folder_unless_the_user_chose_a_cache() {
    // Regression (#28): uv's cache lived in the user's home, outside
    // the data folder, and Storage never counted it.
    let home = Path::new("/data/maskflow");
    assert_eq!(
        default_cache(home, None),
        Some(PathBuf::from("/data/maskflow/cache/uv"))
    );
    assert_eq!(default_cache(home, Some("/mine".into())), None);
    let envs = Environments {
        home: home.to_path_buf(),
        cache: default_cache(home, None),
        index: uv::DEFAULT_INDEX.to_owned(),
    };
    let cmd = envs.uv_command(Path::new("uv"));
    let set = cmd
        .get_envs()
        .find(|(k, _)| *k == "UV_CACHE_DIR")
        .and_then(|(_, v)| v);
    assert_eq!(set, Some(Path::new("/data/maskflow/cache/uv").as_os_str()));
}
