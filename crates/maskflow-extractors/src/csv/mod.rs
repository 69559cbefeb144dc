//! Delimited text tables: CSV, TSV, semicolon- and pipe-separated text.
//!
//! Columns and samples come from a bounded window at the start of the file,
//! so they are ready at once; the exact row count is a separate streaming
//! pass ([`count`]) in bounded memory that reports its progress.

pub mod count;
pub mod dialect;
pub(crate) mod values;

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use encoding_rs::{UTF_8, WINDOWS_1252};

use crate::error::ExtractError;
use crate::extract::{FileExtract, FileKind, TextFormat};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, SAMPLE_WINDOW_BYTES};
use crate::sniff;
use crate::table::TableSample;
use crate::values::HEADER_VOTE_ROWS;
use dialect::Detected;

/// First window read for samples; grown up to `SAMPLE_WINDOW_BYTES` when
/// records are long.
const FIRST_WINDOW: u64 = 64 * 1024;
/// Records read beyond the samples so the header vote has data to compare with.
const VOTING_ROWS: usize = 20;

/// Reads delimited text.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExtractor;

impl Extractor for CsvExtractor {
    fn supports(&self, mime: &str) -> bool {
        matches!(mime, sniff::CSV | sniff::TSV | sniff::TEXT)
    }

    fn extract(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        let (mut extract, head) = self.preview_with_head(input, options)?;
        let io_err = |e: io::Error| ExtractError::io(input.display, e);
        let total = input.size;
        let mut report = |done: u64| {
            progress(Progress {
                done: done.min(total),
                total,
            })
        };
        let records = if head.detected.ascii_compatible() {
            count::count_file(input.path, head.delimiter, &mut report)
        } else {
            let encoding = head.detected.encoding;
            count::count_records(
                || {
                    Ok(encoding_rs_io::DecodeReaderBytesBuilder::new()
                        .encoding(Some(encoding))
                        .build(File::open(input.path)?))
                },
                head.delimiter,
                &mut report,
            )
        }
        .map_err(io_err)?;
        let above = extract.header_row.map_or(0, |h| u64::from(h) - 1);
        extract.row_count = records
            .saturating_sub(u64::from(extract.has_header == Some(true)))
            .saturating_sub(above);
        Ok(extract)
    }

    /// Columns and masked samples from the start of the file; `row_count` is
    /// only the number of data records read so far.
    fn preview(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
    ) -> Result<FileExtract, ExtractError> {
        self.preview_with_head(input, options)
            .map(|(extract, _)| extract)
    }

    fn values(
        &self,
        input: &Input<'_>,
        options: &crate::values::ValueOptions,
        sink: &mut dyn crate::values::ValueSink,
    ) -> Result<(), ExtractError> {
        values::visit(input, options, sink)
    }
}

impl CsvExtractor {
    fn preview_with_head(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
    ) -> Result<(FileExtract, Head), ExtractError> {
        let prefer = (input.mime == sniff::TSV).then_some(b'\t');
        let mut head = read_head(input, options.samples + VOTING_ROWS + 1, prefer)
            .map_err(|e| ExtractError::io(input.display, e))?;
        let sample = TableSample::from_head(&head.records, options.samples);
        let mut extract = FileExtract::new(input.filename, FileKind::Csv);
        extract.row_count =
            (head.records.len() as u64).saturating_sub(u64::from(sample.has_header));
        extract.row_count = extract.row_count.saturating_sub(sample.title_rows as u64);
        extract.header_row = (sample.title_rows > 0).then(|| sample.title_rows as u32 + 1);
        extract.rows_above = sample.rows_above;
        extract.units = sample.units;
        extract.columns = sample.columns;
        extract.sample_rows = sample.sample_rows;
        extract.has_header = Some(sample.has_header);
        extract.text_format = Some(TextFormat {
            delimiter: char::from(head.delimiter).to_string(),
            encoding: head.detected.encoding.name().to_owned(),
        });
        extract.warnings = std::mem::take(&mut head.warnings);
        extract.warnings.extend(sample.warnings);
        Ok((extract, head))
    }
}

/// The records of a delimited file, decoded to UTF-8.
pub(crate) type Records = csv::Reader<Box<dyn Read + Send>>;

