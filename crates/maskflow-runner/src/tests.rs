//! The runner's containment cases, each written to stay harmless when its
//! limit is not enforced (bounded loops, bounded allocations and writes).

use std::net::TcpListener;
use std::path::Path;

use serde_json::json;

use super::*;

fn request(dir: &Path, script: &str, limits: Limits) -> RunRequest {
    RunRequest {
        script: script.to_owned(),
        inputs: BTreeMap::new(),
        requirements: Vec::new(),
        workdir: dir.join("work"),
        limits,
        shared_folders: Vec::new(),
    }
}

/// The live processes (not zombies) whose command line holds `marker`, a
/// run's own folder: a script's processes carry its `inputs.json` path
/// (their pids inside the run's PID namespace mean nothing out here).
pub(crate) fn alive_with(marker: &Path) -> Vec<String> {
    let marker = marker.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            (cmdline.contains(&marker) && !matches!(state, 'Z' | 'X'))
                .then(|| format!("{pid} {state} {cmdline}"))
        })
        .collect()
}

fn run(req: &RunRequest) -> RunResult {
    Runner::new(None)
        .run(req, &AtomicBool::new(false))
        .expect("the run starts")
}

#[test]
fn a_script_reads_its_inputs_and_writes_outputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("people.csv");
    std::fs::write(&input, "name,age\nJohn Smith,41\nAda Lovelace,36\n").expect("write");
    let mut req = request(
        dir.path(),
        r#"
import csv, json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
assert os.path.abspath(sys.argv[1]) == os.path.abspath("inputs.json")
rows = list(csv.DictReader(open(fields["people"])))
try:
    open(fields["people"], "a").write("x")
    writable = True
except OSError:
    writable = False
with open("outputs/older.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "age", "min_age"])
    for r in rows:
        if int(r["age"]) > fields["min_age"]:
            w.writerow([r["name"], r["age"], fields["min_age"]])
print("rows", len(rows), "input writable", writable)
"#,
        Limits::default(),
    );
    req.inputs
        .insert("people".into(), InputValue::File(input.clone()));
    req.inputs
        .insert("min_age".into(), InputValue::Value(json!(40)));
    let result = run(&req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert!(result.stdout.contains("rows 2"), "{}", result.stdout);
    if !sandbox::is_root() {
        assert!(result.stdout.contains("input writable False"));
    }
    assert_eq!(result.outputs.len(), 1);
    let out = &result.outputs[0];
    assert_eq!(out.name, "older.csv");
    assert_eq!(out.row_count, Some(1));
    assert_eq!(
        out.preview_rows.as_ref().expect("preview")[1],
        vec!["John Smith", "41", "40"]
    );
    // The original is untouched.
    assert_eq!(
        std::fs::read_to_string(&input).expect("read"),
        "name,age\nJohn Smith,41\nAda Lovelace,36\n"
    );
}

#[test]
fn an_endless_loop_is_stopped_with_its_whole_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        timeout: Duration::from_secs(2),
        ..Limits::default()
    };
    let req = request(
        dir.path(),
        r#"
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)", sys.argv[1]])
open("outputs/child.started", "w").write("yes")
while True:
    pass
"#,
        limits,
    );
    let result = run(&req);
    assert_eq!(result.status, RunStatus::TimedOut, "{result:#?}");
    assert!(result.message.contains("longer than 2 s"));
    assert!(req.workdir.join("outputs/child.started").is_file());
    let left = alive_with(&req.workdir);
    assert!(left.is_empty(), "the script's child survived: {left:?}");
}

#[test]
fn memory_far_past_the_limit_is_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        memory_bytes: 128 << 20,
        ..Limits::default()
    };
    // At most 1.5 GiB even if no limit holds.
    let req = request(
        dir.path(),
        "blocks = []\nfor i in range(96):\n    blocks.append(b'x' * (16 << 20))\nprint('allocated everything')\n",
        limits,
    );
    let result = run(&req);
    assert_eq!(result.status, RunStatus::MemoryLimit, "{result:#?}");
    assert!(!result.stdout.contains("allocated everything"));
    assert!(
        result
            .limit("memory")
            .and_then(|l| l.mechanism.as_ref())
            .is_some()
    );
}

