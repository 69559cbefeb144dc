//! The side doors of issue 26, tried by hostile scripts (Linux): UNIX
//! sockets outside the run folder, metadata of files outside it,
//! capabilities, a `setsid` grandchild that outlives the run and swaps an
//! output for a link, a disk filler in `tmp/`, outputs that are links — and
//! the ordinary scripts each guard must keep working. They pass as root and
//! as an ordinary user (`scripts/test.sh` runs them under `runuser`).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
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

fn run_with(runner: &Runner, req: &RunRequest) -> RunResult {
    runner
        .run(req, &AtomicBool::new(false))
        .expect("the run starts")
}

/// The JSON object a script printed last.
fn report(result: &RunResult) -> serde_json::Value {
    let line = result.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {result:#?}"))
}

fn mechanism<'a>(result: &'a RunResult, name: &str) -> &'a str {
    result
        .limit(name)
        .and_then(|l| l.mechanism.as_deref())
        .unwrap_or_else(|| panic!("{name} not held: {:#?}", result.limits))
}

#[test]
fn no_unix_socket_outside_the_folder_is_reachable_but_socketpair_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("agent.sock");
    let listener = UnixListener::bind(&path).expect("listen");
    listener.set_nonblocking(true).expect("nonblocking");
    let name = format!("maskflow-test-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
            .expect("abstract name");
        UnixListener::bind_addr(&addr).expect("listen (abstract)")
    };
    abstract_listener
        .set_nonblocking(true)
        .expect("nonblocking");
    let script = r#"
import json, socket, sys
fields = json.load(open(sys.argv[1]))["fields"]
r = {}
for key, addr in [("pathname", fields["path"]), ("abstract", "\0" + fields["name"])]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr)
        s.sendall(b"Hello")
        r[key] = True
    except OSError:
        r[key] = False
