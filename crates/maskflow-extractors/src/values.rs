//! The raw values of a file, for the egress guard and the error masker —
//! never for an extract. Each extractor walks its own file kind (the one the
//! registry picks by content, never by name) and hands every value to a
//! [`ValueSink`]: the cells of every table (a delimited file, every sheet of
//! a workbook, every table of a Word document), running text (paragraphs,
//! PDF pages, OCR text), and the names a table gives its columns — only when
//! the extractor took its first row as a header, so a file without a header
//! has no column names at all.

/// Receives the raw values of one file, in file order.
pub trait ValueSink {
    /// A table starts: `sheet` names it in a workbook; `columns` are its
    /// header's names, empty when the table has no header row.
    fn table(&mut self, sheet: Option<&str>, columns: &[String]);
    /// One raw cell of the current table, in 0-based `column`.
    fn cell(&mut self, column: usize, value: &str);
    /// A workbook's cell stored as text (a number typed as text shows
    /// here); others see it as any cell.
    fn text_cell(&mut self, column: usize, value: &str) {
        self.cell(column, value);
    }
    /// Running text: a paragraph, a page, the text OCR found.
    fn text(&mut self, text: &str);
    /// The current table's row ends (its empty cells were not sent). Only
    /// the profile needs row boundaries, so the default ignores them.
    fn row_end(&mut self) {}
    /// Cells of the current table at `width` or past it are other forms of
    /// earlier cells (a workbook's displayed numbers), not columns.
    fn table_width(&mut self, _width: usize) {}
}

/// How much of a file is read for its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueOptions {
    /// Bytes of a delimited text file read at most (the rest is not visited).
    pub max_bytes: u64,
}

/// Bytes of a delimited file visited by default.
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 256 * 1024 * 1024;

impl ValueOptions {
    /// Every byte of the file (the profile: it covers every row).
    pub const WHOLE_FILE: Self = Self {
        max_bytes: u64::MAX,
    };
}

impl Default for ValueOptions {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_VALUE_BYTES,
        }
    }
}

/// A [`ValueSink`] that keeps everything (tests, small files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollectedValues {
    /// Every table: its sheet, its column names, its rows of raw cells.
    pub tables: Vec<CollectedTable>,
    /// Every piece of running text.
    pub texts: Vec<String>,
}

/// One table kept by [`CollectedValues`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CollectedTable {
    /// The sheet's name, in a workbook.
    pub sheet: Option<String>,
    /// Header names (empty without a header).
    pub columns: Vec<String>,
    /// Raw cells as `(column, value)`, in file order.
    pub cells: Vec<(usize, String)>,
}

impl CollectedValues {
    /// Every cell value of every table, in order.
    pub fn cell_values(&self) -> Vec<&str> {
        self.tables
            .iter()
            .flat_map(|t| t.cells.iter().map(|(_, v)| v.as_str()))
            .collect()
    }
}

impl ValueSink for CollectedValues {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        self.tables.push(CollectedTable {
            sheet: sheet.map(str::to_owned),
            columns: columns.to_vec(),
            cells: Vec::new(),
        });
    }

    fn cell(&mut self, column: usize, value: &str) {
        if self.tables.is_empty() {
            self.table(None, &[]);
        }
        if let Some(t) = self.tables.last_mut() {
            t.cells.push((column, value.to_owned()));
        }
    }

    fn text(&mut self, text: &str) {
        self.texts.push(text.to_owned());
    }
}

/// Visits a table whose first records are `head` (the header candidate plus
/// the rows the vote compares it with) and whose remaining records come from
/// `rest`: decides the header like the extract does, then sends every cell.
pub fn visit_table(
    sink: &mut dyn ValueSink,
    sheet: Option<&str>,
    head: Vec<Vec<String>>,
    rest: &mut dyn Iterator<Item = Vec<String>>,
) {
    let (above, has_header) = crate::table::header_at(&head);
    let mut rows = head.into_iter();
    // A title block's cells are text above the table, not its rows.
    for row in rows.by_ref().take(above) {
        for cell in row.iter().filter(|c| !c.is_empty()) {
            sink.text(cell);
        }
    }
    let columns: Vec<String> = if has_header {
        rows.next()
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.trim().to_owned())
            .collect()
    } else {
        Vec::new()
    };
    sink.table(sheet, &columns);
    for row in rows.chain(rest) {
        for (i, cell) in row.iter().enumerate() {
            if !cell.is_empty() {
                sink.cell(i, cell);
            }
        }
        sink.row_end();
    }
}

/// Rows compared with a header candidate before the header is decided.
pub const HEADER_VOTE_ROWS: usize = 26;

/// Sends running text line by line (empty lines skipped).
pub fn visit_text(sink: &mut dyn ValueSink, text: &str) {
    for line in text.lines() {
        if !line.trim().is_empty() {
            sink.text(line);
        }
    }
}
