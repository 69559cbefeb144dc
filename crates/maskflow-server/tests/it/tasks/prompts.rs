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
/// point 2): landed.
const INPUTS_BY_NAME_LANDED: bool = true;

/// SWITCH: each file's extract carries a `profile` with per-column null
/// counts (issue 28 point 1, helper "profile"). Turn on when that lands.
const PROFILE_LANDED: bool = true;

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

/// The builder's first prompt shows, by their real names, the columns the
/// task's script reads (a column name that looked like a value is masked,
/// and a script could not name it).
pub fn assert_prompt_shows_columns(task: &Task, own: &[String]) {
    let builder = builder_requests(own);
    let first = builder
        .first()
        .unwrap_or_else(|| panic!("{}: no builder request", task.id));
    let extracts = shown_extracts(first);
    let mut shown: Vec<&str> = Vec::new();
    for e in extracts.iter().filter(|e| {
        e["filename"]
            .as_str()
            .is_some_and(|f| task.files.iter().any(|t| t == f))
    }) {
        let sheets = e["sheets"].as_array().into_iter().flatten();
        for columns in std::iter::once(&e["columns"]).chain(sheets.map(|s| &s["columns"])) {
            shown.extend(
                columns
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str),
            );
        }
    }
    for column in &task.columns {
        assert!(
            shown.contains(&column.as_str()),
            "{}: the builder's prompt does not show the column {column:?} (shown: {shown:?})",
            task.id
        );
    }
}

/// SWITCHED (`INPUTS_BY_NAME_LANDED`): the builder's first prompt lists each
/// file with the input name to declare for it, and every builder prompt after
/// it (a repair, a review, an edit) names each declared input with its file.
pub fn assert_prompt_names_inputs(task: &Task, own: &[String]) {
    if INPUTS_BY_NAME_LANDED {
        let problems = input_problems(task, own);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}

/// Where a builder prompt does not say which file is which input.
fn input_problems(task: &Task, own: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(first) = builder_requests(own).first() {
        for file in &task.files {
            if !first
                .lines()
                .any(|l| l.starts_with("- `") && l.ends_with(&format!("`: {file}")))
            {
                problems.push(format!(
                    "{}: the builder's first prompt names no input for {file}",
                    task.id
                ));
            }
        }
    }
    for (i, prompt) in builder_requests(own).iter().enumerate().skip(1) {
        for ((field, _), file) in task.fields.iter().zip(&task.files) {
            if !prompt
                .lines()
                .any(|l| l.contains(&format!("`{field}`")) && l.contains(file.as_str()))
            {
                problems.push(format!(
                    "{}: builder prompt {i} does not say that input {field:?} is {file}",
                    task.id
                ));
            }
        }
    }
    problems
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
    if PROFILE_LANDED {
        let problems = profile_problems(task, facts, own);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}

/// Where the builder's first prompt lacks a profile or miscounts empty cells.
fn profile_problems(task: &Task, facts: &Facts, own: &[String]) -> Vec<String> {
    let Some(first) = builder_requests(own).into_iter().next() else {
        return vec![format!("{}: no builder request", task.id)];
    };
    let extracts = shown_extracts(first);
    let mut problems = Vec::new();
    for file in &task.files {
        let Some(extract) = extracts.iter().find(|e| e["filename"] == file.as_str()) else {
            problems.push(format!("{}: no extract of {file} in the prompt", task.id));
            continue;
        };
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
        if columns.is_empty() {
            problems.push(format!("{}: {file} carries no profile", task.id));
            continue;
        }
        for (column, empty) in facts.nulls(file) {
            // A column whose name looked like a value is shown masked, and
            // its profile under the masked name: not looked up here.
            let Some(profile) = columns.iter().find(|c| c["name"] == column) else {
                continue;
            };
            let nulls = profile["nulls"].as_u64().unwrap_or(0);
            let placeholders = profile["placeholders"].as_u64().unwrap_or(0);
            if nulls != empty && nulls + placeholders != empty {
                problems.push(format!(
                    "{}: {file} column {column:?} has {empty} empty cells, its profile says {profile}",
                    task.id
                ));
            }
        }
    }
    problems
}

#[test]
fn tokens_are_found_whole() {
    assert_eq!(find_token("year 1952, then", "1952"), Some(5));
    assert_eq!(find_token("19520 and a1952", "1952"), None);
    assert_eq!(find_token("\"Biscoe\"", "Biscoe"), Some(1));
    let extracts = shown_extracts("x\n```json\n[\n{\"filename\":\"a.csv\"}\n]\n```\n");
    assert_eq!(extracts[0]["filename"], "a.csv");
}

/// A task of one file `a.csv` read as input `orders`, for the checks' own tests.
#[cfg(test)]
fn toy_task() -> Task {
    Task {
        id: "toy".into(),
        request: "Total per order.".into(),
        files: vec!["a.csv".into()],
        fields: vec![("orders".into(), "Orders".into())],
        columns: vec!["qty".into()],
        requirements: vec![],
        outputs: vec!["out.csv".into()],
    }
}

#[test]
fn the_switched_checks_can_fail() {
    let task = toy_task();
    let builder = |extract: &str, tail: &str| {
        format!(
            "You are Maskflow's builder.\n```json\n[{extract}]\n```\n{}{tail}",
            task.request
        )
    };
    let facts = Facts(BTreeMap::from([(
        "a.csv".to_owned(),
        serde_json::json!({"needles": [], "nulls": {"qty": 2, "order": 0}}),
    )]));
    let bare = builder(r#"{"filename":"a.csv","columns":["order","qty"]}"#, "");
    assert_eq!(
        profile_problems(&task, &facts, std::slice::from_ref(&bare)).len(),
        1,
        "no profile"
    );
    let wrong = builder(
        r#"{"filename":"a.csv","profile":{"columns":[{"name":"qty","nulls":1,"placeholders":0}]}}"#,
        "",
    );
    assert_eq!(
        profile_problems(&task, &facts, &[wrong]).len(),
        1,
        "a miscount"
    );
    let right = builder(
        r#"{"filename":"a.csv","profile":{"columns":[{"name":"qty","nulls":2,"placeholders":0}]}}"#,
        "",
    );
    assert!(profile_problems(&task, &facts, &[right]).is_empty());

    let repair_blind = builder("", "The script failed.");
    let repair_named = builder("", "Input `orders`: a.csv\nThe script failed.");
    assert_eq!(
        input_problems(&task, std::slice::from_ref(&bare)).len(),
        1,
        "a first prompt that lists no input for a.csv"
    );
    let listed = builder("", "Files:\n- `orders`: a.csv\n");
    assert!(input_problems(&task, std::slice::from_ref(&listed)).is_empty());
    assert_eq!(
        input_problems(&task, &[listed.clone(), repair_blind]).len(),
        1
    );
    assert!(input_problems(&task, &[listed, repair_named]).is_empty());
}
