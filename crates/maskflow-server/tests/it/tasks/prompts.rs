//! What the task-success suite asserts of the requests the back end
//! received: each task's prompts carry what the task needs (its files, and
//! once issue 28's other parts land, its inputs by name and each column's
//! profile), and never a cell value of its files.
//!
//! Two assertions wait for work done in parallel: they are written now,
//! behind the switches below, and switched on when that work is merged.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ffi::OsStr;
use std::path::Path;

use serde_json::Value;

use super::Task;

pub use crate::hostile::checks::readable;

/// SWITCH: the prompt lists each input with the file bound to it (issue 28
/// point 2, helper "inputs"). Turn on when that lands.
const INPUTS_BY_NAME_LANDED: bool = false;

/// SWITCH: each file's extract carries a `profile` with per-column null
/// counts (issue 28 point 1, helper "profile"). Turn on when that lands.
const PROFILE_LANDED: bool = false;

/// What `expected.py facts` computed of each data file with pandas.
pub struct Facts(BTreeMap<String, Value>);

impl Facts {
    /// Runs `expected.py facts`.
    pub fn load(uv: &Path) -> Facts {
        let (ok, out) = super::pandas(uv, &[OsStr::new("facts")]);
        assert!(ok, "expected.py facts: {out}");
        let start = out.find('{').unwrap_or(0);
        let map: BTreeMap<String, Value> =
            serde_json::from_str(out[start..].lines().next().unwrap_or("")).expect("facts JSON");
        Facts(map)
    }

