//! The shape of what a tested script wrote (issue #28, point 8): each
//! output table's rows and columns, and per column its empty cells and
//! distinct values — counts only, no value. An empty table or a column
//! with no value at all is a problem the review treats like a failed run,
//! and the shapes go into the repair feedback.
//!
//! The outputs are the script's (so the LLM's) own files, written from the
//! user's data: their names, sheet names and column names are text the
//! script chose. So, as for the rest of the repair channel, nothing is
//! copied from them: an output is named only when its name is one the
//! builder declared, a column only when its name is a column of the
//! approved extracts or a string literal of `script.py`; otherwise they
//! are numbered. What the script still chooses is counted in
//! ARCHITECTURE.md's "Threat model: the repair channel".

use std::path::Path;

use maskflow_extractors::profile::{Profiler, TableProfile};
use maskflow_extractors::{Registry, ValueOptions, ValueSink};
use maskflow_runner::OutputFile;

/// Output tables described at most (in the outputs' order).
pub const MAX_TABLES: usize = 4;
/// Columns described at most per table (the rest are counted).
pub const MAX_COLUMNS: usize = 16;
/// Bytes of one output read at most.
const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Longest column name shown.
const MAX_NAME_CHARS: usize = 48;
/// Distinct string literals of the script a column may be labelled by
/// (≤ 10 bits a label, with the approved extracts' columns).
pub const MAX_LITERALS: usize = 1_000;

/// One output table, profiled.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputTable {
    /// The output file's name under `outputs/`.
    pub file: String,
    /// 0-based index of the sheet, in a workbook with several.
    pub sheet: Option<usize>,
    /// Its profile (read with the first row as the header).
    pub profile: TableProfile,
}

/// Profiles every table output (delimited text, workbooks) in `dir`, the
/// copied `outputs/` folder of a test run; other files are skipped.
pub fn read(dir: &Path, outputs: &[OutputFile]) -> Vec<OutputTable> {
    let registry = Registry::with_defaults();
    let options = ValueOptions {
        max_bytes: MAX_OUTPUT_BYTES,
    };
    let mut out = Vec::new();
    for o in outputs {
        let lower = o.name.to_ascii_lowercase();
        let table = [".csv", ".tsv", ".xlsx", ".xlsm", ".xls", ".ods"]
            .iter()
            .any(|e| lower.ends_with(e));
        if !table {
            continue;
        }
        let mut profiler = Profiler::header_first();
        // An output the extractors cannot read is left to the user's eyes.
        if registry
            .values(
                &dir.join(&o.name),
                &options,
                &mut profiler as &mut dyn ValueSink,
            )
            .is_err()
        {
            continue;
        }
        let tables = profiler.finish();
        let several = tables.len() > 1;
        for (i, t) in tables.into_iter().enumerate() {
            out.push(OutputTable {
                file: o.name.clone(),
                sheet: several.then_some(i),
                profile: t.profile,
            });
        }
    }
    out
}

/// What the feedback may name: the builder's declared outputs, the
/// extracts' columns and the script's string literals.
#[derive(Debug)]
pub struct Names<'a> {
    /// Output names the workflow declared (`execution.outputs[].name`).
    pub declared: &'a [String],
    /// The approved extracts' column names.
    pub columns: &'a [String],
    /// The script's source.
    pub script: &'a str,
}

impl Names<'_> {
    /// Whether `name` is one of the script's first [`MAX_LITERALS`]
    /// distinct one-line string literals (in the order they appear): a
    /// script holding thousands of literals still chooses a column's label
    /// among at most that many (issue #38 finding 10).
    fn among_literals(&self, name: &str) -> bool {
        let mut seen: Vec<&str> = Vec::new();
        for line in self.script.lines() {
            let mut rest = line;
            while let Some(open) = rest.find(['\'', '"']) {
                let quote = &rest[open..=open];
                let after = &rest[open + 1..];
                let Some(close) = after.find(quote) else {
                    break;
                };
                let literal = &after[..close];
                if !seen.contains(&literal) {
                    if literal == name {
                        return true;
                    }
                    seen.push(literal);
                    if seen.len() == MAX_LITERALS {
                        return false;
                    }
                }
                rest = &after[close + 1..];
            }
        }
        false
    }

    fn output(&self, file: &str, index: usize) -> String {
        let base = file.rsplit('/').next().unwrap_or(file);
        if self.declared.iter().any(|d| d == file || d == base) {
            format!("\"{base}\"")
        } else {
            format!("output file {}", index + 1)
        }
    }

    fn column(&self, name: &str, index: usize) -> String {
        let known = !name.is_empty()
            && name.chars().count() <= MAX_NAME_CHARS
            && !name.contains(['\n', '\r', '`'])
            && (self.columns.iter().any(|c| c == name) || self.among_literals(name));
        if known {
            format!("\"{name}\"")
        } else {
            format!("column {}", index + 1)
        }
    }
}

