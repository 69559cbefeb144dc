//! Whether a file given to a run has the shape of the file the workflow was
//! approved with: column names, inferred types (where both extracts carry a
//! profile), a workbook's sheets and a PDF's or Word document's tables. A pure comparison of two
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
    document: Option<DocumentShape>,
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

/// A PDF's or a Word document's tables.
#[derive(Deserialize, Default)]
#[serde(default)]
struct DocumentShape {
    tables: Vec<TableShape>,
}

/// One table of a document.
#[derive(Deserialize, Default)]
#[serde(default)]
struct TableShape {
    columns: Vec<String>,
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

/// Where in a file a difference is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// The file as a whole (its kind).
    File,
    /// The file's own table (a delimited file's, or a workbook's first sheet's).
    Table,
    /// A workbook's sheet, by its name in the approved file.
    Sheet(String),
    /// A document's table, by its 0-based index.
    DocumentTable(usize),
}

/// One difference, with where it is: for [`crate::reads`] to tell what the
/// script reads from what it does not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The table (or the file) it is in.
    pub place: Place,
    /// The approved column it is about; `None` for the table as a whole
    /// (missing or new) or a column that is new.
    pub column: Option<String>,
    /// Whether it takes away what the approved file had (a missing sheet,
    /// table or column, another type, another kind of file); a new sheet,
    /// table or column does not.
    pub breaks: bool,
    /// The sentence, without the `input NAME: ` prefix.
    pub text: String,
}

/// Every way `new` differs from `approved`, one sentence each, prefixed
/// with `input NAME: `; empty when the shapes agree. A renamed column (one
/// missing where one is new, at the same place) is one sentence. Column
/// order, row counts and values are not compared here (a script's
/// positional reads are checked by [`crate::reads`]); other values are the
/// point of a new run.
pub fn differences(input: &str, approved: &Value, new: &Value) -> Vec<String> {
    located(approved, new)
        .into_iter()
        .map(|d| format!("input {input}: {}", d.text))
        .collect()
}

/// [`differences`] with where each is.
pub fn located(approved: &Value, new: &Value) -> Vec<Located> {
    let approved: Shape = serde_json::from_value(approved.clone()).unwrap_or_default();
    let new: Shape = serde_json::from_value(new.clone()).unwrap_or_default();
    let mut out = Vec::new();
    if let (Some(a), Some(n)) = (&approved.kind, &new.kind)
        && a != n
    {
        out.push(Located {
            place: Place::File,
            column: None,
            breaks: true,
            text: format!(
                "the approved file was {} and this one is {}",
                kind_name(a),
                kind_name(n)
            ),
        });
    }
    match (&approved.sheets, &new.sheets) {
        (Some(a_sheets), Some(n_sheets)) => {
            for a in a_sheets {
                let place = Place::Sheet(a.name.clone());
                match n_sheets.iter().find(|n| n.name == a.name) {
                    Some(n) => {
                        let prefix = format!("sheet {:?}: ", shown(&a.name));
                        out.extend(
                            columns(
                                &a.columns,
                                &n.columns,
                                a.profile.as_ref(),
                                n.profile.as_ref(),
                            )
                            .into_iter()
                            .map(|(column, breaks, d)| Located {
                                place: place.clone(),
                                column,
                                breaks,
                                text: format!("{prefix}{d}"),
                            }),
                        );
                    }
                    None => out.push(Located {
                        place,
                        column: None,
                        breaks: true,
                        text: format!(
                            "sheet {:?} is missing (the approved file had it)",
                            shown(&a.name)
                        ),
                    }),
                }
            }
            for n in n_sheets {
                if !a_sheets.iter().any(|a| a.name == n.name) {
                    out.push(Located {
                        place: Place::Sheet(n.name.clone()),
                        column: None,
                        breaks: false,
                        text: format!("sheet {:?} is new", shown(&n.name)),
                    });
                }
            }
        }
        _ => out.extend(
            columns(
                &approved.columns,
                &new.columns,
                approved.profile.as_ref(),
                new.profile.as_ref(),
            )
            .into_iter()
            .map(|(column, breaks, text)| Located {
                place: Place::Table,
                column,
                breaks,
                text,
            }),
        ),
    }
    if let (Some(a), Some(n)) = (&approved.document, &new.document) {
        for (i, at) in a.tables.iter().enumerate() {
            let place = Place::DocumentTable(i);
            match n.tables.get(i) {
                Some(nt) => out.extend(
                    columns(&at.columns, &nt.columns, None, None)
                        .into_iter()
                        .map(|(column, breaks, d)| Located {
                            place: place.clone(),
                            column,
                            breaks,
                            text: format!("table {}: {d}", i + 1),
                        }),
                ),
                None => out.push(Located {
                    place,
                    column: None,
                    breaks: true,
                    text: format!("table {} is missing (the approved file had it)", i + 1),
                }),
            }
        }
        for i in a.tables.len()..n.tables.len() {
            out.push(Located {
                place: Place::DocumentTable(i),
                column: None,
                breaks: false,
                text: format!("table {} is new", i + 1),
            });
        }
    }
    out
}

