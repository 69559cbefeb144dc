//! The places a traceback may name, checked against the machine rather than
//! believed: a frame of the run's Python (its standard library and
//! installed packages) is kept only when its file is a `.py` file inside
//! one of the interpreter's folders (never inside the run folder) and the
//! quoted line is that file's line on disk; it is shown relative
//! (`site-packages/pandas/core/frame.py`, `python3.11/json/decoder.py`),
//! with the function name read from the file. A library exception class is
//! kept only when its module's file defines it. The engine hands in the
//! folders ([`Machine`]); the file reads are the only I/O here.

use std::path::{Component, Path, PathBuf};

/// Largest library file read to check a frame, in bytes.
const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// The paths of one test run: its working folder and its interpreter's
/// folders (prefixes and `sys.path`), as the engine knows them.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// The run folder, as given and resolved (a script sees either).
    workdirs: Vec<String>,
    /// The interpreter's folders, resolved, longest first; none of them
    /// holds the run folder.
    runtime: Vec<PathBuf>,
    /// When the run's `script.py` was written: a library file changed since
    /// (modified, or its status changed: a backdated modification time does
    /// not hide it) may have been written by the script (isolation switched
    /// off), so it is not believed.
    since: Option<std::time::SystemTime>,
}

/// A library file a frame names, checked.
pub(super) struct LibraryFile {
    /// Its path as shown: relative to `site-packages` or the `pythonX.Y` folder.
    pub shown: String,
    /// Its text.
    pub text: String,
}

impl Machine {
    /// The run in `workdir` on the interpreter whose folders are `runtime`.
    pub fn new(workdir: &Path, runtime: &[PathBuf]) -> Self {
        let mut workdirs = vec![workdir.display().to_string()];
        let resolved = workdir.canonicalize().ok();
        if let Some(r) = &resolved {
            workdirs.push(r.display().to_string());
        }
        workdirs.retain(|w| !w.is_empty() && w != "/");
        workdirs.sort_by_key(|w| std::cmp::Reverse(w.len()));
        workdirs.dedup();
        let holds_run = |root: &Path| {
            resolved
                .as_deref()
                .is_some_and(|w| w.starts_with(root) || root.starts_with(w))
                || root.parent().is_none()
        };
        let mut runtime: Vec<PathBuf> = runtime
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .filter(|r| !holds_run(r))
            .collect();
        runtime.sort_by_key(|r| std::cmp::Reverse(r.as_os_str().len()));
        runtime.dedup();
        let since = std::fs::metadata(workdir.join("script.py"))
            .ok()
            .and_then(|m| changed(&m));
        Self {
            workdirs,
            runtime,
            since,
        }
    }

    /// `text` with the run folder written `.` and each interpreter folder
    /// written as it is shown in frames (or `<python>`).
    pub(super) fn relative(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for w in &self.workdirs {
            out = out.replace(w.as_str(), ".");
        }
        for r in &self.runtime {
            let shown = shown_path(r).unwrap_or_else(|| "<python>".to_owned());
            out = out.replace(&r.display().to_string(), &shown);
        }
        out
    }

    /// Whether `printed` names `script.py` of this run.
    pub(super) fn is_script(&self, printed: &str) -> bool {
        printed == "script.py"
            || printed == "./script.py"
            || self
                .workdirs
                .iter()
                .any(|w| printed.strip_prefix(w.as_str()) == Some("/script.py"))
    }

    /// The library file `printed` names, when it is a `.py` file inside the
    /// interpreter's folders and not inside the run folder.
    pub(super) fn library_file(&self, printed: &str) -> Option<LibraryFile> {
        let path = Path::new(printed);
        if !path.is_absolute()
            || path.extension().is_none_or(|e| e != "py" && e != "pyi")
            || path.components().any(|c| matches!(c, Component::ParentDir))
        {
            return None;
        }
        let real = path.canonicalize().ok()?;
        if !self.runtime.iter().any(|r| real.starts_with(r))
            || self.workdirs.iter().any(|w| real.starts_with(w))
        {
            return None;
        }
        let meta = std::fs::metadata(&real).ok()?;
        if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
            return None;
        }
        if let Some(since) = self.since
            && changed(&meta).is_none_or(|m| m >= since)
        {
            return None;
        }
        let shown = shown_path(&real)?;
        let text = std::fs::read_to_string(&real).ok()?;
        Some(LibraryFile { shown, text })
    }

    /// Whether `dotted` (`pandas.errors.ParserError`) is a class defined
    /// at the top of its module's file in the interpreter's folders.
    pub(super) fn library_class(&self, dotted: &str) -> bool {
        let Some((module, class)) = dotted.rsplit_once('.') else {
            return false;
        };
        let segments: Vec<&str> = module.split('.').collect();
        if !segments.iter().all(|s| is_identifier(s)) || !is_identifier(class) {
            return false;
        }
        let rel = segments.join("/");
        let candidates = [
            format!("{rel}.py"),
            format!("{rel}.pyi"),
            format!("{rel}/__init__.py"),
            format!("{rel}/__init__.pyi"),
        ];
        self.runtime.iter().any(|root| {
            candidates.iter().any(|c| {
                let printed = root.join(c).display().to_string();
                self.library_file(&printed)
                    .is_some_and(|f| defines_class(&f.text, class))
            })
        })
    }
}

