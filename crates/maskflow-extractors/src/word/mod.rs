//! Word documents (.docx) through zip + quick-xml: headings with their
//! levels, a masked text preview, tables as columns plus masked sample rows,
//! and the page count Word recorded.
//!
//! This module owns the zip container: it refuses a zip bomb from the sizes
//! the central directory declares (through [`zipguard`]), and reads every
//! part through a cap so a lying header cannot blow memory either. [`body`]
//! owns the XML.

mod body;
mod values;

use std::fs::File;
use std::io::{BufReader, Read, Seek};

use zip::ZipArchive;
use zip::result::ZipError;

use crate::error::ExtractError;
use crate::extract::{DocumentExtract, FileExtract, FileKind};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, MAX_SAMPLES, MAX_ZIP_MEMBER_BYTES};
use crate::{sniff, zipguard};

use body::{PartError, StyleLevels};

const DOCUMENT_PART: &str = "word/document.xml";
const STYLES_PART: &str = "word/styles.xml";
const APP_PART: &str = "docProps/app.xml";
/// Largest styles.xml or app.xml read; they are metadata and never large.
const SMALL_PART_BYTES: u64 = 16 * 1024 * 1024;

/// Reads .docx: headings with levels, masked text preview, tables.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordExtractor;

impl Extractor for WordExtractor {
    fn supports(&self, mime: &str) -> bool {
        mime == sniff::DOCX
    }

    fn extract(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        let file = input.display;
        let handle = File::open(input.path).map_err(|e| ExtractError::io(file, e))?;
        let mut archive =
            ZipArchive::new(BufReader::new(handle)).map_err(|e| zip_error(file, e))?;
        zipguard::check_archive(&archive, file, "document")?;

        let mut extract = FileExtract::new(input.filename, FileKind::Word);
        let styles = match read_part(&mut archive, STYLES_PART, SMALL_PART_BYTES, |r| {
            body::parse_styles(r)
        }) {
            Ok(Some(styles)) => styles,
            Ok(None) => StyleLevels::default(),
            Err(_) => {
                extract.warnings.push(
                    "the document's style definitions could not be read; headings are \
                     recognised by Word's built-in style names only"
                        .into(),
                );
                StyleLevels::default()
            }
        };
        let page_count = read_part(&mut archive, APP_PART, SMALL_PART_BYTES, |r| {
            body::parse_pages(r)
        })
        .ok()
        .flatten()
        .flatten();

        let samples = options.samples.clamp(1, MAX_SAMPLES);
        let body = match read_part(&mut archive, DOCUMENT_PART, MAX_ZIP_MEMBER_BYTES, |r| {
            body::parse_body(r, &styles, samples)
        }) {
            Ok(Some(body)) => body,
            Ok(None) => {
                return Err(ExtractError::damaged(
                    file,
                    "the document is damaged: it has no word/document.xml part, so it is not a \
                     Word document",
                ));
            }
            Err(PartFailure::Zip(e)) => return Err(zip_error(file, e)),
            Err(PartFailure::TooLarge) => {
                return Err(ExtractError::TooLarge {
                    file: file.to_owned(),
                    what: "document",
                    detail: format!(
                        "word/document.xml is larger than {}",
                        zipguard::human(MAX_ZIP_MEMBER_BYTES)
                    ),
                });
            }
            Err(PartFailure::Part(PartError::Io)) => {
                return Err(ExtractError::damaged(
                    file,
                    "the document is damaged: its text part (word/document.xml) cannot be \
                     decompressed",
                ));
            }
            Err(PartFailure::Part(PartError::Xml)) => {
                return Err(ExtractError::damaged(
                    file,
                    "the document is damaged: its text part (word/document.xml) is not \
                     well-formed XML",
                ));
            }
        };

        if let Some(first) = body.tables.first() {
            extract.columns = first.columns.clone();
            extract.sample_rows = first.sample_rows.clone();
            extract.row_count = first.row_count;
            extract.has_header = body.first_has_header;
        }
        extract.warnings.extend(body.warnings);
        extract.document = Some(DocumentExtract {
            page_count,
            headings: body.headings,
            text_preview: body.text_preview,
            tables: body.tables,
        });
        progress(Progress {
            done: input.size,
            total: input.size,
        });
        Ok(extract)
    }

