//! Which uploaded file feeds which input of a workflow (issue 28, point 2).
//! The builder's prompt names each file with the input name it should
//! declare ([`input_name`]); the auto-test binds files to the declared
//! `file` inputs by those names — never by position: the input's name
//! against the file's name (stem, case- and separator-insensitive), then the
//! file's columns quoted in the script as a tie-break. What stays ambiguous
//! is asked of the user ([`BindingQuestion`]). Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::conversation::current::{input_names, stem};
use crate::conversation::spec::{FieldType, WorkflowSpec};
use maskflow_runner::InputValue;

/// One of the version's real input files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// The user's name for it.
    pub filename: String,
    /// The stored copy (local only).
    pub path: PathBuf,
    /// Its extract's column names (a tie-break when binding it to an input).
    pub columns: Vec<String>,
}

/// An input the auto-test cannot bind by name alone: the user picks its file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct BindingQuestion {
    /// The input's name (`fields[].name`).
    pub field: String,
    /// The input's label.
    pub label: String,
    /// The file names it may be (each an uploaded file not bound yet).
    pub candidates: Vec<String>,
}

/// The inputs of a test run: the values the runner gets, and the file
/// names each input got (for the report and the repair prompt).
pub type Bound = (BTreeMap<String, InputValue>, BTreeMap<String, Vec<String>>);

/// Lowercase letters and digits only: `Star-Bakers` and `star_bakers` match.
fn folded(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The words of a name: split at separators and lower→upper case changes.
fn words(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.insert(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.insert(word);
    }
    out
}

/// How well an input's name fits a file's name: 3 for the same folded
/// stem (or the name the prompt gave it), 2 when one contains the other,
/// else the number of shared words.
fn name_score(field: &str, file: &str, suggested: &str) -> usize {
    let (f, s) = (folded(field), folded(stem(file)));
    if f == s || field == suggested {
        return 3;
    }
    if !f.is_empty() && !s.is_empty() && (f.contains(&s) || s.contains(&f)) {
        return 2;
    }
    words(field).intersection(&words(stem(file))).count().min(1)
}

/// Whether `word` stands in `line` as a whole identifier.
fn has_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// Whether `w` is a Python identifier.
fn is_ident(w: &str) -> bool {
    w.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The names a line binds: a plain assignment's targets (`a, b = …`), the
/// name after `as`, and a `for` loop's name.
fn bound_names(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if let Some((lhs, rhs)) = line.split_once('=')
        && !rhs.starts_with('=')
    {
        let targets: Vec<&str> = lhs.split(',').map(str::trim).collect();
        if targets.iter().all(|t| is_ident(t)) {
            out.extend(targets);
        }
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        let binds = *w == "as" || (*w == "for" && words.get(i + 2) == Some(&"in"));
        if let Some(next) = words.get(i + 1).filter(|_| binds) {
            let next = next.trim_end_matches([':', ',', ')']);
            if is_ident(next) {
                out.push(next);
            }
        }
    }
    out
}

/// The lines of the script that read input `field`: those naming it in
/// quotes, and those using a name bound on such a line (`df = read(f["x"])`
/// then `df["col"]`).
fn lines_of<'s>(script: &'s str, field: &str) -> Vec<&'s str> {
    let quoted = |l: &str| l.contains(&format!("'{field}'")) || l.contains(&format!("\"{field}\""));
    let names: BTreeSet<&str> = script
        .lines()
        .filter(|l| quoted(l))
        .flat_map(bound_names)
        .collect();
    script
        .lines()
        .filter(|l| quoted(l) || names.iter().any(|n| has_word(l, n)))
        .collect()
}

/// How many of a file's columns the script names in quotes where it reads
/// input `field`.
fn column_score(script: &str, field: &str, columns: &[String]) -> usize {
    let lines = lines_of(script, field);
    columns
        .iter()
        .filter(|c| !c.trim().is_empty())
        .filter(|c| {
            let (a, b) = (format!("'{c}'"), format!("\"{c}\""));
            lines.iter().any(|l| l.contains(&a) || l.contains(&b))
        })
        .count()
}

/// The one best of `scores` (index, score), when it beats the rest.
fn unique_best(scores: &[(usize, (usize, usize))]) -> Option<usize> {
    let best = scores.iter().map(|(_, s)| *s).max()?;
    let mut at = scores.iter().filter(|(_, s)| *s == best);
    let first = at.next()?;
    (at.next().is_none() && best != (0, 0)).then_some(first.0)
}

