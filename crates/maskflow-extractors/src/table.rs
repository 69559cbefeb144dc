//! What every tabular extractor shares: deciding whether the first record is
//! a header, naming columns, and turning the first records into masked
//! sample rows. A header is only trusted when it does not look like data, so
//! a file without one never leaks its first record as column names.

use crate::limits::{MAX_COLUMN_NAME_CHARS, MAX_VALUE_CHARS};
use crate::mask::mask;

/// The columns and masked samples of one table, from its first records.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TableSample {
    /// Real column names, or `column_1…column_n` when there is no header.
    pub columns: Vec<String>,
    /// Masked sample rows, each as wide as `columns`.
    pub sample_rows: Vec<Vec<String>>,
    /// Whether a record was taken as the header (the first, or the first
    /// after the title block).
    pub has_header: bool,
    /// Notes for the user (never containing a value).
    pub warnings: Vec<String>,
    /// Records above the header that are a title block (titles, notes,
    /// units): 0 when the header is the first record.
    pub title_rows: usize,
    /// Those records, masked, each without its trailing empty cells.
    pub rows_above: Vec<Vec<String>>,
    /// Units and scale named in the title block or the header, in
    /// Maskflow's words (`in thousands`, `USD`, `per tonne`).
    pub units: Vec<String>,
}

/// Records at most that a title block above a header may take.
pub const MAX_TITLE_ROWS: usize = 10;

/// How many of the first records are a title block above the header:
/// records that fill at most half the table's width (a title, a note, a
/// units line, a merged cell), followed by a record the header vote takes
/// for a header. 0 when there is none (or the table has no header).
pub fn title_rows(head: &[Vec<String>]) -> usize {
    let filled = |r: &Vec<String>| r.iter().filter(|c| !c.trim().is_empty()).count();
    let width = head.iter().map(filled).max().unwrap_or(0);
    if width < 2 {
        return 0;
    }
    let Some(k) = head.iter().position(|r| filled(r) * 2 > width) else {
        return 0;
    };
    if k == 0 || k > MAX_TITLE_ROWS || head[k..].len() < 2 || !detect_header(&head[k..]) {
        return 0;
    }
    k
}

/// Where a table's header is: the records of its title block, and whether
/// the record after them is a header.
pub fn header_at(head: &[Vec<String>]) -> (usize, bool) {
    match title_rows(head) {
        0 => (0, detect_header(head)),
        k => (k, true),
    }
}

/// Units and scale that `texts` (title cells, header names) name, in
/// Maskflow's own words: a scale (`'000`, thousands, millions, billions),
/// a currency code or sign, a measure after `per`, a percent.
pub fn units_in<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    const CURRENCIES: [&str; 10] = [
        "USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY", "INR", "SEK",
    ];
    const MEASURES: [&str; 16] = [
        "tonne", "ton", "kg", "g", "lb", "litre", "liter", "barrel", "unit", "head", "hour", "day",
        "month", "year", "km", "mile",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut add = |u: String| {
        if !out.contains(&u) {
            out.push(u);
        }
    };
    for text in texts {
        let lower = text.to_lowercase();
        if lower.contains("'000") || lower.contains("000s") || lower.contains("thousand") {
            add("in thousands".into());
        }
        if lower.contains("million") || lower.contains("mln") || lower.contains("(m)") {
            add("in millions".into());
        }
        if lower.contains("billion") || lower.contains("bn") {
            add("in billions".into());
        }
        if text.contains('%') || lower.contains("percent") {
            add("percent".into());
        }
        let words: Vec<&str> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        for (i, w) in words.iter().enumerate() {
            if let Some(c) = CURRENCIES.iter().find(|c| *c == w) {
                add((*c).to_owned());
            }
            if w.eq_ignore_ascii_case("per")
                && let Some(next) = words.get(i + 1)
            {
                let next = next.to_lowercase();
                if let Some(m) = MEASURES
                    .iter()
                    .find(|m| next == **m || next == format!("{m}s"))
                {
                    add(format!("per {m}"));
                }
            }
        }
        for (sign, name) in [('$', "$"), ('€', "€"), ('£', "£"), ('¥', "¥")] {
            if text.contains(sign) {
                add(name.to_owned());
            }
        }
    }
    out
}

