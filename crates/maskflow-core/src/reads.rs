//! What a script reads of its files (issue 41, point 1). The builder
//! declares it beside the script (`execution.reads`: each table it opens —
//! a file's own, a workbook's sheet, a PDF's or Word document's table —
//! and the columns it uses, by name or by position). [`confirm`] holds the
//! declaration against the test files when the version is built, so a
//! script that names a column it did not declare fails its test; [`check`]
//! holds every later run's files against it before the script starts: a
//! difference in what the script reads refuses the run, one sentence
//! each, and a difference in what it does not read (a new sheet, a changed
//! title cell on a sheet it never opens) is a note that does not stop it.
//! Pure functions over extracts' JSON; the lines name columns and sheets
//! as [`crate::shape::shown`] does (a name that looks like a value is
//! masked), never a cell's value.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::conversation::spec::{ColumnRead, Read, WorkflowSpec};
use crate::shape::{self, Place, shown};
use maskflow_privacy::categories::CategoryCandidate;

/// How a run's files compare with what the script reads.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Check {
    /// Differences in what the script reads: the run is refused.
    pub refusals: Vec<String>,
    /// Differences in what it does not read: reported, the run goes on.
    pub notes: Vec<String>,
}

/// A read, resolved against the approved file.
struct Resolved {
    /// The table it reads.
    place: Place,
    /// The sheet's 0-based index, when the script opens the sheet by index.
    sheet_index: Option<usize>,
    /// The columns it uses (approved name, position, whether by position);
    /// `None`: the table as a whole.
    columns: Option<Vec<(String, usize, bool)>>,
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn sheets(extract: &Value) -> Option<&Vec<Value>> {
    extract["sheets"].as_array().filter(|s| !s.is_empty())
}

/// The table at `place` in `extract`.
fn table<'a>(extract: &'a Value, place: &Place) -> Option<&'a Value> {
    match place {
        Place::File | Place::Table => Some(extract),
        Place::Sheet(name) => sheets(extract)?.iter().find(|s| s["name"] == *name),
        Place::DocumentTable(i) => extract["document"]["tables"].as_array()?.get(*i),
    }
}

/// Where a read is in `extract` (the real names), with `sent` the extract
/// as the builder saw it (a name that looked like a value masked), for a
/// sheet declared by its masked name.
fn place_of(read: &Read, extract: &Value, sent: &Value) -> Result<(Place, Option<usize>), String> {
    if let Some(i) = read.table {
        let count = extract["document"]["tables"].as_array().map_or(0, Vec::len);
        return if i < count {
            Ok((Place::DocumentTable(i), None))
        } else {
            Err(format!(
                "table {} is not in the file (it has {count} table{})",
                i + 1,
                if count == 1 { "" } else { "s" }
            ))
        };
    }
    let Some(all) = sheets(extract) else {
        return match (&read.sheet, read.sheet_index) {
            (None, None) => Ok((Place::Table, None)),
            _ => Err("the file has no sheets".into()),
        };
    };
    let name_at = |i: usize| {
        all.get(i)
            .and_then(|s| s["name"].as_str())
            .map(str::to_owned)
    };
    if let Some(i) = read.sheet_index {
        return name_at(i)
            .map(|n| (Place::Sheet(n), Some(i)))
            .ok_or_else(|| format!("sheet {} is not in the file", i + 1));
    }
    let Some(wanted) = &read.sheet else {
        // A workbook read without a sheet: its first sheet.
        return name_at(0)
            .map(|n| (Place::Sheet(n), None))
            .ok_or_else(|| "the file has no sheets".into());
    };
    let index = all
        .iter()
        .position(|s| s["name"] == *wanted)
        .or_else(|| sheets(sent)?.iter().position(|s| s["name"] == *wanted));
    index
        .and_then(name_at)
        .map(|n| (Place::Sheet(n), None))
        .ok_or_else(|| format!("sheet {:?} is not in the file", shown(wanted)))
}

