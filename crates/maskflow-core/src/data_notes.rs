//! The user's notes on their data (#40 point 7): what they know that no
//! extract shows ("amounts are in thousands", "region codes follow the 2019
//! map"), one per file, sheet or column, written at approval. A note is
//! kept in the approved extract beside its table (`notes`), so it stays
//! with the workflow across edits, repairs and re-runs, and the prompts
//! send it as the user's words, apart from the masked extract. Pure
//! functions over an extract's JSON.

use serde_json::{Map, Value, json};

/// The longest note: a few sentences, the size of a chat message.
pub const MAX_NOTE_CHARS: usize = 2_000;

/// The most notes one file takes.
pub const MAX_NOTES_PER_FILE: usize = 200;

/// Where a note sits in its file, and what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note<'a> {
    /// The workbook sheet (none for a single table or the whole workbook).
    pub sheet: Option<&'a str>,
    /// The column, by its name as sent (none for the file or sheet).
    pub column: Option<&'a str>,
    /// The user's words.
    pub text: &'a str,
}

/// One note as the prompt shows it: where (file, sheet and column as sent)
/// and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteLine {
    /// Where it sits: `sales.csv`, `sales.csv, column "amount"`.
    pub place: String,
    /// The user's words.
    pub text: String,
}

/// Adds `notes` to `sent` (one file's extract as sent), each beside its
/// table. A note on a sheet or column the extract does not have, an empty
/// one or one too long is an error naming it and what to write instead,
/// and then none is added.
pub fn attach(sent: &mut Value, notes: &[Note<'_>]) -> Result<(), String> {
    let mut out = sent.clone();
    add(&mut out, notes)?;
    *sent = out;
    Ok(())
}

fn add(sent: &mut Value, notes: &[Note<'_>]) -> Result<(), String> {
    if notes.len() > MAX_NOTES_PER_FILE {
        return Err(format!(
            "notes: {} notes on one file; at most {MAX_NOTES_PER_FILE}",
            notes.len()
        ));
    }
    for n in notes {
        let text = n.text.trim();
        if text.is_empty() {
            return Err(
                "notes: a note is empty; write what the AI should know, or leave it out".into(),
            );
        }
        if text.chars().count() > MAX_NOTE_CHARS {
            return Err(format!(
                "notes: a note of {} characters; at most {MAX_NOTE_CHARS} (a few sentences)",
                text.chars().count()
            ));
        }
        let target = match n.sheet {
            None => Some(&mut *sent),
            Some(name) => sent
                .get_mut("sheets")
                .and_then(Value::as_array_mut)
                .and_then(|sheets| sheets.iter_mut().find(|s| s["name"] == name)),
        };
        let Some(Value::Object(table)) = target else {
            return Err(format!(
                "notes: the file has no sheet {:?}",
                n.sheet.unwrap_or_default()
            ));
        };
        let mut entry = Map::new();
        if let Some(column) = n.column {
            let found = table
                .get("columns")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|c| c == column));
            if !found {
                let on = n
                    .sheet
                    .map(|s| format!(" on sheet {s:?}"))
                    .unwrap_or_default();
                return Err(format!(
                    "notes: no column {column:?}{on}; name a column as the approval view shows it"
                ));
            }
            entry.insert("column".into(), json!(column));
        }
        entry.insert("note".into(), json!(text));
        if let Value::Array(list) = table
            .entry("notes")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            list.push(Value::Object(entry));
        }
    }
    Ok(())
}

/// Removes every note from `extracts` (the files as sent) and returns
/// them in order, each with its place, for the prompt to send apart.
pub fn take(extracts: &mut Value) -> Vec<NoteLine> {
    let mut lines = Vec::new();
    for file in extracts.as_array_mut().into_iter().flatten() {
        let name = file["filename"].as_str().unwrap_or("a file").to_owned();
        take_table(file, &name, &mut lines);
        for sheet in file
            .get_mut("sheets")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let place = format!("{name}, sheet {}", sheet["name"]);
            take_table(sheet, &place, &mut lines);
        }
    }
    lines
}

fn take_table(table: &mut Value, place: &str, lines: &mut Vec<NoteLine>) {
    let Some(Value::Array(notes)) = table.as_object_mut().and_then(|t| t.remove("notes")) else {
        return;
    };
    for n in notes {
        let Some(text) = n["note"].as_str() else {
            continue;
        };
        let place = match n["column"].as_str() {
            Some(c) => format!("{place}, column {}", json!(c)),
            None => place.to_owned(),
        };
        lines.push(NoteLine {
            place,
            text: text.to_owned(),
        });
    }
}

