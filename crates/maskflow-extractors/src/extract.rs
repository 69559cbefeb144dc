//! The [`FileExtract`]: what Maskflow knows about one file, with every sample
//! value masked. This is exactly what the user approves and what may be sent
//! to an LLM, so nothing in it may carry a raw value from the file except
//! column names and the file name (which the seed allows).

use serde::{Deserialize, Serialize};

/// The kind of file an extract came from.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum FileKind {
    /// CSV, TSV and other delimited text tables (the kind when none is given).
    #[default]
    Csv,
    /// Spreadsheets: xlsx, xlsm, xlsb, xls, ods.
    Excel,
    /// PDF documents.
    Pdf,
    /// Word documents (.docx).
    Word,
    /// Raster images.
    Image,
}

/// Masked metadata of one file (seed 000's `FileExtract`, plus type-specific parts).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct FileExtract {
    /// The file's name, without its folder.
    pub filename: String,
    /// Which extractor produced this (CSV when absent: seed 000's shape has no kind).
    #[serde(default)]
    pub kind: FileKind,
    /// Real column names (for a table without a header: `column_1…column_n`).
    pub columns: Vec<String>,
    /// The first data records, every value masked.
    pub sample_rows: Vec<Vec<String>>,
    /// Exact number of data records (the header is not counted).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub row_count: u64,
    /// For tables: whether the first record was taken as a header row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_header: Option<bool>,
    /// For a table with a title block: the header's row, 1-based (a
    /// sheet's rows as Excel numbers them; a delimited file's records),
    /// when it is not the first; the rows above it are a title block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_row: Option<u32>,
    /// The title block's rows above the header, masked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<Vec<String>>>", optional))]
    pub rows_above: Vec<Vec<String>>,
    /// Units and scale the title block or the header names, in Maskflow's
    /// words (`in thousands`, `USD`, `per tonne`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub units: Vec<String>,
    /// For delimited text: the delimiter and encoding that were detected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_format: Option<TextFormat>,
    /// For spreadsheets: one entry per sheet; the top-level fields mirror the
    /// first non-empty sheet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheets: Option<Vec<SheetExtract>>,
    /// For PDF and Word documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentExtract>,
    /// For images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageExtract>,
    /// Things the user should know (ragged rows padded, a long field cut…).
    /// Never contains a value from the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub warnings: Vec<String>,
    /// Category columns the user chose to show the AI, with their values
    /// and counts (#28): empty, and left out, unless switched on at approval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<CategoryColumn>>", optional))]
    pub categories: Vec<CategoryColumn>,
    /// For a table (a delimited file, or a workbook's first sheet): its
    /// profile over every row; absent in extracts made before profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<TableProfile>,
}

impl FileExtract {
    /// An empty extract of the given kind, to be filled in by an extractor.
    pub fn new(filename: impl Into<String>, kind: FileKind) -> Self {
        Self {
            filename: filename.into(),
            kind,
            columns: Vec::new(),
            sample_rows: Vec::new(),
            row_count: 0,
            has_header: None,
            header_row: None,
            rows_above: Vec::new(),
            units: Vec::new(),
            text_format: None,
            sheets: None,
            document: None,
            image: None,
            warnings: Vec::new(),
            categories: Vec::new(),
            profile: None,
        }
    }
}

/// The dialect of a delimited text file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TextFormat {
    /// The field delimiter, e.g. `","` or `"\t"`.
    pub delimiter: String,
    /// The encoding the file was read with, e.g. `"UTF-8"`, `"UTF-16LE"`, `"windows-1252"`.
    pub encoding: String,
}

/// One sheet of a workbook.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct SheetExtract {
    /// The sheet's name as shown in the workbook's tabs.
    pub name: String,
    /// Real column names.
    pub columns: Vec<String>,
    /// The first data records, masked.
    pub sample_rows: Vec<Vec<String>>,
    /// Exact number of data records (the header is not counted).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub row_count: u64,
    /// Whether the first row was taken as a header row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_header: Option<bool>,
    /// For a table with a title block: the header's row, 1-based (a
    /// sheet's rows as Excel numbers them; a delimited file's records),
    /// when it is not the first; the rows above it are a title block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_row: Option<u32>,
    /// The title block's rows above the header, masked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<Vec<String>>>", optional))]
    pub rows_above: Vec<Vec<String>>,
    /// Units and scale the title block or the header names, in Maskflow's
    /// words (`in thousands`, `USD`, `per tonne`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<String>>", optional))]
    pub units: Vec<String>,
    /// The sheet's profile over every row; absent in older extracts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<TableProfile>,
    /// The sheet's category columns the user chose to show the AI (#28).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<CategoryColumn>>", optional))]
    pub categories: Vec<CategoryColumn>,
}

/// A column of few values, each in many rows, that the user chose to show
/// the AI as they are (#28): its values with how many rows hold each.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CategoryColumn {
    /// The column's name, as in the extract's `columns`.
    pub column: String,
    /// Its values, most frequent first.
    pub values: Vec<CategoryValue>,
}

/// One value of a [`CategoryColumn`] and its number of rows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CategoryValue {
    /// The value as it is in the file.
    pub value: String,
    /// Rows that hold it.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub count: u64,
}