impl TableSample {
    /// Builds the sample from the first records of a table (the header
    /// candidate plus at least `samples` more when the table has them).
    pub fn from_head(head: &[Vec<String>], samples: usize) -> Self {
        let (title_rows, has_header) = header_at(head);
        let (above, head) = head.split_at(title_rows);
        let (header, data) = match (has_header, head.split_first()) {
            (true, Some((first, rest))) => (Some(first), rest),
            _ => (None, head),
        };
        let data = &data[..data.len().min(samples)];
        let width = header
            .map(Vec::len)
            .into_iter()
            .chain(data.iter().map(Vec::len))
            .max()
            .unwrap_or(0);
        let mut warnings = Vec::new();
        let mut columns: Vec<String> = (0..width)
            .map(|i| match header.and_then(|h| h.get(i)) {
                Some(name) if !name.trim().is_empty() => cut(name.trim(), MAX_COLUMN_NAME_CHARS),
                _ => format!("column_{}", i + 1),
            })
            .collect();
        dedupe(&mut columns);
        if let Some(h) = header {
            let short: Vec<usize> = data
                .iter()
                .enumerate()
                .filter(|(_, r)| r.len() < h.len())
                .map(|(i, _)| i + 1)
                .collect();
            if !short.is_empty() {
                warnings.push(format!(
                    "sample rows {} have fewer fields than the header; the missing fields are shown empty",
                    list(&short)
                ));
            }
            if width > h.len() {
                warnings.push(format!(
                    "some sample rows have more fields than the header ({width} against {}); the extra columns are named column_{}…",
                    h.len(),
                    h.len() + 1
                ));
            }
        } else if data.iter().any(|r| r.len() < width) {
            warnings.push(
                "sample rows have different numbers of fields; the missing fields are shown empty"
                    .into(),
            );
        }
        let mut cut_values = false;
        let sample_rows = data
            .iter()
            .map(|row| {
                (0..width)
                    .map(|i| {
                        let value = row.get(i).map(String::as_str).unwrap_or("");
                        if value.chars().count() > MAX_VALUE_CHARS {
                            cut_values = true;
                        }
                        mask(&cut(value, MAX_VALUE_CHARS))
                    })
                    .collect()
            })
            .collect();
        if cut_values {
            warnings.push(format!(
                "sample values longer than {MAX_VALUE_CHARS} characters are cut, ending in …"
            ));
        }
        let rows_above: Vec<Vec<String>> = above
            .iter()
            .map(|r| {
                let end = r
                    .iter()
                    .rposition(|c| !c.trim().is_empty())
                    .map_or(0, |e| e + 1);
                r[..end]
                    .iter()
                    .map(|c| mask(&cut(c.trim(), MAX_VALUE_CHARS)))
                    .collect()
            })
            .collect();
        let units = if has_header {
            units_in(
                above
                    .iter()
                    .flatten()
                    .map(String::as_str)
                    .chain(header.into_iter().flatten().map(String::as_str)),
            )
        } else {
            Vec::new()
        };
        Self {
            columns,
            sample_rows,
            has_header,
            warnings,
            title_rows,
            rows_above,
            units,
        }
    }
}

/// Cuts `s` to at most `max` characters, marking a cut with `…`.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some(_) => {
            let end = s
                .char_indices()
                .nth(max - 1)
                .map(|(i, _)| i)
                .unwrap_or(s.len());
            format!("{}…", &s[..end])
        }
    }
}

fn list(rows: &[usize]) -> String {
    rows.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Makes column names unique by suffixing repeats with `_2`, `_3`…
fn dedupe(columns: &mut [String]) {
    let mut seen = std::collections::HashSet::new();
    for column in columns.iter_mut() {
        if !seen.insert(column.clone()) {
            let mut n = 2;
            while !seen.insert(format!("{column}_{n}")) {
                n += 1;
            }
            *column = format!("{column}_{n}");
        }
    }
}

/// The rough type of a cell, for comparing a header candidate with the data below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CellType {
    Empty,
    Number,
    Date,
    Text,
}

