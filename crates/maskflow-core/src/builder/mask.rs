//! The repair feedback: what the builder LLM is told about a failed test
//! run, generated from a grammar rather than filtered from the script's
//! output (a script may print anything, so nothing it printed is believed).
//! The feedback is made only of:
//!
//! - the last traceback's frames: `script.py` line numbers with the text of
//!   those lines read from the script itself, and frames of the run's
//!   Python checked against the files on disk ([`frames`]), shown relative;
//! - the exception class when it is a built-in one, a class defined by a
//!   `class Name` line of `script.py`, or a class its library module defines;
//! - the fixed wording of Python's own messages ([`vocab::TEMPLATES`]),
//!   whose variable parts stay only when they are a column name, a closed
//!   list name, or an identifier or string literal on a quoted `script.py`
//!   line;
//! - everything else masked format-preserving (`John` → `Aaaa`), at most
//!   [`MASKED_BUDGET`] masked characters in all, and the whole capped at
//!   [`MAX_FEEDBACK_CHARS`] (the end kept).
//!
//! ARCHITECTURE.md ("Threat model: the repair channel") states how many
//! bits a hostile script still chooses. Pure but for reading the library
//! files a frame names (the engine supplies the [`Machine`]).

mod frames;
mod vocab;

use std::collections::HashSet;

use maskflow_extractors::mask::mask_char;

pub use frames::Machine;
use frames::{defines_class, enclosing_name, is_identifier, line_of};

/// Longest feedback, in characters; the end (where the exception is) is kept.
pub const MAX_FEEDBACK_CHARS: usize = 4000;
/// Most frames shown (the innermost).
pub const MAX_FRAMES: usize = 12;
/// Most masked characters in one feedback, all variable parts together.
pub const MASKED_BUDGET: usize = 120;
/// What a kept phrase of Python's wording or a quoted type name costs of
/// [`MASKED_BUDGET`]: one choice among a few hundred (≤ 9 bits), no more
/// than two masked characters carry.
const KEPT_COST: usize = 2;
/// Most characters of one variable part of a message.
const MAX_SLOT_CHARS: usize = 48;
/// Most characters of one quoted source line.
const MAX_SOURCE_CHARS: usize = 200;
/// Lines of output shown (masked) when there is no traceback.
const FALLBACK_LINES: usize = 3;
/// Said when an exception class is none the grammar knows.
const UNKNOWN_CLASS: &str = "<exception class not shown>";
/// Said for a run of frames that could not be checked.
const HIDDEN_FRAMES: &str = "  [frames outside script.py and the installed packages, not shown]";
const HEADER: &str = "Traceback (most recent call last):";

/// What the feedback may take from the script and the inputs.
#[derive(Debug, Default)]
pub struct Grammar {
    script: String,
    classes: HashSet<String>,
    /// Column names, longest first (so `order_total` wins over `order`).
    columns: Vec<String>,
}

impl Grammar {
    /// From the generated script and the approved extracts' column names.
    pub fn new(script: &str, columns: &[String]) -> Self {
        let mut columns: Vec<String> = columns
            .iter()
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty())
            .collect();
        columns.sort_by_key(|c| std::cmp::Reverse(c.len()));
        columns.dedup();
        let classes = script
            .lines()
            .filter_map(|l| l.strip_prefix("class "))
            .map(|r| {
                r.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|n| is_identifier(n) && defines_class(script, n))
            .collect();
        Self {
            script: script.to_owned(),
            classes,
            columns,
        }
    }
}

/// The repair feedback for a failed run's error `output`.
pub fn repair_feedback(output: &str, grammar: &Grammar, machine: &Machine) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut masker = Masker {
        columns: &grammar.columns,
        left: MASKED_BUDGET,
    };
    let text = match parse(&lines) {
        Some(parsed) => render(&parsed, grammar, machine, &mut masker),
        None => fallback(&lines, machine, &mut masker),
    };
    cap(&text)
}

