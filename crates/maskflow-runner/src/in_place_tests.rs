//! Inputs read in place (issue 29): a large input is not copied into the
//! run folder, the script reads it, and a hostile script can neither write,
//! truncate, rename, `chmod`, `utime` nor delete the user's file — through
//! its path in `inputs/` or through the file's own path. Each way the
//! runner can give an input (a read-only bind mount, a Landlock read rule,
//! a copy) is tried, and the limits report names it. They pass as root and
//! as an ordinary user (`scripts/test.sh` runs them under `runuser`).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::*;

/// Tries every change on the input, through its path and the user's file's
/// own path;
/// then reads it and prints its size and SHA-256.
const HOSTILE: &str = r#"
import hashlib, json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
p = fields["big"]
real = fields.get("original", p)
tried = {}
def attempt(name, f):
    try:
        f()
        tried[name] = True
    except OSError:
        tried[name] = False
for label, t in [("inputs", p), ("real", real)]:
    attempt(label + " append", lambda: open(t, "ab").write(b"x"))
    attempt(label + " overwrite", lambda: open(t, "r+b").write(b"HOSTILE"))
    attempt(label + " truncate", lambda: os.truncate(t, 0))
    attempt(label + " open truncating", lambda: open(t, "wb").close())
    attempt(label + " chmod", lambda: os.chmod(t, 0o777))
    attempt(label + " utime", lambda: os.utime(t, (0, 0)))
h = hashlib.sha256()
n = 0
with open(p, "rb") as f:
    while chunk := f.read(1 << 20):
        h.update(chunk)
        n += len(chunk)
for label, t in [("real", real), ("inputs", p)]:
    attempt(label + " rename", lambda: os.rename(t, t + ".moved"))
    attempt(label + " unlink", lambda: os.unlink(t))
print(json.dumps({"size": n, "sha256": h.hexdigest(), "tried": tried}))
"#;

/// A 50 MB input of known content and its SHA-256 as Python prints it.
fn big_input(dir: &Path) -> (std::path::PathBuf, usize) {
    let path = dir.join("big.csv");
    let line = b"id,name,amount\n1,\"Ada Lovelace\",\"12.50\"\n";
    let mut bytes = Vec::with_capacity(50 << 20);
    while bytes.len() < 50 << 20 {
        bytes.extend_from_slice(line);
    }
    std::fs::write(&path, &bytes).expect("write the input");
    (path, bytes.len())
}

struct Seen {
    len: u64,
    mtime: (i64, i64),
    mode: u32,
    ino: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
}

fn seen(path: &Path) -> Seen {
    let m = std::fs::metadata(path).expect("the input is still there");
    let bytes = std::fs::read(path).expect("read");
    Seen {
        len: m.len(),
        mtime: (m.mtime(), m.mtime_nsec()),
        mode: m.mode(),
        ino: m.ino(),
        head: bytes[..64.min(bytes.len())].to_vec(),
        tail: bytes[bytes.len().saturating_sub(64)..].to_vec(),
    }
}

