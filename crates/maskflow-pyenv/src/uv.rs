//! Finding Astral's `uv` and running it with its messages streamed as
//! progress. Order: `MASKFLOW_UV` (an explicit path), `uv` on `PATH`, the
//! copy in the data folder (`tools/uv/`: `scripts/run.sh` puts it there, or
//! Settings' "Install uv" once the user agreed), the copy a package ships
//! beside the binaries ([`bundled_paths`]: `/usr/lib/maskflow/uv`), then
//! the `uv` package of the Python in use (`python -m pip install uv` puts
//! its binary beside that Python).
//!
//! Every `uv` command is made by [`command`]: no configuration file of the
//! user's (`--no-config`), no `UV_*` setting from the environment except
//! a few harmless ones, so only the arguments Maskflow gives decide where
//! packages come from: the configured index ([`configured_index`]) and
//! nothing else.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::EnvError;
use maskflow_runner::Python;

/// The environment variable naming `uv`'s path explicitly.
pub const UV_VAR: &str = "MASKFLOW_UV";

/// The package index used when none is configured.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple";

/// The `UV_*` settings passed on to `uv`; every other one is removed (an
/// extra index, find-links, bytecode compilation, a configuration file).
const KEPT_SETTINGS: &[&str] = &[
    "UV_CACHE_DIR",
    "UV_NATIVE_TLS",
    "UV_OFFLINE",
    "UV_HTTP_TIMEOUT",
    "UV_REQUEST_TIMEOUT",
    "UV_CONCURRENT_DOWNLOADS",
    "UV_CONCURRENT_INSTALLS",
];

/// The package index the user configured: `UV_INDEX_URL`, else
/// `UV_DEFAULT_INDEX`, else [`DEFAULT_INDEX`]. The one index uv is given.
pub fn configured_index() -> String {
    ["UV_INDEX_URL", "UV_DEFAULT_INDEX"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|v| v.trim().to_owned())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_INDEX.to_owned())
}

/// The cache folder the user set for uv (`UV_CACHE_DIR`), if any.
pub fn user_cache() -> Option<PathBuf> {
    std::env::var_os("UV_CACHE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Whether `url` can be an index: `http(s)://` or `file://`, no spaces,
/// nothing that reads as an option.
pub fn valid_index(url: &str) -> bool {
    ["https://", "http://", "file://"]
        .iter()
        .any(|s| url.starts_with(s))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `url` as it is shown (progress, the approval): without a user name or
/// password it may carry (`https://user:token@host/simple`).
pub fn shown_index(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

/// `uv` as a command with the user's `UV_*` settings removed (see
/// [`KEPT_SETTINGS`]) and uv's cache in `cache` when given.
pub fn command(uv: &Path, cache: Option<&Path>) -> Command {
    let mut cmd = Command::new(uv);
    for (key, _) in std::env::vars_os() {
        let name = key.to_string_lossy();
        if name.starts_with("UV_") && !KEPT_SETTINGS.contains(&name.as_ref()) {
            cmd.env_remove(&key);
        }
    }
    if let Some(dir) = cache {
        cmd.env("UV_CACHE_DIR", dir);
    }
    cmd
}

/// How many of uv's last message lines an error keeps.
const ERROR_LINES: usize = 12;

/// The `uv` binary Maskflow installs with the user's consent, under `home`.
pub fn installed_path(home: &Path) -> PathBuf {
    let bin = if cfg!(windows) { "Scripts" } else { "bin" };
    let exe = if cfg!(windows) { "uv.exe" } else { "uv" };
    home.join("tools").join("uv").join(bin).join(exe)
}

/// Where a package ships `uv` beside Maskflow's binaries: for
/// `/usr/bin/maskflow`, `/usr/lib/maskflow/uv` (the .deb and .rpm, issue
/// 44); and the binaries' own folder (an unpacked archive).
pub fn bundled_paths() -> Vec<PathBuf> {
    let exe = if cfg!(windows) { "uv.exe" } else { "uv" };
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    if let Some(prefix) = dir.parent() {
        paths.push(prefix.join("lib").join("maskflow").join(exe));
    }
    paths.push(dir.join(exe));
    paths
}

fn works(program: &Path) -> Option<String> {
    let out = Command::new(program)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The `uv` binary of the `uv` package installed for `python`, if any.
fn from_python(python: &Path) -> Option<PathBuf> {
    let out = Command::new(python)
        .args(["-c", "import uv; print(uv.find_uv_bin())"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Finds a working `uv`: its path and `uv --version`.
pub fn find(home: &Path, python: Option<&Python>) -> Result<(PathBuf, String), EnvError> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os(UV_VAR).filter(|p| !p.is_empty()) {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from("uv"));
    candidates.push(installed_path(home));
    candidates.extend(bundled_paths());
    if let Some(py) = python
        && let Some(p) = from_python(&py.program)
    {
        candidates.push(p);
    }
    for c in candidates {
        if let Some(version) = works(&c) {
            return Ok((c, version));
        }
    }
    Err(EnvError::NoUv)
}

/// Installs the `uv` package from the package index into `home/tools/uv`
/// with `python -m pip` (the user agreed to it), and returns its binary.
pub fn install(home: &Path, python: &Python, progress: &dyn Fn(&str)) -> Result<PathBuf, EnvError> {
    let target = home.join("tools").join("uv");
    let tmp = home
        .join("tools")
        .join(format!(".uv-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(super::io(format!("creating {}", tmp.display())))?;
    let mut cmd = Command::new(&python.program);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--target",
    ])
    .arg(&tmp)
    .arg("uv");
    run(cmd, progress).map_err(|detail| EnvError::UvInstall { detail })?;
    let _ = std::fs::remove_dir_all(&target);
    std::fs::rename(&tmp, &target)
        .map_err(super::io(format!("moving uv into {}", target.display())))?;
    let bin = installed_path(home);
    works(&bin)
        .map(|_| bin.clone())
        .ok_or_else(|| EnvError::UvInstall {
            detail: format!("{} does not start after the install", bin.display()),
        })
}

/// Runs `cmd` (stdout discarded), passing each line it writes to stderr to
/// `progress`. Err holds the last lines when it fails.
pub fn run(mut cmd: Command, progress: &dyn Fn(&str)) -> Result<(), String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("NO_COLOR", "1");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{:?} did not start: {e}", cmd.get_program()))?;
    let mut last: Vec<String> = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let line = line.trim_end().to_owned();
            if line.trim().is_empty() {
                continue;
            }
            progress(line.trim());
            last.push(line);
            if last.len() > ERROR_LINES {
                last.remove(0);
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(if last.is_empty() {
            format!("it exited with {status}")
        } else {
            last.join("\n")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_is_shown_without_its_credentials() {
        assert_eq!(
            shown_index("https://user:tok@pkgs.example.com/simple"),
            "https://pkgs.example.com/simple"
        );
        assert_eq!(shown_index(DEFAULT_INDEX), DEFAULT_INDEX);
        assert_eq!(
            shown_index("http://127.0.0.1:9/a@b/simple"),
            "http://127.0.0.1:9/a@b/simple"
        );
        assert!(valid_index("file:///srv/simple"));
        assert!(!valid_index("--find-links /tmp"));
        assert!(!valid_index("https://h/simple\n-r x"));
    }
}
