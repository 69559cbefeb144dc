//! The raw values of a workbook: every cell of every worksheet, as stored
//! and as Excel displays it (dates as ISO-8601 — [`render`] — and numbers
//! with thousands grouping and two decimals, `92,000.50`), with each
//! sheet's header decided like the extract decides it.

use std::io::{Read, Seek};

use calamine::{Data, Sheets};

use super::{data_ref, open_book, render, sheet_range, worksheet_names};
use crate::error::ExtractError;
use crate::extractor::Input;
use crate::values::{HEADER_VOTE_ROWS, ValueSink};

/// Visits every worksheet of the workbook `input`.
pub(super) fn visit(input: &Input<'_>, sink: &mut dyn ValueSink) -> Result<(), ExtractError> {
    sheets(input.display, open_book(input)?, sink)
}

fn sheets<R: Read + Seek>(
    file: &str,
    mut book: Sheets<R>,
    sink: &mut dyn ValueSink,
) -> Result<(), ExtractError> {
    for (at, name) in worksheet_names(&book).into_iter().enumerate() {
        let range = sheet_range(file, &mut book, at, &name)?;
        let mut rows = range.rows().map(|row| {
            let mut cells: Vec<String> = Vec::with_capacity(row.len() * 2);
            let texts: Vec<bool> = row.iter().map(|c| matches!(c, Data::String(_))).collect();
            for cell in row {
                cells.push(render(&data_ref(cell)));
            }
            // The displayed forms go after the stored ones, as extra columns.
            for cell in row {
                if let Some(shown) = displayed(cell) {
                    cells.push(shown);
                }
            }
            (cells, texts)
        });
        let head: Vec<(Vec<String>, Vec<bool>)> = rows.by_ref().take(HEADER_VOTE_ROWS).collect();
        // The header is decided on the stored values alone.
        let width = range.width();
        let voted: Vec<Vec<String>> = head
            .iter()
            .map(|(r, _)| r.iter().take(width).cloned().collect())
            .collect();
        let (above, has_header) = crate::table::header_at(&voted);
        let columns: Vec<String> = match voted.get(above) {
            Some(first) if has_header => first.iter().map(|c| c.trim().to_owned()).collect(),
            _ => Vec::new(),
        };
        sink.table(Some(&name), &columns);
        sink.table_width(width);
        // A title block's cells are text above the table, not its rows.
        for cell in voted[..above].iter().flatten().filter(|c| !c.is_empty()) {
            sink.text(cell);
        }
        let skip = above + usize::from(has_header);
        for (row, texts) in head.into_iter().skip(skip).chain(rows) {
            cells(sink, &row, &texts);
        }
    }
    Ok(())
}

fn cells(sink: &mut dyn ValueSink, row: &[String], texts: &[bool]) {
    for (i, c) in row.iter().enumerate() {
        if c.is_empty() {
        } else if texts.get(i) == Some(&true) {
            sink.text_cell(i, c);
        } else {
            sink.cell(i, c);
        }
    }
    sink.row_end();
}

/// How Excel shows a number with a thousands separator and two decimals
/// (`92000.5` → `92,000.50`); `None` for other cells and small integers.
fn displayed(cell: &Data) -> Option<String> {
    let f = match cell {
        Data::Float(f) => *f,
        Data::Int(i) => *i as f64,
        _ => return None,
    };
    if !f.is_finite() || (f.fract() == 0.0 && f.abs() < 1000.0) {
        return None;
    }
    Some(grouped(f))
}

/// `1234567.5` → `1,234,567.50`.
pub(crate) fn grouped(f: f64) -> String {
    let s = format!("{:.2}", f.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, "00"));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    let sign = if f < 0.0 { "-" } else { "" };
    format!("{sign}{out}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::CollectedValues;
    use crate::{Registry, ValueOptions};

    #[test]
    fn numbers_are_displayed_grouped() {
        assert_eq!(grouped(92000.5), "92,000.50");
        assert_eq!(grouped(-1234567.0), "-1,234,567.00");
        assert_eq!(grouped(999.0), "999.00");
    }

    #[test]
    fn every_sheet_is_visited_stored_and_displayed() {
        let dir = tempfile::tempdir().expect("tmp");
        // An xlsx named .csv: the content decides.
        let path = dir.path().join("book.csv");
        let mut wb = rust_xlsxwriter::Workbook::new();
        let date = rust_xlsxwriter::Format::new().set_num_format("dd/mm/yyyy");
        let s = wb.add_worksheet().set_name("Staff").expect("name");
        s.write(0, 0, "name").expect("w");
        s.write(0, 1, "salary").expect("w");
        s.write(0, 2, "hired").expect("w");
        s.write(1, 0, "Ada Lovelace").expect("w");
        s.write(1, 1, 92000.5).expect("w");
        let d = rust_xlsxwriter::ExcelDateTime::from_ymd(2021, 3, 14).expect("date");
        s.write_datetime_with_format(1, 2, &d, &date).expect("w");
        let s2 = wb.add_worksheet().set_name("Other").expect("name");
        s2.write(0, 0, "Grace Hopper").expect("w");
        s2.write(1, 0, "Alan Turing").expect("w");
        wb.save(&path).expect("save");
        let mut v = CollectedValues::default();
        Registry::with_defaults()
            .values(&path, &ValueOptions::default(), &mut v)
            .expect("values");
        assert_eq!(v.tables.len(), 2);
        assert_eq!(v.tables[0].sheet.as_deref(), Some("Staff"));
        assert_eq!(v.tables[0].columns, ["name", "salary", "hired"]);
        let cells = v.cell_values();
        for want in [
            "Ada Lovelace",
            "92000.5",
            "92,000.50",
            "2021-03-14",
            "Grace Hopper",
        ] {
            assert!(cells.contains(&want), "{want} missing from {cells:?}");
        }
        assert!(v.tables[1].columns.is_empty(), "{:?}", v.tables[1]);
    }
}
