//! The XML parts of a .docx, read as a stream: `word/document.xml` (text,
//! headings, tables), `word/styles.xml` (which styles are headings) and
//! `docProps/app.xml` (the page count Word last saved).
//!
//! Everything taken from the text is masked before it leaves this module,
//! except table rows, which go raw to [`TableSample::from_head`] (it decides
//! on the header row and masks the rest). Buffers are capped, so one huge
//! paragraph or cell cannot grow memory.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};

use crate::extract::{Heading, TableExtract};
use crate::limits::{MAX_VALUE_CHARS, TEXT_PREVIEW_CHARS};
use crate::mask::mask;
use crate::table::{TableSample, cut};

/// Most headings kept.
const MAX_HEADINGS: usize = 500;
/// Most tables kept (the rest are counted in a warning).
const MAX_TABLES: usize = 50;
/// Bytes kept of one paragraph: enough for the whole preview in any script.
const PARAGRAPH_CAP: usize = (TEXT_PREVIEW_CHARS + 1) * 4;
/// Bytes kept of one table cell: enough to know it is longer than a sample value.
const CELL_CAP: usize = (MAX_VALUE_CHARS + 1) * 4;

/// Why a part could not be read.
#[derive(Debug)]
pub(super) enum PartError {
    /// The bytes could not be read (decompression failed, checksum, I/O).
    Io,
    /// The part is not well-formed XML.
    Xml,
}

/// What `word/document.xml` holds, masked.
#[derive(Debug, Default)]
pub(super) struct Body {
    /// Headings in document order, masked.
    pub headings: Vec<Heading>,
    /// Paragraph text outside tables joined by newlines, masked and cut.
    pub text_preview: String,
    /// Tables in document order.
    pub tables: Vec<TableExtract>,
    /// Whether the first table had a header row.
    pub first_has_header: Option<bool>,
    /// Notes for the user (never a value from the file).
    pub warnings: Vec<String>,
}

/// Heading levels of the styles a document defines, by style id.
#[derive(Debug, Default)]
pub(super) struct StyleLevels(HashMap<String, u8>);

impl StyleLevels {
    /// The heading level of style `id`: from styles.xml when it defines the
    /// style, else from Word's built-in ids (`Title`, `Heading1`…`Heading9`).
    pub fn level(&self, id: &str) -> Option<u8> {
        match self.0.get(id) {
            Some(&level) => Some(level),
            None if self.0.contains_key(&format!("\0{id}")) => None,
            None => level_from_name(id),
        }
    }
}

/// "Title" → 1, "Heading 3" / "heading3" / "Heading3" → 3 (1..=9).
fn level_from_name(name: &str) -> Option<u8> {
    let lower = name.trim().to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let rest = lower.strip_prefix("heading")?.trim_start();
    match rest.parse::<u8>() {
        Ok(n @ 1..=9) => Some(n),
        _ => None,
    }
}

fn attr(e: &BytesStart<'_>, local: &str) -> Option<String> {
    e.attributes().flatten().find_map(|a| {
        (a.key.local_name().as_ref() == local)
            .then(|| a.normalized_value(XmlVersion::Implicit1_0).ok())
            .flatten()
            .map(|v| v.into_owned())
    })
}

