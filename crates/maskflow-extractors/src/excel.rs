//! Spreadsheets (xlsx, xlsm, xlsb, xls, ods) through calamine.
//!
//! This module owns reading workbooks into a masked [`FileExtract`]: one
//! [`SheetExtract`] per worksheet, the top-level fields mirroring the first
//! non-empty sheet. xlsx/xlsm/xlsb sheets are streamed cell by cell, so only
//! the first rows are kept (for the samples) while the rest is only counted;
//! xls and ods sheets are read whole by calamine. Before calamine sees a zip
//! container, [`zipguard`] checks its central directory against the zip-bomb
//! limits, and an OLE2 container holding an encrypted package is reported as a
//! password-protected workbook. Every cell is rendered as text (dates as
//! ISO-8601, formulas as their cached values) and masked by
//! [`TableSample`]; this module never puts a raw value into an extract or an
//! error.

mod errors;
mod values;

use std::fs::File;
use std::io::{BufReader, Read, Seek};

use calamine::{
    Data, DataRef, ExcelDateTime, Ods, Reader, SheetType, Sheets, Xls, Xlsb, Xlsx, XlsxError,
};

use crate::error::ExtractError;
use crate::extract::{FileExtract, FileKind, SheetExtract};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, MAX_SAMPLES, MAX_SHEETS};
use crate::table::TableSample;
use crate::{ole, sniff, zipguard};
use errors::calamine_error;

/// Rows between two progress reports of a streamed sheet.
const PROGRESS_EVERY_ROWS: u32 = 16 * 1024;
/// First bytes of an OLE2 compound file (xls, and encrypted OOXML workbooks).
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// Reads workbooks: every sheet, dates as ISO-8601, formulas as cached values.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExcelExtractor;

impl Extractor for ExcelExtractor {
    fn supports(&self, mime: &str) -> bool {
        matches!(
            mime,
            sniff::XLSX | sniff::XLSM | sniff::XLSB | sniff::XLS | sniff::ODS
        )
    }

    fn extract(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        let file = input.display;
        let samples = options.samples.clamp(1, MAX_SAMPLES);
        let mut reader = open(input)?;
        let mut magic = [0u8; 8];
        let head_len = read_head(&mut reader, &mut magic).map_err(|e| ExtractError::io(file, e))?;
        let head = &magic[..head_len];
        let total = input.size;
        let mut report = |done: u64| {
            progress(Progress {
                done: done.min(total),
                total,
            })
        };
        let sheets = if head == OLE_MAGIC {
            ole::check_xls(&mut reader, file)?;
            if is_encrypted_package(&mut reader) {
                return Err(encrypted(file));
            }
            let workbook: Xls<_> = open_with(file, reader)?;
            read_ranges(file, workbook, samples, total, &mut report)?
        } else if head.starts_with(b"PK") {
            check_container(&mut reader, file)?;
            match input.mime {
                sniff::XLSB => {
                    let workbook: Xlsb<_> = open_with(file, reader)?;
                    read_streamed(file, workbook, samples, total, &mut report)?
                }
                sniff::ODS => {
                    let workbook: Ods<_> = open_with(file, reader)?;
                    read_ranges(file, workbook, samples, total, &mut report)?
                }
                _ => {
                    let workbook: Xlsx<_> = open_with(file, reader)?;
                    read_streamed(file, workbook, samples, total, &mut report)?
                }
            }
        } else {
            return Err(ExtractError::damaged(
                file,
                "the workbook is damaged: it is neither a zip container nor an Excel 97-2003 file",
            ));
        };
        report(total);
        Ok(assemble(input.filename, sheets))
    }

    fn values(
        &self,
        input: &Input<'_>,
        _options: &crate::values::ValueOptions,
        sink: &mut dyn crate::values::ValueSink,
    ) -> Result<(), ExtractError> {
        values::visit(input, sink)
    }
}