/// A column read as (approved name, position, by position).
fn column_of(
    c: &ColumnRead,
    real: &[String],
    sent: &[String],
) -> Result<(String, usize, bool), String> {
    if let Some(p) = c.position {
        let Some(name) = real.get(p) else {
            return Err(format!(
                "there is no column {} (the table has {})",
                p + 1,
                real.len()
            ));
        };
        if let Some(n) = &c.name
            && n != name
            && sent.get(p) != Some(n)
        {
            return Err(format!(
                "column {} is not {:?} (the names and positions disagree)",
                p + 1,
                shown(n)
            ));
        }
        return Ok((name.clone(), p, true));
    }
    let wanted = c.name.as_deref().unwrap_or_default();
    real.iter()
        .position(|r| r == wanted)
        .or_else(|| sent.iter().position(|s| s == wanted))
        .and_then(|i| real.get(i).map(|n| (n.clone(), i, false)))
        .ok_or_else(|| format!("column {:?} is not in the table", shown(wanted)))
}

fn resolve(read: &Read, extract: &Value, sent: &Value) -> Result<Resolved, String> {
    let (place, sheet_index) = place_of(read, extract, sent)?;
    let real = table(extract, &place).map_or_else(Vec::new, |t| names(&t["columns"]));
    let shown_cols = table(sent, &place)
        .or_else(|| match (&place, sheet_index) {
            (Place::Sheet(_), Some(i)) => sheets(sent)?.get(i),
            _ => None,
        })
        .map_or_else(Vec::new, |t| names(&t["columns"]));
    let columns = if read.columns.is_empty() {
        None
    } else {
        Some(
            read.columns
                .iter()
                .map(|c| column_of(c, &real, &shown_cols))
                .collect::<Result<Vec<_>, _>>()?,
        )
    };
    Ok(Resolved {
        place,
        sheet_index,
        columns,
    })
}

/// Where a place is, as a line's prefix (`sheet "Sales": `).
fn prefix(place: &Place) -> String {
    match place {
        Place::File | Place::Table => String::new(),
        Place::Sheet(n) => format!("sheet {:?}: ", shown(n)),
        Place::DocumentTable(i) => format!("table {}: ", i + 1),
    }
}

/// Whether `script` quotes `text` as a string literal.
fn quoted(script: &str, text: &str) -> bool {
    script.contains(&format!("'{text}'")) || script.contains(&format!("\"{text}\""))
}

/// Every table of an extract: (place, its column names).
fn tables_of(extract: &Value) -> Vec<(Place, Vec<String>)> {
    let mut out = Vec::new();
    match sheets(extract) {
        Some(all) => out.extend(all.iter().map(|s| {
            (
                Place::Sheet(s["name"].as_str().unwrap_or_default().to_owned()),
                names(&s["columns"]),
            )
        })),
        None => out.push((Place::Table, names(&extract["columns"]))),
    }
    if let Some(tables) = extract["document"]["tables"].as_array() {
        out.extend(
            tables
                .iter()
                .enumerate()
                .map(|(i, t)| (Place::DocumentTable(i), names(&t["columns"]))),
        );
    }
    out
}

/// A declared read of the test file: its table, and the columns it uses
/// (`None`: the table as a whole).
type Declared = (Place, Option<Vec<String>>);

/// The test run's check of `spec`'s declared reads against the files it
/// was tested on: `extracts` (the approved extracts, as the builder saw
/// them) and `bound` (input → the file names it got). Each problem is a
/// sentence for the repair (names from the builder's own declaration or
/// the approved extracts, never a value). Nothing when no reads are
/// declared.
pub fn confirm(
    spec: &WorkflowSpec,
    extracts: &Value,
    bound: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let Some(reads) = &spec.execution.reads else {
        return Vec::new();
    };
    let files: Vec<&Value> = extracts
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let extract_of = |name: &str| files.iter().copied().find(|e| e["filename"] == name);
    let mut out = Vec::new();
    let mut declared: BTreeMap<&str, Vec<Declared>> = BTreeMap::new();
    for (i, read) in reads.iter().enumerate() {
        for file in bound.get(&read.input).into_iter().flatten() {
            let Some(extract) = extract_of(file) else {
                continue;
            };
            match resolve(read, extract, extract) {
                Ok(r) => declared.entry(read.input.as_str()).or_default().push((
                    r.place,
                    r.columns
                        .map(|c| c.into_iter().map(|(n, _, _)| n).collect()),
                )),
                Err(e) => out.push(format!(
                    "execution.reads[{i}] (input {}): {e} of the test file",
                    read.input
                )),
            }
        }
    }
    // What the script names but did not declare.
    for (input, files) in bound {
        let reads = declared.get(input.as_str());
        for extract in files.iter().filter_map(|f| extract_of(f)) {
            for (place, columns) in tables_of(extract) {
                for c in columns.iter().filter(|c| c.chars().count() >= 2) {
                    if !quoted(&spec.script, c) {
                        continue;
                    }
                    let covered = reads.is_some_and(|rs| {
                        rs.iter().any(|(p, cols)| {
                            *p == place && cols.as_ref().is_none_or(|cols| cols.contains(c))
                        })
                    });
                    if !covered {
                        out.push(format!(
                            "the script uses {}column {c:?} of input {input}, which execution.reads does not declare",
                            prefix(&place)
                        ));
                    }
                }
                if let Place::Sheet(name) = &place
                    && quoted(&spec.script, name)
                    && !reads.is_some_and(|rs| rs.iter().any(|(p, _)| p == &place))
                {
                    out.push(format!(
                        "the script opens sheet {name:?} of input {input}, which execution.reads does not declare"
                    ));
                }
            }
        }
    }
    out.dedup();
    out
}