/// Reads `word/styles.xml`: a style is a heading when its name is "heading N"
/// or "Title" (the names are language-independent even where the ids are
/// not), or when it, or a style it is based on, sets an outline level.
pub(super) fn parse_styles<R: BufRead>(input: R) -> Result<StyleLevels, PartError> {
    struct Style {
        name_level: Option<u8>,
        outline: Option<u8>,
        based_on: Option<String>,
    }
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut styles: HashMap<String, Style> = HashMap::new();
    let mut current: Option<(String, Style)> = None;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let name = e.local_name();
                match name.as_ref() {
                    "style" => {
                        if let Some((id, style)) = current.take() {
                            styles.insert(id, style);
                        }
                        if let Some(id) = attr(e, "styleId") {
                            current = Some((
                                id,
                                Style {
                                    name_level: None,
                                    outline: None,
                                    based_on: None,
                                },
                            ));
                        }
                    }
                    "name" => {
                        if let (Some((_, style)), Some(v)) = (current.as_mut(), attr(e, "val")) {
                            style.name_level = level_from_name(&v);
                        }
                    }
                    "basedOn" => {
                        if let Some((_, style)) = current.as_mut() {
                            style.based_on = attr(e, "val");
                        }
                    }
                    "outlineLvl" => {
                        if let Some((_, style)) = current.as_mut() {
                            style.outline = attr(e, "val").and_then(|v| outline_level(&v));
                        }
                    }
                    _ => {}
                }
            }
            Event::End(e) if e.local_name().as_ref() == "style" => {
                if let Some((id, style)) = current.take() {
                    styles.insert(id, style);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let mut levels = HashMap::new();
    for (id, style) in &styles {
        // Follow basedOn a few steps (guarding against cycles).
        let mut level = style.name_level.or(style.outline);
        let mut parent = style.based_on.as_deref();
        for _ in 0..10 {
            if level.is_some() {
                break;
            }
            let Some(p) = parent.and_then(|p| styles.get(p)) else {
                break;
            };
            level = p.name_level.or(p.outline);
            parent = p.based_on.as_deref();
        }
        match level {
            Some(level) => levels.insert(id.clone(), level),
            // Defined and not a heading: remembered so a built-in id does not override it.
            None => levels.insert(format!("\0{id}"), 0),
        };
    }
    Ok(StyleLevels(levels))
}

/// `w:outlineLvl` is 0-based, and 9 means body text.
fn outline_level(value: &str) -> Option<u8> {
    match value.trim().parse::<u8>() {
        Ok(n @ 0..=8) => Some(n + 1),
        _ => None,
    }
}

/// Reads `<Pages>` from `docProps/app.xml`.
pub(super) fn parse_pages<R: BufRead>(input: R) -> Result<Option<u32>, PartError> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut in_pages = false;
    loop {
        match reader.read_event_into(&mut buf).map_err(xml_error)? {
            Event::Start(e) => in_pages = e.local_name().as_ref() == "Pages",
            Event::Text(t) if in_pages => return Ok(t.xml10_content().trim().parse().ok()),
            Event::End(_) => in_pages = false,
            Event::Eof => return Ok(None),
            _ => {}
        }
        buf.clear();
    }
}

fn xml_error(e: quick_xml::Error) -> PartError {
    match e {
        quick_xml::Error::Io(_) => PartError::Io,
        _ => PartError::Xml,
    }
}

/// One table being read.
#[derive(Debug, Default)]
struct TableState {
    /// The first rows (header candidate plus samples), raw.
    head: Vec<Vec<String>>,
    /// Rows seen so far.
    rows: u64,
    row: Vec<String>,
    cell: String,
    in_cell: bool,
}

/// Appends `s` to `buf` without letting `buf` grow past `cap` bytes.
fn push_capped(buf: &mut String, s: &str, cap: usize) {
    if buf.len() >= cap {
        return;
    }
    if buf.len() + s.len() <= cap {
        buf.push_str(s);
        return;
    }
    for c in s.chars() {
        if buf.len() + c.len_utf8() > cap {
            break;
        }
        buf.push(c);
    }
}

/// Streams `word/document.xml`.
pub(super) fn parse_body<R: BufRead>(
    input: R,
    styles: &StyleLevels,
    samples: usize,
) -> Result<Body, PartError> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut body = BodyReader::new(styles, samples);
    // Inside mc:Fallback, which repeats what mc:Choice already said.
    let mut skip_depth = 0usize;
    let mut depth = 0usize;

    loop {
        let event = reader.read_event_into(&mut buf).map_err(xml_error)?;
        if skip_depth > 0 {
            match &event {
                Event::Start(_) => skip_depth += 1,
                Event::End(_) => skip_depth -= 1,
                Event::Eof => return Err(PartError::Xml),
                _ => {}
            }
            if skip_depth == 0 {
                depth -= 1;
            }
            buf.clear();
            continue;
        }
        match event {
            Event::Start(e) => {
                depth += 1;
                if e.local_name().as_ref() == "Fallback" {
                    skip_depth = 1;
                } else {
                    body.start(&e);
                }
            }
            Event::Empty(e) => body.empty(&e),
            Event::Text(t) if body.in_text => body.text(&t.xml10_content()),
            Event::CData(t) if body.in_text => body.text(&t.xml10_content()),
            Event::GeneralRef(r) if body.in_text => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => quick_xml::escape::resolve_predefined_entity(&r.xml10_content())
                        .map(str::to_owned),
                };
                if let Some(s) = resolved {
                    body.text(&s);
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                body.end(e.local_name().as_ref());
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if depth != 0 {
        // The part ends in the middle of an element: it was cut short.
        return Err(PartError::Xml);
    }
    Ok(body.finish())
}

/// The state of one pass over `word/document.xml`.
struct BodyReader<'a> {
    styles: &'a StyleLevels,
    samples: usize,
    body: Body,
    preview: String,
    preview_full: bool,
    /// Tables being read, innermost last.
    tables: Vec<TableState>,
    extra_tables: usize,
    /// Paragraphs nest (a text box inside a run): only the outermost one ends a paragraph.
    p_depth: usize,
    para: String,
    para_style: Option<String>,
    para_outline: Option<u8>,
    in_ppr: bool,
    in_text: bool,
}

