//! How much of one file's id column is found in another's (#40 point 4):
//! at approval, each id-like or unique-key column of each table is read
//! once as a capped set of hashes of its normalised values (an id's
//! digits, or its letters and digits case-folded), and each candidate pair
//! across files gets the count of one's values found in the other. Only
//! the counts go into the extracts as sent, never a value or a hash.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Value, json};

use maskflow_extractors::{Registry, ValueOptions, ValueSink};

/// Distinct values of a column hashed at most.
const VALUES_CAP: usize = 200_000;
/// Key columns followed per table.
const COLUMNS_PER_TABLE: usize = 6;

/// Whether a column's name says it holds an id.
fn id_like(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    !n.is_empty()
        && ["id", "ref", "key", "code", "sku", "no", "number", "num"]
            .iter()
            .any(|s| n.ends_with(s))
}

/// The hash of `v` normalised: its digits when it has any (`AAA-0012345`
/// and `12345` meet), else its letters and digits case-folded.
fn normal(v: &str) -> Option<u64> {
    let digits: String = v.chars().filter(char::is_ascii_digit).collect();
    let key: String = if digits.is_empty() {
        v.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    } else {
        digits.trim_start_matches('0').to_owned()
    };
    if key.is_empty() && digits.is_empty() {
        return None;
    }
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    Some(h.finish())
}

/// One followed column: its table (sheet), name, and value hashes.
struct Followed {
    sheet: Option<String>,
    name: String,
    index: usize,
    values: HashSet<u64>,
}

/// Collects the followed columns of every table of one file.
struct Collector<'a> {
    wanted: &'a dyn Fn(Option<&str>, &str) -> bool,
    done: Vec<Followed>,
    current: Vec<Followed>,
}

impl ValueSink for Collector<'_> {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        self.done.append(&mut self.current);
        self.current = columns
            .iter()
            .enumerate()
            .filter(|(_, n)| (self.wanted)(sheet, n))
            .take(COLUMNS_PER_TABLE)
            .map(|(index, n)| Followed {
                sheet: sheet.map(str::to_owned),
                name: n.trim().to_owned(),
                index,
                values: HashSet::new(),
            })
            .collect();
    }

    fn cell(&mut self, column: usize, value: &str) {
        if let Some(f) = self.current.iter_mut().find(|f| f.index == column)
            && f.values.len() < VALUES_CAP
            && let Some(h) = normal(value)
        {
            f.values.insert(h);
        }
    }

    fn text(&mut self, _text: &str) {}
}

/// The unique keys of the table `sheet` of extract `e`.
fn unique_keys(e: &Value, sheet: Option<&str>) -> Vec<String> {
    let table = match sheet {
        None => e,
        Some(s) => e["sheets"]
            .as_array()
            .and_then(|a| a.iter().find(|t| t["name"] == s))
            .unwrap_or(&Value::Null),
    };
    table["profile"]["unique_columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| Some(k.as_str()?.to_owned()))
        .collect()
}

/// Adds to each extract of `extracts` (as sent, one per file at `paths`)
/// its `join_matches`: for each followed column, each column of another
/// file sharing values with it — how many of its distinct normalised
/// values are found there, of how many. A file that cannot be read is
/// left without.
pub(crate) fn annotate(extracts: &mut [Value], paths: &[&Path]) {
    if extracts.len() < 2 || extracts.len() != paths.len() {
        return;
    }
    let registry = Registry::with_defaults();
    let mut files: Vec<Vec<Followed>> = Vec::with_capacity(paths.len());
    for (e, path) in extracts.iter().zip(paths) {
        let e = e.clone();
        let wanted = move |sheet: Option<&str>, name: &str| {
            id_like(name) || unique_keys(&e, sheet).iter().any(|k| k == name.trim())
        };
        let mut c = Collector {
            wanted: &wanted,
            done: Vec::new(),
            current: Vec::new(),
        };
        if registry
            .values(path, &ValueOptions::default(), &mut c)
            .is_err()
        {
            files.push(Vec::new());
            continue;
        }
        c.done.append(&mut c.current);
        files.push(c.done);
    }
    let names: Vec<String> = extracts
        .iter()
        .map(|e| e["filename"].as_str().unwrap_or("?").to_owned())
        .collect();
    let mut matches: HashMap<usize, Vec<Value>> = HashMap::new();
    for (i, a_cols) in files.iter().enumerate() {
        for (j, b_cols) in files.iter().enumerate() {
            if i == j {
                continue;
            }
            for a in a_cols {
                for b in b_cols {
                    if a.values.is_empty() {
                        continue;
                    }
                    let found = a.values.iter().filter(|h| b.values.contains(h)).count();
                    if found == 0 {
                        continue;
                    }
                    let mut m = json!({
                        "column": a.name,
                        "other_file": names[j],
                        "other_column": b.name,
                        "found": found,
                        "of": a.values.len(),
                    });
                    if let Some(s) = &a.sheet {
                        m["sheet"] = json!(s);
                    }
                    if let Some(s) = &b.sheet {
                        m["other_sheet"] = json!(s);
                    }
                    matches.entry(i).or_default().push(m);
                }
            }
        }
    }
    for (i, list) in matches {
        if let Some(Value::Object(o)) = extracts.get_mut(i) {
            o.insert("join_matches".into(), Value::Array(list));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_meet_by_their_digits() {
        assert_eq!(normal("ORD-0012345"), normal("12345"));
        assert_ne!(normal("12345"), normal("12346"));
        assert_eq!(normal("Abc"), normal("aBC"));
        assert!(id_like("order_ref") && id_like("Customer No") && !id_like("amount"));
    }
}