/// A reader over the records of the delimited file `input` (at most
/// `max_bytes` of it), in the dialect the extract reads it with: encoding and
/// delimiter sniffed from the same head, decoded to UTF-8, byte-order mark
/// skipped; with that encoding and delimiter, for a second pass.
pub(crate) fn open_records(
    input: &Input<'_>,
    max_bytes: u64,
) -> Result<(Records, Detected, u8), ExtractError> {
    let io_err = |e: io::Error| ExtractError::io(input.display, e);
    let prefer = (input.mime == sniff::TSV).then_some(b'\t');
    // As many records as the extract's default head, so the dialect is its.
    let head = read_head(input, HEADER_VOTE_ROWS, prefer).map_err(io_err)?;
    let reader = open_decoded(input.path, head.detected, max_bytes).map_err(io_err)?;
    let csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(head.delimiter)
        .from_reader(reader);
    Ok((csv, head.detected, head.delimiter))
}

/// The file as UTF-8 bytes, its byte-order mark skipped, at most `max` bytes read.
pub(crate) fn open_decoded(
    path: &Path,
    detected: Detected,
    max: u64,
) -> io::Result<Box<dyn Read + Send>> {
    let file = File::open(path)?.take(max);
    Ok(if detected.encoding == UTF_8 {
        let mut r = BufReader::with_capacity(1 << 20, file);
        io::copy(&mut (&mut r).take(detected.bom as u64), &mut io::sink())?;
        Box::new(r)
    } else {
        Box::new(BufReader::with_capacity(
            1 << 20,
            encoding_rs_io::DecodeReaderBytesBuilder::new()
                .encoding(Some(detected.encoding))
                .build(file),
        ))
    })
}

/// The first records of a file and the dialect they were read with.
#[derive(Debug)]
struct Head {
    records: Vec<Vec<String>>,
    delimiter: u8,
    detected: Detected,
    warnings: Vec<String>,
}

/// Reads the first `want` records, growing the window until they are all in
/// it, the file ends, or the window reaches `SAMPLE_WINDOW_BYTES`.
fn read_head(input: &Input<'_>, want: usize, prefer: Option<u8>) -> io::Result<Head> {
    let mut window = FIRST_WINDOW;
    loop {
        let mut bytes = Vec::new();
        File::open(input.path)?
            .take(window)
            .read_to_end(&mut bytes)?;
        let at_eof = (bytes.len() as u64) < window;
        let detected = dialect::detect_encoding(&bytes);
        let text = decode(&bytes[detected.bom..], detected);
        let delimiter = dialect::sniff_delimiter(&text, prefer);
        let (records, complete) = parse(&text, delimiter, want);
        let grow = !complete && !at_eof && window < SAMPLE_WINDOW_BYTES;
        if grow {
            window = (window * 8).min(SAMPLE_WINDOW_BYTES);
            continue;
        }
        let mut warnings = Vec::new();
        if !complete && !at_eof {
            // The window ends inside a record: keep its start, cut, as the seed's
            // samples are cut anyway; the count pass still reads it whole.
            warnings.push(format!(
                "a record near the start is longer than {} MiB; only its start is shown in the samples",
                SAMPLE_WINDOW_BYTES / (1024 * 1024)
            ));
        }
        return Ok(Head {
            records,
            delimiter,
            detected,
            warnings,
        });
    }
}

/// Decodes the head window; a character cut by the end of the window becomes U+FFFD.
fn decode(bytes: &[u8], detected: Detected) -> String {
    if detected.encoding == UTF_8 {
        String::from_utf8_lossy(bytes).into_owned()
    } else if detected.encoding == WINDOWS_1252 {
        WINDOWS_1252
            .decode_without_bom_handling(bytes)
            .0
            .into_owned()
    } else {
        detected
            .encoding
            .decode_without_bom_handling(bytes)
            .0
            .into_owned()
    }
}

/// Parses up to `want` records; `complete` is true when `want` records were
/// read and the last of them ended before the end of `text`.
fn parse(text: &str, delimiter: u8, want: usize) -> (Vec<Vec<String>>, bool) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    let mut record = csv::StringRecord::new();
    while records.len() < want {
        match reader.read_record(&mut record) {
            Ok(true) => records.push(record.iter().map(str::to_owned).collect()),
            // Invalid UTF-8 cannot happen on a &str; any other error ends the head.
            Ok(false) | Err(_) => return (records, false),
        }
    }
    let complete = (reader.position().byte() as usize) < text.len();
    (records, complete)
}
