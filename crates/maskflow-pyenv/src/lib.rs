//! Managed Python environments: one locked environment per distinct pinned
//! set of requirements, made with Astral's `uv` under
//! `MASKFLOW_HOME/python/<id>/`, shared by every version that pins that set.
//!
//! Requirements come from the builder (an LLM, an outside party): each one
//! must pass the [`requirement`] grammar (a package name with extras and a
//! version, never a URL, path, marker or option) before `uv` sees it, and
//! `uv` is given the configured index and nothing else (`--no-config`,
//! `--no-sources`, no `UV_*` settings but a few harmless ones, wheels only
//! with `--no-build`). A script's requirements are resolved once
//! ([`Environments::resolve`], `uv pip compile --generate-hashes`) into a
//! [`Lock`] stored with the version; [`Environments::ensure`] turns a lock
//! into an environment, created in a temporary folder and renamed when
//! complete, so nothing half-installed is ever used.
//!
//! No interpreter of a managed environment starts outside the sandbox:
//! packages are installed with the base interpreter as `--prefix` (uv never
//! asks the environment's interpreter anything), bytecode is compiled by
//! the base interpreter with site processing off (`-I -S`, so no `.pth`
//! file runs), and the [`Python`] of an environment is described from its
//! files, not probed. An environment is made read-only and sealed
//! ([`guard`]); before each use it is checked, and one that changed is
//! removed and rebuilt from its lock, with a progress line saying so. This
//! crate runs `uv` and touches only `python/` and `tools/`.
//!
//! It uses only `maskflow-runner` (the [`Python`] an environment is
//! described as) and must never depend on core, a database or a shell
//! crate (checked by `scripts/structure.py`); the app stores locks and maps
//! [`EnvError`] at its boundary. It is not part of the runner because
//! [`sizes`] asks the package index over HTTP, and the runner stays
//! network-free.

#![deny(missing_docs)]

pub mod curated;
mod guard;
mod lock;
pub mod requirement;
pub mod sizes;
pub mod uv;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use maskflow_runner::Python;

pub use curated::{CURATED, dist_name, is_curated, outside_curated};
pub use lock::Lock;
pub use requirement::{Requirement, RequirementError};

/// The file that marks a complete environment and describes it.
pub const MARKER: &str = "maskflow-env.json";
/// The pinned requirements inside an environment.
const LOCK_FILE: &str = "requirements.lock";
/// The marker's format: 2 since environments are sealed read-only.
const MARKER_FORMAT: u32 = 2;

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
    /// A requirement is not `name[extras] version-specifier`.
    #[error(transparent)]
    Requirement(#[from] RequirementError),
    /// A stored lock holds more than pinned packages and their hashes.
    #[error(
        "the pinned Python packages of this version are refused: {line:?} is not `name==version` with hashes; \
         edit the workflow to rebuild it"
    )]
    Lock {
        /// The offending line of the lock.
        line: String,
    },
    /// The configured package index is not a URL uv can be given.
    #[error(
        "the package index {url:?} (UV_INDEX_URL or UV_DEFAULT_INDEX) is not an http(s):// or file:// URL; \
         correct it or unset it to use {default}",
        default = uv::DEFAULT_INDEX
    )]
    Index {
        /// The configured value.
        url: String,
    },
    /// An environment was changed after it was made and could not be removed.
    #[error(
        "the Python environment {id} is not as Maskflow sealed it ({why}) and could not be removed \
         ({detail}); nothing from it was run: delete the folder {folder} and run again, Maskflow then rebuilds \
         it from the version's pinned packages"
    )]
    Tampered {
        /// The environment's id.
        id: String,
        /// What changed.
        why: String,
        /// Why removing it failed.
        detail: String,
        /// Its folder.
        folder: String,
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

/// An environment as the test report and Settings show it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EnvironmentInfo {
    /// Its id (the folder name under `python/`).
    pub id: String,
    /// Its Python version, e.g. `3.11`.
    pub python: String,
    /// The pinned packages, `name==version`.
    pub packages: Vec<String>,
    /// Its size on disk in bytes (0 when not measured).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: u64,
}

