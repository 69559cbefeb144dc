//! Finding a usable Python (≥ 3.9) and checking the packages a script
//! declares before it runs.
//!
//! A virtual environment's interpreter (a managed environment, whose
//! packages came from an outside party's requirements) is never started
//! here: its packages are checked by the base interpreter it links to,
//! isolated and with site processing off (`-I -S`), looking for module
//! files in the environment's `site-packages` — no `.pth` file, no
//! `sitecustomize`, no package code runs outside the sandbox.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::RunnerError;

/// The oldest Python the runner accepts.
pub const MIN_VERSION: (u32, u32) = (3, 9);

/// A Python interpreter that was found and checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Python {
    /// The program to start (a path or a name found on `PATH`).
    pub program: PathBuf,
    /// Its `(major, minor)` version.
    pub version: (u32, u32),
    /// The interpreter itself (`sys.executable`), started directly so that
    /// no wrapper (a pyenv shim, a shell script) needs more than the runtime.
    #[serde(skip)]
    pub executable: PathBuf,
    /// The folders the interpreter reads (its prefixes and `sys.path`): the
    /// sandbox lets a script read these and nothing else of the machine's.
    #[serde(skip)]
    pub runtime: Vec<PathBuf>,
}

/// What the probe prints: `[major, minor, executable, [folders…]]`.
const PROBE: &str = "import sys, json; print(json.dumps([sys.version_info[0], sys.version_info[1], \
sys.executable, [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix] + sys.path]))";

fn probe(program: &Path) -> Option<Python> {
    let out = Command::new(program)
        .args(["-c", PROBE])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let (major, minor, executable, folders): (u32, u32, String, Vec<String>) =
        serde_json::from_slice(&out.stdout).ok()?;
    let mut runtime: Vec<PathBuf> = folders
        .into_iter()
        .filter(|f| !f.is_empty())
        .map(PathBuf::from)
        .filter(|f| f.exists())
        .collect();
    let executable = PathBuf::from(executable);
    // The interpreter may be a symlink into another folder (a venv's
    // `bin/python` → `/usr/bin/python3.11`): its real folder is read too.
    if let Ok(real) = executable.canonicalize()
        && let Some(dir) = real.parent()
    {
        runtime.push(dir.to_path_buf());
    }
    runtime.sort();
    runtime.dedup();
    Some(Python {
        program: program.to_path_buf(),
        version: (major, minor),
        executable,
        runtime,
    })
}

/// Finds Python: `setting` when given (it must work), else `python3`, then
/// `python`, on `PATH`. The error says what was tried and what to do.
pub fn find_python(setting: Option<&Path>) -> Result<Python, RunnerError> {
    let candidates: Vec<PathBuf> = match setting {
        Some(p) => vec![p.to_path_buf()],
        None => vec!["python3".into(), "python".into()],
    };
    let mut seen = Vec::new();
    for program in candidates {
        match probe(&program) {
            Some(python) if python.version >= MIN_VERSION => return Ok(python),
            Some(Python {
                version: (a, b), ..
            }) => seen.push(format!("{} is Python {a}.{b}", program.display())),
            None => seen.push(format!("{} did not start", program.display())),
        }
    }
    Err(RunnerError::NoPython(format!(
        "no Python {}.{} or newer was found ({}); install Python 3 or set the Python path in the settings",
        MIN_VERSION.0,
        MIN_VERSION.1,
        seen.join("; ")
    )))
}

/// The module a requirement provides: `pandas>=2` → `pandas`,
/// `python-dateutil` → `dateutil`, `scikit-learn` → `sklearn`. Only a
/// top-level name (letters, digits, `_`): looking it up imports nothing.
pub fn module_of(requirement: &str) -> String {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let lower = name.to_ascii_lowercase();
    let known = [
        ("python-dateutil", "dateutil"),
        ("scikit-learn", "sklearn"),
        ("beautifulsoup4", "bs4"),
        ("pyyaml", "yaml"),
        ("pillow", "PIL"),
        ("opencv-python", "cv2"),
        ("python-docx", "docx"),
        ("pypdf2", "PyPDF2"),
    ];
    let module = known
        .iter()
        .find(|(k, _)| *k == lower)
        .map(|(_, m)| (*m).to_owned())
        .unwrap_or_else(|| lower.replace('-', "_"));
    // `zope.interface` → `zope`: a dotted name would import its parent.
    module.split('.').next().unwrap_or_default().to_owned()
}