/// `text` (a sentence of the runner's) with the run folder written `.`,
/// the interpreter's folders relative, and any other absolute path `<path>`.
pub fn without_paths(text: &str, machine: &Machine) -> String {
    let text = machine.relative(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut prev = ' ';
    while let Some((i, c)) = chars.next() {
        let starts = c == '/'
            && text[i + 1..].starts_with(|n: char| n.is_alphanumeric() || n == '.' || n == '_');
        let drive = c.is_ascii_alphabetic() && text[i + 1..].starts_with(":\\");
        if (starts || drive) && (prev.is_whitespace() || "'\"`(=[".contains(prev)) {
            out.push_str("<path>");
            while chars
                .peek()
                .is_some_and(|(_, n)| !n.is_whitespace() && !"'\"`)]".contains(*n))
            {
                chars.next();
            }
            prev = '>';
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// A traceback as the output claims it.
struct Parsed<'a> {
    header: bool,
    frames: Vec<RawFrame<'a>>,
    exception: Option<&'a str>,
    /// Whether the output had lines besides the last traceback.
    other: bool,
}

/// `  File "<path>", line N[, in <name>]` and the line quoted under it.
struct RawFrame<'a> {
    path: &'a str,
    line: usize,
    named: bool,
    quoted: Option<&'a str>,
}

fn frame_line(line: &str) -> Option<RawFrame<'_>> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let at = rest.rfind("\", line ")?;
    let (path, tail) = (&rest[..at], &rest[at + "\", line ".len()..]);
    let digits = tail.chars().take_while(char::is_ascii_digit).count();
    let number = tail[..digits].parse().ok()?;
    let after = &tail[digits..];
    if !(after.is_empty() || after.starts_with(", in ")) {
        return None;
    }
    Some(RawFrame {
        path,
        line: number,
        named: !after.is_empty(),
        quoted: None,
    })
}

fn parse<'a>(lines: &[&'a str]) -> Option<Parsed<'a>> {
    let header = lines.iter().rposition(|l| l.trim() == HEADER);
    let start = match header {
        Some(h) => h + 1,
        None => lines.iter().rposition(|l| frame_line(l).is_some())?,
    };
    let mut frames = Vec::new();
    let mut exception = None;
    let mut end = lines.len();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if let Some(mut frame) = frame_line(line) {
            if let Some(next) = lines.get(i + 1)
                && next.starts_with("    ")
                && frame_line(next).is_none()
            {
                frame.quoted = Some(next.trim());
                i += 1;
            }
            frames.push(frame);
        } else if !(line.trim().is_empty() || line.starts_with(char::is_whitespace)) {
            exception = Some(line);
            end = i + 1;
            break;
        }
        i += 1;
    }
    let before = header.unwrap_or(start);
    let other = lines[..before]
        .iter()
        .chain(&lines[end.min(lines.len())..])
        .any(|l| !l.trim().is_empty());
    Some(Parsed {
        header: header.is_some(),
        frames,
        exception,
        other,
    })
}

/// A frame as the feedback shows it, with the script line it quotes.
enum Shown {
    Frame(String, Option<String>),
    Hidden,
}

fn show_frame(frame: &RawFrame, grammar: &Grammar, machine: &Machine) -> Shown {
    let in_name = |text: &str| {
        if frame.named {
            format!(", in {}", enclosing_name(text, frame.line))
        } else {
            String::new()
        }
    };
    if machine.is_script(frame.path) {
        return match line_of(&grammar.script, frame.line) {
            Some(source) => {
                let head = format!(
                    "  File \"script.py\", line {}{}",
                    frame.line,
                    in_name(&grammar.script)
                );
                let source = clip(source, MAX_SOURCE_CHARS);
                Shown::Frame(format!("{head}\n    {source}"), Some(source))
            }
            None => Shown::Hidden,
        };
    }
    let Some(file) = machine.library_file(frame.path) else {
        return Shown::Hidden;
    };
    match (line_of(&file.text, frame.line), frame.quoted) {
        (Some(source), Some(quoted)) if !source.is_empty() && source == quoted => Shown::Frame(
            format!(
                "  File \"{}\", line {}{}\n    {}",
                file.shown,
                frame.line,
                in_name(&file.text),
                clip(source, MAX_SOURCE_CHARS)
            ),
            None,
        ),
        _ => Shown::Hidden,
    }
}