#[test]
fn forking_far_past_the_process_limit_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        max_processes: 64,
        ..Limits::default()
    };
    // A bounded loop: 2,000 forks at most; children sleep, then are killed with the tree.
    let req = request(
        dir.path(),
        r#"
import os, sys, time
n = 0
try:
    for i in range(2000):
        pid = os.fork()
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        n += 1
except OSError as e:
    print("forked", n, "then", type(e).__name__, flush=True)
    sys.exit(3)
print("forked", n)
"#,
        limits,
    );
    let result = run(&req);
    let limit = result.limit("processes").expect("reported");
    eprintln!("{:?} {:?} {}", result.status, limit, result.stdout);
    match &limit.mechanism {
        Some(_) => {
            assert_eq!(result.status, RunStatus::ProcessLimit, "{result:#?}");
            assert!(result.stdout.contains("then"), "{}", result.stdout);
            let n: u64 = result
                .stdout
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse().ok())
                .expect("count");
            assert!(n < 64, "forked {n} processes");
        }
        None => assert!(limit.note.as_deref().is_some_and(|n| n.contains("root"))),
    }
}

#[test]
fn output_far_past_its_cap_is_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        output_bytes: 1 << 20,
        ..Limits::default()
    };
    // 64 MiB at most even if no cap holds.
    let req = request(
        dir.path(),
        "chunk = b'y' * 65536\nwith open('outputs/big.bin', 'wb') as f:\n    for i in range(1024):\n        f.write(chunk)\nprint('wrote everything')\n",
        limits,
    );
    let result = run(&req);
    assert_eq!(result.status, RunStatus::OutputLimit, "{result:#?}");
    assert!(!result.stdout.contains("wrote everything"));
    let total: u64 = result.outputs.iter().map(|o| o.size).sum();
    assert!(total <= 1 << 20, "{total} bytes written");
}

#[test]
fn a_socket_to_loopback_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let dir = tempfile::tempdir().expect("tempdir");
    let req = request(
        dir.path(),
        &format!(
            "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=5)\ns.sendall(b'leak')\nprint('connected')\n"
        ),
        Limits::default(),
    );
    let result = run(&req);
    let network = result.limit("network").expect("reported");
    if result.network_isolated {
        assert_eq!(result.status, RunStatus::Failed, "{result:#?}");
        assert!(!result.stdout.contains("connected"));
        assert!(result.stderr.contains("OSError") || result.stderr.contains("Error"));
        assert!(
            matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "the script reached the listener"
        );
        assert!(
            network
                .mechanism
                .as_deref()
                .is_some_and(|m| m.contains("seccomp")),
            "{network:?}"
        );
    } else {
        assert!(
            network
                .note
                .as_deref()
                .is_some_and(|n| n.contains("NOT ISOLATED"))
        );
    }
}

#[test]
fn a_missing_package_is_named_before_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut req = request(dir.path(), "open('outputs/ran', 'w')\n", Limits::default());
    req.requirements = vec!["surely_not_installed_pkg_xyz".into()];
    let result = run(&req);
    assert_eq!(result.status, RunStatus::MissingPackages);
    assert!(result.message.contains("surely_not_installed_pkg_xyz"));
    assert!(!req.workdir.join("outputs/ran").exists());
}

#[test]
fn a_cancelled_run_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let req = request(
        dir.path(),
        "import time\ntime.sleep(60)\n",
        Limits::default(),
    );
    let result = Runner::new(None)
        .run(&req, &AtomicBool::new(true))
        .expect("run");
    assert_eq!(result.status, RunStatus::Cancelled);
}

#[test]
fn a_used_working_folder_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let req = request(dir.path(), "pass\n", Limits::default());
    std::fs::create_dir_all(req.workdir.join("x")).expect("mkdir");
    let err = Runner::new(None)
        .run(&req, &AtomicBool::new(false))
        .expect_err("refused");
    assert!(err.to_string().contains("not empty"));
}

/// Tries each way out of the sandbox and prints, as one JSON object, which
/// it reached; then does what a normal script does.
const HOSTILE: &str = include_str!("testdata/hostile.py");