/// The prefix of the virtual environment `python` belongs to: the folder
/// above its interpreter's, when it holds a `pyvenv.cfg`.
pub fn venv_prefix(python: &Python) -> Option<PathBuf> {
    let prefix = python.executable.parent()?.parent()?;
    prefix
        .join("pyvenv.cfg")
        .is_file()
        .then(|| prefix.to_path_buf())
}

/// Looks modules up (`importlib.util.find_spec`, top-level names only, so
/// nothing is imported); `sys.argv[1]` is a JSON list of folders added to
/// the search path (without processing their `.pth` files).
const FIND: &str = "import importlib.util, json, sys\nsys.path.extend(json.loads(sys.argv[1]))\n\
for m in sys.argv[2:]:\n    try:\n        ok = importlib.util.find_spec(m) is not None\n    except Exception:\n        ok = False\n    print('1' if ok else '0')\n";

/// The command that checks modules for `python`: a virtual environment's
/// packages are looked up by the real interpreter its link points to,
/// with `-I -S` and the environment's `site-packages` folders added; any
/// other Python (the user's own) is asked directly.
fn finder(python: &Python) -> Result<(std::process::Command, Vec<PathBuf>), RunnerError> {
    let Some(prefix) = venv_prefix(python) else {
        return Ok((Command::new(&python.program), Vec::new()));
    };
    let real = python
        .executable
        .canonicalize()
        .map_err(|e| RunnerError::Io {
            context: format!("resolving {}", python.executable.display()),
            source: e,
        })?;
    let prefix = prefix.canonicalize().unwrap_or(prefix);
    if real.starts_with(&prefix) {
        return Err(RunnerError::BadRequest(format!(
            "the interpreter of the Python environment {} is a file inside it, not a link to a Python outside it; \
             it is not started outside the sandbox: remove the environment in Settings (Python environments) and \
             run again",
            prefix.display()
        )));
    }
    let mut sites = Vec::new();
    for lib in ["lib", "Lib"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for e in entries.flatten() {
            let site = e.path().join("site-packages");
            if site.is_dir() {
                sites.push(site);
            }
        }
        if prefix.join(lib).join("site-packages").is_dir() {
            sites.push(prefix.join(lib).join("site-packages"));
        }
    }
    let mut cmd = Command::new(real);
    cmd.args(["-I", "-S"]).current_dir(&prefix);
    Ok((cmd, sites))
}