/// Runs the hostile script on a 50 MB input with `runner`; checks the
/// user's file is unchanged and the script read all of it; returns the
/// way the report names and the run folder's disk usage. Unisolated runs
/// (`limits.allow_unisolated`) are not told the file's own path: nothing
/// holds it there.
fn hostile_run(runner: Runner, limits: Limits) -> (String, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (input, size) = big_input(dir.path());
    let before = seen(&input);
    let original = (!limits.allow_unisolated).then(|| {
        (
            "original".to_owned(),
            InputValue::Value(serde_json::json!(input.display().to_string())),
        )
    });
    let mut req = RunRequest {
        script: HOSTILE.to_owned(),
        inputs: std::iter::once(("big".to_owned(), InputValue::File(input.clone())))
            .chain(original)
            .collect(),
        requirements: Vec::new(),
        workdir: dir.path().join("work"),
        limits,
        shared_folders: Vec::new(),
    };
    req.limits.timeout = std::time::Duration::from_secs(60);
    let result = runner
        .run(&req, &AtomicBool::new(false))
        .expect("the run starts");
    assert_eq!(result.status, RunStatus::Succeeded, "{result:#?}");
    let report: serde_json::Value =
        serde_json::from_str(result.stdout.lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}: {result:#?}"));
    // The script read the whole file as it was.
    assert_eq!(report["size"], size, "{report}");
    let after = seen(&input);
    assert_eq!(after.len, before.len, "size changed: {report}");
    assert_eq!(after.head, before.head, "bytes changed: {report}");
    assert_eq!(after.tail, before.tail, "bytes changed: {report}");
    assert_eq!(after.mtime, before.mtime, "mtime changed: {report}");
    assert_eq!(after.mode, before.mode, "mode changed: {report}");
    assert_eq!(after.ino, before.ino, "renamed or replaced: {report}");
    // Writes through the script's own path never worked (a copy's aside).
    let way = result
        .limit("inputs")
        .and_then(|l| l.mechanism.clone())
        .unwrap_or_else(|| panic!("no inputs line: {:#?}", result.limits));
    if way != Way::Copy.label() {
        for attack in ["append", "overwrite", "truncate", "open truncating"] {
            for via in ["inputs", "real"] {
                assert_eq!(
                    report["tried"][format!("{via} {attack}")],
                    false,
                    "{via} {attack} worked ({way}): {report}"
                );
            }
        }
    }
    let used = outputs::disk_usage(&req.workdir);
    (way, used)
}

use crate::workdir::Way;

#[test]
fn a_large_input_is_bound_read_only_not_copied() {
    let (way, used) = hostile_run(Runner::new(None), Limits::default());
    assert_eq!(way, Way::BindMount.label());
    assert!(used < 1 << 20, "the run folder holds {used} bytes");
}

#[test]
fn without_a_mount_namespace_a_landlock_rule_holds_the_input() {
    if !crate::isolation::truncate_held() {
        // A kernel before 6.2: the runner copies instead (tested below).
        return;
    }
    let runner = Runner::new(None).simulating_no_mount_namespace();
    let (way, used) = hostile_run(runner, Limits::default());
    assert_eq!(way, Way::LandlockRule.label());
    assert!(used < 1 << 20, "the run folder holds {used} bytes");
}

#[test]
fn with_neither_the_input_is_copied_and_the_report_says_so() {
    let runner = Runner::new(None)
        .simulating_no_landlock()
        .simulating_no_mount_namespace();
    let limits = Limits {
        allow_unisolated: true,
        ..Limits::default()
    };
    // The user's own, writable file: a hard link could be written through.
    let (way, used) = hostile_run(runner, limits);
    assert_eq!(way, Way::Copy.label());
    assert!(used >= 50 << 20, "the run folder holds {used} bytes");
}

#[test]
fn a_file_no_one_may_write_is_hard_linked_where_nothing_else_holds_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("read-only.csv");
    std::fs::write(&file, "a\n1\n").expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let owner = std::fs::metadata(&file).expect("meta").uid();
    let req = RunRequest {
        script: String::new(),
        inputs: BTreeMap::from([("f".to_owned(), InputValue::File(file.clone()))]),
        requirements: Vec::new(),
        workdir: dir.path().join("work"),
        limits: Limits::default(),
        shared_folders: Vec::new(),
    };
    // The script's user owns it: it could chmod it back, so a copy.
    let given =
        workdir::prepare(&req, workdir::InPlace::Neither { uid: Some(owner) }).expect("prepare");
    assert_eq!(given.inputs[0].way, Way::Copy);
    // Another user, no write bit: a link, no copy.
    let req = RunRequest {
        workdir: dir.path().join("work2"),
        ..req
    };
    let given = workdir::prepare(
        &req,
        workdir::InPlace::Neither {
            uid: Some(owner.wrapping_add(1)),
        },
    )
    .expect("prepare");
    assert_eq!(given.inputs[0].way, Way::HardLink);
    let linked = std::fs::metadata(&given.inputs[0].target).expect("meta");
    assert_eq!(linked.ino(), std::fs::metadata(&file).expect("meta").ino());
}