a, b = socket.socketpair()
a.sendall(b"ping")
r["socketpair"] = b.recv(4) == b"ping"
print(json.dumps(r))
"#;
    let mut req = request(dir.path(), script, Limits::default());
    req.inputs.insert(
        "path".into(),
        InputValue::Value(json!(path.display().to_string())),
    );
    req.inputs
        .insert("name".into(), InputValue::Value(json!(name)));
    let result = run_with(&Runner::new(None), &req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let r = report(&result);
    assert_eq!(
        r,
        json!({"pathname": false, "abstract": false, "socketpair": true})
    );
    for l in [&listener, &abstract_listener] {
        assert!(
            matches!(l.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "the script reached a listener"
        );
    }
    assert!(mechanism(&result, "unix_sockets").contains("AF_UNIX"));
}

/// Tries every metadata change on `target` (outside) and copies an input
/// into `outputs/` with `shutil.copy2` (inside).
const METADATA: &str = r#"
import json, os, shutil, sys
fields = json.load(open(sys.argv[1]))["fields"]
target = fields["target"]
r = {}
def attempt(key, f):
    try:
        f()
        r[key] = "ok"
    except OSError as e:
        r[key] = type(e).__name__
attempt("chmod", lambda: os.chmod(target, 0o777))
attempt("utime", lambda: os.utime(target, (0, 0)))
attempt("setxattr", lambda: os.setxattr(target, "user.maskflow", b"1"))
attempt("chown", lambda: os.chown(target, 4242, 4242))
shutil.copy2(fields["people"], "outputs/people.csv")
shutil.copy(fields["people"], "outputs/plain.csv")
os.chmod("outputs/plain.csv", 0o640)
src, st = os.stat(fields["people"]), os.stat("outputs/people.csv")
r["copy_keeps_mode"] = st.st_mode == src.st_mode
r["copy_keeps_mtime"] = st.st_mtime_ns == src.st_mtime_ns
r["plain_mode"] = oct(os.stat("outputs/plain.csv").st_mode & 0o777)
print(json.dumps(r))
"#;

fn metadata_case(runner: &Runner, expect: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("id_rsa");
    std::fs::write(&target, "-----BEGIN CANARY KEY-----").expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let people = dir.path().join("people.csv");
    std::fs::write(&people, "name\nAda\n").expect("write");
    let before = std::fs::metadata(&target).expect("stat");
    let mut req = request(dir.path(), METADATA, Limits::default());
    req.inputs.insert(
        "target".into(),
        InputValue::Value(json!(target.display().to_string())),
    );
    req.inputs
        .insert("people".into(), InputValue::File(people.clone()));
    let result = run_with(runner, &req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let r = report(&result);
    eprintln!("{expect}: {r}");
    let after = std::fs::metadata(&target).expect("stat");
    assert_eq!(after.mode(), before.mode(), "mode changed: {r}");
    assert_eq!(after.mtime(), before.mtime(), "times changed: {r}");
    assert_eq!(
        (after.uid(), after.gid()),
        (before.uid(), before.gid()),
        "owner changed: {r}"
    );
    let xattrs = std::process::Command::new("python3")
        .args(["-c", "import os, sys; print(os.listxattr(sys.argv[1]))"])
        .arg(&target)
        .output()
        .expect("listxattr");
    assert!(
        !String::from_utf8_lossy(&xattrs.stdout).contains("maskflow"),
        "an xattr was set: {r}"
    );
    // The friendly half: copies into outputs/ work.
    assert!(
        result.outputs.iter().any(|o| o.name == "people.csv"),
        "{result:#?}"
    );
    assert!(
        mechanism(&result, "metadata").contains(expect),
        "{result:#?}"
    );
    if expect == "mount namespace" {
        // Inside the folder metadata is real: copy2 kept mode and time.
        assert_eq!(r["copy_keeps_mode"], true, "{r}");
        assert_eq!(r["copy_keeps_mtime"], true, "{r}");
        assert_eq!(r["plain_mode"], "0o640", "{r}");
        assert_eq!(r["chmod"], "OSError", "{r}");
    }
}

#[test]
fn metadata_outside_the_folder_never_changes_and_copy2_into_outputs_works() {
    metadata_case(&Runner::new(None), "mount namespace");
}

#[test]
fn without_a_mount_namespace_metadata_calls_change_nothing_and_copy2_still_works() {
    metadata_case(
        &Runner::new(None).simulating_no_mount_namespace(),
        "seccomp",
    );
}

#[test]
fn a_script_holds_no_capability() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = r#"
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
h = Header(0x20080522, 0)
d = (Data * 2)()
libc.capget(ctypes.byref(h), d)
held = [x for part in d for x in (part.effective, part.permitted, part.inheritable)]
bounding = [c for c in range(64) if libc.prctl(23, c, 0, 0, 0) == 1]
ambient = [c for c in range(64) if libc.prctl(47, 3, c, 0, 0) == 1]
print(json.dumps({"held": sum(held), "bounding": bounding, "ambient": ambient}))
"#;
    let result = run_with(
        &Runner::new(None),
        &request(dir.path(), script, Limits::default()),
    );
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let r = report(&result);
    assert_eq!(r["held"], 0, "{r}");
    assert_eq!(r["ambient"], json!([]), "{r}");
    let caps = mechanism(&result, "capabilities");
    if caps.contains("bounding set emptied") {
        assert_eq!(r["bounding"], json!([]), "{r}");
    }
    if sandbox::is_root() {
        assert!(caps.contains("bounding set emptied"), "{caps}");
    }
}

/// Forks a child that tries `setsid`/`setpgid` and forks a grandchild
/// which outlives it, then swaps `outputs/out.csv` for a link to
/// `fields["target"]`. `mode`: `exit` 0, `fail` (exit 1) or `hang` (the
/// time limit).
const SETSID: &str = r#"
import json, os, sys, time
fields = json.load(open(sys.argv[1]))["fields"]
r = {}
pid = os.fork()
if pid == 0:
    for name, call in [("setsid", os.setsid), ("setpgid", lambda: os.setpgid(0, 0))]:
        try:
            call()
            r[name] = True
        except OSError:
            r[name] = False
    if os.fork() == 0:
        open("outputs/grandchild.pid", "w").write(str(os.getpid()))
        time.sleep(1.5)
        try:
            os.remove("outputs/out.csv")
            os.symlink(fields["target"], "outputs/out.csv")
        except OSError:
            pass
        time.sleep(120)
        os._exit(0)
    open("outputs/escape.json", "w").write(json.dumps(r))
    os._exit(0)
os.waitpid(pid, 0)
for _ in range(200):
    if os.path.exists("outputs/grandchild.pid"):
        break
    time.sleep(0.02)
open("outputs/out.csv", "w").write("name\nAda\n")
if fields["mode"] == "fail":
    sys.exit(1)
if fields["mode"] == "hang":
    time.sleep(120)
"#;

fn setsid_case(runner: &Runner, mode: &str, expected: RunStatus) {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = dir.path().join("maskflow.db");
    std::fs::write(&database, "SQLite format 3\0 the ledger").expect("write");
    let limits = Limits {
        timeout: Duration::from_secs(3),
        ..Limits::default()
    };
    let mut req = request(dir.path(), SETSID, limits);
    req.inputs.insert(
        "target".into(),
        InputValue::Value(json!(database.display().to_string())),
    );
    req.inputs
        .insert("mode".into(), InputValue::Value(json!(mode)));
    let result = run_with(runner, &req);
    assert_eq!(result.status, expected, "{mode}: {result:#?}");
    let copies = req.workdir.join("outputs");
    assert!(
        copies.join("grandchild.pid").is_file(),
        "{mode}: no grandchild"
    );
    let left = super::tests::alive_with(&req.workdir);
    assert!(
        left.is_empty(),
        "{mode}: processes survived the run: {left:?}"
    );
    let escape = std::fs::read_to_string(copies.join("escape.json")).expect("escape report");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&escape).expect("json"),
        json!({"setsid": false, "setpgid": false}),
        "{mode}"
    );
    let copy = std::fs::read_to_string(copies.join("out.csv"));
    if mode == "hang" {
        // The grandchild swapped the file while the run still went on: the
        // link is refused, the database never copied.
        assert!(copy.is_err(), "{mode}: {copy:?}");
        let refused = result.refused_outputs.iter().find(|r| r.name == "out.csv");
        assert_eq!(
            refused.map(|r| r.reason.as_str()),
            Some("a symbolic link"),
            "{result:#?}"
        );
    } else {
        assert_eq!(copy.ok().as_deref(), Some("name\nAda\n"), "{result:#?}");
    }
    assert!(mechanism(&result, "process_tree").contains("setsid"));
}