/// Test data, not Maskflow's schema: a one-row stand-in ledger in a
/// throwaway SQLite file, which [`HOSTILE`] tries to wipe.
const CANARY_LEDGER: &str = include_str!("testdata/canary-ledger.sql");
/// Test data: counts the stand-in ledger's rows afterwards.
const CANARY_COUNT: &str = include_str!("testdata/canary-count.sql");

#[test]
fn a_hostile_script_reaches_nothing_outside_its_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
    let ssh_key = home.join(".ssh/id_rsa");
    std::fs::write(&ssh_key, "-----BEGIN CANARY KEY-----").expect("write");
    let data = dir.path().join("maskflow-home");
    std::fs::create_dir_all(data.join("uploads/other")).expect("mkdir");
    let database = data.join("maskflow.db");
    {
        let db = rusqlite::Connection::open(&database).expect("db");
        db.execute_batch(CANARY_LEDGER).expect("ledger");
    }
    let other_upload = data.join("uploads/other/salaries.csv");
    std::fs::write(&other_upload, "name,salary\nAda Lovelace,85000\n").expect("write");
    let outside = dir.path().join("persisted.py");
    let people = dir.path().join("people.csv");
    std::fs::write(&people, "name\nJohn Smith\nAda Lovelace\n").expect("write");
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    // Every target is really there for a process outside the sandbox.
    for path in [&ssh_key, &database, &other_upload] {
        std::fs::read(path).expect("readable outside the sandbox");
    }

    let mut req = request(dir.path(), HOSTILE, Limits::default());
    let p = |p: &Path| InputValue::Value(json!(p.display().to_string()));
    req.inputs.insert("people".into(), InputValue::File(people));
    req.inputs.insert("ssh_key".into(), p(&ssh_key));
    req.inputs.insert("home".into(), p(&home));
    req.inputs.insert("database".into(), p(&database));
    req.inputs.insert("other_upload".into(), p(&other_upload));
    req.inputs.insert("outside".into(), p(&outside));
    req.inputs
        .insert("port".into(), InputValue::Value(json!(port)));
    req.inputs.insert(
        "runner_pid".into(),
        InputValue::Value(json!(std::process::id())),
    );
    let result = run(&req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert!(result.isolated, "{result:#?}");
    let reached: BTreeMap<String, bool> =
        serde_json::from_str(result.stdout.trim()).expect("the script's report");
    assert_eq!(reached.len(), 12, "{reached:?}");
    let escaped: Vec<_> = reached.iter().filter(|(_, r)| **r).collect();
    assert!(escaped.is_empty(), "the script reached {escaped:?}");
    // Nothing written outside, the ledger intact, nothing connected.
    assert!(!outside.exists());
    let db = rusqlite::Connection::open(&database).expect("db");
    let calls: i64 = db.query_row(CANARY_COUNT, [], |r| r.get(0)).expect("count");
    assert_eq!(calls, 1);
    assert!(matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));
    // …while the normal part of the script worked.
    assert_eq!(result.outputs.len(), 1);
    assert_eq!(
        std::fs::read_to_string(req.workdir.join("outputs/count.txt")).expect("output"),
        "3"
    );
    let fs = result.limit("file_system").expect("reported");
    assert!(
        fs.mechanism
            .as_deref()
            .is_some_and(|m| m.contains("Landlock"))
    );
}

/// jemalloc (polars) reads the huge-page and overcommit settings, polars
/// the machine's memory: without them polars ran 1.25–1.38× slower in the
/// sandbox (issue 29). The machine's other files under /proc stay closed.
#[cfg(target_os = "linux")]
#[test]
fn the_allocator_sees_its_settings_and_nothing_else_of_proc() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "import json\nr = {}\nfor p in ['/proc/sys/vm/overcommit_memory', '/sys/kernel/mm/transparent_hugepage/enabled', '/proc/meminfo', '/proc/sys/kernel/hostname', '/proc/1/environ']:\n    try:\n        open(p).read(); r[p] = True\n    except OSError:\n        r[p] = False\nprint(json.dumps(r))\n";
    let result = run(&request(dir.path(), script, Limits::default()));
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let read: BTreeMap<String, bool> = serde_json::from_str(result.stdout.trim()).expect("report");
    assert!(read["/proc/sys/vm/overcommit_memory"], "{read:?}");
    assert!(
        read["/sys/kernel/mm/transparent_hugepage/enabled"],
        "{read:?}"
    );
    assert!(!read["/proc/sys/kernel/hostname"], "{read:?}");
    assert!(!read["/proc/1/environ"], "{read:?}");
}