/// The requirements whose module Python cannot find (`importlib.util.find_spec`).
pub fn missing_packages(
    python: &Python,
    requirements: &[String],
) -> Result<Vec<String>, RunnerError> {
    let wanted: Vec<(String, String)> = requirements
        .iter()
        .filter(|r| !r.trim().is_empty())
        .map(|r| (r.trim().to_owned(), module_of(r)))
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let modules: Vec<&str> = wanted.iter().map(|(_, m)| m.as_str()).collect();
    let (mut cmd, sites) = finder(python)?;
    let sites: Vec<String> = sites
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let sites = serde_json::to_string(&sites).unwrap_or_else(|_| "[]".into());
    let out = cmd
        .arg("-c")
        .arg(FIND)
        .arg(sites)
        .args(&modules)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| RunnerError::Io {
            context: format!("starting {}", python.program.display()),
            source: e,
        })?;
    let flags: Vec<bool> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim() == "1")
        .collect();
    Ok(wanted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !flags.get(*i).copied().unwrap_or(false))
        .map(|(_, (r, _))| r)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirement_names_become_modules() {
        assert_eq!(module_of("pandas>=2.0"), "pandas");
        assert_eq!(module_of("python-dateutil"), "dateutil");
        assert_eq!(module_of("Some-Pkg==1"), "some_pkg");
        assert_eq!(
            module_of("zope.interface"),
            "zope",
            "a parent is never imported"
        );
        assert_eq!(module_of("os.system"), "os");
    }

    #[test]
    fn a_missing_python_is_named() {
        let err = find_python(Some(Path::new("/nonexistent/python9"))).expect_err("no python");
        assert!(err.to_string().contains("no Python 3.9"), "{err}");
    }

    #[test]
    fn missing_packages_are_listed() {
        let py = find_python(None).expect("python3 on PATH");
        let missing = missing_packages(
            &py,
            &["json".into(), "surely_not_installed_pkg_xyz>=1".into()],
        )
        .expect("check");
        assert_eq!(missing, vec!["surely_not_installed_pkg_xyz>=1".to_owned()]);
    }

    /// Issue 26: a virtual environment's packages are checked without
    /// starting its interpreter with site processing — a `.pth` file in it
    /// (which runs when that interpreter starts normally) does not run.
    #[cfg(unix)]
    #[test]
    fn a_venv_is_checked_without_running_its_pth_files() {
        let base = find_python(None).expect("python3 on PATH");
        let dir = tempfile::tempdir().expect("dir");
        let venv = dir.path().join("env");
        let ok = Command::new(&base.executable)
            .args(["-m", "venv", "--without-pip"])
            .arg(&venv)
            .status()
            .expect("venv");
        assert!(ok.success());
        let site = venv
            .join("lib")
            .join(format!("python{}.{}", base.version.0, base.version.1))
            .join("site-packages");
        let marker = dir.path().join("MARKER");
        std::fs::create_dir_all(site.join("mfpkg")).expect("package");
        std::fs::write(site.join("mfpkg").join("__init__.py"), "").expect("init");
        std::fs::write(
            site.join("zz.pth"),
            format!(
                "import os; open({:?}, 'a').write('ran')\n",
                marker.display().to_string()
            ),
        )
        .expect("pth");
        let python = Python {
            program: venv.join("bin").join("python"),
            version: base.version,
            executable: venv.join("bin").join("python"),
            runtime: Vec::new(),
        };
        let missing = missing_packages(
            &python,
            &[
                "mfpkg".into(),
                "json".into(),
                "surely_not_installed_pkg_xyz".into(),
            ],
        )
        .expect("check");
        assert_eq!(missing, vec!["surely_not_installed_pkg_xyz".to_owned()]);
        assert!(!marker.exists(), "the .pth file ran outside the sandbox");
        // The control: that interpreter started normally does run it.
        let ok = Command::new(&python.executable)
            .args(["-c", "pass"])
            .status()
            .expect("python");
        assert!(ok.success());
        assert!(
            marker.exists(),
            "the .pth file is live, so the check above can fail"
        );
    }

    /// An environment whose interpreter is a file inside it (not a link to
    /// a Python outside) is not started at all.
    #[cfg(unix)]
    #[test]
    fn a_venv_interpreter_inside_the_venv_is_not_started() {
        let dir = tempfile::tempdir().expect("dir");
        let venv = dir.path().join("env");
        std::fs::create_dir_all(venv.join("bin")).expect("bin");
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").expect("cfg");
        let marker = dir.path().join("MARKER");
        let exe = venv.join("bin").join("python");
        std::fs::write(&exe, format!("#!/bin/sh\ntouch {}\n", marker.display())).expect("exe");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        let python = Python {
            program: exe.clone(),
            version: (3, 11),
            executable: exe,
            runtime: Vec::new(),
        };
        let err = missing_packages(&python, &["pandas".into()]).expect_err("refused");
        assert!(
            err.to_string().contains("not started outside the sandbox"),
            "{err}"
        );
        assert!(!marker.exists());
    }
}
