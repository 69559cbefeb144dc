//! The raw values of a Word document: every paragraph outside tables as
//! text, and every table as a table (its header decided like the extract
//! decides it), streamed from `word/document.xml`.

use std::io::BufRead;

use quick_xml::events::Event;

use super::body::PartError;
use crate::values::{HEADER_VOTE_ROWS, ValueSink, visit_table};

/// Bytes kept of one paragraph or cell (a bound on memory, far above real text).
const TEXT_CAP: usize = 4 * 1024 * 1024;
/// Rows kept of one table (tables are small; the cap bounds hostile input).
const MAX_TABLE_ROWS: usize = 1_000_000;

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

fn push(buf: &mut String, s: &str) {
    if buf.len() + s.len() <= TEXT_CAP {
        buf.push_str(s);
    }
}

/// Streams `word/document.xml` into `sink`.
pub(super) fn visit<R: BufRead>(input: R, sink: &mut dyn ValueSink) -> Result<(), PartError> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut tables: Vec<Table> = Vec::new();
    let mut para = String::new();
    let mut p_depth = 0usize;
    let mut in_text = false;
    let mut skip_depth = 0usize;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|_| PartError::Xml)?;
        if skip_depth > 0 {
            match &event {
                Event::Start(_) => skip_depth += 1,
                Event::End(_) => skip_depth -= 1,
                Event::Eof => return Err(PartError::Xml),
                _ => {}
            }
            buf.clear();
            continue;
        }
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "Fallback" => skip_depth = 1,
                "p" => {
                    p_depth += 1;
                    if p_depth == 1 {
                        para.clear();
                    }
                }
                "t" => in_text = p_depth > 0,
                "tbl" => tables.push(Table::default()),
                "tc" => {
                    if let Some(t) = tables.last_mut() {
                        t.cell.clear();
                    }
                }
                _ => {}
            },
            Event::Empty(e) => match e.local_name().as_ref() {
                "tab" if p_depth > 0 => push(&mut para, "\t"),
                "br" | "cr" if p_depth > 0 => push(&mut para, "\n"),
                "tc" => {
                    if let Some(t) = tables.last_mut() {
                        t.row.push(String::new());
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_text => {
                push(&mut para, &t.xml10_content());
            }
            Event::CData(t) if in_text => {
                push(&mut para, &t.xml10_content());
            }
            Event::GeneralRef(r) if in_text => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => quick_xml::escape::resolve_predefined_entity(&r.xml10_content())
                        .map(str::to_owned),
                };
                if let Some(s) = resolved {
                    push(&mut para, &s);
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    p_depth = p_depth.saturating_sub(1);
                    if p_depth == 0 {
                        let text = para.trim();
                        match tables.last_mut() {
                            Some(t) => {
                                if !t.cell.is_empty() && !text.is_empty() {
                                    push(&mut t.cell, " ");
                                }
                                push(&mut t.cell, text);
                            }
                            None if !text.is_empty() => sink.text(text),
                            None => {}
                        }
                    }
                }
                "tc" => {
                    if let Some(t) = tables.last_mut() {
                        let cell = std::mem::take(&mut t.cell);
                        t.row.push(cell.trim().to_owned());
                    }
                }
                "tr" => {
                    if let Some(t) = tables.last_mut() {
                        let row = std::mem::take(&mut t.row);
                        if t.rows.len() < MAX_TABLE_ROWS {
                            t.rows.push(row);
                        }
                    }
                }
                "tbl" => {
                    if let Some(mut t) = tables.pop() {
                        let rest = t.rows.split_off(t.rows.len().min(HEADER_VOTE_ROWS));
                        visit_table(sink, None, t.rows, &mut rest.into_iter());
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::CollectedValues;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

    fn cell(t: &str) -> String {
        format!("<w:tc><w:p><w:r><w:t>{t}</w:t></w:r></w:p></w:tc>")
    }

    #[test]
    fn paragraphs_are_text_and_tables_are_tables() {
        let row = |a: &str, b: &str| format!("<w:tr>{}{}</w:tr>", cell(a), cell(b));
        let xml = format!(
            r#"<w:document {W}><w:body>
            <w:p><w:r><w:t>Patient Zebulon Quux was diagnosed</w:t></w:r><w:r><w:t xml:space="preserve"> in 2021.</w:t></w:r></w:p>
            <w:tbl>{}{}</w:tbl>
            <w:tbl>{}{}{}</w:tbl>
            </w:body></w:document>"#,
            row("John Smith", "Springfield"),
            row("Ada Lovelace", "London"),
            row("name", "phone"),
            row("Grace Hopper", "555-867-5309"),
            row("Alan Turing", "555-000-1111"),
        );
        let mut v = CollectedValues::default();
        visit(xml.as_bytes(), &mut v).expect("parses");
        assert_eq!(v.texts, ["Patient Zebulon Quux was diagnosed in 2021."]);
        assert_eq!(v.tables.len(), 2);
        // A headerless Word table gives no column names.
        assert!(v.tables[0].columns.is_empty(), "{:?}", v.tables[0]);
        assert!(v.cell_values().contains(&"John Smith"));
        assert_eq!(v.tables[1].columns, ["name", "phone"]);
        assert!(v.cell_values().contains(&"555-867-5309"));
    }
}