/// Binds the version's files to the workflow's inputs by name (see the
/// module doc); `confirmed` holds the user's answers (input → file name).
/// `Err` lists the inputs the user must bind. A `files` input takes the
/// files no `file` input took; a choice gets its first option.
pub fn bind_test_inputs(
    spec: &WorkflowSpec,
    files: &[InputFile],
    confirmed: &BTreeMap<String, String>,
) -> Result<Bound, Vec<BindingQuestion>> {
    let suggested = input_names(&files.iter().map(|f| f.filename.clone()).collect::<Vec<_>>());
    let singles: Vec<_> = spec
        .fields
        .iter()
        .filter(|f| f.field_type == FieldType::File)
        .collect();
    let mut free: BTreeSet<usize> = (0..files.len()).collect();
    let mut bound: BTreeMap<&str, usize> = BTreeMap::new();
    for field in &singles {
        if let Some(name) = confirmed.get(&field.name)
            && let Some(i) = free.iter().copied().find(|&i| files[i].filename == *name)
        {
            free.remove(&i);
            bound.insert(&field.name, i);
        }
    }
    // Rounds: an input binds when one free file fits it best and that file
    // is no other unbound input's best; binding frees the next round.
    loop {
        let mut wants: Vec<(&str, usize)> = Vec::new();
        for field in singles
            .iter()
            .filter(|f| !bound.contains_key(f.name.as_str()))
        {
            let scores: Vec<(usize, (usize, usize))> = free
                .iter()
                .map(|&i| {
                    let by_name = name_score(&field.name, &files[i].filename, &suggested[i]);
                    (
                        i,
                        (
                            by_name,
                            column_score(&spec.script, &field.name, &files[i].columns),
                        ),
                    )
                })
                .collect();
            if let Some(i) = unique_best(&scores) {
                wants.push((&field.name, i));
            }
        }
        let mut progressed = false;
        for (field, i) in &wants {
            if wants.iter().filter(|(_, j)| j == i).count() == 1 && free.remove(i) {
                bound.insert(field, *i);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    let has_files_field = spec.fields.iter().any(|f| f.field_type == FieldType::Files);
    let open: Vec<_> = singles
        .iter()
        .filter(|f| !bound.contains_key(f.name.as_str()))
        .collect();
    // One input and one file left, nothing else to take it: no question.
    if open.len() == 1 && free.len() == 1 && !has_files_field {
        let i = free.pop_first().unwrap_or_default();
        bound.insert(&open[0].name, i);
    } else if !open.is_empty() && !free.is_empty() {
        return Err(open
            .iter()
            .map(|f| BindingQuestion {
                field: f.name.clone(),
                label: f.label.clone(),
                candidates: free.iter().map(|&i| files[i].filename.clone()).collect(),
            })
            .collect());
    }
    let mut inputs = BTreeMap::new();
    let mut names = BTreeMap::new();
    for (field, i) in bound {
        inputs.insert(field.to_owned(), InputValue::File(files[i].path.clone()));
        names.insert(field.to_owned(), vec![files[i].filename.clone()]);
    }
    if let Some(f) = spec
        .fields
        .iter()
        .find(|f| f.field_type == FieldType::Files)
    {
        let rest: Vec<&InputFile> = free.iter().map(|&i| &files[i]).collect();
        inputs.insert(
            f.name.clone(),
            InputValue::Files(rest.iter().map(|r| r.path.clone()).collect()),
        );
        names.insert(
            f.name.clone(),
            rest.iter().map(|r| r.filename.clone()).collect(),
        );
    }
    for f in &spec.fields {
        if f.field_type == FieldType::Choice
            && let Some(first) = f.options.as_ref().and_then(|o| o.first())
        {
            inputs.insert(
                f.name.clone(),
                InputValue::Value(Value::String(first.clone())),
            );
        }
    }
    Ok((inputs, names))
}

/// Checks the user's answers to `questions`: each input answered with one
/// of its candidates, no file given twice. The error says what to send.
pub fn check_answers(
    questions: &[BindingQuestion],
    answers: &BTreeMap<String, String>,
) -> Result<(), String> {
    let mut used = BTreeSet::new();
    for q in questions {
        let Some(file) = answers.get(&q.field) else {
            return Err(format!(
                "say which file feeds the input `{}` ({}): one of {}",
                q.field,
                q.label,
                q.candidates.join(", ")
            ));
        };
        if !q.candidates.contains(file) {
            return Err(format!(
                "{file:?} is not a file the input `{}` can take: one of {}",
                q.field,
                q.candidates.join(", ")
            ));
        }
        if !used.insert(file) {
            return Err(format!("{file:?} is given to two inputs"));
        }
    }
    if let Some(extra) = answers
        .keys()
        .find(|k| !questions.iter().any(|q| &q.field == *k))
    {
        return Err(format!("`{extra}` is not an input waiting for a file"));
    }
    Ok(())
}

/// The binding in words, one line per input: `- bakers ← bakers.csv`.
pub fn describe(names: &BTreeMap<String, Vec<String>>) -> String {
    names
        .iter()
        .map(|(field, files)| {
            let files = if files.is_empty() {
                "(no file)".to_owned()
            } else {
                files.join(", ")
            };
            format!("- input `{field}` was fed {files}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