    fn values(
        &self,
        input: &Input<'_>,
        _options: &crate::values::ValueOptions,
        sink: &mut dyn crate::values::ValueSink,
    ) -> Result<(), ExtractError> {
        let file = input.display;
        let handle = File::open(input.path).map_err(|e| ExtractError::io(file, e))?;
        let mut archive =
            ZipArchive::new(BufReader::new(handle)).map_err(|e| zip_error(file, e))?;
        zipguard::check_archive(&archive, file, "document")?;
        match read_part(&mut archive, DOCUMENT_PART, MAX_ZIP_MEMBER_BYTES, |r| {
            values::visit(r, sink)
        }) {
            Ok(Some(())) => Ok(()),
            Ok(None) => Err(ExtractError::damaged(
                file,
                "the document has no word/document.xml part, so it is not a Word document",
            )),
            Err(PartFailure::Zip(e)) => Err(zip_error(file, e)),
            Err(PartFailure::TooLarge) => Err(ExtractError::TooLarge {
                file: file.to_owned(),
                what: "document",
                detail: "word/document.xml is too large".into(),
            }),
            Err(PartFailure::Part(_)) => Err(ExtractError::damaged(
                file,
                "the document is damaged: its text part (word/document.xml) cannot be read",
            )),
        }
    }
}

/// Why a part could not be read.
#[derive(Debug)]
enum PartFailure {
    Zip(ZipError),
    TooLarge,
    Part(PartError),
}

/// Reads one part through `parse`, at most `cap` decompressed bytes of it.
/// `Ok(None)` when the archive has no such part.
fn read_part<R: Read + Seek, T>(
    archive: &mut ZipArchive<R>,
    name: &str,
    cap: u64,
    parse: impl FnOnce(&mut BufReader<std::io::Take<zip::read::ZipFile<'_, R>>>) -> Result<T, PartError>,
) -> Result<Option<T>, PartFailure> {
    let entry = match archive.by_name(name) {
        Ok(entry) => entry,
        Err(ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(PartFailure::Zip(e)),
    };
    let mut reader = BufReader::new(entry.take(cap));
    let parsed = parse(&mut reader);
    if reader.get_ref().limit() == 0 {
        // The cap was reached: whatever the header said, the part is bigger.
        let mut probe = [0u8; 1];
        if reader.get_mut().get_mut().read(&mut probe).unwrap_or(0) > 0 {
            return Err(PartFailure::TooLarge);
        }
    }
    parsed.map(Some).map_err(PartFailure::Part)
}

/// Turns a zip error into a sentence (the zip crate's messages can quote the file).
fn zip_error(file: &str, error: ZipError) -> ExtractError {
    let reason = match error {
        ZipError::InvalidPassword => {
            return ExtractError::Encrypted {
                file: file.to_owned(),
                what: "document",
            };
        }
        ZipError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            "the document is damaged: the zip archive is truncated"
        }
        ZipError::Io(_) => "the document could not be read",
        ZipError::InvalidArchive(_) => {
            "the document is damaged: the zip archive is truncated or corrupt"
        }
        ZipError::UnsupportedArchive(_) | ZipError::CompressionMethodNotSupported(_) => {
            "the document uses a zip feature Maskflow cannot read"
        }
        _ => "the document is damaged and cannot be read",
    };
    ExtractError::damaged(file, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_beyond_its_cap_is_too_large() {
        let mut out = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut out);
            w.start_file(
                DOCUMENT_PART,
                zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated),
            )
            .expect("zip entry");
            std::io::Write::write_all(&mut w, &vec![b' '; 10_000]).expect("write");
            w.finish().expect("zip finished");
        }
        out.set_position(0);
        let mut archive = ZipArchive::new(out).expect("zip reads");
        let result = read_part(&mut archive, DOCUMENT_PART, 1000, |r| {
            let mut sink = Vec::new();
            r.read_to_end(&mut sink).map_err(|_| PartError::Io)
        });
        assert!(matches!(result, Err(PartFailure::TooLarge)), "{result:?}");
    }
}
