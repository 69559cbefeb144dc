//! Issue 26, break 1, against the real `uv` and Python: hostile
//! requirements never reach uv, and a package whose `.pth` file runs code
//! is installed, checked, verified and removed without that code ever
//! running outside the sandbox. The package index is a folder served on
//! loopback by `python3 -m http.server` (uv reads its directory listings as
//! a simple index), configured with [`Environments::with_index`].

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use super::*;

/// Builds `name-1.0-py3-none-any.whl` under `root/simple/name/`, whose
/// `.pth` file (and package) append a line to `marker` when they run.
fn hostile_wheel(root: &Path, name: &str, marker: &Path) {
    let script = r#"
import base64, hashlib, os, sys, zipfile
root, name, marker = sys.argv[1:4]
ver = "1.0"
code = "import os; open(%r, 'a').write('pth ran in ' + str(os.getpid()) + '\\n')\n" % marker
files = {
    name + "/__init__.py": ("open(%r, 'a').write('package imported\\n')\n" % marker).encode(),
    "zz_" + name + ".pth": code.encode(),
    name + "-" + ver + ".dist-info/METADATA": ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver)).encode(),
    name + "-" + ver + ".dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: maskflow-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for path, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
record.append(name + "-" + ver + ".dist-info/RECORD,,")
files[name + "-" + ver + ".dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
folder = os.path.join(root, "simple", name)
os.makedirs(folder, exist_ok=True)
with zipfile.ZipFile(os.path.join(folder, name + "-" + ver + "-py3-none-any.whl"), "w") as z:
    for path, data in files.items():
        z.writestr(path, data)
"#;
    let ok = Command::new("python3")
        .args(["-c", script])
        .arg(root)
        .arg(name)
        .arg(marker)
        .status()
        .expect("python3");
    assert!(ok.success(), "building the wheel");
}

/// `python3 -m http.server` on a free loopback port, stopped when dropped.
struct Index {
    child: Child,
    url: String,
}