/// A note written on the command line, placed on one of the files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The file's index in the files given.
    pub file: usize,
    /// The sheet, by its name as sent.
    pub sheet: Option<String>,
    /// The column, by its name as sent.
    pub column: Option<String>,
    /// The user's words.
    pub text: String,
}

/// How a note is written on the command line, for errors and `--help`.
pub const NOTE_FORMS: &str =
    "TEXT (the only file), FILE=TEXT, COLUMN=TEXT, FILE:COLUMN=TEXT or FILE:SHEET:COLUMN=TEXT";

/// Places `spec` (`maskflow build --note`) on one of `files` (each its
/// name as given and its extract as sent): before the first `=`, a file,
/// a column of exactly one table, or both; what names nothing there is
/// part of the text, on the only file.
pub fn place(spec: &str, files: &[(&str, &Value)]) -> Result<Placed, String> {
    if let Some((target, text)) = spec.split_once('=')
        && let Some(placed) = target_of(target.trim(), files)?
    {
        return Ok(Placed {
            text: text.trim().to_owned(),
            ..placed
        });
    }
    match files {
        [_] => Ok(Placed {
            file: 0,
            sheet: None,
            column: None,
            text: spec.trim().to_owned(),
        }),
        _ => Err(format!(
            "--note {spec:?}: name the file or column it is about ({NOTE_FORMS})"
        )),
    }
}

fn file_named(name: &str, files: &[(&str, &Value)]) -> Option<usize> {
    files.iter().position(|(given, sent)| {
        let base = std::path::Path::new(given)
            .file_name()
            .and_then(|b| b.to_str());
        *given == name || base == Some(name) || sent["filename"] == name
    })
}

/// The tables of `sent` holding `column`: their sheets (none for the file).
fn tables_with(sent: &Value, column: &str) -> Vec<Option<String>> {
    let has = |t: &Value| {
        t["columns"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c == column))
    };
    let mut out = Vec::new();
    if has(sent) {
        out.push(None);
    }
    for sheet in sent["sheets"].as_array().into_iter().flatten() {
        if has(sheet) {
            out.push(sheet["name"].as_str().map(str::to_owned));
        }
    }
    out
}