/// The outputs' shapes in words, and the problems found (an empty table,
/// a column with no value); `None` when no output is a table.
pub fn review(tables: &[OutputTable], names: &Names<'_>) -> Option<(String, Vec<String>)> {
    if tables.is_empty() {
        return None;
    }
    let mut files: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    for t in tables.iter().take(MAX_TABLES) {
        if !files.contains(&t.file.as_str()) {
            files.push(&t.file);
        }
        let index = files.len() - 1;
        let mut what = names.output(&t.file, index);
        if let Some(s) = t.sheet {
            what.push_str(&format!(" sheet {}", s + 1));
        }
        let p = &t.profile;
        let rows = p.rows_profiled;
        lines.push(format!(
            "- {what}: {rows} rows, {} columns",
            p.columns.len()
        ));
        if rows == 0 {
            // A delimited file of a header alone is what pandas writes for
            // an empty frame; a workbook's one row may be a summary line.
            let lower = t.file.to_ascii_lowercase();
            if lower.ends_with(".csv") || lower.ends_with(".tsv") {
                problems.push(format!("{what} has no rows"));
            }
            continue;
        }
        for (i, c) in p.columns.iter().enumerate() {
            let label = names.column(&c.name, i);
            let empty = c.nulls + c.placeholders >= rows;
            if empty {
                problems.push(format!("{what}: {label} has no value in any row"));
            }
            if i < MAX_COLUMNS {
                lines.push(format!(
                    "  - {label}: {} empty, {}{} distinct",
                    c.nulls + c.placeholders,
                    c.distinct,
                    if c.distinct_capped { "+" } else { "" }
                ));
            }
        }
        if p.columns.len() > MAX_COLUMNS {
            lines.push(format!(
                "  - {} more columns",
                p.columns.len() - MAX_COLUMNS
            ));
        }
    }
    if tables.len() > MAX_TABLES {
        lines.push(format!(
            "- {} more output tables",
            tables.len() - MAX_TABLES
        ));
    }
    let text = format!(
        "What the script wrote (counts only, no values):\n{}",
        lines.join("\n")
    );
    Some((text, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)], names: &Names<'_>) -> Option<(String, Vec<String>)> {
        let dir = tempfile::tempdir().expect("tmp");
        let mut outputs = Vec::new();
        for (name, body) in files {
            std::fs::write(dir.path().join(name), body).expect("write");
            outputs.push(OutputFile {
                name: (*name).into(),
                size: body.len() as u64,
                row_count: None,
                preview_rows: None,
            });
        }
        review(&read(dir.path(), &outputs), names)
    }

    const SCRIPT: &str = "df[df['island'] == 'Biscoe'].to_csv('outputs/penguins.csv')";

    #[test]
    fn an_empty_table_and_an_all_null_column_are_problems() {
        let columns = ["island".to_owned(), "bill_mm".to_owned()];
        let declared = ["penguins.csv".to_owned()];
        let names = Names {
            declared: &declared,
            columns: &columns,
            script: SCRIPT,
        };
        let (text, problems) = run(&[("penguins.csv", "island,bill_mm\n")], &names).expect("table");
        assert!(
            text.contains("\"penguins.csv\": 0 rows, 2 columns"),
            "{text}"
        );
        assert_eq!(problems, ["\"penguins.csv\" has no rows"]);

        let body = "island,bill_mm,Zebulon Okonkwo\nDream,,x\nTorgersen,,y\n";
        let (text, problems) = run(&[("other.csv", body)], &names).expect("table");
        assert!(text.contains("output file 1: 2 rows, 3 columns"), "{text}");
        assert!(text.contains("\"island\": 0 empty, 2 distinct"), "{text}");
        assert_eq!(
            problems,
            ["output file 1: \"bill_mm\" has no value in any row"]
        );
        // No value, and no column name the script made up, is named.
        for raw in ["Dream", "Torgersen", "Zebulon", "Okonkwo", "other.csv"] {
            assert!(!text.contains(raw), "{raw} in {text}");
        }
        assert!(text.contains("column 3: 0 empty, 2 distinct"), "{text}");
    }

    #[test]
    fn a_good_output_has_no_problem_and_other_files_are_skipped() {
        let names = Names {
            declared: &[],
            columns: &[],
            script: "",
        };
        let (text, problems) = run(
            &[("a.csv", "k,v\n1,2\n3,4\n"), ("chart.png", "png")],
            &names,
        )
        .expect("table");
        assert!(problems.is_empty(), "{problems:?}");
        assert!(text.contains("output file 1: 2 rows, 2 columns"), "{text}");
        assert!(run(&[("note.md", "hello")], &names).is_none());
    }

    /// Issue #38 finding 10: a script that holds thousands of string
    /// literals still labels a column only by one of its first
    /// [`MAX_LITERALS`] — a label chooses among at most that many.
    #[test]
    fn a_column_is_labelled_only_by_one_of_the_scripts_first_literals() {
        let many: String = (0..5_000).map(|i| format!("x = 'c{i}'\n")).collect();
        let names = Names {
            declared: &[],
            columns: &[],
            script: &many,
        };
        let (text, _) = run(&[("a.csv", "c5,c999,c1000,c4999\n1,2,3,4\n")], &names).expect("table");
        assert!(text.contains("\"c5\""), "{text}");
        assert!(text.contains("\"c999\""), "the 1,000th literal: {text}");
        assert!(
            !text.contains("c1000"),
            "the 1,001st is past the bound: {text}"
        );
        assert!(!text.contains("c4999"), "{text}");
        assert!(text.contains("column 4"), "{text}");
    }
}
