//! Where the text of a PDF page sits: the page's content stream read
//! operator by operator, tracking the graphics and text matrices, so every
//! piece of text shown comes out with its baseline, its left and right edges
//! and its font size. This is what [`super::tables`] finds tables in.
//!
//! Only what placement needs is modelled: the current transformation matrix
//! (`cm`, `q`/`Q`), the text matrices (`BT`, `Tm`, `Td`, `TD`, `T*`, `TL`),
//! the font and its size (`Tf`), character and word spacing, horizontal
//! scaling and the text-showing operators (`Tj`, `TJ`, `'`, `"`). Widths come
//! from the font's `/Widths` (simple fonts) or `/W` (CID fonts); the standard
//! fonts, which PDF writers may leave without widths, use the Helvetica or
//! Courier metrics. Text inside form XObjects is not placed (table writers
//! draw cells straight onto the page).

use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

use super::MAX_PAGE_CONTENT_BYTES;

/// Most pieces of text kept from one page (a guard against hostile pages).
const MAX_SEGMENTS: usize = 100_000;
/// Deepest `q` nesting kept (PDF readers limit it too).
const MAX_SAVED_STATES: usize = 64;

/// A piece of text shown in one go, without the writer moving in between.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Segment {
    /// Left edge, in page units.
    pub x0: f32,
    /// Right edge, in page units.
    pub x1: f32,
    /// Baseline, in page units (greater is higher on the page).
    pub y: f32,
    /// Font size as drawn, in page units.
    pub size: f32,
    /// The text.
    pub text: String,
}

/// An affine matrix `[a b c d e f]` as PDF writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Matrix([f32; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self × other`: `self` applied first.
    fn then(self, other: Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn translate(x: f32, y: f32) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, x, y])
    }

    fn point(self, x: f32, y: f32) -> (f32, f32) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + c * y + e, b * x + d * y + f)
    }

    /// How much the matrix stretches a vertical distance.
    fn vertical_scale(self) -> f32 {
        self.0[2].hypot(self.0[3])
    }
}

/// A font's glyph widths (thousandths of the font size) and code width.
struct FontMetrics<'a> {
    encoding: Option<Encoding<'a>>,
    /// CID fonts read two-byte codes.
    two_byte: bool,
    widths: BTreeMap<u32, f32>,
    default_width: f32,
    /// The standard font's metrics to use when `widths` lacks a code.
    fallback: Fallback,
}

#[derive(Clone, Copy)]
enum Fallback {
    Helvetica,
    Courier,
}

impl<'a> FontMetrics<'a> {
    fn read(doc: &'a Document, font: &'a Dictionary) -> Self {
        let encoding = font
            .get_font_encoding_with_limit(doc, MAX_PAGE_CONTENT_BYTES)
            .ok();
        let base = font
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .map(|n| String::from_utf8_lossy(n).to_ascii_lowercase())
            .unwrap_or_default();
        let fallback = if base.contains("courier") || base.contains("mono") {
            Fallback::Courier
        } else {
            Fallback::Helvetica
        };
        let two_byte = font
            .get(b"Subtype")
            .and_then(Object::as_name)
            .is_ok_and(|s| s == b"Type0");
        let mut widths = BTreeMap::new();
        let mut default_width = 0.0;
        if two_byte {
            if let Some(cid) = font
                .get_deref(b"DescendantFonts", doc)
                .and_then(Object::as_array)
                .ok()
                .and_then(|a| a.first())
                .and_then(|d| deref_dict(doc, d))
            {
                default_width = number(cid.get_deref(b"DW", doc).ok()).unwrap_or(1000.0);
                if let Ok(w) = cid.get_deref(b"W", doc).and_then(Object::as_array) {
                    read_cid_widths(doc, w, &mut widths);
                }
            } else {
                default_width = 1000.0;
            }
        } else if let Ok(list) = font.get_deref(b"Widths", doc).and_then(Object::as_array) {
            let first = number(font.get(b"FirstChar").ok()).unwrap_or(0.0).max(0.0) as u32;
            for (i, w) in list.iter().take(65_536).enumerate() {
                if let Some(w) = number(doc.dereference(w).ok().map(|(_, o)| o)) {
                    widths.insert(first + i as u32, w);
                }
            }
        }
        FontMetrics {
            encoding,
            two_byte,
            widths,
            default_width,
            fallback,
        }
    }