/// Checks a workbook's zip container against the zip-bomb limits, reading
/// only its central directory, and rewinds `reader`: calamine opens the
/// container afresh.
fn check_container(reader: &mut BufReader<File>, file: &str) -> Result<(), ExtractError> {
    let mut archive = zip::ZipArchive::new(&mut *reader).map_err(|_| {
        ExtractError::damaged(
            file,
            "the workbook is damaged: its zip container is truncated or invalid",
        )
    })?;
    zipguard::check_archive(&archive, file, "workbook")?;
    if let Ok(part) = archive.by_name("xl/workbook.xml") {
        let sheets = count_sheets(part).map_err(|e| ExtractError::io(file, e))?;
        if sheets > MAX_SHEETS {
            return Err(ExtractError::damaged(
                file,
                format!(
                    "the workbook declares more than {MAX_SHEETS} sheets, more than Maskflow \
                     reads; split it into smaller workbooks"
                ),
            ));
        }
    }
    drop(archive);
    reader.rewind().map_err(|e| ExtractError::io(file, e))
}

/// The `<sheet>` elements of a workbook part (any namespace prefix),
/// counted in one streamed pass; stops counting past [`MAX_SHEETS`].
fn count_sheets(mut part: impl Read) -> std::io::Result<usize> {
    const TAG: &[u8] = b"sheet";
    let mut buf = vec![0_u8; 64 * 1024];
    // The bytes before the current chunk a tag may straddle.
    let mut carry: Vec<u8> = Vec::new();
    let mut count = 0;
    loop {
        let n = part.read(&mut buf)?;
        if n == 0 {
            return Ok(count);
        }
        let mut window = std::mem::take(&mut carry);
        window.extend_from_slice(&buf[..n]);
        let mut i = 0;
        while i + TAG.len() + 1 < window.len() {
            let opens = window[i] == b'<' || window[i] == b':';
            if opens && window[i + 1..].starts_with(TAG) {
                let after = window[i + 1 + TAG.len()];
                if after.is_ascii_whitespace() || after == b'/' || after == b'>' {
                    count += 1;
                    if count > MAX_SHEETS {
                        return Ok(count);
                    }
                }
            }
            i += 1;
        }
        carry = window[i..].to_vec();
    }
}

/// Opens the workbook `input` for reading whole sheets, after the same
/// checks the extract makes (an encrypted package, the OLE2 directory, the
/// zip-bomb limits); the sniffed type picks the reader of a zip container.
pub(crate) fn open_book(input: &Input<'_>) -> Result<Sheets<BufReader<File>>, ExtractError> {
    let file = input.display;
    let mut reader = open(input)?;
    let mut magic = [0u8; 8];
    let n = read_head(&mut reader, &mut magic).map_err(|e| ExtractError::io(file, e))?;
    let head = &magic[..n];
    if head == OLE_MAGIC {
        ole::check_xls(&mut reader, file)?;
        if is_encrypted_package(&mut reader) {
            return Err(encrypted(file));
        }
        return open_with(file, reader).map(Sheets::Xls);
    }
    if !head.starts_with(b"PK") {
        return Err(ExtractError::damaged(
            file,
            "the workbook is damaged: it is neither a zip container nor an Excel 97-2003 file",
        ));
    }
    check_container(&mut reader, file)?;
    match input.mime {
        sniff::XLSB => open_with(file, reader).map(Sheets::Xlsb),
        sniff::ODS => open_with(file, reader).map(Sheets::Ods),
        _ => open_with(file, reader).map(Sheets::Xlsx),
    }
}

/// The range of worksheet `name`, the `at`-th (from 0), as read by calamine;
/// its error names the file and the worksheet's place.
pub(crate) fn sheet_range<R: Read + Seek>(
    file: &str,
    book: &mut Sheets<R>,
    at: usize,
    name: &str,
) -> Result<calamine::Range<Data>, ExtractError> {
    book.worksheet_range(name)
        .map_err(|e| calamine_error(file, Some(at), e))
}

/// One sheet read: its extract and the notes for the user.
struct SheetResult {
    sheet: SheetExtract,
    non_empty: bool,
    warnings: Vec<String>,
}