/// Checks `new`, a file given to input `input`, against the `reads` the
/// script declared for it and the file the version was `approved` with
/// (both real, stored extracts). A read the approved file cannot resolve
/// refuses too: the declaration no longer says what the script reads.
pub fn check(input: &str, reads: &[&Read], approved: &Value, new: &Value) -> Check {
    let sent = crate::names::outbound(approved, &[]).extract;
    let mut out = Check::default();
    let mut resolved = Vec::new();
    for read in reads {
        match resolve(read, approved, &sent) {
            Ok(r) => resolved.push(r),
            Err(e) => out.refusals.push(format!(
                "input {input}: what the script reads is not in the approved file ({e}); \
                 update the workflow for this file"
            )),
        }
    }
    // The positions the script relies on.
    let mut by_position: Vec<&str> = Vec::new();
    for r in &resolved {
        if let (Place::Sheet(name), Some(i)) = (&r.place, r.sheet_index) {
            let now = sheets(new)
                .and_then(|s| s.get(i))
                .and_then(|s| s["name"].as_str());
            if now != Some(name.as_str())
                && sheets(new).is_some_and(|s| s.iter().any(|x| x["name"] == *name))
            {
                out.refusals.push(format!(
                    "input {input}: sheet {} was {:?} and is now {}: the script opens it by its position",
                    i + 1,
                    shown(name),
                    now.map_or_else(|| "missing".to_owned(), |n| format!("{:?}", shown(n)))
                ));
            }
        }
        let Some(now) = table(new, &r.place) else {
            continue; // a missing table is one of the differences below
        };
        let now = names(&now["columns"]);
        for (name, p, positional) in r.columns.iter().flatten() {
            if !*positional || now.get(*p) == Some(name) {
                continue;
            }
            let there = match now.get(*p) {
                Some(n) => format!("is now {:?}", shown(n)),
                None => "is gone".to_owned(),
            };
            let moved = match now.iter().position(|n| n == name) {
                Some(k) => format!(" ({:?} moved to column {})", shown(name), k + 1),
                None => String::new(),
            };
            out.refusals.push(format!(
                "input {input}: {}column {} was {:?} and {there}{moved}: the script reads it by its position",
                prefix(&r.place),
                p + 1,
                shown(name)
            ));
            by_position.push(name);
        }
    }
    for d in shape::located(approved, new) {
        if d.column
            .as_deref()
            .is_some_and(|c| by_position.contains(&c))
        {
            continue; // said above
        }
        let read = d.place == Place::File
            || resolved.iter().any(|r| {
                r.place == d.place
                    && match (&d.column, &r.columns) {
                        (None, _) | (_, None) => true,
                        (Some(c), Some(cols)) => cols.iter().any(|(n, _, _)| n == c),
                    }
            });
        if read && d.breaks {
            out.refusals
                .push(format!("input {input}: {} — the script reads it", d.text));
        } else {
            out.notes.push(format!(
                "input {input}: {} — the script does not read it",
                d.text
            ));
        }
    }
    out
}