#[test]
fn the_survivor_check_sees_a_marked_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Debian's interpreter itself where it exists: a version manager's
    // `python3` shim is a shell script whose forks also carry the marker.
    let python = if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    };
    let mut child = std::process::Command::new(python)
        .args(["-c", "import time; time.sleep(30)"])
        .arg(dir.path())
        .spawn()
        .expect("spawn");
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = super::tests::alive_with(dir.path());
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().expect("kill");
    child.wait().expect("reap");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(super::tests::alive_with(dir.path()).is_empty());
}

#[test]
fn a_setsid_grandchild_ends_with_the_run_in_every_mode() {
    let runner = Runner::new(None);
    setsid_case(&runner, "exit", RunStatus::Succeeded);
    setsid_case(&runner, "fail", RunStatus::Failed);
    setsid_case(&runner, "hang", RunStatus::TimedOut);
}

#[test]
fn a_setsid_grandchild_ends_with_the_run_without_cgroups_too() {
    let runner = Runner::new(None).simulating_no_cgroups();
    setsid_case(&runner, "exit", RunStatus::Succeeded);
    setsid_case(&runner, "fail", RunStatus::Failed);
    setsid_case(&runner, "hang", RunStatus::TimedOut);
}

#[test]
fn the_whole_run_folder_counts_against_the_disk_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        output_bytes: 1 << 20,
        ..Limits::default()
    };
    // 16 files of 512 KiB (each under the per-file limit) in tmp/ and home/:
    // 8 MiB at most even if nothing holds.
    let script = r#"
