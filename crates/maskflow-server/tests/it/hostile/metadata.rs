//! Break 4: metadata writes outside the run folder. The test makes a file
//! (and a folder) outside every run folder; the builder's script `chmod`s,
//! `utime`s, `setxattr`s and (as root) `chown`s them, directly and through
//! a symlink it makes in its own folder. Their mode, times, owner and
//! extended attributes stay as they were, while the script still changes
//! its own folder's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::{ASK, Folders, backend_with, spec};

fn script(file: &str, dir: &str) -> String {
    format!(
        r#"import json, os
reached = {{}}
def attempt(name, f):
    try:
        f()
        reached[name] = True
    except Exception:
        reached[name] = False
# A friend first: its own files' metadata stays the script's to change.
attempt("own_chmod", lambda: os.chmod("outputs", 0o755))
attempt("own_utime", lambda: os.utime("outputs", (0, 0)))
print(json.dumps(reached), flush=True)
for label, target in (("file", {file:?}), ("dir", {dir:?})):
    link = "link-" + label
    attempt(label + "_symlink", lambda: os.symlink(target, link))
    for via, p in ((label, target), (label + "_via_link", link)):
        attempt(via + "_chmod", lambda: os.chmod(p, 0o777))
        attempt(via + "_utime", lambda: os.utime(p, (0, 0)))
        attempt(via + "_setxattr", lambda: os.setxattr(p, "user.hostile", b"1"))
        attempt(via + "_chown", lambda: os.chown(p, 65534, 65534))
with open("outputs/reached.json", "w") as f:
    json.dump(reached, f)
"#
    )
}

/// What must not change: mode, owner, group, modification time, and the
/// names of the extended attributes.
fn snapshot(path: &Path) -> (u32, u32, u32, i64, Vec<u8>) {
    let m = std::fs::symlink_metadata(path).expect("stat");
    (m.mode(), m.uid(), m.gid(), m.mtime(), xattr_names(path))
}

fn xattr_names(path: &Path) -> Vec<u8> {
    // Read by Python's os.listxattr: the crate allows no `unsafe`.
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(sorted(os.listxattr(sys.argv[1], follow_symlinks=False)))",
        ])
        .arg(path)
        .output()
        .expect("python3 lists the extended attributes");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn a_script_changes_no_metadata_outside_its_run() {
    let dirs = Folders::new();
    let file = dirs.outside().join("id_ed25519");
    let dir = dirs.outside().join("shared-env");
    std::fs::write(&file, "-----BEGIN CANARY KEY-----\n").expect("victim file");
    std::fs::create_dir_all(&dir).expect("victim folder");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let before = (snapshot(&file), snapshot(&dir));

    let llm = backend_with(spec(
        &script(&file.display().to_string(), &dir.display().to_string()),
        &[],
        &["reached.json"],
    ));
    let mf = dirs.serve(&llm, &[]);
    let (view, _, _) = mf.build_people(ASK);
    let run = super::test_run(&view);
    // The first line, printed before any attack (a filter may kill the rest).
    let own = run["stdout"]
        .as_str()
        .and_then(|s| s.lines().next())
        .unwrap_or("");
    assert_eq!(
        own, r#"{"own_chmod": true, "own_utime": true}"#,
        "the script changes its own folder's metadata: {view}"
    );
    super::assert_no_customer_value(&llm);
    let after = (snapshot(&file), snapshot(&dir));
    assert_eq!(
        before, after,
        "(mode, uid, gid, mtime, xattrs) of the file and the folder outside the run changed: {run}"
    );
}