    /// The codes of a shown string.
    fn codes<'s>(&self, bytes: &'s [u8]) -> impl Iterator<Item = u32> + 's {
        let step = if self.two_byte { 2 } else { 1 };
        bytes.chunks(step).map(|c| {
            c.iter()
                .fold(0u32, |code, &byte| (code << 8) | u32::from(byte))
        })
    }

    /// A code's width in thousandths of the font size.
    fn width(&self, code: u32) -> f32 {
        if let Some(&w) = self.widths.get(&code) {
            return w;
        }
        if self.two_byte {
            return self.default_width;
        }
        match self.fallback {
            Fallback::Courier => 600.0,
            Fallback::Helvetica => helvetica_width(code),
        }
    }

    fn decode(&self, bytes: &[u8]) -> String {
        match &self.encoding {
            Some(encoding) => encoding.bytes_to_string(bytes).unwrap_or_default(),
            None => String::new(),
        }
    }
}

/// Reads a CID font's `/W` array: `c [w1 w2 …]` and `c_first c_last w` entries.
fn read_cid_widths(doc: &Document, w: &[Object], widths: &mut BTreeMap<u32, f32>) {
    let mut i = 0;
    while i + 1 < w.len() && widths.len() < 65_536 {
        let Some(first) = number(Some(&w[i])) else {
            return;
        };
        let first = first.max(0.0) as u32;
        match doc.dereference(&w[i + 1]).map(|(_, o)| o) {
            Ok(Object::Array(list)) => {
                for (k, v) in list.iter().take(65_536).enumerate() {
                    if let Some(v) = number(Some(v)) {
                        widths.insert(first + k as u32, v);
                    }
                }
                i += 2;
            }
            _ => {
                let (Some(last), Some(v)) = (number(w.get(i + 1)), number(w.get(i + 2))) else {
                    return;
                };
                let last = (last.max(0.0) as u32).min(first.saturating_add(65_535));
                for code in first..=last {
                    widths.insert(code, v);
                }
                i += 3;
            }
        }
    }
}

/// The text state PDF saves with `q` and restores with `Q`.
#[derive(Clone, Copy)]
struct State {
    ctm: Matrix,
    font: Option<usize>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    /// Horizontal scaling as a fraction (`Tz` / 100).
    scale: f32,
    leading: f32,
    rise: f32,
}

impl Default for State {
    fn default() -> Self {
        State {
            ctm: Matrix::IDENTITY,
            font: None,
            size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        }
    }
}

