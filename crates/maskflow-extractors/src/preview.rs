//! Previews of the files a script wrote, for the person who ran it: images
//! inline, CSV and spreadsheets as tables (every sheet, the first rows,
//! the row count), text and JSON as text. Pure reading of one local file;
//! a preview holds real data and is shown locally, never sent to an LLM.
//!
//! Tables are read by the extractors' own readers ([`crate::csv`],
//! [`crate::excel`]): the same dialect sniffing, encodings, zip-bomb guard
//! and panic containment as an extract, so a file reads the same way in its
//! extract and in its preview. Unlike an extract, nothing here is masked:
//! the person is looking at their own outputs.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::error::ExtractError;
use crate::extractor::Input;
use crate::registry::contained;
use crate::{csv, excel, sniff};

/// Rows of a table kept for the preview (the header counts as one).
pub const TABLE_ROWS: usize = 200;
/// Largest image shown inline, in bytes.
pub const IMAGE_BYTES: u64 = 8 << 20;
/// Longest text shown, in bytes.
pub const TEXT_BYTES: usize = 256 << 10;

/// What an output looks like to a person.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OutputPreview {
    /// An image, as a `data:` URL.
    Image {
        /// `data:image/png;base64,…`
        data_url: String,
    },
    /// A table (CSV) or a workbook: each sheet with its first rows.
    Table {
        /// Every sheet (one for CSV).
        sheets: Vec<SheetPreview>,
    },
    /// Text or JSON.
    Text {
        /// The text (cut at [`TEXT_BYTES`]).
        text: String,
        /// Whether it was cut.
        truncated: bool,
    },
    /// Nothing to show: download it.
    None {
        /// Why, in words (a binary file, too large to show, unreadable).
        reason: String,
    },
}

/// One sheet of a table preview.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SheetPreview {
    /// The sheet's name (the file's for CSV).
    pub name: String,
    /// Its rows, header included (all of them, not only the shown ones).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub row_count: u64,
    /// The first [`TABLE_ROWS`] rows.
    pub rows: Vec<Vec<String>>,
}

fn extension(name: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The preview of the file at `path`, whose output name is `name`.
pub fn preview(path: &Path, name: &str) -> OutputPreview {
    let ext = extension(name);
    let none = |reason: String| OutputPreview::None { reason };
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    match ext.as_str() {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "svg" => {
            if size > IMAGE_BYTES {
                return none(format!("the image is larger than {} MB", IMAGE_BYTES >> 20));
            }
            let mime = match ext.as_str() {
                "svg" => "image/svg+xml",
                "jpg" => "image/jpeg",
                e => return image(path, &format!("image/{e}")),
            };
            image(path, mime)
        }
        "csv" | "tsv" => match table(path, name, size, csv_sheet) {
            Ok(sheet) => OutputPreview::Table {
                sheets: vec![sheet],
            },
            Err(e) => none(format!(
                "{name} could not be read as a table: {}",
                e.reason()
            )),
        },
        "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => match table(path, name, size, workbook) {
            Ok(sheets) => OutputPreview::Table { sheets },
            Err(e) => none(format!(
                "{name} could not be read as a workbook: {}",
                e.reason()
            )),
        },
        _ => text(path).unwrap_or_else(|| none("a binary file: download it to open it".into())),
    }
}

fn image(path: &Path, mime: &str) -> OutputPreview {
    match std::fs::read(path) {
        Ok(bytes) => OutputPreview::Image {
            data_url: format!("data:{mime};base64,{}", base64(&bytes)),
        },
        Err(e) => OutputPreview::None {
            reason: format!("the image could not be read: {e}"),
        },
    }
}

