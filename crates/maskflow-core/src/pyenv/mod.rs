//! Managed Python environments: one locked environment per distinct pinned
//! set of requirements, made with Astral's `uv` under
//! `MASKFLOW_HOME/python/<id>/`, shared by every version that pins that set.
//!
//! A script's requirements are resolved once ([`Environments::resolve`],
//! `uv pip compile --generate-hashes`: the package index is asked, never
//! with anything from the user's files) into a [`Lock`] stored with the
//! version. [`Environments::ensure`] turns a lock into an environment:
//! created in a temporary folder and renamed when complete, so nothing
//! half-installed is ever used; reused with no network once it exists.
//! Environments are made outside the sandbox; the sandboxed run only reads
//! them. Only wheels are used (`--no-build`): no package's build code runs
//! while resolving or installing, before the user approved anything. This module runs `uv` and touches only `python/` and `tools/`.

pub mod curated;
pub mod sizes;
pub mod uv;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::runner::{Python, find_python};

pub use curated::{CURATED, dist_name, is_curated, outside_curated};

/// The file that marks a complete environment and describes it.
pub const MARKER: &str = "maskflow-env.json";
/// The pinned requirements inside an environment.
const LOCK_FILE: &str = "requirements.lock";

/// Why an environment could not be made.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum EnvError {
    /// No `uv` was found.
    #[error(
        "the script needs Python packages, and Maskflow installs them with uv, which was not found: \
         install it from Settings (Python environments) or with `python3 -m pip install uv`, then retry"
    )]
    NoUv,
    /// Installing `uv` itself failed.
    #[error("installing uv from the package index failed: {detail}")]
    UvInstall {
        /// pip's last lines.
        detail: String,
    },
    /// The requirements could not be resolved (offline, an unknown package…).
    #[error(
        "resolving the Python packages {requirements} failed (the package index is needed the first time; \
         retry when it can be reached): {detail}"
    )]
    Resolve {
        /// The requirements, comma-separated.
        requirements: String,
        /// uv's last lines.
        detail: String,
    },
    /// Creating or installing the environment failed.
    #[error(
        "installing the Python environment {id} ({packages}) failed; nothing was kept, retry when the package \
         index can be reached: {detail}"
    )]
    Install {
        /// The environment's id.
        id: String,
        /// Its packages, comma-separated.
        packages: String,
        /// uv's last lines.
        detail: String,
    },
    /// The environment's interpreter does not work.
    #[error("the Python environment {id} does not start: {detail}")]
    Broken {
        /// The environment's id.
        id: String,
        /// Why.
        detail: String,
    },
    /// The lock was resolved for another Python than the one in use.
    #[error(
        "this version's packages were locked for Python {locked}, but the Python in use is {found}: \
         set a Python {locked} interpreter in Settings, or edit the workflow to rebuild it for Python {found}"
    )]
    PythonChanged {
        /// The lock's Python.
        locked: String,
        /// The interpreter's.
        found: String,
    },
    /// No environment has this id.
    #[error("there is no Python environment {0}")]
    Unknown(String),
    /// A file or folder could not be prepared.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvError {
    let context = context.into();
    move |source| EnvError::Io { context, source }
}

/// A resolved, pinned requirement set, stored with the version that uses it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The Python it was resolved for, e.g. `3.11`.
    pub python: String,
    /// The requirements as the script declared them.
    pub requirements: Vec<String>,
    /// `uv pip compile`'s output: every package pinned, with hashes.
    pub pinned: String,
}

impl Lock {
    /// The pinned packages, `name==version`, sorted.
    pub fn packages(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .pinned
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("--"))
            .filter_map(|l| l.split([' ', ';', '\\']).next())
            .filter(|p| p.contains("=="))
            .map(str::to_owned)
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The environment's id for the base interpreter `base`: a hash of the
    /// interpreter and the pinned set, so equal sets share one environment.
    pub fn environment_id(&self, base: &Python) -> String {
        let mut h = Sha256::new();
        h.update(self.python.as_bytes());
        h.update(b"\n");
        h.update(base.executable.to_string_lossy().as_bytes());
        h.update(b"\n");
        for p in self.packages() {
            h.update(p.as_bytes());
            h.update(b"\n");
        }
        h.update(self.pinned.as_bytes());
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        hex[..16].to_owned()
    }
}

/// An environment as the test report and Settings show it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct EnvironmentInfo {
    /// Its id (the folder name under `python/`).
    pub id: String,
    /// Its Python version, e.g. `3.11`.
    pub python: String,
    /// The pinned packages, `name==version`.
    pub packages: Vec<String>,
    /// Its size on disk in bytes (0 when not measured).
    #[ts(type = "number")]
    pub size: u64,
}

/// One line of an install's progress.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct EnvProgress {
    /// `resolving`, `creating`, `installing`, `ready` or `failed`.
    pub stage: String,
    /// What happens, e.g. uv's `Resolved 20 packages in 1.2s`.
    pub message: String,
}

/// Called with each progress line.
pub type OnProgress<'a> = &'a (dyn Fn(EnvProgress) + Send + Sync);