fn cell_type(cell: &str) -> CellType {
    let t = cell.trim();
    if t.is_empty() {
        CellType::Empty
    } else if is_number(t) {
        CellType::Number
    } else if is_date(t) {
        CellType::Date
    } else {
        CellType::Text
    }
}

fn is_number(t: &str) -> bool {
    let s: String = t
        .trim_start_matches(['$', '€', '£', '¥', '+', '-', '('])
        .trim_end_matches(['%', ')'])
        .chars()
        .filter(|c| *c != ',' && *c != '_' && *c != ' ')
        .collect();
    !s.is_empty() && s.parse::<f64>().is_ok() && s.chars().any(|c| c.is_ascii_digit())
}

fn is_date(t: &str) -> bool {
    // 2024-01-15, 15/01/2024, 1.2.24, 2024-01-15T10:00:00, 10:30
    let digits = t.chars().filter(|c| c.is_ascii_digit()).count();
    let seps = t
        .chars()
        .filter(|c| matches!(c, '-' | '/' | '.' | ':'))
        .count();
    digits >= 3
        && seps >= 1
        && t.chars()
            .all(|c| c.is_ascii_digit() || "-/.: TZ+".contains(c))
}

/// Whether a header candidate cell looks like a value rather than a name.
fn looks_like_data(cell: &str) -> bool {
    let t = cell.trim();
    if t.is_empty() {
        return false;
    }
    let digits = t.chars().filter(|c| c.is_numeric()).count();
    matches!(cell_type(t), CellType::Number | CellType::Date)
        || (t.contains('@') && t.contains('.'))
        || t.starts_with("http://")
        || t.starts_with("https://")
        || t.chars().count() > 64
        || digits * 2 > t.chars().count()
        || t.eq_ignore_ascii_case("true")
        || t.eq_ignore_ascii_case("false")
}

/// Decides whether the first record of a table is a header row.
///
/// Never when a first-record cell looks like a value (a number, a date, an
/// e-mail address, a URL, a long text). Otherwise the columns vote: a text
/// cell above numbers or dates, or above texts of one fixed length, says
/// header; a cell whose text repeats below it says data. A tie goes to
/// "header" only when every first-record cell is a short, distinct name.
pub fn detect_header(head: &[Vec<String>]) -> bool {
    let Some((first, rest)) = head.split_first() else {
        return false;
    };
    if first.is_empty()
        || first.iter().all(|c| c.trim().is_empty())
        || first.iter().any(|c| looks_like_data(c))
    {
        return false;
    }
    let mut votes = 0i32;
    for (j, name) in first.iter().enumerate() {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        let below: Vec<&str> = rest
            .iter()
            .filter_map(|r| r.get(j))
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .collect();
        if below.is_empty() {
            continue;
        }
        if below.contains(&name) {
            votes -= 1;
            continue;
        }
        let types: Vec<CellType> = below.iter().map(|c| cell_type(c)).collect();
        if types.iter().all(|t| *t != CellType::Text) {
            votes += 1;
        } else if types.iter().all(|t| *t == CellType::Text) && below.len() >= 2 {
            let len = below[0].chars().count();
            if below.iter().all(|c| c.chars().count() == len) && name.chars().count() != len {
                votes += 1;
            }
        }
    }
    if votes != 0 {
        return votes > 0;
    }
    let names: Vec<&str> = first.iter().map(|c| c.trim()).collect();
    let distinct = names.iter().collect::<std::collections::HashSet<_>>().len() == names.len();
    if !distinct
        || !names
            .iter()
            .all(|n| !n.is_empty() && n.chars().count() <= 40)
    {
        return false;
    }
    // Still a tie, all text: the first record is a header only when most of
    // its cells are shaped unlike the cells below them ("name" above "John
    // Smith"), never when they are shaped alike ("John Smith" above "Ada
    // Lovelace"), so a headerless text table keeps its first record as data.
    let (mut alike, mut unlike) = (0usize, 0usize);
    for (j, name) in names.iter().enumerate() {
        let below: Vec<String> = rest
            .iter()
            .filter_map(|r| r.get(j))
            .map(|c| shape(c.trim()))
            .filter(|s| !s.is_empty())
            .collect();
        let Some(common) = most_common(&below) else {
            continue;
        };
        if &shape(name) == common {
            alike += 1;
        } else {
            unlike += 1;
        }
    }
    unlike > alike
}