import os, time
chunk = b"z" * (512 << 10)
for i in range(16):
    folder = "tmp" if i % 2 else "home"
    with open(os.path.join(folder, "fill-%d.bin" % i), "wb") as f:
        f.write(chunk)
    time.sleep(0.05)
print("filled everything")
"#;
    let result = run_with(&Runner::new(None), &request(dir.path(), script, limits));
    assert_eq!(result.status, RunStatus::OutputLimit, "{result:#?}");
    assert!(!result.stdout.contains("filled everything"));
    assert!(mechanism(&result, "output").contains("whole run folder"));
    // An ordinary amount of scratch space is fine.
    let other = tempfile::tempdir().expect("tempdir");
    let scratch = "open('tmp/scratch.bin', 'wb').write(b'x' * 4096)\nopen('outputs/ok.txt', 'w').write('ok')\n";
    let result = run_with(
        &Runner::new(None),
        &request(other.path(), scratch, Limits::default()),
    );
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
}

#[test]
fn outputs_that_are_links_devices_or_odd_names_are_never_copied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = dir.path().join("maskflow.db");
    std::fs::write(&database, "SQLite format 3\0 the ledger").expect("write");
    let script = r#"
import json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
os.symlink(fields["target"], "outputs/out.csv")
os.symlink("/etc/passwd", "outputs/passwd.txt")
os.mkfifo("outputs/pipe.csv")
open("tmp/kept.csv", "w").write("a\n")
try:
    os.link("tmp/kept.csv", "outputs/linked.csv")
except OSError:
    pass
open("outputs/\x1b]0;owned\x07.csv", "w").write("x")
os.makedirs("outputs/charts")
open("outputs/charts/ok.csv", "w").write("name\nAda\n")
"#;
    let mut req = request(dir.path(), script, Limits::default());
    req.inputs.insert(
        "target".into(),
        InputValue::Value(json!(database.display().to_string())),
    );
    let result = run_with(&Runner::new(None), &req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let names: Vec<&str> = result.outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, vec!["charts/ok.csv"], "{result:#?}");
    let copies = req.workdir.join("outputs");
    for name in ["out.csv", "passwd.txt", "pipe.csv", "linked.csv"] {
        assert!(
            std::fs::symlink_metadata(copies.join(name)).is_err(),
            "{name} was copied"
        );
    }
    let reason = |n: &str| {
        result
            .refused_outputs
            .iter()
            .find(|r| r.name == n)
            .map(|r| r.reason.as_str())
    };
    assert_eq!(reason("out.csv"), Some("a symbolic link"), "{result:#?}");
    assert_eq!(reason("pipe.csv"), Some("a fifo"), "{result:#?}");
    if std::fs::symlink_metadata(run_folder(&req.workdir).join("outputs/linked.csv")).is_ok() {
        assert_eq!(reason("linked.csv"), Some("a hard link to another file"));
    }
    assert!(
        result
            .refused_outputs
            .iter()
            .all(|r| !r.name.contains('\x1b') && !r.name.contains('\x07')),
        "{result:#?}"
    );
    // No byte of the database anywhere among the copies.
    for o in &result.outputs {
        let text = std::fs::read(copies.join(&o.name)).expect("copy");
        assert!(!String::from_utf8_lossy(&text).contains("SQLite"));
    }
}

#[test]
fn an_inherited_descriptor_is_closed_at_exec() {
    #![allow(unsafe_code)]
    let dir = tempfile::tempdir().expect("tempdir");
    let listener = UnixListener::bind(dir.path().join("inherited.sock")).expect("listen");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&listener);
    // SAFETY: fcntl on a descriptor this test owns; it clears FD_CLOEXEC as
    // a careless library of the server might.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, 0);
    }
    let script = format!(
        "import json, os\ntry:\n    os.fstat({fd})\n    open_ = True\nexcept OSError:\n    open_ = False\nprint(json.dumps({{'open': open_}}))\n"
    );
    let result = run_with(
        &Runner::new(None),
        &request(dir.path(), &script, Limits::default()),
    );
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert_eq!(report(&result), json!({"open": false}), "{result:#?}");
    assert!(mechanism(&result, "descriptors").contains("closed"));
}

