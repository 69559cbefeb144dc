//! The requirement grammar: what a script (an LLM, an outside party) may
//! ask to be installed. A requirement is data, never an option, a URL, a
//! path or a marker: only `name[extras] version-specifier` — PEP 508
//! without its `@ url`, `; marker` and every pip/uv requirements-file
//! syntax (`-r`, `--index-url`, `-e`, line continuations, comments).
//! Everything else is refused with a sentence naming the requirement.
//!
//! Pure: no I/O. The builder's reply is checked with it when it is parsed,
//! and [`super::Environments`] checks again before anything reaches `uv`;
//! `uv` is then given [`Requirement::line`], rebuilt from the parsed parts.

use std::fmt;

/// Longest accepted requirement, in bytes.
pub const MAX_LEN: usize = 200;

/// Why a requirement was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequirementError {
    /// The text is not `name[extras] version-specifier`.
    #[error(
        "the Python requirement {requirement:?} is refused: {why}; a requirement must be a package name from the \
         package index, optionally with extras and a version, e.g. \"pandas\", \"pandas[excel]>=2,<3\" or \"python-docx==1.1\""
    )]
    Refused {
        /// The requirement as given.
        requirement: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// A requirement that passed the grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The package name as written, e.g. `Python_Docx`.
    pub name: String,
    /// Its extras, e.g. `["excel"]`.
    pub extras: Vec<String>,
    /// Its version clauses, e.g. `[">=2", "<3"]` (empty: any version).
    pub versions: Vec<String>,
}

const OPERATORS: &[&str] = &["===", "==", "!=", "<=", ">=", "~=", "<", ">"];
const ARCHIVES: &[&str] = &[
    ".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".egg",
];

fn refused(requirement: &str, why: &'static str) -> RequirementError {
    RequirementError::Refused {
        requirement: requirement.to_owned(),
        why,
    }
}

/// A PEP 508 identifier: letters and digits, with `.`, `_`, `-` inside.
fn is_identifier(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(alnum)
        && s.ends_with(alnum)
        && s.chars().all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
}

/// A version (PEP 440, loosely): letters, digits and `. * + ! _ -`.
fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '*' | '+' | '!' | '_' | '-'))
}

/// The first thing that makes `text` more than data, if any.
fn forbidden(text: &str) -> Option<&'static str> {
    if text.is_empty() {
        return Some("it is empty");
    }
    if text.len() > MAX_LEN {
        return Some("it is longer than 200 characters");
    }
    if text
        .chars()
        .any(|c| c.is_control() || (c.is_whitespace() && c != ' '))
    {
        return Some("it contains a line break, a tab or a control character");
    }
    if !text.is_ascii() {
        return Some("it contains characters outside ASCII");
    }
    if text.starts_with('-') {
        return Some("it is an installer option, not a package");
    }
    if text.contains('\\') {
        return Some("it contains a backslash (a line continuation or a Windows path)");
    }
    if text.contains("://") || text.contains('@') {
        return Some(
            "it is a URL or a direct reference (`@`); only packages from the package index are installed",
        );
    }
    if text.contains('/') || text.starts_with(['.', '~']) {
        return Some(
            "it is a file or folder path; only packages from the package index are installed",
        );
    }
    if text.contains(';') {
        return Some("it carries an environment marker (`;`)");
    }
    if text.contains('#') {
        return Some("it contains a comment (`#`)");
    }
    None
}

impl Requirement {
    /// Parses `text` (surrounding spaces ignored) or says why it is refused.
    pub fn parse(text: &str) -> Result<Self, RequirementError> {
        let trimmed = text.trim_matches(' ');
        if let Some(why) = forbidden(trimmed) {
            return Err(refused(text, why));
        }
        let name_end = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            .unwrap_or(trimmed.len());
        let name = &trimmed[..name_end];
        if !is_identifier(name) {
            return Err(refused(text, "it does not start with a package name"));
        }
        let lower = name.to_ascii_lowercase();
        if ARCHIVES.iter().any(|a| lower.ends_with(a)) {
            return Err(refused(text, "it names an archive file, not a package"));
        }
        let mut rest = trimmed[name_end..].trim_start_matches(' ');
        let mut extras = Vec::new();
        if let Some(inner) = rest.strip_prefix('[') {
            let close = inner
                .find(']')
                .ok_or_else(|| refused(text, "its extras `[…]` are not closed"))?;
            for extra in inner[..close].split(',').map(|e| e.trim_matches(' ')) {
                if !is_identifier(extra) {
                    return Err(refused(text, "an extra in `[…]` is not a plain name"));
                }
                extras.push(extra.to_owned());
            }
            rest = inner[close + 1..].trim_start_matches(' ');
        }
        let mut versions = Vec::new();
        if !rest.is_empty() {
            for clause in rest.split(',').map(|c| c.trim_matches(' ')) {
                let op = OPERATORS
                    .iter()
                    .find(|op| clause.starts_with(**op))
                    .ok_or_else(|| {
                        refused(
                            text,
                            "what follows the name is not a version specifier such as `>=2,<3`",
                        )
                    })?;
                let version = clause[op.len()..].trim_start_matches(' ');
                if !is_version(version) {
                    return Err(refused(
                        text,
                        "a version in it is not a plain version number",
                    ));
                }
                versions.push(format!("{op}{version}"));
            }
        }
        Ok(Self {
            name: name.to_owned(),
            extras,
            versions,
        })
    }

