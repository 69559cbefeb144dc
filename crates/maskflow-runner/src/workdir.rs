//! The fresh folder of a run: the request's `workdir`, and inside it the
//! folder the script sees ([`crate::run_folder`]) with the script,
//! read-only copies of its inputs, `inputs.json`, `outputs/`, `home/` and
//! `tmp/`. The `workdir` itself stays out of the script's reach: the
//! copies of its outputs go there after the run ([`crate::copies`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{InputValue, RunRequest, RunnerError, io};

/// The script's folder inside the fresh `workdir`: `script.py`, `inputs/`
/// (read-only copies), `inputs.json`, `outputs/`, `home/`, `tmp/`; its
/// canonical path.
pub fn prepare(request: &RunRequest) -> Result<PathBuf, RunnerError> {
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
    for (name, value) in &request.inputs {
        let v = match value {
            InputValue::Value(v) => v.clone(),
            InputValue::File(p) => Value::String(copy_input(p, &inputs_dir.join(safe_name(name)))?),
            InputValue::Files(ps) => Value::Array(
                ps.iter()
                    .enumerate()
                    .map(|(i, p)| {
                        copy_input(p, &inputs_dir.join(safe_name(name)).join(i.to_string()))
                            .map(Value::String)
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        fields.insert(name.clone(), v);
    }
    if inputs_dir.exists() {
        make_read_only(&inputs_dir);
    }
    let doc = json!({ "fields": fields });
    let text = serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string());
    std::fs::write(work.join("inputs.json"), text).map_err(io("writing inputs.json"))?;
    Ok(work)
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

fn copy_input(src: &Path, dir: &Path) -> Result<String, RunnerError> {
    if !src.is_file() {
        return Err(RunnerError::BadRequest(format!(
            "the input file {} does not exist",
            src.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let filename = src
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".into());
    let target = dir.join(safe_name(&filename));
    std::fs::copy(src, &target).map_err(io(format!("copying {}", src.display())))?;
    Ok(target.display().to_string())
}

/// Makes every file under `dir` read-only (0444) and every folder 0555.
fn make_read_only(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    make_read_only(&p);
                } else {
                    let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444));
                }
            }
        }
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555));
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
    }
}