/// Every piece of text of page `page_id`, whose content is `content`, in
/// content-stream order.
pub(crate) fn page_segments(
    doc: &Document,
    page_id: ObjectId,
    content: &[u8],
) -> lopdf::Result<Vec<Segment>> {
    let fonts = doc.get_page_fonts(page_id)?;
    let names: Vec<&Vec<u8>> = fonts.keys().collect();
    let metrics: Vec<FontMetrics<'_>> = fonts
        .values()
        .map(|font| FontMetrics::read(doc, font))
        .collect();
    let content = Content::decode(content)?;

    let mut reader = Reader {
        metrics: &metrics,
        state: State::default(),
        saved: Vec::new(),
        tm: Matrix::IDENTITY,
        tlm: Matrix::IDENTITY,
        moved: true,
        segments: Vec::new(),
    };
    for op in &content.operations {
        if reader.segments.len() >= MAX_SEGMENTS {
            break;
        }
        let n = |i: usize| number(op.operands.get(i));
        match op.operator.as_str() {
            "q" if reader.saved.len() < MAX_SAVED_STATES => reader.saved.push(reader.state),
            "Q" => {
                if let Some(state) = reader.saved.pop() {
                    reader.state = state;
                }
            }
            "cm" => {
                if let Some(m) = matrix(&op.operands) {
                    reader.state.ctm = m.then(reader.state.ctm);
                }
            }
            "BT" => reader.set_line(Matrix::IDENTITY),
            "Tm" => {
                if let Some(m) = matrix(&op.operands) {
                    reader.set_line(m);
                }
            }
            "Td" => reader.next_line(n(0).unwrap_or(0.0), n(1).unwrap_or(0.0)),
            "TD" => {
                let (x, y) = (n(0).unwrap_or(0.0), n(1).unwrap_or(0.0));
                reader.state.leading = -y;
                reader.next_line(x, y);
            }
            "T*" => reader.next_line(0.0, -reader.state.leading),
            "TL" => reader.state.leading = n(0).unwrap_or(0.0),
            "Tc" => reader.state.char_spacing = n(0).unwrap_or(0.0),
            "Tw" => reader.state.word_spacing = n(0).unwrap_or(0.0),
            "Tz" => reader.state.scale = n(0).unwrap_or(100.0) / 100.0,
            "Ts" => reader.state.rise = n(0).unwrap_or(0.0),
            "Tf" => {
                let name = op.operands.first().and_then(|o| o.as_name().ok());
                reader.state.font = name.and_then(|name| names.iter().position(|n| *n == name));
                reader.state.size = n(1).unwrap_or(0.0);
            }
            "Tj" => reader.show(&op.operands),
            "TJ" => {
                if let Some(Ok(items)) = op.operands.first().map(Object::as_array) {
                    reader.show(items);
                }
            }
            "'" => {
                reader.next_line(0.0, -reader.state.leading);
                reader.show(&op.operands);
            }
            "\"" => {
                reader.state.word_spacing = n(0).unwrap_or(reader.state.word_spacing);
                reader.state.char_spacing = n(1).unwrap_or(reader.state.char_spacing);
                reader.next_line(0.0, -reader.state.leading);
                reader.show(op.operands.get(2..).unwrap_or(&[]));
            }
            _ => {}
        }
    }
    Ok(reader.segments)
}

/// The state of one page's reading.
struct Reader<'m, 'a> {
    metrics: &'m [FontMetrics<'a>],
    state: State,
    saved: Vec<State>,
    /// Text matrix and text line matrix.
    tm: Matrix,
    tlm: Matrix,
    /// Whether the writer moved since the last text shown (a new segment starts).
    moved: bool,
    segments: Vec<Segment>,
}

impl Reader<'_, '_> {
    fn set_line(&mut self, m: Matrix) {
        self.tm = m;
        self.tlm = m;
        self.moved = true;
    }

    fn next_line(&mut self, x: f32, y: f32) {
        self.set_line(Matrix::translate(x, y).then(self.tlm));
    }

    /// Shows strings (and `TJ` adjustments), advancing the text matrix.
    fn show(&mut self, items: &[Object]) {
        let Some(font) = self.state.font.and_then(|i| self.metrics.get(i)) else {
            return;
        };
        let s = self.state;
        let render = Matrix([s.size * s.scale, 0.0, 0.0, s.size, 0.0, s.rise]);
        let start = render.then(self.tm).then(s.ctm);
        let (x0, y) = start.point(0.0, 0.0);
        let size = s.size.abs() * self.tm.then(s.ctm).vertical_scale();
        let mut text = String::new();
        let mut advance = 0.0f32;
        for item in items {
            match item {
                Object::String(bytes, _) => {
                    text.push_str(&font.decode(bytes));
                    for code in font.codes(bytes) {
                        let space = if !font.two_byte && code == 32 {
                            s.word_spacing
                        } else {
                            0.0
                        };
                        advance +=
                            (font.width(code) / 1000.0 * s.size + s.char_spacing + space) * s.scale;
                    }
                }
                other => {
                    if let Some(adjust) = number(Some(other)) {
                        // A large negative adjustment is a space the writer did not type.
                        if adjust < -200.0 && !text.ends_with(' ') {
                            text.push(' ');
                        }
                        advance -= adjust / 1000.0 * s.size * s.scale;
                    }
                }
            }
        }
        self.tm = Matrix::translate(advance, 0.0).then(self.tm);
        let (x1, _) = self.tm.then(s.ctm).point(0.0, 0.0);
        // Off-page or overflowing positions (a hostile matrix) place nothing.
        if text.trim().is_empty() || ![x0, x1, y, size].iter().all(|v| v.is_finite()) {
            return;
        }
        match self.segments.last_mut() {
            Some(last) if !self.moved => {
                last.text.push_str(&text);
                last.x1 = last.x1.max(x1);
            }
            _ => self.segments.push(Segment {
                x0: x0.min(x1),
                x1: x1.max(x0),
                y,
                size,
                text,
            }),
        }
        self.moved = false;
    }
}