impl<'a> BodyReader<'a> {
    fn new(styles: &'a StyleLevels, samples: usize) -> Self {
        BodyReader {
            styles,
            samples,
            body: Body::default(),
            preview: String::new(),
            preview_full: false,
            tables: Vec::new(),
            extra_tables: 0,
            p_depth: 0,
            para: String::new(),
            para_style: None,
            para_outline: None,
            in_ppr: false,
            in_text: false,
        }
    }

    fn start(&mut self, e: &BytesStart<'_>) {
        match e.local_name().as_ref() {
            "p" => {
                self.p_depth += 1;
                if self.p_depth == 1 {
                    self.para.clear();
                    self.para_style = None;
                    self.para_outline = None;
                }
            }
            "pPr" if self.p_depth == 1 => self.in_ppr = true,
            "t" => self.in_text = self.p_depth > 0,
            "tbl" => self.tables.push(TableState::default()),
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.row.clear();
                }
            }
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    t.cell.clear();
                    t.in_cell = true;
                }
            }
            _ => self.property(e),
        }
    }

    fn empty(&mut self, e: &BytesStart<'_>) {
        match e.local_name().as_ref() {
            "tab" if self.p_depth > 0 && !self.in_ppr => self.text("\t"),
            "br" | "cr" if self.p_depth > 0 => self.text("\n"),
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    t.row.push(String::new());
                }
            }
            _ => self.property(e),
        }
    }

    fn text(&mut self, s: &str) {
        push_capped(&mut self.para, s, PARAGRAPH_CAP);
    }

    fn end(&mut self, name: &str) {
        match name {
            "t" => self.in_text = false,
            "pPr" if self.p_depth == 1 => self.in_ppr = false,
            "p" => {
                self.p_depth = self.p_depth.saturating_sub(1);
                if self.p_depth == 0 {
                    self.end_paragraph();
                }
            }
            "tc" => {
                if let Some(t) = self.tables.last_mut()
                    && t.in_cell
                {
                    let cell = std::mem::take(&mut t.cell);
                    t.row.push(cell.trim().to_owned());
                    t.in_cell = false;
                }
            }
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.rows += 1;
                    let row = std::mem::take(&mut t.row);
                    if t.head.len() <= self.samples {
                        t.head.push(row);
                    }
                }
            }
            "tbl" => {
                if let Some(t) = self.tables.pop() {
                    if self.body.tables.len() < MAX_TABLES {
                        finish_table(&mut self.body, t, self.samples);
                    } else {
                        self.extra_tables += 1;
                    }
                }
            }
            _ => {}
        }
    }

    /// Records `w:pStyle` / `w:outlineLvl` of the paragraph being read.
    fn property(&mut self, e: &BytesStart<'_>) {
        property(e, self.in_ppr, &mut self.para_style, &mut self.para_outline);
    }

    /// A paragraph ended: its text joins the open cell, or the headings
    /// and the preview.
    fn end_paragraph(&mut self) {
        if let Some(t) = self.tables.last_mut() {
            if t.in_cell {
                if !t.cell.is_empty() {
                    push_capped(&mut t.cell, " ", CELL_CAP);
                }
                push_capped(&mut t.cell, self.para.trim(), CELL_CAP);
            }
            return;
        }
        let text = self.para.trim();
        if text.is_empty() {
            return;
        }
        let level = self.para_outline.or_else(|| {
            self.para_style
                .as_deref()
                .and_then(|s| self.styles.level(s))
        });
        if let Some(level) = level
            && self.body.headings.len() < MAX_HEADINGS
        {
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            self.body.headings.push(Heading {
                level,
                text: mask(&cut(&words, MAX_VALUE_CHARS)),
            });
        }
        if !self.preview_full {
            if !self.preview.is_empty() {
                self.preview.push('\n');
            }
            push_capped(&mut self.preview, text, PARAGRAPH_CAP);
            self.preview_full = self.preview.len() >= PARAGRAPH_CAP;
        }
    }

    /// The body with its warnings and masked preview.
    fn finish(self) -> Body {
        let mut body = self.body;
        if self.extra_tables > 0 {
            body.warnings.push(format!(
                "only the first {MAX_TABLES} tables are shown; {} more are not",
                self.extra_tables
            ));
        }
        if body.headings.len() >= MAX_HEADINGS {
            body.warnings
                .push(format!("only the first {MAX_HEADINGS} headings are shown"));
        }
        body.text_preview = mask(&cut(&self.preview, TEXT_PREVIEW_CHARS));
        body
    }
}