/// DuckDB reads its own cgroup's memory and CPU limits at `connect()`
/// and fails when it cannot ("Cannot open file /proc/self/cgroup:
/// Permission denied", issue 43): the script reads its `/proc/self/cgroup`
/// and the limit files of the cgroups named there — the run's memory
/// limit among them where a cgroup holds it — and nothing else of its
/// `/proc`, of another process's, or of those cgroups.
#[cfg(target_os = "linux")]
#[test]
fn a_script_reads_its_own_limits_and_nothing_else_of_its_cgroups() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = r#"import json, os
def can_read(p):
    try:
        open(p).read(); return True
    except OSError:
        return False
own = open('/proc/self/cgroup').read()
limits, others = {}, {}
for line in own.splitlines():
    hid, controllers, path = line.split(':', 2)
    path = '' if path == '/' else path
    names = controllers.split(',') if controllers else []
    if hid == '0' and not names:
        base = '/sys/fs/cgroup' + path
        for f in ['memory.max', 'cpu.max']:
            if os.path.exists(base + '/' + f): limits[base + '/' + f] = can_read(base + '/' + f)
        for f in ['memory.current', 'memory.stat', 'cgroup.procs']:
            if os.path.exists(base + '/' + f): others[base + '/' + f] = can_read(base + '/' + f)
    if 'memory' in names:
        base = '/sys/fs/cgroup/memory' + path
        limits[base + '/memory.limit_in_bytes'] = can_read(base + '/memory.limit_in_bytes')
        for f in ['memory.usage_in_bytes', 'memory.stat', 'cgroup.procs', 'tasks']:
            if os.path.exists(base + '/' + f): others[base + '/' + f] = can_read(base + '/' + f)
    if 'cpu' in names:
        base = '/sys/fs/cgroup/cpu' + path
        for f in ['cpu.cfs_quota_us', 'cpu.cfs_period_us']:
            if os.path.exists(base + '/' + f): limits[base + '/' + f] = can_read(base + '/' + f)
        for f in ['cpu.stat', 'cgroup.procs']:
            if os.path.exists(base + '/' + f): others[base + '/' + f] = can_read(base + '/' + f)
for p in ['/proc/self/environ', '/proc/self/status', '/proc/self/mountinfo', '/proc/self/maps',
          '/proc/1/cgroup', '/proc/1/environ', '/proc/cgroups', '/sys/fs/cgroup/memory/memory.stat',
          '/sys/fs/cgroup/pids/pids.max', '/sys/fs/cgroup/unified/cgroup.procs']:
    if os.path.exists(p): others[p] = can_read(p)
memory = None
for p, ok in limits.items():
    if ok and (p.endswith('memory.max') or p.endswith('memory.limit_in_bytes')):
        text = open(p).read().strip()
        if text.isdigit() and '/maskflow-' in p: memory = int(text)
print(json.dumps({'own': own, 'limits': limits, 'others': others, 'memory': memory}))
"#;
    let limits = Limits {
        memory_bytes: 768 << 20,
        ..Limits::default()
    };
    let result = run(&request(dir.path(), script, limits));
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert!(result.isolated, "{result:#?}");
    let seen: serde_json::Value = serde_json::from_str(result.stdout.trim()).expect("report");
    let own = seen["own"].as_str().expect("its /proc/self/cgroup");
    assert!(own.contains(':'), "{own}");
    let limits = seen["limits"].as_object().expect("limits");
    assert!(!limits.is_empty(), "{seen}");
    let unread: Vec<_> = limits.iter().filter(|(_, ok)| *ok != true).collect();
    assert!(unread.is_empty(), "its own limits unread: {unread:?}");
    let others = seen["others"].as_object().expect("others");
    assert!(others.contains_key("/proc/self/environ"), "{seen}");
    let opened: Vec<_> = others.iter().filter(|(_, ok)| *ok != false).collect();
    assert!(opened.is_empty(), "read beyond its limits: {opened:?}");
    let memory = result.limit("memory").and_then(|l| l.mechanism.clone());
    if memory.as_deref().is_some_and(|m| m.contains("cgroup")) {
        assert_eq!(seen["memory"], serde_json::json!(768u64 << 20), "{seen}");
    }
}