/// One line of an install's progress.
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct PackageRequest {
    /// The requirement as the script declared it, e.g. `tabulate`.
    pub name: String,
    /// The version the lock pins, when resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its download size in bytes, when the index says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: Option<u64>,
    /// The package index it would be installed from (the configured one).
    #[serde(default)]
    pub index: String,
}

/// uv's cache under the data folder `home` (`home/cache/uv`): kept with
/// the rest of Maskflow's data, so Settings → Storage counts and clears it.
pub fn cache_dir(home: &Path) -> PathBuf {
    home.join("cache").join("uv")
}

/// The cache Maskflow hands uv: the data folder's, unless the user set
/// one (`user`), which uv then reads itself.
fn default_cache(home: &Path, user: Option<PathBuf>) -> Option<PathBuf> {
    user.is_none().then(|| cache_dir(home))
}

/// The environments under one data folder.
#[derive(Clone, Debug)]
pub struct Environments {
    home: PathBuf,
    /// uv's cache folder, when not uv's own default (tests share one).
    cache: Option<PathBuf>,
    /// The one package index uv is given.
    index: String,
}

impl Environments {
    /// The environments of the data folder `home` (`home/python/`), with
    /// the configured package index ([`uv::configured_index`]) and uv's
    /// cache in the data folder ([`cache_dir`]) unless the user set
    /// `UV_CACHE_DIR` (uv is handed that one as it is).
    pub fn new(home: impl Into<PathBuf>) -> Self {
        let home = home.into();
        Self {
            cache: default_cache(&home, uv::user_cache()),
            home,
            index: uv::configured_index(),
        }
    }

    /// uv's cache folder these environments use, `None` when it is the
    /// user's own (`UV_CACHE_DIR`).
    pub fn cache(&self) -> Option<&Path> {
        self.cache.as_deref()
    }