#[test]
fn the_report_names_every_layer_that_held() {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = run_with(
        &Runner::new(None),
        &request(dir.path(), "print('ok')\n", Limits::default()),
    );
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    for name in [
        "file_system",
        "network",
        "unix_sockets",
        "metadata",
        "capabilities",
        "process_tree",
        "descriptors",
        "memory",
        "processes",
        "output",
    ] {
        let l = result.limit(name).expect("reported");
        eprintln!("{name}: {:?}", l.mechanism);
    }
    assert!(mechanism(&result, "file_system").contains("Landlock"));
    assert!(mechanism(&result, "network").contains("seccomp"));
    assert!(mechanism(&result, "metadata").contains("mount namespace"));
    assert!(mechanism(&result, "process_tree").contains("process group"));
    assert!(mechanism(&result, "process_tree").contains("PID namespace"));
}

#[test]
fn a_shared_folder_stays_writable_with_its_metadata() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shared = dir.path().join("flow-folder");
    std::fs::create_dir_all(&shared).expect("mkdir");
    let script = r#"
import json, os, sys
folder = json.load(open(sys.argv[1]))["fields"]["folder"]
path = os.path.join(folder, "notes.txt")
open(path, "w").write("kept")
os.chmod(path, 0o600)
os.utime(path, (1, 1))
print(json.dumps({"mode": oct(os.stat(path).st_mode & 0o777)}))
"#;
    let mut req = request(dir.path(), script, Limits::default());
    req.shared_folders = vec![shared.clone()];
    req.inputs.insert(
        "folder".into(),
        InputValue::Value(json!(shared.display().to_string())),
    );
    let result = run_with(&Runner::new(None), &req);
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert_eq!(report(&result), json!({"mode": "0o600"}));
    let meta = std::fs::metadata(shared.join("notes.txt")).expect("written");
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert_eq!(meta.mtime(), 1);
}

#[test]
fn without_the_socket_filter_a_run_is_refused_unless_the_user_allowed_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runner = Runner::new(None).simulating_no_socket_filter();
    let script = "open('outputs/x.txt', 'w').write('x')\n";
    let refused = runner
        .run(
            &request(dir.path(), script, Limits::default()),
            &AtomicBool::new(false),
        )
        .expect_err("refused");
    let sentence = refused.to_string();
    assert!(matches!(refused, RunnerError::NotIsolated(_)), "{sentence}");
    assert!(sentence.contains("UNIX sockets"), "{sentence}");
    assert!(!dir.path().join("work/outputs/x.txt").exists());

    let other = tempfile::tempdir().expect("tempdir");
    let allowed = Limits {
        allow_unisolated: true,
        ..Limits::default()
    };
    let result = run_with(&runner, &request(other.path(), script, allowed));
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    assert!(!result.isolated, "{result:#?}");
    let sockets = result.limit("unix_sockets").expect("reported");
    assert!(sockets.mechanism.is_none(), "{sockets:?}");
    assert!(
        sockets
            .note
            .as_deref()
            .is_some_and(|n| n.contains("NOT HELD")),
        "{sockets:?}"
    );
}

/// As PID 1 of its namespace the script ignores `SIGXCPU`; the CPU limit
/// still ends it (the hard limit's `SIGKILL`, a second later).
#[test]
fn cpu_past_its_limit_is_stopped_as_pid_1_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let limits = Limits {
        cpu_seconds: 1,
        timeout: Duration::from_secs(20),
        ..Limits::default()
    };
    let script = "import time\nend = time.time() + 15\nwhile time.time() < end:\n    pass\nprint('spun to the end')\n";
    let result = run_with(&Runner::new(None), &request(dir.path(), script, limits));
    assert_eq!(result.status, RunStatus::CpuLimit, "{result:#?}");
    assert!(!result.stdout.contains("spun to the end"));
    assert!(result.duration_ms < 10_000, "{result:#?}");
}