/// Builds the file's extract from its sheets.
fn assemble(filename: &str, sheets: Vec<SheetResult>) -> FileExtract {
    let mut extract = FileExtract::new(filename, FileKind::Excel);
    if let Some(first) = sheets.iter().find(|s| s.non_empty) {
        extract.columns = first.sheet.columns.clone();
        extract.sample_rows = first.sheet.sample_rows.clone();
        extract.row_count = first.sheet.row_count;
        extract.has_header = first.sheet.has_header;
        extract.header_row = first.sheet.header_row;
        extract.rows_above = first.sheet.rows_above.clone();
        extract.units = first.sheet.units.clone();
    } else {
        extract
            .warnings
            .push("the workbook has no data: every sheet is empty".into());
    }
    let mut out = Vec::with_capacity(sheets.len());
    for s in sheets {
        extract.warnings.extend(s.warnings);
        out.push(s.sheet);
    }
    extract.sheets = Some(out);
    extract
}

fn open(input: &Input<'_>) -> Result<BufReader<File>, ExtractError> {
    File::open(input.path)
        .map(BufReader::new)
        .map_err(|e| ExtractError::io(input.display, e))
}

/// Reads up to 8 bytes of the head and rewinds.
fn read_head<R: Read + Seek>(reader: &mut R, buf: &mut [u8; 8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    reader.rewind()?;
    Ok(n)
}

/// Whether an OLE2 container holds an encrypted OOXML package (an
/// `EncryptionInfo` + `EncryptedPackage` pair: a password-protected xlsx).
fn is_encrypted_package<R: Read + Seek>(reader: &mut R) -> bool {
    // calamine's xlsx reader checks the compound file's directory for
    // `EncryptedPackage` before it tries to read a zip; reuse that check.
    let encrypted = matches!(Xlsx::new(&mut *reader), Err(XlsxError::Password));
    let _ = reader.rewind();
    encrypted
}

fn open_with<W, R>(file: &str, reader: R) -> Result<W, ExtractError>
where
    R: Read + Seek,
    W: Reader<R>,
    W::Error: Into<calamine::Error>,
{
    W::new(reader).map_err(|e| calamine_error(file, None, e.into()))
}

fn encrypted(file: &str) -> ExtractError {
    ExtractError::Encrypted {
        file: file.to_owned(),
        what: "workbook",
    }
}

/// The names of the worksheets (not chart, dialog or macro sheets), in tab order.
pub(crate) fn worksheet_names<R: Read + Seek, W: Reader<R>>(workbook: &W) -> Vec<String> {
    workbook
        .sheets_metadata()
        .iter()
        .filter(|s| s.typ == SheetType::WorkSheet)
        .map(|s| s.name.clone())
        .collect()
}

/// The workbooks calamine streams cell by cell (xlsx/xlsm and xlsb), so that
/// one reader serves both.
trait StreamedCells {
    /// Rows `sheet` declares in its `dimension` (0 when unknown).
    fn declared_rows(&mut self, sheet: &str) -> u64;
    /// Calls `each` with the row, column and value of every cell of `sheet`.
    fn each_cell(
        &mut self,
        sheet: &str,
        each: &mut dyn FnMut(u32, u32, &DataRef<'_>),
    ) -> Result<(), calamine::Error>;
}

/// Implements [`StreamedCells`] for a calamine workbook type whose
/// `worksheet_cells_reader` yields cells (the two differ only in their types).
macro_rules! streamed_cells {
    ($workbook:ident) => {
        impl<R: Read + Seek> StreamedCells for $workbook<R> {
            fn declared_rows(&mut self, sheet: &str) -> u64 {
                self.worksheet_cells_reader(sheet)
                    .map(|r| declared_rows(r.dimensions()))
                    .unwrap_or(0)
            }
            fn each_cell(
                &mut self,
                sheet: &str,
                each: &mut dyn FnMut(u32, u32, &DataRef<'_>),
            ) -> Result<(), calamine::Error> {
                let mut cells = self.worksheet_cells_reader(sheet)?;
                while let Some(cell) = cells.next_cell()? {
                    let (row, col) = cell.get_position();
                    each(row, col, cell.get_value());
                }
                Ok(())
            }
        }
    };
}

streamed_cells!(Xlsx);
streamed_cells!(Xlsb);

/// Reads xlsx, xlsm and xlsb by streaming each sheet's cells.
fn read_streamed<R: Read + Seek, W: Reader<R> + StreamedCells>(
    file: &str,
    mut workbook: W,
    samples: usize,
    size: u64,
    report: &mut dyn FnMut(u64),
) -> Result<Vec<SheetResult>, ExtractError> {
    let names = worksheet_names(&workbook);
    let declared: Vec<u64> = names.iter().map(|n| workbook.declared_rows(n)).collect();
    let mut meter = Meter::new(size, &declared, report);
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let mut scan = SheetScan::new(samples);
        workbook
            .each_cell(name, &mut |row, col, value| {
                scan.push(row, col, value);
                meter.row(i, row);
            })
            .map_err(|e| calamine_error(file, Some(i), e))?;
        meter.sheet_done(i);
        out.push(scan.finish(name));
    }
    Ok(out)
}

/// Reads xls and ods, whose sheets calamine loads whole.
fn read_ranges<R: Read + Seek, W: Reader<R>>(
    file: &str,
    mut workbook: W,
    samples: usize,
    size: u64,
    report: &mut dyn FnMut(u64),
) -> Result<Vec<SheetResult>, ExtractError>
where
    W::Error: Into<calamine::Error>,
{
    let names = worksheet_names(&workbook);
    let n = names.len().max(1) as u64;
    let mut out = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let range = workbook
            .worksheet_range(name)
            .map_err(|e| calamine_error(file, Some(i), e.into()))?;
        let mut scan = SheetScan::new(samples);
        let (r0, c0) = range.start().unwrap_or((0, 0));
        for (r, c, value) in range.used_cells() {
            let value = data_ref(value);
            scan.push(r0 + r as u32, c0 + c as u32, &value);
        }
        out.push(scan.finish(name));
        report(size.saturating_mul(i as u64 + 1) / n);
    }
    Ok(out)
}

/// Rows a sheet declares in its `dimension`, for progress only.
fn declared_rows(d: calamine::Dimensions) -> u64 {
    u64::from(d.end.0.saturating_sub(d.start.0)) + 1
}

/// Turns streamed row positions into progress in bytes of the file (an
/// estimate: the share of declared rows done, times the file's size).
struct Meter<'a> {
    size: u64,
    /// Declared rows of the sheets before each sheet.
    before: Vec<u64>,
    declared: Vec<u64>,
    total_rows: u64,
    next_report: u32,
    report: &'a mut dyn FnMut(u64),
}