/// The case shape of a cell, one letter per word: `Aa` capitalised, `a`
/// lower case, `A` upper case, `9` digits, `x` mixed (`John Smith` → `Aa Aa`).
fn shape(cell: &str) -> String {
    cell.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            let first = chars.next().unwrap_or(' ');
            let rest: Vec<char> = chars.collect();
            if w.chars().all(|c| c.is_numeric()) {
                "9"
            } else if w.chars().all(char::is_lowercase) {
                "a"
            } else if w.chars().all(char::is_uppercase) {
                "A"
            } else if first.is_uppercase() && rest.iter().all(|c| c.is_lowercase()) {
                "Aa"
            } else {
                "x"
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn most_common(items: &[String]) -> Option<&String> {
    let mut counts: std::collections::HashMap<&String, usize> = std::collections::HashMap::new();
    for i in items {
        *counts.entry(i).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(s, _)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .map(|l| l.split(',').map(str::to_owned).collect())
            .collect()
    }

    #[test]
    fn a_header_above_numbers_is_a_header() {
        assert!(detect_header(&rows(
            "date,product_id,revenue\n2024-01-15,PROD-1,12.5\n2024-01-16,PROD-2,13"
        )));
    }

    #[test]
    fn data_in_the_first_record_is_never_a_header() {
        assert!(!detect_header(&rows(
            "1,John Smith,2024-01-15\n2,Jane Doe,2024-02-01"
        )));
        assert!(!detect_header(&rows(
            "john@acme.com,Smith\njane@acme.com,Doe"
        )));
        assert!(!detect_header(&rows("Alice,Paris\nBob,Paris\nAlice,Rome")));
    }

    #[test]
    fn a_headerless_all_text_table_keeps_its_first_record_as_data() {
        // Regression (#13): the first record was taken as column names.
        assert!(!detect_header(&rows(
            "John Smith,Springfield\nAda Lovelace,London"
        )));
        assert!(!detect_header(&rows(
            "Patient seen,Mary Jones\nFollow up,Peter Parker\nCalled back,Ann Lee"
        )));
        assert!(detect_header(&rows(
            "name,city,notes\nJohn Smith,Springfield,Called about the order\nAda Lovelace,London,Asked for a file"
        )));
        assert!(detect_header(&rows(
            "Name,City Name\nJohn Smith,Springfield\nAda Lovelace,London"
        )));
    }

    #[test]
    fn headerless_samples_get_generic_names() {
        let s = TableSample::from_head(&rows("1,John Smith\n2,Jane Doe"), 5);
        assert!(!s.has_header);
        assert_eq!(s.columns, ["column_1", "column_2"]);
        assert_eq!(s.sample_rows, [["#", "Aaaa Aaaaa"], ["#", "Aaaa Aaa"]]);
    }

    #[test]
    fn ragged_rows_are_padded_with_a_warning() {
        let s = TableSample::from_head(&rows("a,b,c\n1,2\n3,4,5,6"), 5);
        assert_eq!(s.columns, ["a", "b", "c", "column_4"]);
        assert_eq!(s.sample_rows[0], ["#", "#", "", ""]);
        assert_eq!(s.warnings.len(), 2);
    }

    #[test]
    fn duplicate_and_empty_names_are_made_unique() {
        let s = TableSample::from_head(&rows(",name,name\n1,2,3"), 5);
        assert_eq!(s.columns, ["column_1", "name", "name_2"]);
    }

    #[test]
    fn long_values_are_cut_before_masking() {
        let long = "x".repeat(500);
        let s = TableSample::from_head(&[vec!["Note".into()], vec![long]], 5);
        assert_eq!(s.sample_rows[0][0].chars().count(), MAX_VALUE_CHARS);
        assert!(s.sample_rows[0][0].ends_with('…'));
    }
}
