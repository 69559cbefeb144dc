//! PDF documents through lopdf: the page count, a masked text preview of the
//! first pages, and masked headings from the document outline (bookmarks).
//!
//! lopdf loads the whole file into memory; every stream it inflates is capped
//! at [`MAX_STREAM_BYTES`], and the outline walk is bounded in depth and in
//! size so a hostile file cannot loop or recurse without end.

use std::collections::HashSet;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};

use crate::error::ExtractError;
use crate::extract::{DocumentExtract, FileExtract, FileKind, Heading};
use crate::extractor::{Extractor, Input, Progress};
use crate::limits::{ExtractOptions, MAX_VALUE_CHARS, PREVIEW_PAGES, TEXT_PREVIEW_CHARS};
use crate::mask::mask;
use crate::sniff;
use crate::table::cut;
use crate::values::{ValueOptions, ValueSink, visit_text};

/// Largest size one PDF stream may inflate to, whether while loading or while
/// reading a page's text.
pub const MAX_STREAM_BYTES: usize = 64 * 1024 * 1024;
/// Most outline entries read as headings.
const MAX_HEADINGS: usize = 500;
/// Deepest outline nesting followed.
const MAX_OUTLINE_DEPTH: usize = 32;
/// Most outline nodes visited (a guard against huge or cyclic outlines).
const MAX_OUTLINE_NODES: usize = 10_000;

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
        _options: &ExtractOptions,
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
        let (text, undecodable) = preview_text(&doc, &pages);
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
        extract.document = Some(DocumentExtract {
            page_count: Some(u32::try_from(pages.len()).unwrap_or(u32::MAX)),
            headings,
            text_preview: mask(&cut(&text, TEXT_PREVIEW_CHARS)),
            tables: Vec::new(),
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
fn load(
    input: &Input<'_>,
) -> Result<(Document, std::collections::BTreeMap<u32, ObjectId>), ExtractError> {
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

/// Visits the text of every page, line by line.
fn visit_pages(input: &Input<'_>, sink: &mut dyn ValueSink) -> Result<(), ExtractError> {
    let (doc, pages) = load(input)?;
    for &number in pages.keys() {
        let mut text = String::new();
        for chunk in doc
            .extract_text_chunks_with_limit(&[number], MAX_STREAM_BYTES)
            .into_iter()
            .flatten()
        {
            text.push_str(&chunk);
        }
        visit_text(sink, &text);
    }
    Ok(())
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
    pages: &std::collections::BTreeMap<u32, ObjectId>,
) -> (String, bool) {
    let mut text = String::new();
    let mut undecodable = false;
    for &number in pages.keys().take(PREVIEW_PAGES as usize) {
        for chunk in doc.extract_text_chunks_with_limit(&[number], MAX_STREAM_BYTES) {
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