impl<'a> Meter<'a> {
    fn new(size: u64, declared: &[u64], report: &'a mut dyn FnMut(u64)) -> Self {
        let before = declared
            .iter()
            .scan(0u64, |acc, d| {
                let b = *acc;
                *acc += d;
                Some(b)
            })
            .collect();
        Self {
            size,
            before,
            declared: declared.to_vec(),
            total_rows: declared.iter().sum::<u64>().max(1),
            next_report: PROGRESS_EVERY_ROWS,
            report,
        }
    }

    #[inline]
    fn row(&mut self, sheet: usize, row: u32) {
        if row >= self.next_report {
            self.next_report = row.saturating_add(PROGRESS_EVERY_ROWS);
            let within = u64::from(row).min(self.declared.get(sheet).copied().unwrap_or(0));
            let rows = self.before.get(sheet).copied().unwrap_or(0) + within;
            let bytes = self.bytes(rows);
            (self.report)(bytes);
        }
    }

    fn sheet_done(&mut self, sheet: usize) {
        self.next_report = PROGRESS_EVERY_ROWS;
        let rows = self.before.get(sheet).copied().unwrap_or(0)
            + self.declared.get(sheet).copied().unwrap_or(0);
        let bytes = self.bytes(rows);
        (self.report)(bytes);
    }

