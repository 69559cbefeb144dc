//! Whether a file given to a run has the shape of the file the workflow was
//! approved with: column names, inferred types (where both extracts carry a
//! profile) and, for workbooks, sheet names. A pure comparison of two
//! extracts (as JSON, so extracts stored before a field existed still
//! compare); the callers (`maskflow run`, the run route) decide what to do.
//! It reads only structure: names the user's own extract already holds, and
//! no value from either file.

use serde::Deserialize;
use serde_json::Value;

/// The parts of an extract the comparison reads.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Shape {
    kind: Option<String>,
    columns: Vec<String>,
    sheets: Option<Vec<SheetShape>>,
    profile: Option<ProfileShape>,
}

/// One sheet of a workbook.
#[derive(Deserialize, Default)]
#[serde(default)]
struct SheetShape {
    name: String,
    columns: Vec<String>,
    profile: Option<ProfileShape>,
}

/// The profile's per-column types.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ProfileShape {
    columns: Vec<ColumnShape>,
}

/// One column's inferred type.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ColumnShape {
    name: String,
    inferred_type: String,
}

/// Every way `new` differs from `approved`, one sentence each, prefixed
/// with `input NAME: `; empty when the shapes agree. A renamed column (one
/// missing where one is new, at the same place) is one sentence. Column
/// order, row counts and values are not compared: scripts address columns
/// by name, and other values are the point of a new run.
pub fn differences(input: &str, approved: &Value, new: &Value) -> Vec<String> {
    let approved: Shape = serde_json::from_value(approved.clone()).unwrap_or_default();
    let new: Shape = serde_json::from_value(new.clone()).unwrap_or_default();
    let mut out = Vec::new();
    if let (Some(a), Some(n)) = (&approved.kind, &new.kind)
        && a != n
    {
        out.push(format!(
            "the approved file was {} and this one is {}",
            kind_name(a),
            kind_name(n)
        ));
    }
    match (&approved.sheets, &new.sheets) {
        (Some(a_sheets), Some(n_sheets)) => {
            for a in a_sheets {
                match n_sheets.iter().find(|n| n.name == a.name) {
                    Some(n) => {
                        let prefix = format!("sheet {:?}: ", a.name);
                        out.extend(
                            columns(
                                &a.columns,
                                &n.columns,
                                a.profile.as_ref(),
                                n.profile.as_ref(),
                            )
                            .into_iter()
                            .map(|d| format!("{prefix}{d}")),
                        );
                    }
                    None => out.push(format!(
                        "sheet {:?} is missing (the approved file had it)",
                        a.name
                    )),
                }
            }
            for n in n_sheets {
                if !a_sheets.iter().any(|a| a.name == n.name) {
                    out.push(format!("sheet {:?} is new", n.name));
                }
            }
        }
        _ => out.extend(columns(
            &approved.columns,
            &new.columns,
            approved.profile.as_ref(),
            new.profile.as_ref(),
        )),
    }
    out.into_iter()
        .map(|d| format!("input {input}: {d}"))
        .collect()
}

/// What people call a file kind (`excel` → "a workbook").
fn kind_name(kind: &str) -> String {
    match kind {
        "excel" => "a workbook".into(),
        "csv" => "a delimited text file".into(),
        other => format!("a {other} file"),
    }
}

/// The column differences of one table.
fn columns(
    approved: &[String],
    new: &[String],
    a_profile: Option<&ProfileShape>,
    n_profile: Option<&ProfileShape>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut added: Vec<(usize, &String)> = new
        .iter()
        .enumerate()
        .filter(|(_, c)| !approved.contains(c))
        .collect();
    for (i, a) in approved.iter().enumerate() {
        if new.contains(a) {
            continue;
        }
        // A new column in the same place reads as a rename: one sentence.
        match added.iter().position(|(j, _)| *j == i) {
            Some(k) => {
                let (_, n) = added.remove(k);
                out.push(format!(
                    "column {a:?} is missing (the approved file had it); column {n:?} is new"
                ));
            }
            None => out.push(format!(
                "column {a:?} is missing (the approved file had it)"
            )),
        }
    }
    out.extend(added.iter().map(|(_, n)| format!("column {n:?} is new")));
    if let (Some(a), Some(n)) = (a_profile, n_profile) {
        for ac in &a.columns {
            let Some(nc) = n.columns.iter().find(|c| c.name == ac.name) else {
                continue;
            };
            if !same_type(&ac.inferred_type, &nc.inferred_type) {
                out.push(format!(
                    "column {:?} was {}, now {}",
                    ac.name, ac.inferred_type, nc.inferred_type
                ));
            }
        }
    }
    out
}

