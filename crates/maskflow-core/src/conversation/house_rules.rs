//! House rules (seed 001's standards bundle): the user's standing
//! instructions, a Markdown text whose headings name scopes ("always",
//! "python", "excel outputs"…). Pure functions: expand `{{include:NAME}}`
//! (seed 001 ADR-0002), split the text into scoped sections, pick the
//! sections a request needs and render them for the builder's system prompt.
//! The service gathers the sources (Settings and `house-rules/*.md`).
//!
//! The rules, as the Settings card explains them:
//! - Each heading of the shallowest level in a text starts a section; its
//!   words are the section's scope. Deeper headings stay in the section.
//!   Text before the first heading, and a heading `always` (or `all`,
//!   `general`), apply to every build.
//! - A section applies when one of its scope's topic words appears in the
//!   request: the user's messages, the uploaded files' names and kinds (an
//!   `.xlsx` counts as `excel`, a `.docx` as `word`), the outputs of the
//!   workflow being revised, and `python` (every workflow is a Python
//!   script). Words like "outputs", "files", "and" are not topic words; a
//!   heading made only of them applies always. Plurals match singulars.
//! - `{{include:NAME}}` is replaced by the file `house-rules/NAME.md`
//!   (expanded the same way) before the text is split.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use maskflow_llm::{ChatMessage, ChatRole};

/// Headings that apply to every build.
const ALWAYS: [&str; 3] = ["always", "all", "general"];
/// Words that say nothing about when a section applies.
const FILLER: [&str; 18] = [
    "a",
    "an",
    "and",
    "or",
    "the",
    "for",
    "of",
    "with",
    "in",
    "on",
    "to",
    "when",
    "output",
    "input",
    "file",
    "data",
    "rule",
    "everything",
];
/// The largest expanded text, in bytes (includes can multiply a text).
pub const MAX_EXPANDED_BYTES: usize = 512 * 1024;

/// Why a text's includes cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IncludeError {
    /// No template has that name.
    #[error(
        "house rules: {{{{include:{name}}}}} in {} names no file house-rules/{name}.md",
        chain.join(" → ")
    )]
    Missing {
        /// The include's name.
        name: String,
        /// Where it was met: the source, then each include on the way.
        chain: Vec<String>,
    },
    /// The include is already being expanded further up.
    #[error("house rules: the includes make a cycle: {}", chain.join(" → "))]
    Cycle {
        /// The chain, ending with the name met again.
        chain: Vec<String>,
    },
    /// A name with characters a file name of the folder cannot have.
    #[error(
        "house rules: {{{{include:{name}}}}} in {} is not a usable name (letters, digits, - and _ only)",
        chain.join(" → ")
    )]
    BadName {
        /// The name as written.
        name: String,
        /// Where it was met.
        chain: Vec<String>,
    },
    /// The expansion grew past [`MAX_EXPANDED_BYTES`].
    #[error(
        "house rules: {origin} grows past {} KiB once its includes are expanded",
        MAX_EXPANDED_BYTES / 1024
    )]
    TooLarge {
        /// The source being expanded.
        origin: String,
    },
}

fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `text` (from `source`) with every `{{include:NAME}}` replaced by
/// `templates[NAME]`, recursively; a missing name or a cycle is an error
/// naming the include chain.
pub fn expand_includes(
    text: &str,
    source: &str,
    templates: &BTreeMap<String, String>,
) -> Result<String, IncludeError> {
    let mut chain = vec![source.to_owned()];
    let mut out = String::with_capacity(text.len());
    expand_into(text, templates, &mut chain, &mut out)?;
    Ok(out)
}

fn expand_into(
    text: &str,
    templates: &BTreeMap<String, String>,
    chain: &mut Vec<String>,
    out: &mut String,
) -> Result<(), IncludeError> {
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        let after = &rest[at + 2..];
        let name = after.find("}}").and_then(|end| {
            let inner = after[..end].trim_start().strip_prefix("include")?;
            Some((inner.trim_start().strip_prefix(':')?.trim(), end))
        });
        let Some((name, end)) = name else {
            // Not an include (or an unclosed one): plain text.
            out.push_str(&rest[..at + 2]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        if !usable_name(name) {
            return Err(IncludeError::BadName {
                name: name.to_owned(),
                chain: chain.clone(),
            });
        }
        // The source is in the chain too: a file that includes itself cycles.
        if chain.iter().any(|c| c == name) {
            let mut cycle = chain.clone();
            cycle.push(name.to_owned());
            return Err(IncludeError::Cycle { chain: cycle });
        }
        let Some(body) = templates.get(name) else {
            return Err(IncludeError::Missing {
                name: name.to_owned(),
                chain: chain.clone(),
            });
        };
        chain.push(name.to_owned());
        expand_into(body, templates, chain, out)?;
        chain.pop();
        if out.len() > MAX_EXPANDED_BYTES {
            return Err(IncludeError::TooLarge {
                origin: chain[0].clone(),
            });
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if out.len() > MAX_EXPANDED_BYTES {
        return Err(IncludeError::TooLarge {
            origin: chain[0].clone(),
        });
    }
    Ok(())
}

/// One scoped section of the house rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The heading's text (`always` for text before the first heading).
    pub scope: String,
    /// The section's Markdown, without its heading.
    pub body: String,
    /// Where it came from: `settings` or a file name.
    pub source: String,
}

/// Every section of the user's house rules, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HouseRules {
    /// In order: the Settings text first, then the files by name.
    pub sections: Vec<Section>,
}

/// The level of a Markdown ATX heading line (`## x` → 2) and its text.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    let rest = &trimmed[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

/// The lines of `text` with whether each is outside a fenced code block
/// (a `# comment` in a code sample is not a heading).
fn lines_outside_fences(text: &str) -> Vec<(&str, bool)> {
    let mut fence: Option<&str> = None;
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
            match (fence, marker) {
                (None, Some(m)) => {
                    fence = Some(m);
                    (line, false)
                }
                (Some(open), Some(m)) if open == m => {
                    fence = None;
                    (line, false)
                }
                (Some(_), _) => (line, false),
                (None, None) => (line, true),
            }
        })
        .collect()
}