    fn bytes(&self, rows: u64) -> u64 {
        let share = u128::from(rows.min(self.total_rows)) * u128::from(self.size)
            / u128::from(self.total_rows);
        u64::try_from(share).unwrap_or(self.size)
    }
}

/// Collects one sheet: the first rows as text (for the samples) and the
/// span of non-empty rows (for the count); later cells are only looked at.
struct SheetScan {
    /// Rows kept from the first non-empty row: a header candidate plus the samples.
    keep: u32,
    samples: usize,
    first_row: Option<u32>,
    last_row: u32,
    /// (row offset from `first_row`, column, rendered value).
    head: Vec<(u32, u32, String)>,
}

impl SheetScan {
    fn new(samples: usize) -> Self {
        Self {
            keep: (samples + 1 + crate::table::MAX_TITLE_ROWS) as u32,
            samples,
            first_row: None,
            last_row: 0,
            head: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, row: u32, col: u32, value: &DataRef<'_>) {
        if is_empty(value) {
            return;
        }
        let first = *self.first_row.get_or_insert(row);
        if row < first {
            // Out-of-order cells (a malformed sheet): count them, do not sample them.
            self.first_row = Some(row);
            self.head.clear();
            return;
        }
        self.last_row = self.last_row.max(row);
        if row - first < self.keep {
            self.head.push((row - first, col, render(value)));
        }
    }

    fn finish(self, name: &str) -> SheetResult {
        let Some(first) = self.first_row else {
            return SheetResult {
                sheet: SheetExtract {
                    name: name.to_owned(),
                    columns: Vec::new(),
                    sample_rows: Vec::new(),
                    row_count: 0,
                    has_header: None,
                    header_row: None,
                    rows_above: Vec::new(),
                    units: Vec::new(),
                    categories: Vec::new(),
                    profile: None,
                },
                non_empty: false,
                warnings: Vec::new(),
            };
        };
        let rows = u64::from(self.last_row - first) + 1;
        let min_col = self.head.iter().map(|h| h.1).min().unwrap_or(0);
        let max_col = self.head.iter().map(|h| h.1).max().unwrap_or(0);
        let width = (max_col - min_col) as usize + 1;
        let height = rows.min(u64::from(self.keep)) as usize;
        let mut head = vec![vec![String::new(); width]; height];
        for (r, c, value) in self.head {
            if let Some(cell) = head
                .get_mut(r as usize)
                .and_then(|row| row.get_mut((c - min_col) as usize))
            {
                *cell = value;
            }
        }
        let table = TableSample::from_head(&head, self.samples);
        let row_count = rows - u64::from(table.has_header) - table.title_rows as u64;
        SheetResult {
            sheet: SheetExtract {
                name: name.to_owned(),
                columns: table.columns,
                sample_rows: table.sample_rows,
                row_count,
                has_header: Some(table.has_header),
                header_row: (table.title_rows > 0).then(|| first + 1 + table.title_rows as u32),
                rows_above: table.rows_above,
                units: table.units,
                categories: Vec::new(),
                profile: None,
            },
            non_empty: true,
            warnings: table
                .warnings
                .into_iter()
                .map(|w| format!("sheet \"{name}\": {w}"))
                .collect(),
        }
    }
}

#[inline]
fn is_empty(value: &DataRef<'_>) -> bool {
    match value {
        DataRef::Empty => true,
        DataRef::SharedString(s) => s.is_empty(),
        DataRef::String(s) => s.is_empty(),
        _ => false,
    }
}

pub(crate) fn data_ref(value: &Data) -> DataRef<'_> {
    match value {
        Data::Int(i) => DataRef::Int(*i),
        Data::Float(f) => DataRef::Float(*f),
        Data::String(s) => DataRef::SharedString(s),
        Data::Bool(b) => DataRef::Bool(*b),
        Data::DateTime(d) => DataRef::DateTime(*d),
        Data::DateTimeIso(s) => DataRef::DateTimeIso(s.clone()),
        Data::DurationIso(s) => DataRef::DurationIso(s.clone()),
        Data::Error(e) => DataRef::Error(e.clone()),
        Data::Empty => DataRef::Empty,
    }
}