    /// These environments, with uv's cache in `dir`.
    pub fn with_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(dir.into());
        self
    }

    /// These environments, installing from the package index `url`.
    pub fn with_index(mut self, url: impl Into<String>) -> Self {
        self.index = url.into();
        self
    }

    /// The package index packages are resolved and installed from.
    pub fn index(&self) -> &str {
        &self.index
    }

    /// The package index as the user is shown it (no credentials).
    pub fn shown_index(&self) -> String {
        uv::shown_index(&self.index)
    }

    /// `uv` as a command: the user's uv settings removed, the cache chosen.
    fn uv_command(&self, uv: &Path) -> Command {
        uv::command(uv, self.cache.as_deref())
    }

    /// The arguments that fix where packages come from: the one index,
    /// no configuration file, no source overrides, wheels only.
    fn source_args(&self) -> Result<[String; 5], EnvError> {
        if !uv::valid_index(&self.index) {
            return Err(EnvError::Index {
                url: uv::shown_index(&self.index),
            });
        }
        Ok([
            "--no-config".into(),
            "--no-sources".into(),
            "--no-build".into(),
            "--default-index".into(),
            self.index.clone(),
        ])
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
    /// package index; sends only the requirement names). Each requirement
    /// must pass the [`requirement`] grammar first.
    pub fn resolve(
        &self,
        base: &Python,
        requirements: &[String],
        on: OnProgress<'_>,
    ) -> Result<Lock, EnvError> {
        let parsed = requirement::parse_all(requirements)?;
        let requirements: Vec<String> = requirements
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        let joined = requirements.join(", ");
        let sources = self.source_args()?;
        let (uv, _) = self.uv(Some(base))?;
        let tmp = self.scratch("resolve")?;
        let input = tmp.join("requirements.in");
        let output = tmp.join(LOCK_FILE);
        let lines: Vec<String> = parsed.iter().map(Requirement::line).collect();
        std::fs::write(&input, lines.join("\n") + "\n")
            .map_err(io(format!("writing {}", input.display())))?;
        on(EnvProgress {
            stage: "resolving".into(),
            message: format!("resolving {joined} from {}", self.shown_index()),
        });
        let mut cmd = self.uv_command(&uv);
        cmd.current_dir(&tmp)
            .args(["pip", "compile", "--generate-hashes", "--no-header"])
            .args(&sources)
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
        let lock = Lock {
            python: format!("{}.{}", base.version.0, base.version.1),
            requirements,
            pinned,
        };
        lock.check().map_err(|line| EnvError::Lock { line })?;
        Ok(lock)
    }

    /// The environment of `lock` for `base`, made if missing (offline from
    /// uv's cache first, then from the index), checked against its seal
    /// when it exists (one that changed is removed and rebuilt); its
    /// interpreter, described from its files (never started here).
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
        lock.check().map_err(|line| EnvError::Lock { line })?;
        let id = lock.environment_id(base);
        let dir = self.root().join(&id);
        let info = EnvironmentInfo {
            id: id.clone(),
            python: lock.python.clone(),
            packages: lock.packages(),
            size: 0,
        };
        if std::fs::symlink_metadata(&dir).is_ok()
            && let Err(why) = self.verify(&dir, lock)
        {
            on(EnvProgress {
                stage: "creating".into(),
                message: format!(
                    "the Python environment {id} is not as Maskflow sealed it ({why}): nothing from it was run; \
                     it is removed and made again from the pinned packages"
                ),
            });
            self.discard(&id, &dir)
                .map_err(|detail| EnvError::Tampered {
                    id: id.clone(),
                    why,
                    detail,
                    folder: dir.display().to_string(),
                })?;
        }
        if std::fs::symlink_metadata(&dir).is_err() {
            self.create(base, lock, &id, &dir, on)?;
        }
        Ok((environment_python(base, &dir), info))
    }

    /// Whether the environment in `dir` is the one `lock` made, unchanged.
    fn verify(&self, dir: &Path, lock: &Lock) -> Result<(), String> {
        let meta = std::fs::symlink_metadata(dir).map_err(|e| e.to_string())?;
        if !meta.is_dir() {
            return Err(format!("{} is not a folder", dir.display()));
        }
        let doc: MarkerDoc = std::fs::read_to_string(dir.join(MARKER))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| format!("its marker {MARKER} is missing or unreadable"))?;
        if doc.format < MARKER_FORMAT {
            return Err(
                "it was made by an earlier Maskflow, before environments were sealed".into(),
            );
        }
        if doc.lock.pinned != lock.pinned || doc.lock.python != lock.python {
            return Err(format!("its marker {MARKER} names other packages"));
        }
        guard::check(dir, &doc.seal)
    }

    /// Renames `dir` away and removes it (read-only folders included).
    fn discard(&self, id: &str, dir: &Path) -> Result<(), String> {
        let gone = self
            .root()
            .join(format!(".tmp-removing-{id}-{}", std::process::id()));
        std::fs::rename(dir, &gone).map_err(|e| format!("renaming it: {e}"))?;
        guard::remove(&gone).map_err(|e| format!("removing {}: {e}", gone.display()))
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
        let sources = self.source_args()?;
        let (uv, _) = self.uv(Some(base))?;
        let tmp = self.scratch(id)?;
        on(EnvProgress {
            stage: "creating".into(),
            message: format!("creating Python {} environment {id}", lock.python),
        });
        let result = self.fill(base, lock, &uv, &sources, &tmp, on);
        let result = result.and_then(|seal| {
            let marker = serde_json::to_string_pretty(&MarkerDoc {
                format: MARKER_FORMAT,
                lock: lock.clone(),
                packages: packages.clone(),
                seal,
            })
            .map_err(|e| e.to_string())?;
            std::fs::write(tmp.join(MARKER), marker).map_err(|e| e.to_string())?;
            guard::freeze(&tmp).map_err(|e| format!("making it read-only: {e}"))
        });
        if let Err(detail) = result {
            let _ = guard::remove(&tmp);
            on(EnvProgress {
                stage: "failed".into(),
                message: detail.lines().last().unwrap_or_default().to_owned(),
            });
            return Err(fail(detail));
        }
        if let Err(e) = std::fs::rename(&tmp, dir) {
            // Another process finished the same environment first: use it.
            let _ = guard::remove(&tmp);
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

    /// Makes the environment in `tmp`: `uv venv`, the pinned packages
    /// installed as a `--prefix` with the base interpreter (so uv never
    /// starts the environment's interpreter), bytecode compiled by the base
    /// interpreter with site processing off. Returns its seal.
    fn fill(
        &self,
        base: &Python,
        lock: &Lock,
        uv: &Path,
        sources: &[String],
        tmp: &Path,
        on: OnProgress<'_>,
    ) -> Result<guard::Seal, String> {
        let say = |stage: &'static str| {
            move |m: &str| {
                on(EnvProgress {
                    stage: stage.into(),
                    message: m.to_owned(),
                })
            }
        };
        let mut venv = self.uv_command(uv);
        venv.current_dir(self.root())
            .args([
                "venv",
                "--no-config",
                "--relocatable",
                "--no-python-downloads",
                "--python",
            ])
            .arg(&base.executable)
            .arg(tmp);
        uv::run(venv, &say("creating"))?;
        let seal = guard::seal_of(tmp).map_err(|e| format!("reading the new environment: {e}"))?;
        std::fs::write(tmp.join(LOCK_FILE), &lock.pinned).map_err(|e| e.to_string())?;
        on(EnvProgress {
            stage: "installing".into(),
            message: format!(
                "installing {} packages from {}",
                lock.packages().len(),
                self.shown_index()
            ),
        });
        let install = |offline: bool| {
            let mut cmd = self.uv_command(uv);
            cmd.current_dir(self.root())
                .args(["pip", "install", "--require-hashes", "--link-mode", "copy"])
                .args(sources)
                .arg("--python")
                .arg(&base.executable)
                .arg("--prefix")
                .arg(tmp)
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
        compile_bytecode(base, tmp);
        let after = guard::seal_of(tmp).map_err(|e| format!("reading the environment: {e}"))?;
        if after != seal {
            return Err(
                "a package changed the environment's interpreter links or pyvenv.cfg; it is not kept".into(),
            );
        }
        Ok(seal)
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
                size: maskflow_runner::folder_size(&dir),
            });
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// Removes the environment `id` (read-only as it is).
    pub fn remove(&self, id: &str) -> Result<(), EnvError> {
        let plain = !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit());
        let dir = self.root().join(id);
        if !plain || !dir.join(MARKER).is_file() {
            return Err(EnvError::Unknown(id.to_owned()));
        }
        // Renamed away first, so a run never sees half an environment.
        let gone = self.root().join(format!(".tmp-removing-{id}"));
        std::fs::rename(&dir, &gone).map_err(io(format!("removing {}", dir.display())))?;
        guard::remove(&gone).map_err(io(format!("removing {}", gone.display())))
    }
}

