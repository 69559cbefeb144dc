//! File checks of the condition language, for contracts that look at what a
//! step wrote in the run's working folder:
//!
//! ```text
//! exists('out/report.json')          a regular file is there
//! nonEmpty('out/report.json')        …and has at least one byte
//! isJson('out/report.json')          …and parses as JSON
//! contains('out/log.txt', 'DONE')    …and its text holds 'DONE'
//! matches('out/log.txt', '^ok \d+')  …and its text matches the regex
//! ```
//!
//! The path is a literal, relative to the run's folder: an absolute path, an
//! empty one or one with a `..` part is refused when the flow is read. At run
//! time links are resolved before the file is read, and a file that then lies
//! outside the folder counts as missing, as does any file when the run has
//! no folder; only the first [`READ_LIMIT`] bytes are read.

use std::io::Read;
use std::path::{Component, Path};

use regex::Regex;

/// How much of a file a check reads (a contract is no place for big files).
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// What a file check asks of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileTest {
    /// `exists(path)`
    Exists,
    /// `nonEmpty(path)`
    NonEmpty,
    /// `isJson(path)`
    IsJson,
    /// `contains(path, text)`
    Contains,
    /// `matches(path, regex)`
    Matches,
}

impl FileTest {
    /// The function of that name, if it is one.
    pub fn named(name: &str) -> Option<Self> {
        Some(match name {
            "exists" => Self::Exists,
            "nonEmpty" => Self::NonEmpty,
            "isJson" => Self::IsJson,
            "contains" => Self::Contains,
            "matches" => Self::Matches,
            _ => return None,
        })
    }

    /// Its name in the language.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exists => "exists",
            Self::NonEmpty => "nonEmpty",
            Self::IsJson => "isJson",
            Self::Contains => "contains",
            Self::Matches => "matches",
        }
    }

    /// Whether it takes a second argument (the text or the regex).
    pub fn takes_argument(self) -> bool {
        matches!(self, Self::Contains | Self::Matches)
    }
}

/// One file check: the test, the relative path, the text or regex.
#[derive(Clone, Debug, PartialEq)]
pub struct FileCheck {
    /// What is asked.
    pub test: FileTest,
    /// The file, relative to the run's folder.
    pub path: String,
    /// `contains`' text or `matches`' regex.
    pub argument: Option<String>,
}

impl FileCheck {
    /// Checks the arguments: a relative path that stays in the folder, a
    /// regex that compiles. The error says what is wrong.
    pub fn new(test: FileTest, args: Vec<String>) -> Result<Self, String> {
        let want = if test.takes_argument() { 2 } else { 1 };
        if args.len() != want {
            return Err(format!(
                "{}() takes {want} quoted argument{}",
                test.name(),
                if want == 1 { "" } else { "s" }
            ));
        }
        let mut args = args.into_iter();
        let path = args.next().unwrap_or_default();
        check_relative(&path).map_err(|why| format!("{}({path:?}): {why}", test.name()))?;
        let argument = args.next();
        if let (FileTest::Matches, Some(re)) = (test, &argument) {
            Regex::new(re).map_err(|e| format!("matches(): {re:?} is not a valid regex: {e}"))?;
        }
        Ok(Self {
            test,
            path,
            argument,
        })
    }

    /// Whether the check holds for the file in `folder`.
    pub fn holds(&self, folder: &Path) -> bool {
        let Some(file) = resolve(folder, &self.path) else {
            return false;
        };
        match self.test {
            FileTest::Exists => true,
            FileTest::NonEmpty => file.metadata().is_ok_and(|m| m.len() > 0),
            FileTest::IsJson => read(&file)
                .is_some_and(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).is_ok()),
            FileTest::Contains => text(&file)
                .zip(self.argument.as_deref())
                .is_some_and(|(t, needle)| t.contains(needle)),
            FileTest::Matches => text(&file)
                .zip(self.argument.as_deref().and_then(|re| Regex::new(re).ok()))
                .is_some_and(|(t, re)| re.is_match(&t)),
        }
    }
}

