//! The repair feedback: a failed script's error output made safe to send,
//! built from what is known not to be data (an allowlist). Kept as they are:
//! the traceback's structure, exception type names, line numbers, lines
//! that are exactly lines of the generated `script.py`, frames of Python's
//! standard library and installed packages (with their source lines), the
//! column names of the inputs (as whole names), identifiers the script
//! itself uses, and the fixed words of Python's error messages before the
//! first quote or colon. Every other character is masked format-preserving
//! (`John` → `Aaaa`, `2021` → `####`), and the result is capped in length.
//! Pure: the engine supplies the script and the column names.

use std::collections::HashSet;

use maskflow_extractors::mask::mask_char;

/// Longest feedback, in characters; the end (where the exception is) is kept.
pub const MAX_FEEDBACK_CHARS: usize = 4000;

/// Words of Python's and pandas' own error messages.
const PYTHON_WORDS: &str = "a an and are argument arguments as at attribute be base because but by call \
called can cannot column columns could convert converted data date datetime decode decoded defined did \
does dtype else empty encode encoding end error expected expecting file float for format found from got \
has have in index int integer invalid is item items key keyword label length line list literal match \
missing module must name no none not object of on only operand or out parse position range remains \
required sequence series should size str string such support supported takes than the there time to \
too type types unconverted unexpected unhashable unsupported value values was were when with while \
directory dict tuple bytes codec character characters mismatch shape shapes broadcast together axis \
keyerror valueerror typeerror nonetype subscriptable iterable callable concatenate positional";

/// What the masker knows is not data.
#[derive(Debug, Default)]
pub struct Allowlist {
    script_lines: HashSet<String>,
    script_words: HashSet<String>,
    columns: Vec<String>,
    python: HashSet<&'static str>,
}

impl Allowlist {
    /// From the generated script and the inputs' column names.
    pub fn new(script: &str, columns: &[String]) -> Self {
        let mut columns: Vec<String> = columns
            .iter()
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect();
        // Longest first, so `order_total` wins over `order`.
        columns.sort_by_key(|c| std::cmp::Reverse(c.len()));
        Self {
            script_lines: script
                .lines()
                .map(|l| l.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect(),
            script_words: words(script).map(str::to_owned).collect(),
            columns,
            python: PYTHON_WORDS.split_whitespace().collect(),
        }
    }
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Masks the error output `text` of a run in `workdir`.
pub fn mask_error(text: &str, workdir: &str, allow: &Allowlist) -> String {
    let mut out = Vec::new();
    let mut after_library_frame = false;
    for raw in text.lines() {
        let line = if workdir.is_empty() {
            raw.to_owned()
        } else {
            raw.replace(workdir, ".")
        };
        let t = line.trim();
        let library_source = after_library_frame && line.starts_with("    ");
        after_library_frame = false;
        let kept = if is_structure(t) || is_caret_line(t) || library_source {
            line.clone()
        } else if let Some(frame) = frame_line(&line) {
            after_library_frame = frame == Frame::Library;
            match frame {
                Frame::Script | Frame::Library => line.clone(),
                Frame::Other => mask_words(&line, allow, false),
            }
        } else if allow.script_lines.contains(t) {
            line.clone()
        } else if let Some((kind, message)) = exception_line(&line) {
            format!("{kind}: {}", mask_words(message, allow, true))
                .trim_end_matches(": ")
                .to_owned()
        } else {
            mask_words(&line, allow, false)
        };
        out.push(kept);
    }
    cap(&out.join("\n"))
}

/// Keeps the last [`MAX_FEEDBACK_CHARS`] characters, marking the cut.
fn cap(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_FEEDBACK_CHARS {
        return text.to_owned();
    }
    let tail: String = text.chars().skip(n - MAX_FEEDBACK_CHARS).collect();
    format!(
        "[… {} earlier characters cut]\n{tail}",
        n - MAX_FEEDBACK_CHARS
    )
}

fn is_structure(t: &str) -> bool {
    t.is_empty()
        || t == "Traceback (most recent call last):"
        || t == "During handling of the above exception, another exception occurred:"
        || t == "The above exception was the direct cause of the following exception:"
}

fn is_caret_line(t: &str) -> bool {
    !t.is_empty() && t.chars().all(|c| matches!(c, '^' | '~' | ' '))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    /// A frame of the generated script.
    Script,
    /// Python's standard library or an installed package.
    Library,
    /// Anything else (a file the script wrote, `<string>`).
    Other,
}

/// `  File "<path>", line N, in <name>`.
fn frame_line(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (path, tail) = rest.split_once('"')?;
    let tail = tail.strip_prefix(", line ")?;
    let digits = tail.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = &tail[digits..];
    if !(after.is_empty() || after.starts_with(", in ")) {
        return None;
    }
    let name = after.strip_prefix(", in ").unwrap_or("");
    let identifier = name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '<' | '>' | '.'));
    Some(if !identifier {
        Frame::Other
    } else if path == "./script.py" || path == "script.py" {
        Frame::Script
    } else if path.contains("/lib/python3") || path.starts_with("<frozen ") {
        Frame::Library
    } else {
        Frame::Other
    })
}

/// `Type: message` or `pkg.Type: message` or a bare `Type`.
fn exception_line(line: &str) -> Option<(&str, &str)> {
    let (kind, message) = match line.split_once(": ") {
        Some((k, m)) => (k, m),
        None => (line.trim_end_matches(':'), ""),
    };
    let ok = kind
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (kind.ends_with("Error")
            || kind.ends_with("Exception")
            || kind.ends_with("Warning")
            || kind.ends_with("Interrupt")
            || kind.ends_with("Exit")
            || kind.ends_with("Iteration"));
    ok.then_some((kind, message))
}

/// Masks every word of `text` except column names, the script's own
/// identifiers and — when `message` — Python's message words before the
/// first quote or colon. Punctuation and spacing are kept.
fn mask_words(text: &str, allow: &Allowlist, message: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fixed = message;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if let Some(col) = allow
            .columns
            .iter()
            .find(|c| rest.starts_with(c.as_str()) && boundary(text, i, i + c.len()))
        {
            out.push_str(col);
            i += col.len();
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if c.is_alphanumeric() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            let keep = allow.script_words.contains(word)
                && !word.chars().all(|c| c.is_numeric())
                || (fixed && allow.python.contains(word.to_lowercase().as_str()))
                // `base 10`, `line 3` in Python's own wording.
                || (fixed && word.len() <= 2 && word.chars().all(|c| c.is_ascii_digit()));
            if keep {
                out.push_str(word);
            } else {
                // Python's fixed wording ends at the first word it does not use.
                fixed = false;
                out.extend(word.chars().map(mask_char));
            }
            i += len;
        } else {
            if matches!(c, '\'' | '"' | ':') {
                fixed = false;
            }
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Whether `text[a..b]` stands alone (no letter, digit or `_` on either side).
fn boundary(text: &str, a: usize, b: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    !text[..a].chars().next_back().is_some_and(word) && !text[b..].chars().next().is_some_and(word)
}

#[cfg(test)]
mod tests;