fn target_of(target: &str, files: &[(&str, &Value)]) -> Result<Option<Placed>, String> {
    let at = |file: usize, sheet: Option<String>, column: Option<String>| Placed {
        file,
        sheet,
        column,
        text: String::new(),
    };
    if let Some(i) = file_named(target, files) {
        return Ok(Some(at(i, None, None)));
    }
    let parts: Vec<&str> = target.split(':').map(str::trim).collect();
    let (file, sheet, column) = match parts.as_slice() {
        [column] => (None, None, *column),
        [file, column] => (Some(*file), None, *column),
        [file, sheet, column] => (Some(*file), Some(*sheet), *column),
        _ => return Ok(None),
    };
    let Some(file) = file else {
        // A column of exactly one table of all the files.
        let found: Vec<(usize, Option<String>)> = files
            .iter()
            .enumerate()
            .flat_map(|(i, (_, sent))| tables_with(sent, column).into_iter().map(move |t| (i, t)))
            .collect();
        return match found.as_slice() {
            [] => Ok(None),
            [(i, sheet)] => Ok(Some(at(*i, sheet.clone(), Some(column.to_owned())))),
            _ => Err(format!(
                "--note: column {column:?} is in {} tables; write FILE:COLUMN=TEXT or FILE:SHEET:COLUMN=TEXT",
                found.len()
            )),
        };
    };
    let Some(i) = file_named(file, files) else {
        return Ok(None);
    };
    let tables = tables_with(files[i].1, column);
    let table = match sheet {
        Some(sheet) => tables.into_iter().find(|t| t.as_deref() == Some(sheet)),
        None if tables.len() > 1 => {
            return Err(format!(
                "--note: column {column:?} is on {} sheets of {file}; write FILE:SHEET:COLUMN=TEXT",
                tables.len()
            ));
        }
        None => tables.into_iter().next(),
    };
    match table {
        Some(t) => Ok(Some(at(i, t, Some(column.to_owned())))),
        None => Err(format!(
            "--note: {file} has no column {column:?}{}; the masked extract above shows its columns as they are sent",
            sheet
                .map(|s| format!(" on sheet {s:?}"))
                .unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> Value {
        json!({"filename": "book.xlsx", "columns": [], "sheets": [
            {"name": "Q1", "columns": ["region", "amount"]},
            {"name": "Q2", "columns": ["region", "amount"]}
        ]})
    }

    fn note<'a>(sheet: Option<&'a str>, column: Option<&'a str>, text: &'a str) -> Note<'a> {
        Note {
            sheet,
            column,
            text,
        }
    }

    #[test]
    fn notes_sit_beside_their_table_and_come_back_with_their_place() {
        let mut sent = book();
        attach(
            &mut sent,
            &[
                note(None, None, " Figures are provisional. "),
                note(Some("Q2"), Some("amount"), "in thousands of euros"),
            ],
        )
        .expect("attached");
        assert_eq!(sent["notes"], json!([{"note": "Figures are provisional."}]));
        assert_eq!(
            sent["sheets"][1]["notes"],
            json!([{"column": "amount", "note": "in thousands of euros"}])
        );
        let mut files = json!([sent]);
        let lines = take(&mut files);
        assert_eq!(
            lines,
            [
                NoteLine {
                    place: "book.xlsx".into(),
                    text: "Figures are provisional.".into()
                },
                NoteLine {
                    place: "book.xlsx, sheet \"Q2\", column \"amount\"".into(),
                    text: "in thousands of euros".into()
                },
            ]
        );
        assert!(!files.to_string().contains("notes"), "{files}");
    }

    #[test]
    fn a_command_line_note_names_its_file_or_column_before_an_equals_sign() {
        let sales = json!({"filename": "sales.csv", "columns": ["date", "region", "amount"]});
        let plan = json!({"filename": "plan.csv", "columns": ["region", "target"]});
        let one = [("data/sales.csv", &sales)];
        let two = [("data/sales.csv", &sales), ("plan.csv", &plan)];
        let placed = |spec: &str, files: &[(&str, &Value)]| {
            place(spec, files).map(|p| (p.file, p.sheet, p.column, p.text))
        };
        let text = |t: &str| t.to_owned();
        assert_eq!(
            placed("amounts are in thousands", &one),
            Ok((0, None, None, text("amounts are in thousands")))
        );
        // What names nothing before `=` is part of the text.
        assert_eq!(
            placed("rate = price / qty", &one),
            Ok((0, None, None, text("rate = price / qty")))
        );
        assert_eq!(
            placed("amount=in thousands", &two),
            Ok((0, None, Some(text("amount")), text("in thousands")))
        );
        assert_eq!(
            placed("plan.csv = targets for 2025", &two),
            Ok((1, None, None, text("targets for 2025")))
        );
        assert_eq!(
            placed("sales.csv:region = the 2019 map's codes", &two),
            Ok((0, None, Some(text("region")), text("the 2019 map's codes")))
        );
        let e = placed("region=codes", &two).expect_err("in both files");
        assert!(
            e.contains("in 2 tables") && e.contains("FILE:COLUMN=TEXT"),
            "{e}"
        );
        let e = placed("plan.csv:amount=x", &two).expect_err("no such column");
        assert!(e.contains("plan.csv has no column \"amount\""), "{e}");
        let e = placed("the figures are provisional", &two).expect_err("which file");
        assert!(e.contains("name the file or column"), "{e}");
        let book = json!({"filename": "book.xlsx", "columns": [], "sheets": [
            {"name": "Q1", "columns": ["amount"]}, {"name": "Q2", "columns": ["amount"]}
        ]});
        let wb = [("book.xlsx", &book)];
        assert_eq!(
            placed("book.xlsx:Q2:amount=in euros", &wb),
            Ok((0, Some(text("Q2")), Some(text("amount")), text("in euros")))
        );
        let e = placed("book.xlsx:amount=in euros", &wb).expect_err("two sheets");
        assert!(e.contains("on 2 sheets"), "{e}");
    }

    #[test]
    fn a_note_on_what_the_file_does_not_have_is_an_error_naming_it() {
        let mut sent = book();
        let e = attach(&mut sent, &[note(Some("Q3"), None, "x")]).expect_err("no sheet");
        assert!(e.contains("no sheet \"Q3\""), "{e}");
        let e = attach(&mut sent, &[note(Some("Q1"), Some("total"), "x")]).expect_err("no column");
        assert!(e.contains("no column \"total\" on sheet \"Q1\""), "{e}");
        let e = attach(&mut sent, &[note(None, None, "  ")]).expect_err("empty");
        assert!(e.contains("empty"), "{e}");
        let long = "a".repeat(MAX_NOTE_CHARS + 1);
        let e = attach(&mut sent, &[note(None, None, &long)]).expect_err("long");
        assert!(e.contains("at most 2000"), "{e}");
        let e = attach(
            &mut sent,
            &[note(None, None, "fine"), note(Some("Q9"), None, "x")],
        )
        .expect_err("one refused");
        assert!(e.contains("Q9"), "{e}");
        assert_eq!(sent, book(), "a refused call attaches none of its notes");
    }
}
