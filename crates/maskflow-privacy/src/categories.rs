//! Category columns (#28 point 1): columns of a few values, each in many
//! rows, none of which identifies anyone by the guard's own categories
//! ([`crate::names::classify`]: names, e-mail addresses, dates, IDs,
//! numbers…). Maskflow offers each at approval behind one switch; only
//! what the user switches on enters the extract (its `categories`), and so
//! only that is allowed by the guard. The candidates themselves hold raw
//! values: they stay on the machine (the store), never in an extract.

use std::collections::HashMap;
use std::path::Path;

use maskflow_extractors::{CategoryValue, ExtractError, Registry, ValueOptions, ValueSink};
use serde::{Deserialize, Serialize};

use crate::names::{NameKind, classify};

/// Most distinct values a category column may have.
pub const MAX_VALUES: usize = 20;
/// Rows each value must be in, by default (the k).
pub const DEFAULT_MIN_ROWS: u64 = 10;
/// Longest value taken for a category, in characters (longer is prose).
const MAX_VALUE_CHARS: usize = 40;
/// Columns of a headerless table counted, at most.
const MAX_NUMBERED_COLUMNS: usize = 1000;

/// Whether `value` identifies someone or something by the guard's own
/// categories. A rare word alone does not: repeated in many rows of a
/// column of few values it is a code or a place (`Biscoe`, `Gentoo`), and
/// the user sees each value before switching the column on.
fn identifies(value: &str) -> bool {
    classify(value).is_some_and(|k| k != NameKind::RareWord)
}

/// A column that may be shown to the AI as a category: raw values, local only.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CategoryCandidate {
    /// The workbook sheet it is on (none for a single table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub sheet: Option<String>,
    /// The column's name, as in the extract.
    pub column: String,
    /// Its values, most frequent first, with their rows.
    pub values: Vec<CategoryValue>,
}

/// The category columns of the file at `path`, every value in at least
/// `min_rows` rows (`max_bytes` as the guard reads a file).
pub fn candidates(
    path: &Path,
    max_bytes: u64,
    min_rows: u64,
) -> Result<Vec<CategoryCandidate>, ExtractError> {
    let mut sink = CategoryCounter::default();
    Registry::with_defaults().values(path, &ValueOptions { max_bytes }, &mut sink)?;
    Ok(sink.finish(min_rows))
}

/// What one column held, until it held too many different values.
#[derive(Debug, Default)]
struct Column {
    sheet: Option<String>,
    name: String,
    counts: HashMap<String, u64>,
    /// Seen more than [`MAX_VALUES`] values, or a value that is no category.
    out: bool,
}

impl Column {
    fn add(&mut self, value: &str) {
        let value = value.trim();
        if self.out || value.is_empty() {
            return;
        }
        if let Some(n) = self.counts.get_mut(value) {
            *n += 1;
            return;
        }
        // Checked once per distinct value: a value that identifies, or
        // prose, makes the column no category.
        if self.counts.len() >= MAX_VALUES
            || value.chars().count() > MAX_VALUE_CHARS
            || identifies(value)
        {
            self.out = true;
            self.counts = HashMap::new();
            return;
        }
        self.counts.insert(value.to_owned(), 1);
    }

    fn candidate(self, min_rows: u64) -> Option<CategoryCandidate> {
        let usable = !self.out
            && !self.counts.is_empty()
            && !self.name.is_empty()
            // A flagged name is masked in the extract: never sent raw here.
            && classify(&self.name).is_none()
            && self.counts.values().all(|&n| n >= min_rows);
        if !usable {
            return None;
        }
        let mut values: Vec<CategoryValue> = self
            .counts
            .into_iter()
            .map(|(value, count)| CategoryValue { value, count })
            .collect();
        values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
        Some(CategoryCandidate {
            sheet: self.sheet,
            column: self.name,
            values,
        })
    }
}

