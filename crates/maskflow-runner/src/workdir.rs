//! The fresh folder of a run: the request's `workdir`, and inside it the
//! folder the script sees ([`crate::run_folder`]) with the script, its
//! inputs under `inputs/<field>/<name>`, `inputs.json`, `outputs/`,
//! `home/` and `tmp/`. The `workdir` itself stays out of the script's
//! reach: the copies of its outputs go there after the run
//! ([`crate::copies`]).
//!
//! Inputs are read where they are, read-only, never copied when the
//! platform can avoid it ([`InPlace`]): a read-only bind mount onto an
//! empty placeholder in the run's mount namespace; else a symbolic link
//! to the file with a Landlock rule that lets the script read that one
//! file and nothing more; else a hard link where the script could not
//! write through it; a copy only as the last resort. A 1 GB input costs
//! no 1 GB copy per run.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{InputValue, RunRequest, RunnerError, io};

/// How an input file is given to the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// The file itself, bound read-only onto its place in `inputs/` in the
    /// run's mount namespace.
    BindMount,
    /// A symbolic link to the file, which the script's Landlock ruleset
    /// lets it read (and only read, truncation included).
    LandlockRule,
    /// A hard link the script cannot write through (not its owner, no
    /// write permission, same file system).
    HardLink,
    /// A copy (made read-only).
    Copy,
}

impl Way {
    /// The words of the limits report.
    pub fn label(self) -> &'static str {
        match self {
            Way::BindMount => "in place, read-only bind mount",
            Way::LandlockRule => "in place, Landlock read rule",
            Way::HardLink => "hard link",
            Way::Copy => "copy",
        }
    }
}

/// What the platform allows for reading inputs in place, chosen before the
/// folder is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPlace {
    /// A mount namespace: a placeholder each, bound by the child before
    /// `exec`; where binding fails, the child puts a symbolic link there
    /// instead when `or_rule` (Landlock can hold it), else refuses to run.
    Bind {
        /// Whether a Landlock read rule may stand in.
        or_rule: bool,
    },
    /// No mount namespace, Landlock with truncation: symbolic links.
    Rule,
    /// Neither: a hard link where safe (`uid`: the user the script runs
    /// as, `None`: never), else a copy.
    Neither {
        /// The script's user, when hard links may be used.
        uid: Option<u32>,
    },
}

/// One input file as given to the script.
#[derive(Clone, Debug)]
pub struct Given {
    /// The user's file (its canonical path).
    pub source: PathBuf,
    /// Where the script sees it.
    pub target: PathBuf,
    /// How.
    pub way: Way,
}

/// A prepared run folder and its input files.
#[derive(Debug)]
pub struct Prepared {
    /// The script's folder (canonical).
    pub work: PathBuf,
    /// Each input file, as given.
    pub inputs: Vec<Given>,
    /// What the platform allowed.
    pub in_place: InPlace,
}

/// The script's folder inside the fresh `workdir`: `script.py`, `inputs/`
/// (each file given as `in_place` allows), `inputs.json`, `outputs/`,
/// `home/`, `tmp/`.
pub fn prepare(request: &RunRequest, in_place: InPlace) -> Result<Prepared, RunnerError> {
    let work = &request.workdir;
    if work.exists()
        && std::fs::read_dir(work)
            .map_err(io(format!("reading {}", work.display())))?
            .next()
            .is_some()
    {
        return Err(RunnerError::BadRequest(format!(
            "the working folder {} is not empty",
            work.display()
        )));
    }
    let work = crate::run_folder(work);
    for dir in ["outputs", "home", "tmp"] {
        std::fs::create_dir_all(work.join(dir))
            .map_err(io(format!("creating {}", work.display())))?;
    }
    let work = work
        .canonicalize()
        .map_err(io(format!("resolving {}", work.display())))?;
    std::fs::write(work.join("script.py"), &request.script).map_err(io("writing script.py"))?;
    let inputs_dir = work.join("inputs");
    let mut fields = serde_json::Map::new();
    let mut inputs = Vec::new();
    let mut give = |p: &Path, dir: PathBuf| -> Result<Value, RunnerError> {
        let given = give_input(p, &dir, in_place)?;
        let path = Value::String(given.target.display().to_string());
        inputs.push(given);
        Ok(path)
    };
    for (name, value) in &request.inputs {
        let v = match value {
            InputValue::Value(v) => v.clone(),
            InputValue::File(p) => give(p, inputs_dir.join(safe_name(name)))?,
            InputValue::Files(ps) => Value::Array(
                ps.iter()
                    .enumerate()
                    .map(|(i, p)| give(p, inputs_dir.join(safe_name(name)).join(i.to_string())))
                    .collect::<Result<_, _>>()?,
            ),
        };
        fields.insert(name.clone(), v);
    }
    let doc = json!({ "fields": fields });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string());
    std::fs::write(work.join("inputs.json"), text).map_err(io("writing inputs.json"))?;
    Ok(Prepared {
        work,
        inputs,
        in_place,
    })
}