/// Where an install's progress goes (the event stream, the terminal).
#[derive(Clone)]
pub struct ProgressSink(pub std::sync::Arc<dyn Fn(EnvProgress) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

impl ProgressSink {
    /// A sink that drops every line.
    pub fn none() -> Self {
        Self(std::sync::Arc::new(|_| {}))
    }
}

/// A package outside the curated set, waiting for the user's approval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct PackageRequest {
    /// The requirement as the script declared it, e.g. `tabulate`.
    pub name: String,
    /// The version the lock pins, when resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its download size in bytes, when the index says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(type = "number")]
    pub size: Option<u64>,
}

impl Lock {
    /// The pinned version of the package `requirement` names, if any.
    pub fn version_of(&self, requirement: &str) -> Option<String> {
        let name = dist_name(requirement);
        self.packages().into_iter().find_map(|p| {
            let (n, v) = p.split_once("==")?;
            (dist_name(n) == name).then(|| v.to_owned())
        })
    }
}

/// The environments under one data folder.
#[derive(Clone, Debug)]
pub struct Environments {
    home: PathBuf,
    /// uv's cache folder, when not uv's own default (tests share one).
    cache: Option<PathBuf>,
}

impl Environments {
    /// The environments of the data folder `home` (`home/python/`).
    pub fn new(home: impl Into<PathBuf>) -> Self {
        Self {
            home: home.into(),
            cache: None,
        }
    }

