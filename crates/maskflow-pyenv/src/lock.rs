//! A resolved, pinned requirement set ([`Lock`]) and the check that a
//! stored one holds only pinned packages with their hashes — no option
//! (`--index-url`, `-r`, `-e`), no URL, no path — before `uv` installs it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::requirement::{Requirement, normalise};
use maskflow_runner::Python;

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

/// The logical lines of a requirements file: continuations joined,
/// comments and blank lines left out.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('#') && current.is_empty() {
            continue;
        }
        let line = match line.find(" #") {
            Some(i) => line[..i].trim_end(),
            None if line.starts_with('#') => "",
            None => line,
        };
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head.trim_end());
                current.push(' ');
            }
            None => {
                current.push_str(line);
                if !current.trim().is_empty() {
                    out.push(current.trim().to_owned());
                }
                current.clear();
            }
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Whether `marker` (after a pin's `;`) is a plain environment marker
/// written by `uv` (names, quoted values, comparisons; no call, no
/// parenthesis, no option), nothing more.
fn plain_marker(marker: &str) -> bool {
    !marker.contains("--")
        && marker.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    ' ' | '\'' | '"' | '.' | '_' | '<' | '>' | '=' | '!' | '~' | '-' | '*'
                )
        })
}

/// Whether one logical line is `name==version [; marker] --hash=…` (at
/// least one SHA-256 hash).
fn pinned_line(line: &str) -> bool {
    let mut tokens = line.split_whitespace().peekable();
    let Some(pin) = tokens.next() else {
        return false;
    };
    let Some((name, version)) = pin.split_once("==") else {
        return false;
    };
    let Ok(req) = Requirement::parse(pin) else {
        return false;
    };
    if !req.extras.is_empty() || req.name != name || req.versions != [format!("=={version}")] {
        return false;
    }
    let mut marker = String::new();
    if tokens.peek() == Some(&";") || line[pin.len()..].trim_start().starts_with(';') {
        while let Some(t) = tokens.peek() {
            if t.starts_with("--hash=") {
                break;
            }
            marker.push_str(t);
            marker.push(' ');
            tokens.next();
        }
        let marker = marker.trim().trim_start_matches(';');
        if !plain_marker(marker) {
            return false;
        }
    }
    let hashes: Vec<&str> = tokens.collect();
    !hashes.is_empty()
        && hashes.iter().all(|t| {
            t.strip_prefix("--hash=sha256:")
                .is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit()))
        })
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

    /// Checks that the lock holds only `name==version` pins with their
    /// SHA-256 hashes; `Err` is the first line that is anything else.
    pub fn check(&self) -> Result<(), String> {
        match logical_lines(&self.pinned)
            .into_iter()
            .find(|l| !pinned_line(l))
        {
            Some(line) => Err(line),
            None => Ok(()),
        }
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

    /// The pinned version of the package `requirement` names, if any.
    pub fn version_of(&self, requirement: &str) -> Option<String> {
        let name = super::dist_name(requirement);
        if name.is_empty() {
            return None;
        }
        self.packages().into_iter().find_map(|p| {
            let (n, v) = p.split_once("==")?;
            (normalise(n) == name).then(|| v.to_owned())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(pinned: &str) -> Lock {
        Lock {
            python: "3.11".into(),
            requirements: vec!["x".into()],
            pinned: pinned.into(),
        }
    }

    const HASH: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn what_uv_writes_passes() {
        let text = format!(
            "et-xmlfile==2.0.0 \\\n    --hash=sha256:{HASH}\n    # via openpyxl\n\
             openpyxl==3.1.5 ; python_version >= '3.8' \\\n    --hash=sha256:{HASH} \\\n    --hash=sha256:{HASH}\n    # via -r requirements.in\n"
        );
        assert_eq!(lock(&text).check(), Ok(()));
        assert_eq!(lock("").check(), Ok(()));
    }

    #[test]
    fn options_urls_and_paths_in_a_lock_are_refused() {
        let bad = [
            format!("--index-url http://127.0.0.1:9/simple\nx==1 --hash=sha256:{HASH}\n"),
            format!("-r /etc/passwd\nx==1 --hash=sha256:{HASH}\n"),
            format!("--find-links /tmp\nx==1 --hash=sha256:{HASH}\n"),
            format!("x @ http://127.0.0.1:1/x.whl --hash=sha256:{HASH}\n"),
            format!("-e ./local --hash=sha256:{HASH}\n"),
            format!("./x.whl --hash=sha256:{HASH}\n"),
            "x==1\n".to_owned(),
            format!("x>=1 --hash=sha256:{HASH}\n"),
            format!("x==1 --hash=md5:{}\n", &HASH[..32]),
            format!("x==1 ; os.system('id') --hash=sha256:{HASH}\n"),
            format!("x==1 \\\n --index-url http://h/simple \\\n --hash=sha256:{HASH}\n"),
        ];
        for text in bad {
            assert!(lock(&text).check().is_err(), "{text:?}");
        }
    }

    #[test]
    fn the_version_of_a_requirement_uses_the_grammar() {
        let l = lock(&format!("python-docx==1.1.2 --hash=sha256:{HASH}\n"));
        assert_eq!(l.version_of("Python_Docx>=1"), Some("1.1.2".into()));
        assert_eq!(l.version_of("python-docx @ http://h/x.whl"), None);
    }
}