fn render(parsed: &Parsed, grammar: &Grammar, machine: &Machine, masker: &mut Masker) -> String {
    let mut out: Vec<String> = Vec::new();
    if parsed.other {
        out.push("[other output of the script not shown]".into());
    }
    if parsed.header {
        out.push(HEADER.into());
    }
    let skip = parsed.frames.len().saturating_sub(MAX_FRAMES);
    if skip > 0 {
        out.push("  [earlier frames not shown]".into());
    }
    let mut quoted = Words::default();
    let mut hidden = false;
    for frame in &parsed.frames[skip..] {
        match show_frame(frame, grammar, machine) {
            Shown::Frame(text, source) => {
                if let Some(source) = source {
                    quoted.add_line(&source);
                }
                out.push(text);
                hidden = false;
            }
            Shown::Hidden if !hidden => {
                out.push(HIDDEN_FRAMES.into());
                hidden = true;
            }
            Shown::Hidden => {}
        }
    }
    if let Some(line) = parsed.exception {
        out.push(exception(line, grammar, machine, &quoted, masker));
    }
    out.join("\n")
}

/// `Class: message` as the feedback says it.
fn exception(
    line: &str,
    grammar: &Grammar,
    machine: &Machine,
    quoted: &Words,
    masker: &mut Masker,
) -> String {
    let (class, message) = match line.split_once(": ") {
        Some((c, m)) => (c, Some(m)),
        None => (line.trim_end().trim_end_matches(':'), None),
    };
    let dotted = class.split('.').all(is_identifier) && class.len() <= 120;
    let known = dotted
        && (vocab::BUILTIN_EXCEPTIONS.contains(&class)
            || grammar.classes.contains(class)
            || machine.library_class(class));
    let class = if known { class } else { UNKNOWN_CLASS };
    let Some(message) = message.map(|m| machine.relative(m)) else {
        return class.to_owned();
    };
    let keep = |s: &str| keep_whole(s, grammar, quoted);
    let text = match vocab::find_template(&message) {
        Some((template, slots)) => {
            let mut text = String::new();
            for (i, piece) in template.split("{}").enumerate() {
                if i > 0
                    && let Some(slot) = slots.get(i - 1)
                {
                    let inner = unquote(slot);
                    if keep(inner) {
                        text.push_str(slot);
                    } else {
                        text.push_str(&masker.mask(slot, MAX_SLOT_CHARS));
                    }
                }
                text.push_str(piece);
            }
            text
        }
        None if keep(unquote(&message)) => message.clone(),
        None => masker.mask(&message, MASKED_BUDGET),
    };
    format!("{class}: {text}")
}

/// The end of an output without a traceback, masked.
fn fallback(lines: &[&str], machine: &Machine, masker: &mut Masker) -> String {
    let shown: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let from = shown.len().saturating_sub(FALLBACK_LINES);
    let mut out = Vec::new();
    if from > 0 {
        out.push("[earlier output not shown]".to_owned());
    }
    for line in &shown[from..] {
        out.push(masker.mask(&machine.relative(line), MASKED_BUDGET));
    }
    out.join("\n")
}

/// Whether a variable part may be shown as it is.
fn keep_whole(s: &str, grammar: &Grammar, quoted: &Words) -> bool {
    !s.is_empty()
        && (grammar.columns.iter().any(|c| c == s)
            || quoted.0.contains(s)
            || vocab::KNOWN_NAMES.contains(&s)
            || maskflow_pyenv::CURATED
                .iter()
                .any(|(name, _)| maskflow_runner::module_of(name) == s))
}

/// `'x'` or `"x"` → `x`.
fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// Identifiers and string literals of the quoted script lines.
#[derive(Default)]
struct Words(HashSet<String>);

impl Words {
    fn add_line(&mut self, line: &str) {
        let mut rest = line;
        while let Some(start) = rest.find(['\'', '"']) {
            let q = rest[start..].chars().next().unwrap_or('"');
            let after = &rest[start + 1..];
            let Some(len) = after.find(q) else { break };
            self.0.insert(after[..len].to_owned());
            rest = &after[len + 1..];
        }
        for w in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if is_identifier(w) {
                self.0.insert(w.to_owned());
            }
        }
    }
}

/// Masks text with a budget shared by the whole feedback.
struct Masker<'g> {
    columns: &'g [String],
    left: usize,
}