/// Counts the values of every column of every table: the sink of
/// [`candidates`], public so one pass over a file can feed it beside others.
#[derive(Debug, Default)]
pub struct CategoryCounter {
    columns: Vec<Column>,
    done: Vec<Column>,
    /// Headerless tables' columns are named by number, as the extract names them.
    headerless: bool,
    sheet: Option<String>,
}

impl CategoryCounter {
    fn close(&mut self) {
        self.done.append(&mut self.columns);
    }

    /// The category columns of what it was fed, every value in at least `min_rows` rows.
    pub fn finish(mut self, min_rows: u64) -> Vec<CategoryCandidate> {
        self.close();
        self.done
            .into_iter()
            .filter_map(|t| t.candidate(min_rows))
            .collect()
    }
}

impl ValueSink for CategoryCounter {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        self.close();
        self.sheet = sheet.map(str::to_owned);
        self.headerless = columns.is_empty();
        self.columns = columns
            .iter()
            .map(|c| Column {
                sheet: self.sheet.clone(),
                name: c.clone(),
                ..Column::default()
            })
            .collect();
    }

    fn cell(&mut self, column: usize, value: &str) {
        if column >= self.columns.len() {
            if !self.headerless || column >= MAX_NUMBERED_COLUMNS {
                return;
            }
            for i in self.columns.len()..=column {
                self.columns.push(Column {
                    sheet: self.sheet.clone(),
                    name: format!("column_{}", i + 1),
                    ..Column::default()
                });
            }
        }
        self.columns[column].add(value);
    }

    fn text(&mut self, _text: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str, min_rows: u64) -> Vec<CategoryCandidate> {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("penguins.csv");
        std::fs::write(&p, text).expect("write");
        candidates(&p, u64::MAX, min_rows).expect("read")
    }

    fn penguins() -> String {
        let mut t = String::from("species,island,name,sex,body_mass,recorded\n");
        let people = ["Ada Lovelace", "Alan Turing", "Grace Hopper"];
        for i in 0..36 {
            let island = ["Biscoe", "Dream", "Torgersen"][i % 3];
            let species = ["Adelie", "Gentoo"][i % 2];
            let sex = if i < 33 { "female" } else { "" };
            t.push_str(&format!(
                "{species},{island},{},{sex},{},2013-05-{:02}\n",
                people[i % 3],
                3000 + i * 17,
                i % 28 + 1
            ));
        }
        t
    }

    #[test]
    fn few_repeated_values_are_categories_names_and_numbers_are_not() {
        let found = csv(&penguins(), 10);
        let cols: Vec<&str> = found.iter().map(|c| c.column.as_str()).collect();
        assert_eq!(cols, ["species", "island", "sex"], "{found:?}");
        let island = &found[1];
        assert_eq!(island.values.len(), 3);
        assert!(island.values.iter().all(|v| v.count == 12));
        assert_eq!(
            found[2].values,
            [CategoryValue {
                value: "female".into(),
                count: 33
            }]
        );
        assert_eq!(found[0].sheet, None);
    }

    #[test]
    fn a_value_in_fewer_than_k_rows_makes_no_category() {
        let k13: Vec<String> = csv(&penguins(), 13).into_iter().map(|c| c.column).collect();
        assert_eq!(k13, ["species", "sex"], "islands are in 12 rows each");
        let mut t = penguins();
        t.push_str("Chinstrap,Dream,Ada Lovelace,male,3000,2013-05-01\n");
        let found = csv(&t, 10);
        let cols: Vec<&str> = found.iter().map(|c| c.column.as_str()).collect();
        assert_eq!(cols, ["island"], "{found:?}");
    }

    #[test]
    fn more_than_twenty_values_make_no_category() {
        let mut t = String::from("code\n");
        for i in 0..21 {
            for _ in 0..10 {
                t.push_str(&format!("c{}\n", (b'a' + i as u8) as char));
            }
        }
        assert!(csv(&t, 10).is_empty());
    }
}
