//! Previews of the files a script wrote, for the person who ran it: images
//! inline, CSV and spreadsheets as tables (every sheet, the first rows,
//! the row count), text and JSON as text. Pure reading of one local file;
//! a preview holds real data and is shown locally, never sent to an LLM.

use std::io::Read;
use std::path::Path;

use calamine::{Data, Reader};
use serde::Serialize;

/// Rows of a table kept for the preview (the header counts as one).
pub const TABLE_ROWS: usize = 200;
/// Largest image shown inline, in bytes.
pub const IMAGE_BYTES: u64 = 8 << 20;
/// Longest text shown, in bytes.
pub const TEXT_BYTES: usize = 256 << 10;

/// What an output looks like to a person.
#[derive(Serialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
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
#[derive(Serialize, Clone, Debug, PartialEq, utoipa::ToSchema, ts_rs::TS)]
pub struct SheetPreview {
    /// The sheet's name (the file's for CSV).
    pub name: String,
    /// Its rows, header included (all of them, not only the shown ones).
    #[ts(type = "number")]
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
        "csv" | "tsv" => match csv_sheet(path, name, if ext == "tsv" { b'\t' } else { b',' }) {
            Ok(sheet) => OutputPreview::Table {
                sheets: vec![sheet],
            },
            Err(e) => none(format!("{name} could not be read as a table: {e}")),
        },
        "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => match workbook(path) {
            Ok(sheets) => OutputPreview::Table { sheets },
            Err(e) => none(format!("{name} could not be read as a workbook: {e}")),
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

fn csv_sheet(path: &Path, name: &str, delimiter: u8) -> Result<SheetPreview, csv::Error> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_path(path)?;
    let mut rows = Vec::new();
    let mut count: u64 = 0;
    let mut record = csv::ByteRecord::new();
    while reader.read_byte_record(&mut record)? {
        if rows.len() < TABLE_ROWS {
            rows.push(
                record
                    .iter()
                    .map(|f| String::from_utf8_lossy(f).into_owned())
                    .collect(),
            );
        }
        count += 1;
    }
    Ok(SheetPreview {
        name: name.rsplit('/').next().unwrap_or(name).to_owned(),
        row_count: count,
        rows,
    })
}

fn cell(d: &Data) -> String {
    match d {
        Data::Empty => String::new(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        Data::DateTime(dt) => dt
            .as_datetime()
            .map(|t| t.to_string().trim_end_matches(" 00:00:00").to_owned())
            .unwrap_or_else(|| dt.to_string()),
        other => other.to_string(),
    }
}

fn workbook(path: &Path) -> Result<Vec<SheetPreview>, calamine::Error> {
    let mut book = calamine::open_workbook_auto(path)?;
    let mut sheets = Vec::new();
    for name in book.sheet_names() {
        let range = book.worksheet_range(&name)?;
        let rows: Vec<Vec<String>> = range
            .rows()
            .take(TABLE_ROWS)
            .map(|r| r.iter().map(cell).collect())
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
}