/// Reads the table `name` at `path` with `read`, as the registry hands a file
/// to an extractor: its type sniffed from its content, a parser's panic
/// contained as a damaged file.
fn table<T>(
    path: &Path,
    name: &str,
    size: u64,
    read: fn(&Input<'_>) -> Result<T, ExtractError>,
) -> Result<T, ExtractError> {
    let mime = sniff::sniff_file(path).map_err(|e| ExtractError::io(name, e))?;
    let filename = name.rsplit('/').next().unwrap_or(name);
    let input = Input {
        path,
        display: name,
        filename,
        mime,
        size,
    };
    contained(name, || read(&input))
}

/// A delimited file in the dialect its extract is read with: the first
/// [`TABLE_ROWS`] records and the number of records (blank lines skipped).
fn csv_sheet(input: &Input<'_>) -> Result<SheetPreview, ExtractError> {
    // A `.tsv` prefers tabs whatever its content was sniffed as.
    let tsv = Input {
        mime: if extension(input.display) == "tsv" {
            sniff::TSV
        } else {
            input.mime
        },
        ..*input
    };
    let (mut reader, detected, delimiter) = csv::open_records(&tsv, u64::MAX)?;
    let mut rows = Vec::new();
    let mut record = ::csv::ByteRecord::new();
    while rows.len() < TABLE_ROWS
        && reader
            .read_byte_record(&mut record)
            .map_err(|e| csv_error(input.display, e))?
    {
        rows.push(
            record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect(),
        );
    }
    let row_count = csv::count::count_records(
        || csv::open_decoded(input.path, detected, u64::MAX),
        delimiter,
        &mut |_| {},
    )
    .map_err(|e| ExtractError::io(input.display, e))?;
    Ok(SheetPreview {
        name: input.filename.to_owned(),
        row_count,
        rows,
    })
}

fn csv_error(file: &str, e: ::csv::Error) -> ExtractError {
    // Byte records of a flexible reader fail only on I/O; anything else is
    // still said in words.
    let reason = format!("the table could not be parsed: {e}");
    match e.into_kind() {
        ::csv::ErrorKind::Io(e) => ExtractError::io(file, e),
        _ => ExtractError::damaged(file, reason),
    }
}

/// Every worksheet of a workbook: its first [`TABLE_ROWS`] rows from its
/// first non-empty cell, cells rendered as in the extract, and its row count.
fn workbook(input: &Input<'_>) -> Result<Vec<SheetPreview>, ExtractError> {
    let mut book = excel::open_book(input)?;
    let mut sheets = Vec::new();
    for (at, name) in excel::worksheet_names(&book).into_iter().enumerate() {
        let range = excel::sheet_range(input.display, &mut book, at, &name)?;
        let rows: Vec<Vec<String>> = range
            .rows()
            .take(TABLE_ROWS)
            .map(|r| {
                r.iter()
                    .map(|d| excel::render(&excel::data_ref(d)))
                    .collect()
            })
            .collect();
        sheets.push(SheetPreview {
            name,
            row_count: range.height() as u64,
            rows,
        });
    }
    Ok(sheets)
}

/// The file as text when it is text (UTF-8 without NUL bytes).
fn text(path: &Path) -> Option<OutputPreview> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(TEXT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let truncated = bytes.len() > TEXT_BYTES;
    bytes.truncate(TEXT_BYTES);
    if bytes.contains(&0) {
        return None;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // Cut inside a character at the limit: keep the whole ones.
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut b = e.into_bytes();
            b.truncate(valid);
            String::from_utf8(b).ok()?
        }
        Err(_) => return None,
    };
    Some(OutputPreview::Text { text, truncated })
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn every_sheet_of_a_workbook_is_a_table_with_its_row_count() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("out.xlsx");
        let mut book = rust_xlsxwriter::Workbook::new();
        let a = book.add_worksheet();
        a.set_name("Totals").expect("name");
        a.write_string(0, 0, "Region").expect("w");
        a.write_string(0, 1, "Revenue").expect("w");
        for i in 1..=300u32 {
            a.write_string(i, 0, format!("R{i}")).expect("w");
            a.write_number(i, 1, f64::from(i) * 1.5).expect("w");
        }
        let b = book.add_worksheet();
        b.set_name("Notes").expect("name");
        b.write_string(0, 0, "ok").expect("w");
        book.save(&path).expect("save");
        let OutputPreview::Table { sheets } = preview(&path, "out.xlsx") else {
            panic!("a table");
        };
        assert_eq!(sheets.len(), 2);
        assert_eq!(sheets[0].name, "Totals");
        assert_eq!(sheets[0].row_count, 301);
        assert_eq!(sheets[0].rows.len(), TABLE_ROWS);
        assert_eq!(sheets[0].rows[0], vec!["Region", "Revenue"]);
        assert_eq!(sheets[0].rows[2], vec!["R2", "3"]);
        assert_eq!(sheets[0].rows[1], vec!["R1", "1.5"]);
        assert_eq!(sheets[1].rows, vec![vec!["ok".to_owned()]]);
    }

    #[test]
    fn images_text_csv_and_binaries() {
        let dir = tempfile::tempdir().expect("dir");
        let png = dir.path().join("c.png");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n").expect("w");
        assert_eq!(
            preview(&png, "c.png"),
            OutputPreview::Image {
                data_url: "data:image/png;base64,iVBORw0KGgo=".into()
            }
        );
        let json = dir.path().join("r.json");
        std::fs::write(&json, "{\"a\": 1}").expect("w");
        assert_eq!(
            preview(&json, "r.json"),
            OutputPreview::Text {
                text: "{\"a\": 1}".into(),
                truncated: false
            }
        );
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "a,b\n1,2\n3,4\n").expect("w");
        let OutputPreview::Table { sheets } = preview(&csv, "sub/t.csv") else {
            panic!("a table");
        };
        assert_eq!((sheets[0].name.as_str(), sheets[0].row_count), ("t.csv", 3));
        let bin = dir.path().join("x.bin");
        std::fs::write(&bin, [0u8, 1, 2]).expect("w");
        assert!(matches!(preview(&bin, "x.bin"), OutputPreview::None { .. }));
        let bad = dir.path().join("bad.xlsx");
        std::fs::write(&bad, "not a workbook").expect("w");
        let OutputPreview::None { reason } = preview(&bad, "bad.xlsx") else {
            panic!("no table");
        };
        assert!(
            reason.contains("bad.xlsx could not be read as a workbook"),
            "{reason}"
        );
    }

    fn table_of(name: &str, bytes: &[u8]) -> SheetPreview {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("w");
        match preview(&path, name) {
            OutputPreview::Table { mut sheets } if sheets.len() == 1 => sheets.remove(0),
            other => panic!("one table, not {other:?}"),
        }
    }

    /// The old preview split a `.csv` on commas whatever it held, decoded
    /// it as UTF-8 only and kept a byte-order mark in the first cell; the
    /// extract sniffed the dialect, so the same file read two ways.
    #[test]
    fn a_csv_reads_in_the_dialect_of_its_extract() {
        let semicolons = table_of("eu.csv", b"name;amount\nJos\xe9;1,5\nAna;2,25\n");
        assert_eq!(semicolons.rows[0], ["name", "amount"]);
        assert_eq!(semicolons.rows[1], ["José", "1,5"]);
        assert_eq!(semicolons.row_count, 3);
        let bom = table_of("b.csv", "\u{feff}name,city\nJosé,Málaga\n".as_bytes());
        assert_eq!(bom.rows, [["name", "city"], ["José", "Málaga"]]);
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend("a\tb\n1\t2\n".encode_utf16().flat_map(u16::to_le_bytes));
        let tsv = table_of("w.tsv", &utf16);
        assert_eq!(tsv.rows, [["a", "b"], ["1", "2"]]);
        assert_eq!(tsv.row_count, 2);
    }

    #[test]
    fn a_long_csv_shows_its_first_rows_and_counts_every_record() {
        let mut text = String::from("n,\"note\"\n");
        for i in 0..500 {
            text.push_str(&format!("{i},\"line one\nline two\"\n\n"));
        }
        let sheet = table_of("long.csv", text.as_bytes());
        assert_eq!(sheet.row_count, 501);
        assert_eq!(sheet.rows.len(), TABLE_ROWS);
        assert_eq!(sheet.rows[TABLE_ROWS - 1], ["198", "line one\nline two"]);
    }

    /// A chart sheet is not a table: the extract skips it, so does the
    /// preview (the old preview showed it as an empty table).
    #[test]
    fn chart_sheets_are_left_out_as_in_the_extract() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("c.xlsx");
        let mut book = rust_xlsxwriter::Workbook::new();
        let data = book.add_worksheet().set_name("Data").expect("name");
        data.write_string(0, 0, "x").expect("w");
        data.write_number(1, 0, 2.0).expect("w");
        let mut chart = rust_xlsxwriter::Chart::new(rust_xlsxwriter::ChartType::Column);
        chart.add_series().set_values("Data!$A$2:$A$2");
        book.add_chartsheet()
            .insert_chart(0, 0, &chart)
            .expect("chart");
        book.save(&path).expect("save");
        let OutputPreview::Table { sheets } = preview(&path, "c.xlsx") else {
            panic!("a table");
        };
        let names: Vec<&str> = sheets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Data"]);
        assert_eq!(sheets[0].rows, [["x"], ["2"]]);
    }

    #[test]
    fn a_workbook_shows_cells_as_its_extract_renders_them() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("d.xlsx");
        let mut book = rust_xlsxwriter::Workbook::new();
        let date = rust_xlsxwriter::Format::new().set_num_format("yyyy-mm-dd");
        let s = book.add_worksheet();
        let d = rust_xlsxwriter::ExcelDateTime::from_ymd(2024, 1, 15).expect("date");
        s.write_datetime_with_format(0, 0, &d, &date).expect("w");
        s.write_boolean(0, 1, true).expect("w");
        s.write_number(0, 2, -0.0).expect("w");
        book.save(&path).expect("save");
        let OutputPreview::Table { sheets } = preview(&path, "d.xlsx") else {
            panic!("a table");
        };
        assert_eq!(sheets[0].rows, [["2024-01-15", "true", "0"]]);
    }

    #[test]
    fn unreadable_tables_say_why_once() {
        let dir = tempfile::tempdir().expect("dir");
        let zip = dir.path().join("cut.xlsx");
        std::fs::write(&zip, b"PK\x03\x04 cut short").expect("w");
        let OutputPreview::None { reason } = preview(&zip, "out/cut.xlsx") else {
            panic!("no table");
        };
        assert_eq!(
            reason,
            "out/cut.xlsx could not be read as a workbook: the workbook is damaged: \
             its zip container is truncated or invalid"
        );
        let gone = dir.path().join("gone.csv");
        let OutputPreview::None { reason } = preview(&gone, "gone.csv") else {
            panic!("no table");
        };
        assert_eq!(
            reason,
            "gone.csv could not be read as a table: no such file"
        );
    }

    #[test]
    fn an_error_s_reason_leaves_out_the_file() {
        let e = ExtractError::damaged("a/b.xlsx", "the workbook is damaged");
        assert_eq!(e.reason(), "the workbook is damaged");
        assert_eq!(
            ExtractError::io("x", std::io::ErrorKind::NotFound.into()).reason(),
            "no such file"
        );
    }
}