#[test]
fn the_script_environment_is_an_allowlist() {
    let dir = tempfile::tempdir().expect("tempdir");
    let req = request(
        dir.path(),
        "import json, os\nprint(json.dumps(dict(os.environ)))\n",
        Limits::default(),
    );
    let result = run(&req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let env: BTreeMap<String, String> = serde_json::from_str(result.stdout.trim()).expect("env");
    let allowed = [
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "LC_CTYPE", // set by Python itself for the C locale
    ];
    for key in env.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{key} leaked into the script"
        );
    }
    let work = req.workdir.canonicalize().expect("work");
    assert!(env["HOME"].starts_with(&*work.to_string_lossy()));
    assert!(env["TMPDIR"].starts_with(&*work.to_string_lossy()));
}

#[test]
fn without_isolation_a_run_is_refused_unless_the_user_allowed_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "open('outputs/x.txt', 'w').write('x')\n";
    let runner = Runner::new(None).simulating_no_landlock();
    let refused = runner
        .run(
            &request(dir.path(), script, Limits::default()),
            &AtomicBool::new(false),
        )
        .expect_err("refused");
    assert!(
        matches!(refused, RunnerError::NotIsolated(_)),
        "{refused:?}"
    );
    let sentence = refused.to_string();
    assert!(sentence.contains("file-system isolation"), "{sentence}");
    assert!(sentence.contains("Landlock"), "{sentence}");
    assert!(
        sentence.contains("Run scripts without isolation"),
        "{sentence}"
    );
    assert!(!dir.path().join("work/outputs/x.txt").exists());

    let allowed = Limits {
        allow_unisolated: true,
        ..Limits::default()
    };
    let other = tempfile::tempdir().expect("tempdir");
    let result = runner
        .run(
            &request(other.path(), script, allowed),
            &AtomicBool::new(false),
        )
        .expect("runs when allowed");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert!(!result.isolated);
    let fs = result.limit("file_system").expect("reported");
    assert!(fs.mechanism.is_none());
    assert!(
        fs.note
            .as_deref()
            .is_some_and(|n| n.contains("NOT ISOLATED"))
    );
}

#[test]
fn the_report_names_what_held_memory_and_processes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run(&request(dir.path(), "print('ok')\n", Limits::default()));
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    // What this machine offers, found independently of the runner.
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let v2 = cgroup::is_cgroup2_mount(&mountinfo, "/sys/fs/cgroup");
    let root = sandbox::is_root();
    let v1_memory = Path::new("/sys/fs/cgroup/memory/cgroup.procs").exists();
    let expected = if root && v2 {
        "cgroup v2"
    } else if root && v1_memory {
        "cgroup v1"
    } else if v2 && cgroup::systemd_scope_available() {
        "systemd scope (cgroup v2"
    } else {
        "rlimit"
    };
    let memory = result.limit("memory").expect("reported");
    let mechanism = memory.mechanism.as_deref().unwrap_or_default();
    eprintln!("memory held by {mechanism}; expected {expected}");
    assert!(mechanism.starts_with(expected), "{memory:?}");
    let processes = result.limit("processes").expect("reported");
    if root && !v2 && !Path::new("/sys/fs/cgroup/pids/cgroup.procs").exists() {
        assert!(processes.mechanism.is_none(), "{processes:?}");
    } else {
        let mechanism = processes.mechanism.as_deref().unwrap_or_default();
        assert!(mechanism.starts_with(expected), "{processes:?}");
    }
}
