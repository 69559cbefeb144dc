//! PDF documents through lopdf: the page count, a masked text preview of the
//! first pages, masked headings from the document outline (bookmarks), and
//! the tables found from where the text sits on each page ([`tables`]).
//!
//! lopdf loads the whole file into memory; every stream it inflates is capped
//! at [`MAX_STREAM_BYTES`], and the outline walk is bounded in depth and in
//! size so a hostile file cannot loop or recurse without end. Page content is
//! read within a [`ContentBudget`]: lopdf parses a page's operators all at
//! once, at some 70 bytes of memory per byte of content, and one small
//! compressed stream can be every page's content.

mod layout;
mod tables;

use std::collections::{BTreeMap, HashSet};

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};

use crate::error::ExtractError;
use crate::extract::{DocumentExtract, FileExtract, FileKind, Heading, TableExtract};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, MAX_VALUE_CHARS, PREVIEW_PAGES, TEXT_PREVIEW_CHARS};
use crate::mask::mask;
use crate::sniff;
use crate::table::{TableSample, cut};
use crate::values::{HEADER_VOTE_ROWS, ValueOptions, ValueSink, visit_table, visit_text};

/// Largest size one PDF stream may inflate to, whether while loading or while
/// reading a page's text.
pub const MAX_STREAM_BYTES: usize = 64 * 1024 * 1024;
/// Most bytes of one page's content read for its text or tables: a page of
/// dense text or a table is tens of kilobytes; a 60 MiB page took 24 s and
/// 4.6 GB to read.
pub const MAX_PAGE_CONTENT_BYTES: usize = 4 * 1024 * 1024;
/// Most bytes of page content read in one pass over a document.
pub const MAX_DOCUMENT_CONTENT_BYTES: usize = 64 * 1024 * 1024;
/// Most outline entries read as headings.
const MAX_HEADINGS: usize = 500;
/// Deepest outline nesting followed.
const MAX_OUTLINE_DEPTH: usize = 32;
/// Most outline nodes visited (a guard against huge or cyclic outlines).
const MAX_OUTLINE_NODES: usize = 10_000;
/// Most pages searched for tables.
const MAX_TABLE_PAGES: usize = 1_000;
/// Most tables shown in an extract (the rest are counted in a warning).
const MAX_TABLES: usize = 50;

/// Reads PDFs: page count, masked text preview, headings from the outline.
#[derive(Debug, Clone, Copy, Default)]
pub struct PdfExtractor;

impl Extractor for PdfExtractor {
    fn supports(&self, mime: &str) -> bool {
        mime == sniff::PDF
    }