/// Whether two inferred types are the same for a script: an empty column
/// (or an unknown type) says nothing, and whole numbers read as decimals.
fn same_type(a: &str, b: &str) -> bool {
    let numeric = |t: &str| matches!(t, "integer" | "decimal");
    a == b
        || a.is_empty()
        || b.is_empty()
        || a == "empty"
        || b == "empty"
        || numeric(a) && numeric(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(cols: &[&str]) -> Value {
        json!({"filename": "s.csv", "kind": "csv", "columns": cols, "sample_rows": [], "row_count": 3})
    }

    #[test]
    fn the_same_columns_agree() {
        assert!(differences("sales", &table(&["a", "b"]), &table(&["b", "a"])).is_empty());
    }

    #[test]
    fn a_renamed_column_is_one_line_naming_both() {
        let d = differences(
            "sales",
            &table(&["Region", "Amount"]),
            &table(&["Region", "Amt"]),
        );
        assert_eq!(
            d,
            vec![
                "input sales: column \"Amount\" is missing (the approved file had it); column \"Amt\" is new"
            ]
        );
    }

    #[test]
    fn missing_and_new_columns_elsewhere_are_lines_of_their_own() {
        let d = differences("s", &table(&["a", "b", "c"]), &table(&["a", "c", "d", "e"]));
        assert_eq!(
            d,
            vec![
                "input s: column \"b\" is missing (the approved file had it)",
                "input s: column \"d\" is new",
                "input s: column \"e\" is new",
            ]
        );
    }

    #[test]
    fn types_differ_only_where_both_profiles_say_so() {
        let with = |t: &str| {
            let mut v = table(&["when", "n"]);
            v["profile"] = json!({"rows_profiled": 3, "duplicate_rows": 0, "unique_columns": [],
                "columns": [{"name": "when", "inferred_type": t}, {"name": "n", "inferred_type": "integer"}]});
            v
        };
        assert_eq!(
            differences("s", &with("date"), &with("text")),
            vec!["input s: column \"when\" was date, now text"]
        );
        assert!(differences("s", &with("date"), &with("date")).is_empty());
        assert!(differences("s", &with("date"), &with("empty")).is_empty());
        // Without a profile on one side there is nothing to compare.
        assert!(differences("s", &with("date"), &table(&["when", "n"])).is_empty());
    }

    #[test]
    fn workbook_sheets_are_compared_by_name() {
        let book = |sheets: Value| json!({"filename": "b.xlsx", "kind": "excel", "columns": [], "sample_rows": [], "row_count": 0, "sheets": sheets});
        let approved = book(json!([
            {"name": "Sales", "columns": ["a"], "sample_rows": [], "row_count": 1},
            {"name": "Costs", "columns": ["x"], "sample_rows": [], "row_count": 1}
        ]));
        let new = book(json!([
            {"name": "Sales", "columns": ["a", "z"], "sample_rows": [], "row_count": 1},
            {"name": "Expenses", "columns": ["x"], "sample_rows": [], "row_count": 1}
        ]));
        assert_eq!(
            differences("book", &approved, &new),
            vec![
                "input book: sheet \"Sales\": column \"z\" is new",
                "input book: sheet \"Costs\" is missing (the approved file had it)",
                "input book: sheet \"Expenses\" is new",
            ]
        );
    }

    #[test]
    fn another_kind_of_file_says_so() {
        let d = differences(
            "s",
            &table(&["a"]),
            &json!({"kind": "pdf", "columns": [], "sample_rows": [], "row_count": 0}),
        );
        assert_eq!(
            d[0],
            "input s: the approved file was a delimited text file and this one is a pdf file"
        );
    }

    #[test]
    fn unreadable_extracts_compare_as_empty_and_never_panic() {
        assert!(differences("s", &json!("nonsense"), &json!(42)).is_empty());
    }
}