/// Records `w:pStyle` / `w:outlineLvl` of the paragraph being read.
fn property(
    e: &BytesStart<'_>,
    in_ppr: bool,
    style: &mut Option<String>,
    outline: &mut Option<u8>,
) {
    if !in_ppr {
        return;
    }
    match e.local_name().as_ref() {
        // The first one wins: a later one may be tracked-change history (w:pPrChange).
        "pStyle" if style.is_none() => *style = attr(e, "val"),
        "outlineLvl" if outline.is_none() => {
            *outline = attr(e, "val").and_then(|v| outline_level(&v));
        }
        _ => {}
    }
}

fn finish_table(body: &mut Body, table: TableState, samples: usize) {
    let number = body.tables.len() + 1;
    let sample = TableSample::from_head(&table.head, samples);
    let header_rows = u64::from(sample.has_header);
    if body.first_has_header.is_none() {
        body.first_has_header = Some(sample.has_header);
    }
    body.warnings.extend(
        sample
            .warnings
            .into_iter()
            .map(|w| format!("table {number}: {w}")),
    );
    body.tables.push(TableExtract {
        columns: sample.columns,
        sample_rows: sample.sample_rows,
        row_count: table.rows.saturating_sub(header_rows),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

    fn body(xml: &str) -> Body {
        parse_body(xml.as_bytes(), &StyleLevels::default(), 5).expect("parses")
    }

    #[test]
    fn headings_come_from_styles_and_outline_levels() {
        let xml = format!(
            r#"<w:document {W}><w:body>
            <w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Big Plan</w:t></w:r></w:p>
            <w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t xml:space="preserve">Sub </w:t></w:r><w:r><w:t>Part 7</w:t></w:r></w:p>
            <w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Deep</w:t></w:r></w:p>
            <w:p><w:pPr><w:outlineLvl w:val="9"/></w:pPr><w:r><w:t>Body text</w:t></w:r></w:p>
            </w:body></w:document>"#
        );
        let b = body(&xml);
        let got: Vec<(u8, &str)> = b
            .headings
            .iter()
            .map(|h| (h.level, h.text.as_str()))
            .collect();
        assert_eq!(got, [(1, "Aaa Aaaa"), (2, "Aaa Aaaa #"), (3, "Aaaa")]);
        assert_eq!(b.text_preview, "Aaa Aaaa\nAaa Aaaa #\nAaaa\nAaaa aaaa");
    }

    #[test]
    fn localized_style_ids_are_headings_by_their_name() {
        let styles = format!(
            r#"<w:styles {W}>
            <w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>
            <w:style w:type="paragraph" w:styleId="Mine"><w:name w:val="Mine"/><w:basedOn w:val="berschrift1"/></w:style>
            <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="Not a heading"/></w:style>
            <w:style w:type="paragraph" w:styleId="Loop"><w:name w:val="Loop"/><w:basedOn w:val="Loop"/></w:style>
            </w:styles>"#
        );
        let levels = parse_styles(styles.as_bytes()).expect("parses");
        assert_eq!(levels.level("berschrift1"), Some(1));
        assert_eq!(levels.level("Mine"), Some(1));
        assert_eq!(levels.level("Heading2"), None);
        assert_eq!(levels.level("Loop"), None);
        assert_eq!(levels.level("Heading3"), Some(3));
        assert_eq!(levels.level("Normal"), None);
    }

    #[test]
    fn entities_tabs_and_breaks_are_text() {
        let xml = format!(
            r#"<w:document {W}><w:body><w:p><w:r><w:t>A&amp;B&#x41;</w:t><w:tab/><w:t>c</w:t><w:br/><w:t>d</w:t></w:r></w:p></w:body></w:document>"#
        );
        assert_eq!(body(&xml).text_preview, "A&AA\ta\na");
    }

    #[test]
    fn text_box_fallbacks_are_not_read_twice() {
        let xml = format!(
            r#"<w:document {W} xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><w:body><w:p><w:r><w:t>Before</w:t></w:r><w:r><mc:AlternateContent><mc:Choice><w:txbxContent><w:p><w:r><w:t>Boxed</w:t></w:r></w:p></w:txbxContent></mc:Choice><mc:Fallback><w:txbxContent><w:p><w:r><w:t>Boxed</w:t></w:r></w:p></w:txbxContent></mc:Fallback></mc:AlternateContent></w:r></w:p></w:body></w:document>"#
        );
        assert_eq!(body(&xml).text_preview, "AaaaaaAaaaa");
    }

    #[test]
    fn tables_count_rows_and_mask_samples() {
        let mut rows = String::from(
            "<w:tr><w:tc><w:p><w:r><w:t>Name</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Total</w:t></w:r></w:p></w:tc></w:tr>",
        );
        for i in 0..8 {
            rows.push_str(&format!(
                "<w:tr><w:tc><w:p><w:r><w:t>Ann Lee</w:t></w:r></w:p><w:p><w:r><w:t>Jr</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>{i}.50</w:t></w:r></w:p></w:tc></w:tr>"
            ));
        }
        let xml = format!(r#"<w:document {W}><w:body><w:tbl>{rows}</w:tbl></w:body></w:document>"#);
        let b = body(&xml);
        assert_eq!(b.tables.len(), 1);
        let t = &b.tables[0];
        assert_eq!(t.columns, ["Name", "Total"]);
        assert_eq!(t.row_count, 8);
        assert_eq!(t.sample_rows.len(), 5);
        assert_eq!(t.sample_rows[0], ["Aaa Aaa Aa", "#.##"]);
        assert_eq!(b.first_has_header, Some(true));
        assert_eq!(b.text_preview, "", "table text stays out of the preview");
    }

    #[test]
    fn malformed_and_cut_xml_are_errors() {
        let cut = format!(r#"<w:document {W}><w:body><w:p><w:r><w:t>Half"#);
        assert!(matches!(
            parse_body(cut.as_bytes(), &StyleLevels::default(), 5),
            Err(PartError::Xml)
        ));
        let bad = format!(r#"<w:document {W}><w:body></w:p></w:body></w:document>"#);
        assert!(matches!(
            parse_body(bad.as_bytes(), &StyleLevels::default(), 5),
            Err(PartError::Xml)
        ));
    }

    #[test]
    fn a_huge_paragraph_is_capped() {
        let long = "x".repeat(PARAGRAPH_CAP * 3);
        let xml = format!(
            r#"<w:document {W}><w:body><w:p><w:r><w:t>{long}</w:t></w:r></w:p></w:body></w:document>"#
        );
        let preview = body(&xml).text_preview;
        assert_eq!(preview.chars().count(), TEXT_PREVIEW_CHARS);
        assert!(preview.ends_with('…'));
    }

    #[test]
    fn pages_come_from_app_xml() {
        let xml =
            r#"<Properties xmlns="x"><Template>Normal</Template><Pages>12</Pages></Properties>"#;
        assert_eq!(parse_pages(xml.as_bytes()).expect("parses"), Some(12));
        assert_eq!(parse_pages(&b"<Properties/>"[..]).expect("parses"), None);
    }
}