    /// These environments, with uv's cache in `dir`.
    pub fn with_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(dir.into());
        self
    }

    /// `uv` as a command, with the cache chosen.
    fn uv_command(&self, uv: &Path) -> Command {
        let mut cmd = Command::new(uv);
        if let Some(dir) = &self.cache {
            cmd.env("UV_CACHE_DIR", dir);
        }
        cmd
    }

    /// The folder holding every environment.
    pub fn root(&self) -> PathBuf {
        self.home.join("python")
    }

    /// The working `uv`: its path and version.
    pub fn uv(&self, python: Option<&Python>) -> Result<(PathBuf, String), EnvError> {
        uv::find(&self.home, python)
    }

    /// Installs `uv` into the data folder (the user agreed) with `python`'s pip.
    pub fn install_uv(&self, python: &Python, on: OnProgress<'_>) -> Result<PathBuf, EnvError> {
        let say = |m: &str| {
            on(EnvProgress {
                stage: "installing".into(),
                message: m.to_owned(),
            })
        };
        uv::install(&self.home, python, &say)
    }

    /// Resolves `requirements` for `base` into a pinned [`Lock`] (needs the
    /// package index; sends only the requirement names).
    pub fn resolve(
        &self,
        base: &Python,
        requirements: &[String],
        on: OnProgress<'_>,
    ) -> Result<Lock, EnvError> {
        let requirements: Vec<String> = requirements
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        let joined = requirements.join(", ");
        let (uv, _) = self.uv(Some(base))?;
        let tmp = self.scratch("resolve")?;
        let input = tmp.join("requirements.in");
        let output = tmp.join(LOCK_FILE);
        std::fs::write(&input, requirements.join("\n") + "\n")
            .map_err(io(format!("writing {}", input.display())))?;
        on(EnvProgress {
            stage: "resolving".into(),
            message: format!("resolving {joined}"),
        });
        let mut cmd = self.uv_command(&uv);
        cmd.current_dir(&tmp)
            .args([
                "pip",
                "compile",
                "--generate-hashes",
                "--no-header",
                "--no-build",
            ])
            .arg("--python")
            .arg(&base.executable)
            .arg(&input)
            .arg("-o")
            .arg(&output);
        let say = |m: &str| {
            on(EnvProgress {
                stage: "resolving".into(),
                message: m.to_owned(),
            })
        };
        let result = uv::run(cmd, &say);
        let pinned =
            result.and_then(|()| std::fs::read_to_string(&output).map_err(|e| e.to_string()));
        let _ = std::fs::remove_dir_all(&tmp);
        let pinned = pinned.map_err(|detail| EnvError::Resolve {
            requirements: joined,
            detail,
        })?;
        Ok(Lock {
            python: format!("{}.{}", base.version.0, base.version.1),
            requirements,
            pinned,
        })
    }

    /// The environment of `lock` for `base`, made if missing (offline from
    /// uv's cache first, then from the index); its interpreter, ready to run.
    pub fn ensure(
        &self,
        base: &Python,
        lock: &Lock,
        on: OnProgress<'_>,
    ) -> Result<(Python, EnvironmentInfo), EnvError> {
        let found = format!("{}.{}", base.version.0, base.version.1);
        if lock.python != found {
            return Err(EnvError::PythonChanged {
                locked: lock.python.clone(),
                found,
            });
        }
        let id = lock.environment_id(base);
        let dir = self.root().join(&id);
        let info = EnvironmentInfo {
            id: id.clone(),
            python: lock.python.clone(),
            packages: lock.packages(),
            size: 0,
        };
        if !dir.join(MARKER).is_file() {
            self.create(base, lock, &id, &dir, on)?;
        }
        let python = find_python(Some(&interpreter(&dir))).map_err(|e| EnvError::Broken {
            id: id.clone(),
            detail: e.to_string(),
        })?;
        Ok((python, info))
    }

    fn create(
        &self,
        base: &Python,
        lock: &Lock,
        id: &str,
        dir: &Path,
        on: OnProgress<'_>,
    ) -> Result<(), EnvError> {
        let packages = lock.packages();
        let fail = |detail: String| EnvError::Install {
            id: id.to_owned(),
            packages: packages.join(", "),
            detail,
        };
        let (uv, _) = self.uv(Some(base))?;
        let tmp = self.scratch(id)?;
        let say = |stage: &'static str| {
            move |m: &str| {
                on(EnvProgress {
                    stage: stage.into(),
                    message: m.to_owned(),
                })
            }
        };
        on(EnvProgress {
            stage: "creating".into(),
            message: format!("creating Python {} environment {id}", lock.python),
        });
        let result = (|| -> Result<(), String> {
            let mut venv = self.uv_command(&uv);
            venv.current_dir(self.root())
                .args(["venv", "--relocatable", "--no-python-downloads", "--python"])
                .arg(&base.executable)
                .arg(&tmp);
            uv::run(venv, &say("creating"))?;
            std::fs::write(tmp.join(LOCK_FILE), &lock.pinned).map_err(|e| e.to_string())?;
            on(EnvProgress {
                stage: "installing".into(),
                message: format!("installing {} packages", packages.len()),
            });
            let install = |offline: bool| {
                let mut cmd = self.uv_command(&uv);
                cmd.current_dir(self.root())
                    .args([
                        "pip",
                        "install",
                        "--require-hashes",
                        "--compile-bytecode",
                        "--no-build",
                    ])
                    .arg("--python")
                    .arg(interpreter(&tmp))
                    .arg("-r")
                    .arg(tmp.join(LOCK_FILE));
                if offline {
                    cmd.arg("--offline");
                }
                cmd
            };
            // uv's cache first, with no network; the index only when needed.
            if uv::run(install(true), &|_| {}).is_err() {
                uv::run(install(false), &say("installing"))?;
            }
            let marker = serde_json::to_string_pretty(&MarkerDoc {
                lock: lock.clone(),
                packages: packages.clone(),
            })
            .map_err(|e| e.to_string())?;
            std::fs::write(tmp.join(MARKER), marker).map_err(|e| e.to_string())?;
            Ok(())
        })();
        if let Err(detail) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            on(EnvProgress {
                stage: "failed".into(),
                message: detail.lines().last().unwrap_or_default().to_owned(),
            });
            return Err(fail(detail));
        }
        if let Err(e) = std::fs::rename(&tmp, dir) {
            // Another process finished the same environment first: use it.
            let _ = std::fs::remove_dir_all(&tmp);
            if !dir.join(MARKER).is_file() {
                return Err(fail(format!("moving it into {}: {e}", dir.display())));
            }
        }
        on(EnvProgress {
            stage: "ready".into(),
            message: format!("environment {id} ready ({} packages)", packages.len()),
        });
        Ok(())
    }

    /// A fresh temporary folder under `python/` (same file system as the
    /// environments, so the final rename is atomic).
    fn scratch(&self, what: &str) -> Result<PathBuf, EnvError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = self
            .root()
            .join(format!(".tmp-{what}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        Ok(dir)
    }

    /// Every complete environment, with its size.
    pub fn list(&self) -> Vec<EnvironmentInfo> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(self.root())
            .into_iter()
            .flatten()
            .flatten()
        {
            let dir = e.path();
            let Some(id) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                continue;
            };
            if id.starts_with('.') {
                continue;
            }
            let Some(doc) = std::fs::read_to_string(dir.join(MARKER))
                .ok()
                .and_then(|t| serde_json::from_str::<MarkerDoc>(&t).ok())
            else {
                continue;
            };
            out.push(EnvironmentInfo {
                id,
                python: doc.lock.python,
                packages: doc.packages,
                size: crate::runner::folder_size(&dir),
            });
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// Removes the environment `id` (and leftovers of interrupted installs).
    pub fn remove(&self, id: &str) -> Result<(), EnvError> {
        let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit());
        let dir = self.root().join(id);
        if !plain || !dir.join(MARKER).is_file() {
            return Err(EnvError::Unknown(id.to_owned()));
        }
        // Renamed away first, so a run never sees half an environment.
        let gone = self.root().join(format!(".tmp-removing-{id}"));
        std::fs::rename(&dir, &gone).map_err(io(format!("removing {}", dir.display())))?;
        std::fs::remove_dir_all(&gone).map_err(io(format!("removing {}", gone.display())))
    }
}

#[derive(Serialize, Deserialize)]
struct MarkerDoc {
    lock: Lock,
    packages: Vec<String>,
}

/// The interpreter inside an environment folder.
pub fn interpreter(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts").join("python.exe")
    } else {
        dir.join("bin").join("python")
    }
}

#[cfg(test)]
mod tests;