#[derive(Serialize, Deserialize)]
struct MarkerDoc {
    /// 0 (absent) for environments made before they were sealed.
    #[serde(default)]
    format: u32,
    lock: Lock,
    packages: Vec<String>,
    #[serde(default)]
    seal: guard::Seal,
}

/// Compiles the bytecode of the environment in `dir` with the base
/// interpreter, isolated and without site processing (`-I -S`): `.py`
/// files are compiled, never imported, and no `.pth` file runs. Best
/// effort: without bytecode, a run compiles in memory.
fn compile_bytecode(base: &Python, dir: &Path) {
    let Some(site) = site_packages(dir, base.version) else {
        return;
    };
    let real = base
        .executable
        .canonicalize()
        .unwrap_or_else(|_| base.executable.clone());
    let _ = Command::new(real)
        .args(["-I", "-S", "-m", "compileall", "-q", "-j", "0"])
        .arg(&site)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// The `site-packages` folder of the environment in `dir`, if it has one.
fn site_packages(dir: &Path, version: (u32, u32)) -> Option<PathBuf> {
    let site = if cfg!(windows) {
        dir.join("Lib").join("site-packages")
    } else {
        dir.join("lib")
            .join(format!("python{}.{}", version.0, version.1))
            .join("site-packages")
    };
    site.is_dir().then_some(site)
}

/// The interpreter of the environment in `dir`, described from its files
/// and `base` (never started here): the folders a run reads are the base
/// runtime's without its own `site-packages`, and the environment itself.
pub fn environment_python(base: &Python, dir: &Path) -> Python {
    let site = |p: &PathBuf| {
        p.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("site-packages" | "dist-packages")
            )
        })
    };
    let mut runtime: Vec<PathBuf> = base.runtime.iter().filter(|p| !site(p)).cloned().collect();
    runtime.push(dir.to_path_buf());
    runtime.sort();
    runtime.dedup();
    Python {
        program: interpreter(dir),
        version: base.version,
        executable: interpreter(dir),
        runtime,
    }
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