impl Index {
    fn serve(root: &Path) -> Self {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("http.server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("its first line");
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/simple"),
        }
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ran(marker: &Path) -> String {
    std::fs::read_to_string(marker).unwrap_or_default()
}

#[cfg(unix)]
fn writable_entries(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read").flatten() {
            let meta = std::fs::symlink_metadata(e.path()).expect("meta");
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.permissions().mode() & 0o222 != 0 {
                out.push(e.path());
            }
            if meta.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

/// Every hostile form is refused by the grammar before uv is looked for,
/// and nothing is made.
#[test]
fn hostile_requirements_never_reach_uv() {
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path()).with_index("http://127.0.0.1:9/simple");
    for text in [
        "xlsxwriter @ http://127.0.0.1:1/x.whl",
        "pandas; python_version>\"3\"",
        "pandas\n--index-url http://127.0.0.1:1/simple",
        "-r /etc/passwd",
        "--find-links http://127.0.0.1:1/",
        "./local/path",
        "file:///etc/passwd",
        "git+https://github.com/a/b",
        "pandas \\\n-r /etc/passwd",
    ] {
        let err = envs
            .resolve(&base(), &["pandas".into(), text.into()], &quiet())
            .expect_err(text);
        assert!(matches!(err, EnvError::Requirement(_)), "{text:?}: {err}");
        assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
    }
    assert!(!envs.root().exists(), "nothing was made");
}

/// A lock stored before this check (or edited in the database) that holds
/// an option or a URL is refused before uv runs.
#[test]
fn a_lock_with_options_is_refused_before_uv() {
    let home = tempfile::tempdir().expect("home");
    let envs = Environments::new(home.path());
    let py = base();
    let hash = "0".repeat(64);
    for pinned in [
        format!("--index-url http://127.0.0.1:9/simple\nxlsxwriter==3.2.0 --hash=sha256:{hash}\n"),
        format!("xlsxwriter @ http://127.0.0.1:1/x.whl --hash=sha256:{hash}\n"),
        "-r /etc/passwd\n".to_owned(),
    ] {
        let lock = Lock {
            python: format!("{}.{}", py.version.0, py.version.1),
            requirements: vec!["xlsxwriter".into()],
            pinned,
        };
        let err = envs.ensure(&py, &lock, &quiet()).expect_err("refused");
        assert!(matches!(err, EnvError::Lock { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("is not `name==version` with hashes"),
            "{err}"
        );
    }
    assert!(!envs.root().exists(), "nothing was made");
}

#[test]
fn an_index_that_is_not_a_url_is_refused() {
    let home = tempfile::tempdir().expect("home");
    for bad in [
        "--find-links=/tmp",
        "/srv/wheels",
        "http://h/simple --extra-index-url x",
    ] {
        let envs = Environments::new(home.path()).with_index(bad);
        let err = envs
            .resolve(&base(), &["tqdm".into()], &quiet())
            .expect_err(bad);
        assert!(matches!(err, EnvError::Index { .. }), "{bad}: {err}");
    }
}

/// The break of issue 26: a package whose `.pth` file runs code. Resolving,
/// installing, compiling, checking its packages, verifying it before reuse,
/// rebuilding it after tampering and removing it never start an
/// interpreter of the environment with site processing: the marker stays
/// absent. Starting the interpreter directly (what the sandbox does) runs
/// the `.pth` file, so the marker can be written: the test can fail.
#[test]
fn a_package_with_a_pth_file_never_runs_outside_the_sandbox() {
    if !super::have_uv() {
        return;
    }
    let site = tempfile::tempdir().expect("index folder");
    let marker = site.path().join("MARKER");
    hostile_wheel(site.path(), "mfpthprobe", &marker);
    let index = Index::serve(site.path());
    let home = tempfile::tempdir().expect("home");
    let cache = tempfile::tempdir().expect("cache");
    let envs = Environments::new(home.path())
        .with_cache(cache.path())
        .with_index(&index.url);
    let py = base();
    let seen = Mutex::new(Vec::<EnvProgress>::new());
    let record = |p: EnvProgress| seen.lock().expect("lock").push(p);

    let lock = envs
        .resolve(&py, &["MfPthProbe".into()], &record)
        .expect("resolve from the loopback index");
    assert_eq!(lock.packages(), vec!["mfpthprobe==1.0"]);
    let (env_py, info) = envs.ensure(&py, &lock, &record).expect("ensure");
    assert_eq!(ran(&marker), "", "creating it ran the .pth file");
    let dir = envs.root().join(&info.id);
    assert!(env_py.executable.starts_with(&dir));
    assert!(env_py.runtime.contains(&dir), "{:?}", env_py.runtime);
    let sites = site_packages(&dir, py.version).expect("site-packages");
    assert!(sites.join("zz_mfpthprobe.pth").is_file());
    assert!(
        std::fs::read_dir(sites.join("mfpthprobe").join("__pycache__")).is_ok(),
        "bytecode was compiled (with site processing off)"
    );
    #[cfg(unix)]
    assert_eq!(writable_entries(&dir), Vec::<PathBuf>::new(), "read-only");

    // The runner's package check finds it, without starting the environment.
    let missing = missing_packages(&env_py, &["mfpthprobe".into(), "tqdm".into()]).expect("check");
    assert_eq!(missing, vec!["tqdm".to_owned()]);
    assert_eq!(ran(&marker), "", "checking its packages ran the .pth file");

    // Reuse verifies it (no rebuild: no progress), still without running it.
    seen.lock().expect("lock").clear();
    envs.ensure(&py, &lock, &record).expect("reuse");
    assert!(seen.lock().expect("lock").is_empty(), "reused as it is");
    assert_eq!(ran(&marker), "");

    // Tampered with (made writable): refused, removed and made again.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let pth = sites.join("zz_mfpthprobe.pth");
        std::fs::set_permissions(&pth, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        envs.ensure(&py, &lock, &record).expect("rebuilt");
        let lines: Vec<String> = seen
            .lock()
            .expect("lock")
            .iter()
            .map(|p| p.message.clone())
            .collect();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("is not as Maskflow sealed it") && l.contains("writable")),
            "{lines:?}"
        );
        assert_eq!(
            writable_entries(&dir),
            Vec::<PathBuf>::new(),
            "read-only again"
        );
        assert_eq!(ran(&marker), "", "the rebuild ran the .pth file");
    }

    // In the sandbox the .pth file does run, and cannot write outside the
    // run's folder: the marker stays absent, the run itself succeeds.
    let isolation = maskflow_runner::isolation_status();
    if let Err(why) = &isolation {
        eprintln!("SKIPPED the sandboxed run: {why}");
    }
    if isolation.is_ok() {
        let work = tempfile::tempdir().expect("work");
        let request = maskflow_runner::RunRequest {
            script: "open('outputs/x.txt', 'w').write('ok')\n".into(),
            inputs: Default::default(),
            requirements: Vec::new(),
            workdir: work.path().join("run"),
            limits: Default::default(),
            shared_folders: Vec::new(),
        };
        let run = maskflow_runner::Runner::new(None)
            .run_with(&env_py, &request, &Default::default())
            .expect("run");
        assert!(run.succeeded(), "{} {}", run.message, run.stderr);
        assert!(run.isolated);
        assert_eq!(ran(&marker), "", "the sandboxed .pth wrote outside the run");
    }

    // Removal works on the read-only folders.
    envs.remove(&info.id).expect("remove");
    assert!(!dir.exists());
    assert_eq!(ran(&marker), "");

    // The control: the environment's interpreter started with site
    // processing (as the sandboxed run does) does run the .pth file.
    let (env_py, _) = envs.ensure(&py, &lock, &quiet()).expect("again");
    let ok = Command::new(&env_py.executable)
        .args(["-c", "import mfpthprobe"])
        .status()
        .expect("python");
    assert!(ok.success());
    let text = ran(&marker);
    assert!(
        text.contains("pth ran in") && text.contains("package imported"),
        "{text:?}"
    );
    drop(index);
}
