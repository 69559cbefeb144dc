//! The raw values of a delimited text file, streamed: the dialect and the
//! header decision come from the same head the extract reads, then every
//! record of the file (up to the byte limit) is visited.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::{dialect, open_records};
use crate::error::ExtractError;
use crate::extractor::Input;
use crate::values::{HEADER_VOTE_ROWS, ValueOptions, ValueSink, visit_table, visit_text};

/// Visits every cell of a delimited file.
pub(super) fn visit(
    input: &Input<'_>,
    options: &ValueOptions,
    sink: &mut dyn ValueSink,
) -> Result<(), ExtractError> {
    let (csv, ..) = open_records(input, options.max_bytes)?;
    let mut records = WholeRecords::new(csv, input.size > options.max_bytes);
    let mut record = csv::ByteRecord::new();
    let mut first = Vec::with_capacity(HEADER_VOTE_ROWS);
    while first.len() < HEADER_VOTE_ROWS && records.next_into(&mut record) {
        first.push(
            record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect(),
        );
    }
    visit_table(sink, None, first, &mut std::iter::empty());
    // The rest is streamed cell by cell, without a copy per record.
    while records.next_into(&mut record) {
        for (i, field) in record.iter().enumerate() {
            if field.is_empty() {
                continue;
            }
            match std::str::from_utf8(field) {
                Ok(s) => sink.cell(i, s),
                Err(_) => sink.cell(i, &String::from_utf8_lossy(field)),
            }
        }
        sink.row_end();
    }
    Ok(())
}

/// A file's records, one read ahead: where the byte limit cut the file,
/// its last record is cut too and is never visited (it showed as a
/// phantom minority shape and a null in every later column), and a broken
/// tail ends the visit there.
struct WholeRecords {
    csv: super::Records,
    ahead: csv::ByteRecord,
    has_ahead: bool,
    cut: bool,
}

impl WholeRecords {
    fn new(mut csv: super::Records, cut: bool) -> Self {
        let mut ahead = csv::ByteRecord::new();
        let has_ahead = matches!(csv.read_byte_record(&mut ahead), Ok(true));
        Self {
            csv,
            ahead,
            has_ahead,
            cut,
        }
    }

    /// The next whole record into `out`; false at the end.
    fn next_into(&mut self, out: &mut csv::ByteRecord) -> bool {
        if !self.has_ahead {
            return false;
        }
        std::mem::swap(out, &mut self.ahead);
        self.has_ahead = matches!(self.csv.read_byte_record(&mut self.ahead), Ok(true));
        self.has_ahead || !self.cut
    }
}

/// Visits text that is not a table (JSON, XML, prose) line by line.
pub(crate) fn plain_text(
    path: &Path,
    display: &str,
    options: &ValueOptions,
    sink: &mut dyn ValueSink,
) -> Result<(), ExtractError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|f| f.take(options.max_bytes).read_to_end(&mut bytes))
        .map_err(|e| ExtractError::io(display, e))?;
    let detected = dialect::detect_encoding(&bytes);
    let text = super::decode(&bytes[detected.bom..], detected);
    visit_text(sink, &text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::values::CollectedValues;
    use crate::{Registry, ValueOptions};

    fn visit(name: &str, bytes: &[u8]) -> CollectedValues {
        visit_up_to(name, bytes, ValueOptions::default())
    }

    fn visit_up_to(name: &str, bytes: &[u8], options: ValueOptions) -> CollectedValues {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        let mut v = CollectedValues::default();
        Registry::with_defaults()
            .values(&p, &options, &mut v)
            .expect("values");
        v
    }

    #[test]
    fn a_record_cut_by_the_byte_limit_is_not_visited() {
        let mut text = String::from("date,amount\n");
        for i in 0..60 {
            text.push_str(&format!("2024-01-{:02},{}.50\n", i % 28 + 1, 100 + i));
        }
        // Cut in the middle of record 45 ("2024-01-18,144.50"): the
        // first 44 are whole and the 45th is never seen, not as `2024-0`.
        let at = text.match_indices('\n').nth(44).expect("line").0 + 7;
        let v = visit_up_to(
            "cut.csv",
            text.as_bytes(),
            ValueOptions {
                max_bytes: at as u64,
            },
        );
        let cells = &v.tables[0].cells;
        assert_eq!(cells.len(), 44 * 2, "{:?}", cells.last());
        assert_eq!(cells.last(), Some(&(1, "143.50".to_owned())));
        // A limit past the end cuts nothing: every record is visited.
        let all = text.len() as u64;
        let v = visit_up_to(
            "whole.csv",
            text.as_bytes(),
            ValueOptions { max_bytes: all },
        );
        assert_eq!(v.tables[0].cells.len(), 60 * 2);
        // Cut inside the header vote's rows, the cut record is dropped there too.
        let at = text.match_indices('\n').nth(3).expect("line").0 + 4;
        let v = visit_up_to(
            "head.csv",
            text.as_bytes(),
            ValueOptions {
                max_bytes: at as u64,
            },
        );
        assert_eq!(v.tables[0].cells.len(), 3 * 2, "{v:?}");
    }

    #[test]
    fn a_header_gives_names_and_every_record_gives_cells() {
        let mut text = String::from("name,amount\n");
        for i in 0..40 {
            text.push_str(&format!("Person {i},{}\n", 1000 + i));
        }
        let v = visit("a.csv", text.as_bytes());
        assert_eq!(v.tables.len(), 1);
        assert_eq!(v.tables[0].columns, ["name", "amount"]);
        assert_eq!(v.tables[0].cells.len(), 80);
        assert_eq!(v.tables[0].cells[79], (1, "1039".to_owned()));
    }

    #[test]
    fn a_headerless_all_text_file_has_no_names() {
        let v = visit("h.csv", b"John Smith,Springfield\nAda Lovelace,London\n");
        assert!(v.tables[0].columns.is_empty(), "{v:?}");
        assert!(v.cell_values().contains(&"John Smith"));
    }

    #[test]
    fn tsv_is_split_on_tabs_and_content_wins_over_the_name() {
        let v = visit("t.tsv", b"name\tcity\nJohn Smith\tSpringfield\n");
        assert_eq!(v.cell_values(), ["John Smith", "Springfield"]);
        // CSV content named .pdf is still read as CSV.
        let v = visit("looks.pdf", b"name,phone\nJohn Smith,5558675309\n");
        assert_eq!(v.cell_values(), ["John Smith", "5558675309"]);
    }

    #[test]
    fn a_utf8_bom_and_latin1_are_decoded() {
        let v = visit("b.csv", "\u{feff}name,city\nJosé,Málaga\n".as_bytes());
        assert_eq!(v.tables[0].columns, ["name", "city"]);
        let v = visit("l.csv", b"name,city\nJos\xe9,M\xe1laga\n");
        assert_eq!(v.cell_values(), ["José", "Málaga"]);
    }
}