impl Masker<'_> {
    /// `text` masked format-preserving, column names (and the run folder's
    /// layout words) kept as whole tokens, other characters reduced to
    /// `A`, `a`, `#`, space and ASCII punctuation; at most `cap` characters
    /// and what the budget has left, then `…`.
    fn mask(&mut self, text: &str, cap: usize) -> String {
        let mut room = cap.min(self.left);
        let mut out = String::new();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            // Python's own wording and quoted type names pass as written;
            // each costs `KEPT_COST` of the budget (one choice in a closed list).
            if let Some(kept) = kept_words(text, i) {
                if KEPT_COST > room {
                    out.push('…');
                    room = 0;
                    break;
                }
                room -= KEPT_COST;
                out.push_str(kept);
                i += kept.len();
                continue;
            }
            let column = self
                .columns
                .iter()
                .find(|c| rest.starts_with(c.as_str()) && boundary(text, i, i + c.len()));
            let word_len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let (piece, used): (String, usize) = match column {
                Some(c) => (c.clone(), c.len()),
                None if word_len > 0 => {
                    let word = &rest[..word_len];
                    if vocab::LAYOUT_WORDS.contains(&word) && in_run_path(text, i) {
                        (word.to_owned(), word_len)
                    } else {
                        (word.chars().map(shape).collect(), word_len)
                    }
                }
                None => {
                    let c = rest.chars().next().unwrap_or(' ');
                    (shape(c).to_string(), c.len_utf8())
                }
            };
            let n = piece.chars().count();
            if n > room {
                out.push('…');
                room = 0;
                break;
            }
            room -= n;
            out.push_str(&piece);
            i += used;
        }
        self.left = self.left.saturating_sub(cap.min(self.left) - room);
        out
    }
}

/// What of Python's own wording starts at byte `i` of `text`: a phrase of
/// [`vocab::phrases`] standing alone, or a capitalised type name in quotes.
fn kept_words(text: &str, i: usize) -> Option<&str> {
    let rest = &text[i..];
    let word = |c: char| c.is_alphanumeric() || c == '_';
    if text[..i].chars().next_back().is_some_and(word) {
        return None;
    }
    if let Some(p) = vocab::phrases().iter().find(|p| {
        rest.starts_with(p.as_str())
            && !(p.ends_with(word) && rest[p.len()..].chars().next().is_some_and(word))
    }) {
        return Some(&rest[..p.len()]);
    }
    let q = rest.chars().next().filter(|c| matches!(c, '\'' | '"'))?;
    let inner = &rest[1..];
    let end = inner.find(q)?;
    vocab::quoted_type(&inner[..end]).then(|| &rest[..end + 2])
}

/// Whether byte `i` of `text` lies in a path under the run folder (a
/// token starting `./`): only there are the layout words kept, so a word
/// of the data that happens to be one (`home`, `py`) is masked like any.
fn in_run_path(text: &str, i: usize) -> bool {
    let start = text[..i]
        .rfind(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '(' | '[' | ','))
        .map_or(0, |p| p + 1);
    text[start..i].starts_with("./")
}

/// One character as masked text shows it: `A`, `a`, `#`, a space or ASCII
/// punctuation; anything else `?`.
fn shape(c: char) -> char {
    match mask_char(c) {
        '\t' => ' ',
        m if m == ' ' || m.is_ascii_graphic() => m,
        _ => '?',
    }
}

/// Whether `text[a..b]` stands alone (no letter, digit or `_` on either side).
fn boundary(text: &str, a: usize, b: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    !text[..a].chars().next_back().is_some_and(word) && !text[b..].chars().next().is_some_and(word)
}

/// At most `n` characters of `s`, `…` when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(n).collect();
        out.push('…');
        out
    }
}

/// Keeps the last [`MAX_FEEDBACK_CHARS`] characters, marking the cut.
fn cap(text: &str) -> String {
    let n = text.chars().count();
    if n <= MAX_FEEDBACK_CHARS {
        return text.to_owned();
    }
    let tail: String = text.chars().skip(n - MAX_FEEDBACK_CHARS).collect();
    format!("[… the beginning is cut]\n{tail}")
}

#[cfg(test)]
mod hostile_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod words_tests;