/// A table found inside a document (Word, or PDF where detected).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TableExtract {
    /// Real column names (the table's first row when it looks like a header).
    pub columns: Vec<String>,
    /// The first data rows, masked.
    pub sample_rows: Vec<Vec<String>>,
    /// Number of data rows.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub row_count: u64,
}

/// A heading of a document, masked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Heading {
    /// 1 for a top-level heading, 2 below it, …
    pub level: u8,
    /// The heading's text, masked.
    pub text: String,
}

/// Document metadata (PDF, Word).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct DocumentExtract {
    /// Number of pages, when the format records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_count: Option<u32>,
    /// Headings in document order, masked.
    pub headings: Vec<Heading>,
    /// The start of the document's text, masked.
    pub text_preview: String,
    /// Tables found in the document.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<TableExtract>>", optional))]
    pub tables: Vec<TableExtract>,
}

/// Image metadata.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct ImageExtract {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The image format, e.g. `"png"`.
    pub format: String,
    /// Text found by OCR, masked; absent when OCR did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr_text: Option<String>,
    /// Why `ocr_text` is absent, e.g. "tesseract is not installed".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr_unavailable_reason: Option<String>,
}

/// The profile of one table (a delimited file, a sheet).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TableProfile {
    /// Data rows read (all of them, up to the byte limit; blank rows not counted).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub rows_profiled: u64,
    /// Rows equal to an earlier row, cell for cell.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duplicate_rows: u64,
    /// Columns with a value in every row and no value twice.
    pub unique_columns: Vec<String>,
    /// One per column, in the table's order.
    pub columns: Vec<ColumnProfile>,
    /// The id-like column whose values repeat, and how the rows that
    /// repeat one differ from its first row (#40 point 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub repeated_keys: Option<RepeatedKeys>,
}

/// The rows of a table that repeat a value of its id-like column, compared
/// with the first row of that value: counts only.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RepeatedKeys {
    /// The id-like column.
    pub column: String,
    /// Rows whose id an earlier row has.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub rows: u64,
    /// Of them, rows equal to that earlier row cell for cell.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub exact: u64,
    /// Of them, rows that equal it once case, spaces and number formats
    /// are normalised (the same record written differently).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub same_after_normalising: u64,
    /// Per column, how many of the other repeats differ in it.
    pub differing: Vec<DifferingColumn>,
}

/// A column in which rows repeating an id differ from the id's first row.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DifferingColumn {
    /// The column.
    pub column: String,
    /// Repeats whose value here differs.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub rows: u64,
    /// Of them, those whose value is the same once case, spaces and number
    /// format are normalised.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub only_format: u64,
}

/// The profile of one column: counts and masked shapes, no values.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct ColumnProfile {
    /// The column's name, as in the extract's `columns`.
    pub name: String,
    /// `integer`, `decimal`, `date`, `datetime`, `time`, `boolean`, `text`,
    /// `empty` (no value) or `mixed` (no kind in nine values of ten).
    pub inferred_type: String,
    /// For dates: the most frequent layout, e.g. `%d/%m/%Y`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_format: Option<String>,
    /// Empty or blank cells.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub nulls: u64,
    /// Cells saying "no value" in words (`N/A`, `-`, `null`, `Not Available`…).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub placeholders: u64,
    /// Different values (placeholders not counted); a lower bound when capped.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub distinct: u64,
    /// Whether counting distinct values stopped at the cap.
    #[serde(default)]
    pub distinct_capped: bool,
    /// Shortest value, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u32>,
    /// Longest value, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// The smallest number, rounded to two significant figures (`1.2e3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// The largest number, rounded to two significant figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// The most frequent masked shapes with their counts.
    #[serde(default)]
    pub shapes: Vec<ShapeCount>,
    /// Values of any other shape.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub other_shapes: u64,
    /// How many numbers the range (`min`, `max`) covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub range_values: Option<u64>,
    /// The formats the values are written in, each with its count, most
    /// frequent first: every date format (`%Y-%m-%d`, `%m/%d/%Y`, `Excel
    /// serial`, `not a date`), every number format (`decimal comma, € after`),
    /// and for text its case and whitespace (`upper case, padded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<FormatCount>>", optional))]
    pub formats: Vec<FormatCount>,
    /// Values of formats past the ones tracked.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "ts", ts(type = "number | undefined"))]
    pub other_formats: u64,
    /// Which of Maskflow's placeholder words the placeholders were
    /// (Maskflow's spelling, `n/a`, `unknown`), each with its count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<FormatCount>>", optional))]
    pub placeholder_words: Vec<FormatCount>,
    /// Maskflow's placeholder words that are entries of this column (a
    /// list's `UNKNOWN` operator, a `None` answer among categories), so
    /// counted as values, not as missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<FormatCount>>", optional))]
    pub category_words: Vec<FormatCount>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A format (or one of Maskflow's own words) and how many values have it:
/// Maskflow's wording, never a value of the file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FormatCount {
    /// The format in Maskflow's words (`%d/%m/%Y`, `decimal comma`).
    pub format: String,
    /// Values written so.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub count: u64,
}

/// A masked shape (`##/##/####`) and how many values have it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShapeCount {
    /// The shape, masked like every sample value.
    pub shape: String,
    /// Values of this shape.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub count: u64,
}