/// A name as a line shows it: masked like a sample value when it looks
/// like a value (a person, a date, an ID…), as it is otherwise.
pub fn shown(name: &str) -> String {
    if maskflow_privacy::names::classify(name).is_some() {
        maskflow_extractors::mask(name)
    } else {
        name.to_owned()
    }
}

/// What people call a file kind (`excel` → "a workbook").
fn kind_name(kind: &str) -> String {
    match kind {
        "excel" => "a workbook".into(),
        "csv" => "a delimited text file".into(),
        other => format!("a {other} file"),
    }
}

/// The column differences of one table: (the approved column it is about,
/// whether it breaks, the sentence).
fn columns(
    approved: &[String],
    new: &[String],
    a_profile: Option<&ProfileShape>,
    n_profile: Option<&ProfileShape>,
) -> Vec<(Option<String>, bool, String)> {
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
        let text = match added.iter().position(|(j, _)| *j == i) {
            Some(k) => {
                let (_, n) = added.remove(k);
                format!(
                    "column {:?} is missing (the approved file had it); column {:?} is new",
                    shown(a),
                    shown(n)
                )
            }
            None => format!(
                "column {:?} is missing (the approved file had it)",
                shown(a)
            ),
        };
        out.push((Some(a.clone()), true, text));
    }
    out.extend(
        added
            .iter()
            .map(|(_, n)| (None, false, format!("column {:?} is new", shown(n)))),
    );
    if let (Some(a), Some(n)) = (a_profile, n_profile) {
        for ac in &a.columns {
            let Some(nc) = n.columns.iter().find(|c| c.name == ac.name) else {
                continue;
            };
            if !same_type(&ac.inferred_type, &nc.inferred_type) {
                out.push((
                    Some(ac.name.clone()),
                    true,
                    format!(
                        "column {:?} was {}, now {}",
                        shown(&ac.name),
                        ac.inferred_type,
                        nc.inferred_type
                    ),
                ));
            }
        }
    }
    out
}

/// Whether two inferred types are the same for a script: an empty column
/// (or an unknown type) says nothing, whole numbers read as decimals, and a
/// column of text (or mixed) now read as typed is the same strings to a
/// script that took them as text — so a newer Maskflow that reads more
/// formats (`14 Oct 2026`, `EUR 117.73`) stops no approved workflow. A
/// typed column turning to text is a change.
fn same_type(a: &str, b: &str) -> bool {
    let numeric = |t: &str| matches!(t, "integer" | "decimal");
    let untyped = |t: &str| matches!(t, "text" | "mixed");
    a == b
        || a.is_empty()
        || b.is_empty()
        || a == "empty"
        || b == "empty"
        || numeric(a) && numeric(b)
        || untyped(a) && !untyped(b)
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
        // Read as typed now (a format Maskflow learnt): the same strings.
        assert!(differences("s", &with("text"), &with("date")).is_empty());
        assert!(differences("s", &with("mixed"), &with("decimal")).is_empty());
        assert_eq!(
            differences("s", &with("decimal"), &with("mixed")),
            vec!["input s: column \"when\" was decimal, now mixed"]
        );
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