/// When a file last changed: the later of its modification time and (on
/// Unix) its status change time, which no script can set back.
fn changed(meta: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    let modified = meta.modified().ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let status = u64::try_from(meta.ctime()).ok().map(|secs| {
            std::time::UNIX_EPOCH
                + std::time::Duration::new(secs, u32::try_from(meta.ctime_nsec()).unwrap_or(0))
        });
        Some(status.map_or(modified, |s| s.max(modified)))
    }
    #[cfg(not(unix))]
    {
        Some(modified)
    }
}

/// Whether `text` has a top-level `class NAME(` or `class NAME:` line.
pub(super) fn defines_class(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        l.strip_prefix("class ")
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|r| r.trim_start().starts_with(['(', ':']))
    })
}

/// Whether `s` is a Python identifier (ASCII).
pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A library path as shown: from its last `site-packages` (or
/// `dist-packages`) folder, else from its last `pythonX.Y` folder.
pub(super) fn shown_path(path: &Path) -> Option<String> {
    let parts: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let from = parts
        .iter()
        .rposition(|p| p == "site-packages" || p == "dist-packages")
        .or_else(|| parts.iter().rposition(|p| p.starts_with("python3")))?;
    Some(parts[from..].join("/"))
}

/// Line `n` (1-based) of `text`, trimmed.
pub(super) fn line_of(text: &str, n: usize) -> Option<&str> {
    text.lines().nth(n.checked_sub(1)?).map(str::trim)
}

/// The function (or class) line `n` of `text` is in, read from the source:
/// the nearest `def`/`class` above it that is less indented; `<module>`.
pub(super) fn enclosing_name(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(line) = n.checked_sub(1).and_then(|i| lines.get(i)) else {
        return "<module>".into();
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut current = indent(line);
    for l in lines[..n - 1].iter().rev() {
        let t = l.trim_start();
        if current == 0 {
            break;
        }
        if t.is_empty() || t.starts_with('#') || indent(l) >= current {
            continue;
        }
        current = indent(l);
        let head = t.strip_prefix("async ").unwrap_or(t);
        if let Some(rest) = head
            .strip_prefix("def ")
            .or_else(|| head.strip_prefix("class "))
        {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                return name;
            }
        }
    }
    "<module>".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_paths_are_shown_from_site_packages_or_the_python_folder() {
        assert_eq!(
            shown_path(Path::new(
                "/home/ada/.local/share/maskflow/python/ab12/lib/python3.12/site-packages/pandas/core/frame.py"
            ))
            .as_deref(),
            Some("site-packages/pandas/core/frame.py")
        );
        assert_eq!(
            shown_path(Path::new("/usr/lib/python3.11/json/decoder.py")).as_deref(),
            Some("python3.11/json/decoder.py")
        );
        assert_eq!(shown_path(Path::new("/home/ada/notes.py")), None);
    }

    #[test]
    fn the_function_is_read_from_the_source() {
        let src = "import x\n\nclass A:\n    def go(self):\n        if x:\n            return 1\n\ny = 2\n";
        assert_eq!(enclosing_name(src, 6), "go");
        assert_eq!(enclosing_name(src, 4), "A");
        assert_eq!(enclosing_name(src, 8), "<module>");
        assert_eq!(enclosing_name(src, 99), "<module>");
        assert!(defines_class(
            "class ParserError(ValueError):\n",
            "ParserError"
        ));
        assert!(!defines_class(
            "    class ParserError(ValueError):\n",
            "ParserError"
        ));
        assert!(!defines_class(
            "class ParserErrorX(ValueError):\n",
            "ParserError"
        ));
    }
}
