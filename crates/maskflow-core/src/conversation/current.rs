//! Two parts of the builder's prompt (issue 28, points 2 and 3): the input
//! name each uploaded file is to be declared under, and the workflow as it
//! stands (its script, inputs and outputs) when an edit or a repair starts
//! from one. Pure: built from the extracts' file names and the stored,
//! LLM-written workflow.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use maskflow_llm::Part;

use crate::conversation::spec::WorkflowSpec;

/// The file name without its last extension.
pub fn stem(filename: &str) -> &str {
    let base = filename.rsplit(['/', '\\']).next().unwrap_or(filename);
    match base.rfind('.') {
        Some(at) if at > 0 => &base[..at],
        _ => base,
    }
}

/// The input name a file's input should have: its stem as a Python
/// identifier, without the words that name a period (`Bakers 2024.csv` →
/// `bakers`, `originations_2018-02.csv` → `originations`), since the
/// workflow is re-run on next period's files (issue 41, point 5).
pub fn input_name(filename: &str) -> String {
    let mut out = String::new();
    for c in stem(filename).chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let mut out = out.trim_end_matches('_').to_owned();
    // A recurring file's name carries its period (`originations_2018_02`):
    // the input is named by its role, which next period's file shares.
    let role: Vec<&str> = out.split('_').filter(|w| !is_period(w)).collect();
    if !role.is_empty() {
        out = role.join("_");
    }
    if out.is_empty() {
        out = "file".into();
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "file_");
    }
    out
}

/// Whether a word of a file name names a period rather than a role: a
/// number (`2018`, `02`), a month (`mar`, `march`), a quarter or half
/// (`q1`, `h2`), a fiscal year (`fy24`).
fn is_period(word: &str) -> bool {
    let digits = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
    digits(word)
        || maskflow_extractors::profile::month_name(word).is_some()
        || word
            .strip_prefix('q')
            .or_else(|| word.strip_prefix('h'))
            .is_some_and(|r| matches!(r, "1" | "2" | "3" | "4"))
        || word.strip_prefix("fy").is_some_and(digits)
}

/// One input name per file, in the files' order, made distinct
/// (`sales`, `sales_2` for `sales.csv` and `sales.xlsx`).
pub fn input_names(filenames: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    filenames
        .iter()
        .map(|f| {
            let base = input_name(f);
            let mut name = base.clone();
            let mut n = 1;
            while !seen.insert(name.clone()) {
                n += 1;
                name = format!("{base}_{n}");
            }
            name
        })
        .collect()
}

/// `inputs` with each name the workflow does not have, but whose role it
/// has, given to that input (issue 41, point 5): a saved `maskflow run
/// --input originations_2018_02=…` call goes on feeding a workflow whose
/// input is now named `originations`. A name the workflow has is kept.
pub fn by_role(
    fields: &[crate::conversation::spec::Field],
    inputs: BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, values) in inputs {
        let known = |n: &str| fields.iter().any(|f| f.name == n);
        let role = input_name(&name);
        let name = if !known(&name) && known(&role) && !out.contains_key(&role) {
            role
        } else {
            name
        };
        out.entry(name).or_default().extend(values);
    }
    out
}

/// The file names of the approved extracts, in their order.
pub fn extract_filenames(extracts: &Value) -> Vec<String> {
    extracts
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["filename"].as_str().map(str::to_owned))
        .collect()
}

/// The uploaded files and the input name each is to be declared under;
/// "" when there is none.
pub fn inputs_block(extracts: &Value) -> String {
    inputs_parts(extracts).iter().map(Part::text).collect()
}

/// [`inputs_block`] as parts: Maskflow's wording, and the file names of
/// the approved extracts (as sent) with the input names made from them.
pub fn inputs_parts(extracts: &Value) -> Vec<Part> {
    let files = extract_filenames(extracts);
    if files.is_empty() {
        return Vec::new();
    }
    let lines: Vec<String> = files
        .iter()
        .zip(input_names(&files))
        .map(|(file, name)| format!("- `{name}`: {file}"))
        .collect();
    vec![
        Part::instructions(
            "The uploaded files and the input name of each: declare one `file` field per file under exactly this name \
(keep it when revising); its path is `inputs.json`'s `fields[\"<name>\"]`. Maskflow gives each file to the input of its name, \
never by the order of `fields`; a single `files` field instead takes every file no `file` field names. \
The user re-runs the workflow on next period's files, so each name says the file's role, never its period.\n",
        ),
        Part::extract(lines.join("\n")),
    ]
}

/// The workflow as it stands, for an edit or a repair to start from: the
/// builder changes what the conversation asks and keeps the rest (above
/// all its input names, which the user's `maskflow run` calls use).
pub fn current_block(current: &WorkflowSpec) -> String {
    current_parts(current).iter().map(Part::text).collect()
}

/// [`current_block`] as parts: Maskflow's wording, and the workflow the
/// builder wrote earlier (its name, inputs, outputs and script).
pub fn current_parts(current: &WorkflowSpec) -> Vec<Part> {
    let fields = serde_json::to_string(&current.fields).unwrap_or_default();
    let outputs = serde_json::to_string(&current.execution.outputs).unwrap_or_default();
    let requirements = serde_json::to_string(&current.execution.requirements).unwrap_or_default();
    vec![
        Part::instructions("The workflow as it stands (\u{201c}"),
        Part::llm_reply(current.name.trim()),
        Part::instructions(
            "\u{201d}), which the conversation's latest messages change. Start from it: \
keep its input names and output names unless the user asks to change them (renaming an input breaks the user's saved \
`maskflow run --input NAME=FILE` calls), and change only what is asked.\nIts inputs (`fields`): ",
        ),
        Part::llm_reply(fields),
        Part::instructions("\nIts outputs: "),
        Part::llm_reply(outputs),
        Part::instructions("\nIts requirements: "),
        Part::llm_reply(requirements),
        Part::instructions("\nIts script.py:\n```python\n"),
        Part::llm_reply(current.script.trim_end()),
        Part::instructions("\n```"),
    ]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_file_is_listed_with_its_input_name() {
        let block = inputs_block(&json!([
            {"filename": "Bakers 2024.csv"},
            {"filename": "results.xlsx"}
        ]));
        assert!(block.contains("- `bakers`: Bakers 2024.csv"), "{block}");
        assert!(block.contains("- `results`: results.xlsx"), "{block}");
        assert!(block.contains("never by the order"), "{block}");
        assert_eq!(inputs_block(&json!([])), "");
    }
}