    fn extract(
        &self,
        input: &Input<'_>,
        options: &ExtractOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FileExtract, ExtractError> {
        let (doc, pages) = load(input)?;
        let mut extract = FileExtract::new(input.filename, FileKind::Pdf);
        if doc.xref_recovery.is_some() {
            extract.warnings.push(
                "the PDF looks damaged or truncated (its cross-reference table had to be rebuilt); \
                 what could be read is shown"
                    .into(),
            );
        }
        let mut budget = ContentBudget::default();
        let (text, undecodable) = preview_text(&doc, &pages, &mut budget);
        if undecodable {
            extract.warnings.push(
                "some text on the first pages could not be decoded and is left out of the preview"
                    .into(),
            );
        }
        if text.trim().is_empty() {
            extract.warnings.push(format!(
                "no text was found on the first {} page(s); the PDF may hold scanned images, \
                 which are not read",
                pages.len().min(PREVIEW_PAGES as usize)
            ));
        }
        let headings = outline_headings(&doc);
        let found = page_tables(&doc, &pages, &mut budget);
        extract.warnings.extend(found.warnings());
        extract.warnings.extend(budget.warning());
        let tables = table_extracts(found.tables, options.samples, &mut extract.warnings);
        extract.document = Some(DocumentExtract {
            page_count: Some(u32::try_from(pages.len()).unwrap_or(u32::MAX)),
            headings,
            text_preview: mask(&cut(&text, TEXT_PREVIEW_CHARS)),
            tables,
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
        _options: &ValueOptions,
        sink: &mut dyn ValueSink,
    ) -> Result<(), ExtractError> {
        visit_pages(input, sink)
    }
}

/// Loads the PDF `input` with every stream capped, refusing a truncated,
/// encrypted or page-less file; returns the document and its pages.
fn load(input: &Input<'_>) -> Result<(Document, BTreeMap<u32, ObjectId>), ExtractError> {
    let file = input.display;
    let bytes = std::fs::read(input.path).map_err(|e| ExtractError::io(file, e))?;
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_STREAM_BYTES),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(&bytes, options).map_err(|e| load_error(file, &e))?;
    // lopdf rebuilds a broken cross-reference table by scanning the file;
    // when the end-of-file marker is missing too, the file was cut short
    // and what the scan finds is mostly empty pages.
    if doc.xref_recovery.is_some() && !has_eof_marker(&bytes) {
        return Err(ExtractError::damaged(
            file,
            "the PDF is truncated: the file ends before its end-of-file marker",
        ));
    }
    drop(bytes);
    if doc.trailer.get(b"Encrypt").is_ok() && doc.encryption_state.is_none() {
        // Encrypted, and the empty user password does not open it.
        return Err(encrypted(file));
    }
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err(ExtractError::damaged(
            file,
            "the PDF is damaged or truncated: no page could be found in it",
        ));
    }
    Ok((doc, pages))
}

/// Visits the text of every page, line by line, then the cells of every
/// table found (so the guard knows a cell as a value of its own).
fn visit_pages(input: &Input<'_>, sink: &mut dyn ValueSink) -> Result<(), ExtractError> {
    let (doc, pages) = load(input)?;
    let mut budget = ContentBudget::default();
    let found = page_tables(&doc, &pages, &mut budget);
    for (&number, &page_id) in &pages {
        if budget.take(&doc, page_id).is_none() {
            continue;
        }
        let mut text = String::new();
        for chunk in doc
            .extract_text_chunks_with_limit(&[number], MAX_PAGE_CONTENT_BYTES)
            .into_iter()
            .flatten()
        {
            text.push_str(&chunk);
        }
        visit_text(sink, &text);
    }
    for rows in found.tables {
        let rest = rows.get(HEADER_VOTE_ROWS..).unwrap_or_default().to_vec();
        let head = rows.into_iter().take(HEADER_VOTE_ROWS).collect();
        visit_table(sink, None, head, &mut rest.into_iter());
    }
    Ok(())
}

/// What is left of a pass's page content ([`MAX_PAGE_CONTENT_BYTES`] a page,
/// [`MAX_DOCUMENT_CONTENT_BYTES`] in all), and the pages left unread.
struct ContentBudget {
    left: usize,
    skipped: HashSet<ObjectId>,
}

impl Default for ContentBudget {
    fn default() -> Self {
        Self {
            left: MAX_DOCUMENT_CONTENT_BYTES,
            skipped: HashSet::new(),
        }
    }
}

impl ContentBudget {
    /// The content of page `page_id` when it fits what is left, charged
    /// against it; `None` when it does not (the page is noted as left
    /// unread) or cannot be read at all.
    fn take(&mut self, doc: &Document, page_id: ObjectId) -> Option<Vec<u8>> {
        let limit = MAX_PAGE_CONTENT_BYTES.min(self.left);
        match doc.get_page_content_with_limit(page_id, limit) {
            Ok(content) => {
                self.left -= content.len();
                Some(content)
            }
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => {
                self.skipped.insert(page_id);
                None
            }
            Err(_) => None,
        }
    }

    /// A note for the user naming how many pages were left unread, if any.
    fn warning(&self) -> Option<String> {
        (!self.skipped.is_empty()).then(|| {
            format!(
                "{} page(s) were not read for text or tables: their content is larger than \
                 Maskflow reads ({} MiB a page, {} MiB in all)",
                self.skipped.len(),
                MAX_PAGE_CONTENT_BYTES >> 20,
                MAX_DOCUMENT_CONTENT_BYTES >> 20
            )
        })
    }
}

/// The tables found on a document's pages, and the pages that could not be read for them.
struct FoundTables {
    tables: Vec<Vec<Vec<String>>>,
    unreadable_pages: usize,
    unsearched_pages: usize,
}

impl FoundTables {
    /// Notes for the user about pages not searched.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.unreadable_pages > 0 {
            warnings.push(format!(
                "{} page(s) could not be searched for tables (their content is damaged)",
                self.unreadable_pages
            ));
        }
        if self.unsearched_pages > 0 {
            warnings.push(format!(
                "only the first {MAX_TABLE_PAGES} pages were searched for tables; {} more were not",
                self.unsearched_pages
            ));
        }
        warnings
    }
}

/// Finds the tables of each page in turn (a table never spans two pages here).
fn page_tables(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    budget: &mut ContentBudget,
) -> FoundTables {
    let mut found = FoundTables {
        tables: Vec::new(),
        unreadable_pages: 0,
        unsearched_pages: pages.len().saturating_sub(MAX_TABLE_PAGES),
    };
    for &page_id in pages.values().take(MAX_TABLE_PAGES) {
        let Some(content) = budget.take(doc, page_id) else {
            if !budget.skipped.contains(&page_id) {
                found.unreadable_pages += 1;
            }
            continue;
        };
        match layout::page_segments(doc, page_id, &content) {
            Ok(segments) => found.tables.extend(tables::find_tables(segments)),
            Err(_) => found.unreadable_pages += 1,
        }
    }
    found
}