/// A cell as text, before masking: numbers naturally (`3.0` as `3`), dates as
/// ISO-8601, booleans as `true`/`false`, errors as Excel shows them.
pub fn render(value: &DataRef<'_>) -> String {
    match value {
        DataRef::Int(i) => i.to_string(),
        DataRef::Float(f) => render_float(*f),
        DataRef::String(s) => s.clone(),
        DataRef::SharedString(s) => (*s).to_owned(),
        DataRef::Bool(b) => b.to_string(),
        DataRef::DateTime(d) => render_datetime(d),
        DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => s.clone(),
        DataRef::Error(e) => e.to_string(),
        DataRef::Empty => String::new(),
    }
}

fn render_float(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        (f as i64).to_string()
    } else {
        f.to_string()
    }
}

fn render_datetime(d: &ExcelDateTime) -> String {
    let value = d.as_f64();
    if d.is_duration() {
        let ms = (value * 86_400_000.0).round() as i64;
        let (sign, ms) = if ms < 0 { ("-", -ms) } else { ("", ms) };
        let secs = ms / 1000;
        return format!(
            "{sign}{}:{:02}:{:02}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60
        );
    }
    let (y, mo, day, h, mi, s, ms) = d.to_ymd_hms_milli();
    let time = if ms != 0 {
        format!("{h:02}:{mi:02}:{s:02}.{ms:03}")
    } else {
        format!("{h:02}:{mi:02}:{s:02}")
    };
    if (0.0..1.0).contains(&value) {
        // A time of day with no date.
        time
    } else if h == 0 && mi == 0 && s == 0 && ms == 0 {
        format!("{y:04}-{mo:02}-{day:02}")
    } else {
        format!("{y:04}-{mo:02}-{day:02}T{time}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use calamine::ExcelDateTimeType;

    #[test]
    fn numbers_render_naturally() {
        assert_eq!(render(&DataRef::Float(3.0)), "3");
        assert_eq!(render(&DataRef::Float(-0.0)), "0");
        assert_eq!(render(&DataRef::Float(12.5)), "12.5");
        assert_eq!(render(&DataRef::Float(0.1)), "0.1");
        assert_eq!(render(&DataRef::Int(42)), "42");
        assert_eq!(render(&DataRef::Bool(true)), "true");
        assert_eq!(
            render(&DataRef::Error(calamine::CellErrorType::Div0)),
            "#DIV/0!"
        );
    }

    #[test]
    fn dates_render_as_iso_8601() {
        let dt = |v| DataRef::DateTime(ExcelDateTime::new(v, ExcelDateTimeType::DateTime, false));
        assert_eq!(render(&dt(45306.0)), "2024-01-15");
        assert_eq!(render(&dt(45306.4375)), "2024-01-15T10:30:00");
        assert_eq!(render(&dt(0.4375)), "10:30:00");
        let dur = DataRef::DateTime(ExcelDateTime::new(1.5, ExcelDateTimeType::TimeDelta, false));
        assert_eq!(render(&dur), "36:00:00");
    }

    #[test]
    fn scan_counts_the_span_of_non_empty_rows() {
        let mut scan = SheetScan::new(2);
        scan.push(2, 1, &DataRef::SharedString("name"));
        scan.push(3, 1, &DataRef::SharedString("Alice"));
        scan.push(9, 1, &DataRef::SharedString("Bob"));
        scan.push(12, 1, &DataRef::SharedString(""));
        scan.push(13, 1, &DataRef::Empty);
        let s = scan.finish("S");
        assert_eq!(s.sheet.row_count, 7);
        assert_eq!(s.sheet.columns, ["name"]);
        assert_eq!(s.sheet.sample_rows, [["Aaaaa"], [""]]);
    }
}