/// Issue 41, point 2: the assumptions the script declared about the
/// columns it reads, held against `new` (a file given to `input`): a key
/// it expects unique that is not, a date layout it parses that changed, a
/// category it maps that the approved file did not have (refused unless
/// the `new_categories` drift is declared) — and, reported only, values of
/// a shape the approved file's column did not have. `approved_categories`
/// and `new_categories` are the files' category columns (raw values, local
/// only); a line shows a value masked, with its count.
pub fn check_assumptions(
    input: &str,
    reads: &[&Read],
    drift: &[String],
    (approved, approved_categories): (&Value, &[CategoryCandidate]),
    (new, new_categories): (&Value, &[CategoryCandidate]),
) -> Check {
    let sent = crate::names::outbound(approved, &[]).extract;
    let mut out = Check::default();
    let categories_drift = drift.iter().any(|d| d == "new_categories");
    for read in reads {
        let Ok(r) = resolve(read, approved, &sent) else {
            continue; // refused by [`check`]
        };
        let (Some(a_table), Some(n_table)) = (table(approved, &r.place), table(new, &r.place))
        else {
            continue;
        };
        let now = names(&n_table["columns"]);
        let sheet = match &r.place {
            Place::Sheet(n) => Some(n.clone()),
            _ => None,
        };
        for (c, (name, p, positional)) in read.columns.iter().zip(r.columns.iter().flatten()) {
            let here = if *positional {
                now.get(*p)
            } else {
                now.iter().find(|n| *n == name)
            };
            if here != Some(name) {
                continue; // refused by [`check`]
            }
            let col = format!("{}column {:?}", prefix(&r.place), shown(name));
            let profile_of = |t: &Value| {
                t["profile"]["columns"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|x| x["name"] == *name).cloned())
            };
            let (a_prof, n_prof) = (profile_of(a_table), profile_of(n_table));
            if c.unique
                && let Some(keys) = n_table["profile"]["unique_columns"].as_array()
                && !keys.iter().any(|k| k == name)
            {
                out.refusals.push(format!(
                    "input {input}: {col} is not a unique key in this file (a value is there twice, or a cell is empty); \
                     the script expects each value once"
                ));
            }
            if let (Some(wanted), Some(layout)) = (
                &c.format,
                n_prof.as_ref().and_then(|p| p["date_format"].as_str()),
            ) && wanted != layout
            {
                out.refusals.push(format!(
                    "input {input}: {col}'s dates are laid out {layout} in this file; the script parses {wanted}"
                ));
            }
            let typed = a_prof
                .as_ref()
                .and_then(|p| p["inferred_type"].as_str())
                .is_some_and(|t| matches!(t, "date" | "datetime" | "time" | "integer" | "decimal"));
            if (typed || c.format.is_some())
                && let (Some(a), Some(n)) = (&a_prof, &n_prof)
            {
                let before: Vec<&str> = a["shapes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s["shape"].as_str())
                    .collect();
                for s in n["shapes"].as_array().into_iter().flatten() {
                    let (Some(shape), Some(count)) = (s["shape"].as_str(), s["count"].as_u64())
                    else {
                        continue;
                    };
                    if !before.contains(&shape) {
                        out.notes.push(format!(
                            "input {input}: {col} has {count} value{} of a layout the approved file did not have ({shape:?})",
                            if count == 1 { "" } else { "s" }
                        ));
                    }
                }
            }
            if c.mapped {
                let of = |cats: &[CategoryCandidate]| {
                    cats.iter()
                        .find(|k| k.column == *name && k.sheet == sheet)
                        .map(|k| k.values.clone())
                };
                let before = of(approved_categories);
                match (before, of(new_categories)) {
                    (None, _) => out.notes.push(format!(
                        "input {input}: {col} did not look like a category column in the approved file; its values are not compared"
                    )),
                    (Some(_), None) => out.notes.push(format!(
                        "input {input}: {col} has too many different values in this file to compare its categories"
                    )),
                    (Some(before), Some(values)) => {
                        for v in values.iter().filter(|v| !before.iter().any(|b| b.value == v.value)) {
                            let line = format!(
                                "input {input}: {col} has a category the approved file did not have: {:?} ({} row{})",
                                maskflow_extractors::mask(&v.value),
                                v.count,
                                if v.count == 1 { "" } else { "s" }
                            );
                            if categories_drift {
                                out.notes.push(format!("{line} — new categories are expected"));
                            } else {
                                out.refusals.push(format!("{line}; the script maps each category"));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