/// Why `path` may not name a file in the run's folder, if it may not: the
/// one rule for every path a flow writes (file checks, a `script` step's
/// file).
pub fn check_relative(path: &str) -> Result<(), &'static str> {
    if path.trim().is_empty() {
        return Err("the path is empty");
    }
    let p = Path::new(path);
    // `C:foo` and `\\server\share` are prefixes on Windows; `/x` is a root.
    if p.is_absolute() || p.has_root() || path.starts_with('/') || path.starts_with('\\') {
        return Err("the path must be relative to the run's folder, not absolute");
    }
    for c in p.components() {
        match c {
            Component::ParentDir => {
                return Err("the path may not use '..' to leave the run's folder");
            }
            Component::Prefix(_) | Component::RootDir => {
                return Err("the path must be relative to the run's folder, not absolute");
            }
            Component::CurDir | Component::Normal(_) => {}
        }
    }
    // A `..` written with the other separator is a parent on Windows.
    if path.split(['/', '\\']).any(|part| part == "..") {
        return Err("the path may not use '..' to leave the run's folder");
    }
    Ok(())
}

/// The regular file `path` names in `folder`, links resolved, if it is
/// there and inside the folder.
pub fn resolve(folder: &Path, path: &str) -> Option<std::path::PathBuf> {
    let root = folder.canonicalize().ok()?;
    let file = root.join(path).canonicalize().ok()?;
    (file.starts_with(&root) && file.is_file()).then_some(file)
}

fn read(file: &Path) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .ok()?
        .take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

fn text(file: &Path) -> Option<String> {
    read(file).map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(test: FileTest, args: &[&str]) -> Result<FileCheck, String> {
        FileCheck::new(test, args.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn paths_that_leave_the_folder_are_refused_by_name() {
        for bad in ["/etc/passwd", "../x", "out/../../x", "", "a\\..\\b"] {
            let e = check(FileTest::Exists, &[bad]).expect_err(bad);
            assert!(e.starts_with("exists("), "{e}");
        }
        assert!(check(FileTest::Exists, &["out/./report.json"]).is_ok());
        let e = check(FileTest::Matches, &["log.txt", "("]).expect_err("bad regex");
        assert!(e.contains("not a valid regex"), "{e}");
        let e = check(FileTest::Contains, &["log.txt"]).expect_err("one argument");
        assert!(e.contains("takes 2"), "{e}");
    }

    #[test]
    fn each_test_reads_the_file_in_the_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("empty.txt"), "").expect("write");
        std::fs::write(d.join("r.json"), r#"{"total": 3}"#).expect("write");
        std::fs::write(d.join("log.txt"), "step 1\nok 42\n").expect("write");
        let holds = |t, a: &[&str]| check(t, a).expect("valid").holds(d);
        assert!(holds(FileTest::Exists, &["empty.txt"]));
        assert!(!holds(FileTest::Exists, &["missing.txt"]));
        assert!(!holds(FileTest::NonEmpty, &["empty.txt"]));
        assert!(holds(FileTest::NonEmpty, &["r.json"]));
        assert!(holds(FileTest::IsJson, &["r.json"]));
        assert!(!holds(FileTest::IsJson, &["log.txt"]));
        assert!(holds(FileTest::Contains, &["log.txt", "ok 42"]));
        assert!(!holds(FileTest::Contains, &["log.txt", "failed"]));
        assert!(holds(FileTest::Matches, &["log.txt", r"(?m)^ok \d+$"]));
        assert!(!holds(FileTest::Matches, &["log.txt", r"^ok"]));
        // A folder is not a file.
        std::fs::create_dir(d.join("sub")).expect("mkdir");
        assert!(!holds(FileTest::Exists, &["sub"]));
    }

    #[test]
    fn checks_parse_print_and_refuse_by_name() {
        let text = "exists('a.json') && !contains('log.txt', 'it\\'s') || matches('l', '^x$')";
        let e = crate::expr::parse(text).expect("parses");
        assert!(e.reads_files());
        assert_eq!(crate::expr::parse(&e.to_string()), Ok(e));
        for (bad, says) in [
            ("exists('../x')", "'..'"),
            ("size('x')", "not a function"),
            ("exists(output.path)", "quoted strings"),
            ("exists()", "takes 1"),
        ] {
            let err = crate::expr::parse(bad).expect_err(bad).to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
        // Without a folder (a decision, a back edge) a file check is false.
        let e = crate::expr::parse("exists('a.json')").expect("parses");
        assert!(!e.eval(&serde_json::json!({})));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_folder_counts_as_missing() {
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret.txt"), "x").expect("write");
        let dir = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("link.txt"),
        )
        .expect("symlink");
        std::fs::write(dir.path().join("real.txt"), "x").expect("write");
        std::os::unix::fs::symlink(dir.path().join("real.txt"), dir.path().join("inside.txt"))
            .expect("symlink");
        let exists = |p: &str| {
            check(FileTest::Exists, &[p])
                .expect("valid")
                .holds(dir.path())
        };
        assert!(!exists("link.txt"));
        assert!(exists("inside.txt"));
    }
}