/// A matrix from six number operands.
fn matrix(operands: &[Object]) -> Option<Matrix> {
    let mut m = [0.0f32; 6];
    for (slot, operand) in m.iter_mut().zip(operands) {
        *slot = number(Some(operand))?;
    }
    (operands.len() >= 6 && m.iter().all(|v| v.is_finite())).then_some(Matrix(m))
}

fn number(object: Option<&Object>) -> Option<f32> {
    object
        .and_then(|o| o.as_float().ok())
        .filter(|v| v.is_finite())
}

fn deref_dict<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match object {
        Object::Dictionary(dict) => Some(dict),
        Object::Reference(id) => doc.get_dictionary(*id).ok(),
        _ => None,
    }
}

/// Helvetica's widths (its AFM metrics) for the printable ASCII codes; other
/// codes take the average lower-case width.
fn helvetica_width(code: u32) -> f32 {
    const ASCII: [u16; 95] = [
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
        278, // ' '..'/'
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584,
        556, // '0'..'?'
        1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722,
        778, // '@'..'O'
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
        556, // 'P'..'_'
        333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556,
        556, // '`'..'o'
        556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // 'p'..'~'
    ];
    code.checked_sub(32)
        .and_then(|i| ASCII.get(i as usize))
        .map_or(520.0, |&w| f32::from(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{Stream, dictionary};

    /// A one-page document whose page shows `content` with font `/F1` = `font`.
    fn page_with(font: Dictionary, content: &str) -> (Document, ObjectId) {
        let mut doc = Document::with_version("1.5");
        let font_id = doc.add_object(font);
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
        let pages_id = doc.new_object_id();
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
            }),
        );
        (doc, page_id)
    }

    fn segments_of(doc: &Document, page: ObjectId) -> Vec<Segment> {
        let content = doc.get_page_content(page);
        page_segments(doc, page, &content).expect("reads")
    }

    fn helvetica() -> Dictionary {
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" }
    }

    #[test]
    fn text_is_placed_through_the_matrices() {
        let (doc, page) = page_with(
            helvetica(),
            "q 2 0 0 2 10 20 cm BT /F1 10 Tf 5 6 Td (Ab) Tj ( c) Tj 0 -12 Td (Next) Tj ET Q \
             BT /F1 10 Tf 300 700 Td [(Sp) -50 (lit)] TJ ET",
        );
        let segments = segments_of(&doc, page);
        let texts: Vec<&str> = segments.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["Ab c", "Next", "Split"]);
        // (5, 6) in text space, scaled by 2 and moved by (10, 20).
        assert_eq!((segments[0].x0, segments[0].y), (20.0, 32.0));
        assert_eq!(segments[0].size, 20.0);
        // "Ab c" in Helvetica: 667 + 556 + 278 + 500 thousandths of 10, times 2.
        assert!(
            (segments[0].x1 - (20.0 + 2.0 * 20.01)).abs() < 0.01,
            "{:?}",
            segments[0]
        );
        assert_eq!((segments[1].x0, segments[1].y), (20.0, 8.0));
        assert_eq!((segments[2].x0, segments[2].y), (300.0, 700.0));
    }

    #[test]
    fn hostile_content_is_bounded_not_fatal() {
        let huge_widths = dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "X",
            "DescendantFonts" => vec![Object::Dictionary(dictionary! {
                "W" => vec![0.into(), 4_000_000_000i64.into(), 500.into()],
            })],
        };
        let content = format!(
            "{} 1e38 0 0 1e38 0 0 cm BT /F1 1e30 Tf 0 Tz (x) Tj /Nope 3 Tf (y) Tj ET {}",
            "q ".repeat(10_000),
            "Q ".repeat(20_000)
        );
        let (doc, page) = page_with(huge_widths, &content);
        let segments = segments_of(&doc, page);
        assert!(segments.len() <= 1, "{segments:?}");
    }
}