    /// The cell values of `file` of 4 characters or more.
    fn needles(&self, file: &str) -> Vec<&str> {
        self.0[file]["needles"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// Each column of `file` with its count of empty cells, when it has any.
    fn nulls(&self, file: &str) -> Vec<(&str, u64)> {
        self.0[file]["nulls"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter_map(|(c, n)| n.as_u64().filter(|n| *n > 0).map(|n| (c.as_str(), n)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The requests made for `task` (they carry its request), decoded.
pub fn of_task(bodies: &[String], task: &Task) -> Vec<String> {
    bodies
        .iter()
        .map(|b| readable(b))
        .filter(|t| t.contains(task.request.as_str()))
        .collect()
}

/// The builder's requests among `own`.
fn builder_requests(own: &[String]) -> Vec<&String> {
    own.iter()
        .filter(|b| b.contains("You are Maskflow's builder"))
        .collect()
}

/// Whether `c` continues a token.
fn word(c: Option<char>) -> bool {
    c.is_some_and(char::is_alphanumeric)
}

/// Where `needle` stands in `text` as a whole token (no letter or digit
/// either side), so `1952` is not found inside `19520`.
#[cfg(test)]
fn find_token(text: &str, needle: &str) -> Option<usize> {
    Needles::new([needle]).first_in(text).map(|(at, _)| at)
}

/// A set of needles searched as whole tokens in one pass over a text: at
/// each token start, one look-up per needle length (thousands of needles,
/// a few dozen lengths).
struct Needles<'a> {
    set: HashSet<&'a str>,
    lengths: BTreeSet<usize>,
}

impl<'a> Needles<'a> {
    fn new(needles: impl IntoIterator<Item = &'a str>) -> Needles<'a> {
        let set: HashSet<&str> = needles.into_iter().collect();
        let lengths = set.iter().map(|n| n.len()).collect();
        Needles { set, lengths }
    }

    /// The first needle found in `text`, with its byte offset.
    fn first_in(&self, text: &str) -> Option<(usize, &'a str)> {
        let mut before = None;
        for (at, c) in text.char_indices() {
            if !word(before) {
                for &len in &self.lengths {
                    let end = at + len;
                    if end > text.len() || !text.is_char_boundary(end) {
                        continue;
                    }
                    if let Some(n) = self.set.get(&text[at..end])
                        && !word(text[end..].chars().next())
                    {
                        return Some((at, n));
                    }
                }
            }
            before = Some(c);
        }
        None
    }
}

/// The cell values of `task`'s files (4 characters or more, as written in
/// the file) that a request made for it carried, each with where.
pub fn raw_values(task: &Task, facts: &Facts, bodies: &[String]) -> Vec<String> {
    let own = of_task(bodies, task);
    if own.is_empty() {
        return vec![format!("{}: no request carried the task", task.id)];
    }
    let mut found = Vec::new();
    for file in &task.files {
        let needles = Needles::new(facts.needles(file));
        for text in &own {
            if let Some((at, needle)) = needles.first_in(text) {
                let from = text[..at]
                    .char_indices()
                    .rev()
                    .nth(120)
                    .map_or(0, |(i, _)| i);
                let to = text[at..]
                    .char_indices()
                    .nth(120)
                    .map_or(text.len(), |(i, _)| at + i);
                found.push(format!(
                    "{}: the value {needle:?} of {file} reached the back end raw: …{}…",
                    task.id,
                    &text[from..to]
                ));
            }
        }
    }
    found
}

/// The builder's first prompt shows every file of the task by its name.
pub fn assert_prompt_shows_files(task: &Task, own: &[String]) {
    let builder = builder_requests(own);
    let first = builder
        .first()
        .unwrap_or_else(|| panic!("{}: no builder request", task.id));
    for file in &task.files {
        assert!(
            first.contains(&format!("\"filename\":\"{file}\"")),
            "{}: the builder's prompt shows no extract of {file}",
            task.id
        );
    }
}

/// SWITCHED (`INPUTS_BY_NAME_LANDED`): every builder prompt after the first
/// (a repair, a review, an edit) names each input with its file on one line.
pub fn assert_prompt_names_inputs(task: &Task, own: &[String]) {
    if !INPUTS_BY_NAME_LANDED {
        return;
    }
    for (i, prompt) in builder_requests(own).iter().enumerate().skip(1) {
        for ((field, _), file) in task.fields.iter().zip(&task.files) {
            assert!(
                prompt
                    .lines()
                    .any(|l| l.contains(field.as_str()) && l.contains(file.as_str())),
                "{}: builder prompt {i} does not say that input {field:?} is {file}",
                task.id
            );
        }
    }
}

/// The extracts the builder's prompt shows (its first JSON block).
fn shown_extracts(prompt: &str) -> Vec<Value> {
    let Some(start) = prompt.find("```json\n") else {
        return Vec::new();
    };
    let rest = &prompt[start + "```json\n".len()..];
    let end = rest.find("\n```").unwrap_or(rest.len());
    serde_json::from_str(&rest[..end]).unwrap_or_default()
}

/// SWITCHED (`PROFILE_LANDED`): the builder's first prompt carries, for
/// every column of the task's files that has empty cells, a profile whose
/// null (and placeholder) count is what pandas counts on the raw file.
pub fn assert_prompt_carries_profile(task: &Task, facts: &Facts, own: &[String]) {
    if !PROFILE_LANDED {
        return;
    }
    let builder = builder_requests(own);
    let first = builder
        .first()
        .unwrap_or_else(|| panic!("{}: no builder request", task.id));
    let extracts = shown_extracts(first);
    for file in &task.files {
        let extract = extracts
            .iter()
            .find(|e| e["filename"] == file.as_str())
            .unwrap_or_else(|| panic!("{}: no extract of {file} in the prompt", task.id));
        // A workbook's profiles are per sheet; a CSV's on the extract.
        let mut profiles: Vec<&Value> = vec![&extract["profile"]];
        if let Some(sheets) = extract["sheets"].as_array() {
            profiles.extend(sheets.iter().map(|s| &s["profile"]));
        }
        let columns: Vec<&Value> = profiles
            .iter()
            .filter_map(|p| p["columns"].as_array())
            .flatten()
            .collect();
        assert!(
            !columns.is_empty(),
            "{}: {file} carries no profile",
            task.id
        );
        for (column, empty) in facts.nulls(file) {
            // A column whose name looked like a value is shown masked, and
            // its profile under the masked name: not looked up here.
            let Some(profile) = columns.iter().find(|c| c["name"] == column) else {
                continue;
            };
            let nulls = profile["nulls"].as_u64().unwrap_or(0);
            let placeholders = profile["placeholders"].as_u64().unwrap_or(0);
            assert!(
                nulls == empty || nulls + placeholders == empty,
                "{}: {file} column {column:?} has {empty} empty cells, its profile says {profile}",
                task.id
            );
        }
    }
}

#[test]
fn tokens_are_found_whole() {
    assert_eq!(find_token("year 1952, then", "1952"), Some(5));
    assert_eq!(find_token("19520 and a1952", "1952"), None);
    assert_eq!(find_token("\"Biscoe\"", "Biscoe"), Some(1));
    let extracts = shown_extracts("x\n```json\n[\n{\"filename\":\"a.csv\"}\n]\n```\n");
    assert_eq!(extracts[0]["filename"], "a.csv");
}