    /// The normalised distribution name (PEP 503): `Python_Docx` → `python-docx`.
    pub fn dist_name(&self) -> String {
        normalise(&self.name)
    }

    /// The requirement as `uv` is given it, rebuilt from the parsed parts.
    pub fn line(&self) -> String {
        let mut out = self.name.clone();
        if !self.extras.is_empty() {
            out.push('[');
            out.push_str(&self.extras.join(","));
            out.push(']');
        }
        out.push_str(&self.versions.join(","));
        out
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line())
    }
}

/// PEP 503 normalisation of a name that is already an identifier.
pub(crate) fn normalise(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_ascii_lowercase().chars() {
        let c = if matches!(c, '_' | '.') { '-' } else { c };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    out
}

/// Parses every requirement (empty ones skipped), or the first refusal.
pub fn parse_all(requirements: &[String]) -> Result<Vec<Requirement>, RequirementError> {
    requirements
        .iter()
        .filter(|r| !r.trim().is_empty())
        .map(|r| Requirement::parse(r))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form a hostile builder was seen to use, or could: each refused,
    /// and the message names the requirement.
    #[test]
    fn hostile_requirements_are_refused_and_named() {
        let hostile = [
            "xlsxwriter @ http://127.0.0.1:1/x.whl",
            "xlsxwriter@http://127.0.0.1:1/x.whl",
            "pandas; python_version>\"3\"",
            "pandas\n--index-url http://127.0.0.1:1/simple",
            "pandas\r\n-r /etc/passwd",
            "-r /etc/passwd",
            "--index-url http://127.0.0.1:1/simple",
            "--extra-index-url=http://127.0.0.1:1/simple",
            "--find-links http://127.0.0.1:1/",
            "-f /tmp",
            "-e .",
            "./local/path",
            "local/path",
            "/abs/path",
            "~/pkg",
            "..",
            "file:///tmp/x.whl",
            "git+https://github.com/a/b",
            "https://example.com/x.whl",
            "pandas \\\n--index-url http://x",
            "pandas \\",
            "C:\\pkg",
            "pandas # comment",
            "pandas\t>=2",
            "pandas\u{0}",
            "pändas",
            "x.whl",
            "pkg-1.0.tar.gz",
            "pandas[extra",
            "pandas[ex tra]",
            "pandas (>=2)",
            "pandas >= 2 or more",
            "pandas>=",
            "pandas>=2;",
            "",
            "   ",
            "_pandas",
        ];
        for text in hostile {
            let err = Requirement::parse(text).expect_err(text);
            let message = err.to_string();
            assert!(
                message.contains(&format!("{text:?}")),
                "{text:?}: {message}"
            );
            assert!(message.contains("is refused: "), "{message}");
        }
        let long = "a".repeat(MAX_LEN + 1);
        assert!(Requirement::parse(&long).is_err());
    }

    #[test]
    fn the_reasons_say_what_is_wrong() {
        let why = |t: &str| Requirement::parse(t).expect_err(t).to_string();
        assert!(why("x @ http://h/x.whl").contains("URL"));
        assert!(why("pandas; python_version>'3'").contains("marker"));
        assert!(why("pandas\n-r x").contains("line break"));
        assert!(why("--index-url x").contains("option"));
        assert!(why("./x").contains("path"));
        assert!(why("a \\").contains("backslash"));
    }

    #[test]
    fn ordinary_requirements_are_accepted_and_rebuilt() {
        let cases = [
            ("pandas", "pandas", "pandas"),
            ("  pandas  ", "pandas", "pandas"),
            ("pandas[extra]>=2,<3", "pandas", "pandas[extra]>=2,<3"),
            (
                "pandas [excel, plot] >= 2 , < 3",
                "pandas",
                "pandas[excel,plot]>=2,<3",
            ),
            ("python-docx==1.1", "python-docx", "python-docx==1.1"),
            ("Python_Docx>=1.0", "python-docx", "Python_Docx>=1.0"),
            ("zope.interface", "zope-interface", "zope.interface"),
            ("numpy~=2.1.0", "numpy", "numpy~=2.1.0"),
            ("pytz===2024.1", "pytz", "pytz===2024.1"),
            ("openpyxl!=3.1.0", "openpyxl", "openpyxl!=3.1.0"),
            ("torch==2.1.0+cpu", "torch", "torch==2.1.0+cpu"),
            ("pandas==2.*", "pandas", "pandas==2.*"),
            (
                "scikit-learn>=1.3rc1",
                "scikit-learn",
                "scikit-learn>=1.3rc1",
            ),
        ];
        for (text, dist, line) in cases {
            let r = Requirement::parse(text).expect(text);
            assert_eq!(r.dist_name(), dist, "{text}");
            assert_eq!(r.line(), line, "{text}");
            // What uv is given parses to the same requirement.
            assert_eq!(Requirement::parse(&r.line()).expect("again"), r);
        }
    }

    #[test]
    fn parse_all_skips_blanks_and_stops_at_the_first_refusal() {
        let ok = parse_all(&["pandas".into(), " ".into(), "tqdm>=4".into()]).expect("ok");
        assert_eq!(ok.len(), 2);
        let err = parse_all(&["pandas".into(), "-r x".into()]).expect_err("refused");
        assert!(err.to_string().contains("\"-r x\""), "{err}");
    }
}