/// The limits report's line on the inputs: how each was given (one way
/// for all, or each file's name with its way); none without input files.
pub fn report(inputs: &[Given]) -> Option<crate::LimitState> {
    let first = inputs.first()?;
    let mechanism = if inputs.iter().all(|g| g.way == first.way) {
        first.way.label().to_owned()
    } else {
        inputs
            .iter()
            .map(|g| {
                let name = g.target.file_name().unwrap_or_default().to_string_lossy();
                format!("{name}: {}", g.way.label())
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    Some(crate::LimitState {
        name: "inputs".into(),
        limit: "read-only, read where they are".into(),
        mechanism: Some(mechanism),
        note: inputs
            .iter()
            .any(|g| g.way == Way::Copy)
            .then(|| "copied: this machine allows no way to read them in place".to_owned()),
    })
}

/// Once the child has bound (or linked) its inputs: makes `inputs/`
/// read-only — folders 0555, copies and placeholders 0444, never a link
/// (a symbolic link's mode is its target's, a hard link's the user's file).
pub fn seal_inputs(work: &Path, inputs: &[Given]) {
    let dir = work.join("inputs");
    if dir.exists() {
        make_read_only(&dir, inputs);
    }
}

fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("f{s}")
    } else {
        s
    }
}

/// Puts the input `src` into `dir` under its own (safe) name, as `in_place`
/// allows.
fn give_input(src: &Path, dir: &Path, in_place: InPlace) -> Result<Given, RunnerError> {
    if !src.is_file() {
        return Err(RunnerError::BadRequest(format!(
            "the input file {} does not exist",
            src.display()
        )));
    }
    // The file itself, not a link the user's folder holds to it: that is
    // what is bound, linked to and allowed.
    let source = src
        .canonicalize()
        .map_err(io(format!("resolving {}", src.display())))?;
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let filename = src
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".into());
    let target = dir.join(safe_name(&filename));
    let made = |what: &str| io(format!("{what} {} for {}", target.display(), src.display()));
    let copy = || {
        std::fs::copy(&source, &target)
            .map(|_| Way::Copy)
            .map_err(made("copying into"))
    };
    let way = match in_place {
        InPlace::Bind { .. } => {
            std::fs::File::create(&target).map_err(made("creating the placeholder"))?;
            Way::BindMount
        }
        #[cfg(unix)]
        InPlace::Rule => {
            std::os::unix::fs::symlink(&source, &target).map_err(made("linking"))?;
            Way::LandlockRule
        }
        #[cfg(not(unix))]
        InPlace::Rule => copy()?,
        InPlace::Neither { uid } => {
            if uid.is_some_and(|uid| safe_to_link(&source, uid))
                && std::fs::hard_link(&source, &target).is_ok()
            {
                Way::HardLink
            } else {
                copy()?
            }
        }
    };
    Ok(Given {
        source,
        target,
        way,
    })
}

/// Whether a script running as `uid` could not write through a hard link
/// to `file`: it is not the file's owner (who could `chmod` it) and no one
/// may write it. (A file of another user is linked only by root, or where
/// `fs.protected_hardlinks` is off.)
fn safe_to_link(file: &Path, uid: u32) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(file).is_ok_and(|m| m.uid() != uid && m.mode() & 0o222 == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, uid);
        false
    }
}

/// Makes every folder under `dir` 0555 and every copy or placeholder 0444.
fn make_read_only(dir: &Path, inputs: &[Given]) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let p = e.path();
                let Ok(meta) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                if meta.is_dir() {
                    make_read_only(&p, inputs);
                } else if meta.is_file()
                    && inputs
                        .iter()
                        .any(|g| g.target == p && matches!(g.way, Way::Copy | Way::BindMount))
                {
                    let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444));
                }
            }
        }
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555));
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, inputs);
    }
}