/// Each table as an extract shows it: header decided as for a sheet,
/// masked samples, the row count without the header.
fn table_extracts(
    tables: Vec<Vec<Vec<String>>>,
    samples: usize,
    warnings: &mut Vec<String>,
) -> Vec<TableExtract> {
    if tables.len() > MAX_TABLES {
        warnings.push(format!(
            "only the first {MAX_TABLES} tables are shown; {} more are not",
            tables.len() - MAX_TABLES
        ));
    }
    tables
        .into_iter()
        .take(MAX_TABLES)
        .enumerate()
        .map(|(i, rows)| {
            let head = &rows[..rows.len().min(HEADER_VOTE_ROWS.max(samples + 1))];
            let sample = TableSample::from_head(head, samples);
            warnings.extend(
                sample
                    .warnings
                    .into_iter()
                    .map(|w| format!("table {}: {w}", i + 1)),
            );
            TableExtract {
                columns: sample.columns,
                sample_rows: sample.sample_rows,
                row_count: (rows.len() as u64).saturating_sub(u64::from(sample.has_header)),
            }
        })
        .collect()
}

/// Whether `%%EOF` appears near the end of the file (trailing junk after it is common).
fn has_eof_marker(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(2048)..];
    memchr::memmem::find(tail, b"%%EOF").is_some()
}

fn encrypted(file: &str) -> ExtractError {
    ExtractError::Encrypted {
        file: file.to_owned(),
        what: "PDF",
    }
}

/// Turns a lopdf loading error into a sentence; lopdf's own messages can
/// carry offsets and names from the file, so they are not passed on.
fn load_error(file: &str, error: &lopdf::Error) -> ExtractError {
    use lopdf::{Error as E, ParseError as P};
    let reason = match error {
        E::InvalidPassword | E::Decryption(_) | E::AlreadyEncrypted => return encrypted(file),
        E::Parse(P::InvalidFileHeader) => "the file is not a PDF: its PDF header is missing",
        E::Parse(P::EndOfInput) => "the PDF is truncated: the file ends too early",
        E::Parse(_) | E::Xref(_) | E::MissingXrefEntry | E::InvalidOffset(_) => {
            "the PDF is damaged or truncated: its cross-reference table cannot be read"
        }
        E::Decompress(_) => {
            "the PDF is damaged or holds a stream that inflates beyond what Maskflow accepts"
        }
        E::IO(_) => "the PDF could not be read",
        E::ReferenceCycle(_) | E::ReferenceLimit | E::RecursionLimit => {
            "the PDF is damaged: its objects refer to each other in a loop"
        }
        E::Unimplemented(_) => "the PDF uses a feature Maskflow cannot read",
        _ => "the PDF is damaged and cannot be read",
    };
    ExtractError::damaged(file, reason)
}

/// The text of the first pages, whitespace-tidied and cut a little beyond
/// the preview length; and whether some text could not be decoded.
fn preview_text(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    budget: &mut ContentBudget,
) -> (String, bool) {
    let mut text = String::new();
    let mut undecodable = false;
    for (&number, &page_id) in pages.iter().take(PREVIEW_PAGES as usize) {
        if budget.take(doc, page_id).is_none() {
            continue;
        }
        for chunk in doc.extract_text_chunks_with_limit(&[number], MAX_PAGE_CONTENT_BYTES) {
            match chunk {
                Ok(chunk) => text.push_str(&chunk),
                Err(_) => undecodable = true,
            }
        }
        text.push('\n');
        // Enough to fill the preview even after blank lines are dropped.
        if text.len() > TEXT_PREVIEW_CHARS * 8 {
            break;
        }
    }
    let tidy = text
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    (tidy, undecodable)
}

/// Headings from the outline: each entry's title, masked, with its nesting
/// depth as the level. Broken entries are skipped, never fatal.
fn outline_headings(doc: &Document) -> Vec<Heading> {
    let mut headings = Vec::new();
    let Some(first) = doc
        .catalog()
        .ok()
        .and_then(|catalog| deref_dict(doc, catalog.get(b"Outlines").ok()?))
        .and_then(|outlines| outlines.get(b"First").ok())
    else {
        return headings;
    };
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut visited = 0usize;
    // Depth-first, in document order: a stack of (node, depth).
    let mut stack: Vec<(&Object, usize)> = vec![(first, 1)];
    while let Some((object, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_OUTLINE_NODES || headings.len() >= MAX_HEADINGS {
            break;
        }
        if let Object::Reference(id) = object
            && !seen.insert(*id)
        {
            continue;
        }
        let Some(node) = deref_dict(doc, object) else {
            continue;
        };
        if let Some(title) = node
            .get_deref(b"Title", doc)
            .ok()
            .and_then(|t| lopdf::decode_text_string(t).ok())
        {
            let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
            if !title.is_empty() {
                headings.push(Heading {
                    level: u8::try_from(depth).unwrap_or(u8::MAX),
                    text: mask(&cut(&title, MAX_VALUE_CHARS)),
                });
            }
        }
        // Push the sibling first so the children are read before it.
        if let Ok(next) = node.get(b"Next") {
            stack.push((next, depth));
        }
        if depth < MAX_OUTLINE_DEPTH
            && let Ok(child) = node.get(b"First")
        {
            stack.push((child, depth + 1));
        }
    }
    headings
}

fn deref_dict<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match object {
        Object::Dictionary(dict) => Some(dict),
        Object::Reference(id) => doc.get_dictionary(*id).ok(),
        _ => None,
    }
}