/// Splits an (expanded) text into sections; empty sections are dropped.
pub fn parse(text: &str, source: &str) -> Vec<Section> {
    let lines = lines_outside_fences(text);
    let top = lines
        .iter()
        .filter(|(_, outside)| *outside)
        .filter_map(|(l, _)| heading(l).map(|(level, _)| level))
        .min();
    let mut sections = Vec::new();
    let mut scope = "always".to_owned();
    let mut body: Vec<&str> = Vec::new();
    let mut flush = |scope: &str, body: &mut Vec<&str>| {
        let text = body.join("\n").trim().to_owned();
        if !text.is_empty() {
            sections.push(Section {
                scope: scope.to_owned(),
                body: text,
                source: source.to_owned(),
            });
        }
        body.clear();
    };
    for (line, outside) in lines {
        match heading(line).filter(|(level, _)| outside && Some(*level) == top) {
            Some((_, title)) => {
                flush(&scope, &mut body);
                scope = title.to_owned();
            }
            None => body.push(line),
        }
    }
    flush(&scope, &mut body);
    sections
}

/// A word as matching sees it: lowercase, singular, file kinds by one name.
fn canonical(word: &str) -> String {
    let w = word.to_lowercase();
    let w = match w.as_str() {
        "xlsx" | "xls" | "xlsm" | "spreadsheet" | "spreadsheets" | "workbook" | "workbooks" => {
            "excel".to_owned()
        }
        "docx" => "word".to_owned(),
        _ => w,
    };
    match w.strip_suffix('s') {
        Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_owned(),
        _ => w,
    }
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(canonical)
}

/// The words of a scope that decide when it applies (none: always).
pub fn topic_words(scope: &str) -> BTreeSet<String> {
    words(scope)
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect()
}

/// Whether a section of this scope applies to a request with these words.
pub fn applies(scope: &str, request: &BTreeSet<String>) -> bool {
    let topic = topic_words(scope);
    let always = scope
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ALWAYS.contains(&w.to_lowercase().as_str()));
    always || topic.is_empty() || topic.iter().any(|w| request.contains(w))
}

/// The words of a build request: the user's messages, the uploaded files'
/// names (with their kinds), the outputs' names, and `python`.
pub fn request_words(
    history: &[ChatMessage],
    extracts: &Value,
    outputs: &[String],
) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = ["python".to_owned()].into();
    for m in history.iter().filter(|m| m.role == ChatRole::User) {
        set.extend(words(&m.content));
    }
    let files = extracts.as_array().map(Vec::as_slice).unwrap_or_default();
    for name in files.iter().filter_map(|f| f["filename"].as_str()) {
        set.extend(words(name));
    }
    for name in outputs {
        set.extend(words(name));
    }
    set
}

/// The sections that apply to a request with these words, in order.
pub fn select<'a>(rules: &'a HouseRules, request: &BTreeSet<String>) -> Vec<&'a Section> {
    rules
        .sections
        .iter()
        .filter(|s| applies(&s.scope, request))
        .collect()
}

/// The system-prompt block of the chosen sections ("" when none).
pub fn render(sections: &[&Section]) -> String {
    if sections.is_empty() {
        return String::new();
    }
    let body = sections
        .iter()
        .map(|s| format!("### {}\n{}", s.scope, s.body))
        .collect::<Vec<_>>()
        .join("\n\n");
    format!(
        "The user's house rules: their standing instructions for the workflows they build. \
Follow them unless they contradict the runner's contract above or what the user asks in this conversation.\n\n{body}"
    )
}

/// The rendered house rules a build request needs.
pub fn for_request(
    rules: &HouseRules,
    history: &[ChatMessage],
    extracts: &Value,
    outputs: &[String],
) -> String {
    render(&select(rules, &request_words(history, extracts, outputs)))
}

#[cfg(test)]
#[path = "house_rules_tests.rs"]
mod tests;
