//! The profile of a file's tables: what a data engineer reads first about
//! each column, over every row (up to the values' byte limit), and nothing
//! that identifies anyone — counts, masked shapes, lengths, and a numeric
//! range rounded to two significant figures (written so it cannot spell a
//! value of the file).
//!
//! It is a [`ValueSink`]: the extractors' own value visit feeds it, so the
//! profile sees exactly the tables, headers and cells the guard sees. Each
//! cell costs two hashes and a classification; no value is kept (distinct
//! values and duplicate rows are counted by 64-bit hash, in capped sets).

mod classify;
mod column;
mod hash;
#[cfg(test)]
mod tests;

use std::path::Path;

use self::column::ColumnState;
use self::hash::{Hashes, mix};
use crate::error::ExtractError;
use crate::extract::FileExtract;
pub use crate::extract::{ColumnProfile, ShapeCount, TableProfile};
use crate::extract::{DifferingColumn, RepeatedKeys};
use crate::registry::Registry;
use crate::values::{ValueOptions, ValueSink};

pub use classify::month_name;
pub use column::{DISTINCT_CAP, KEY_CAP, MAX_SHAPES, SHOWN_SHAPES};

/// Rows whose hashes are kept to find duplicate rows; later rows are not
/// compared (a bound on memory: about 16 bytes a row).
pub const DUPLICATE_ROWS_CAP: usize = 2_000_000;

/// Ids whose first row is kept (as hashes) to explain repeated ids; later
/// new ids are not followed (a bound on memory).
pub const REPEATED_KEYS_CAP: usize = 200_000;
/// Columns compared in the rows that repeat an id.
const KEY_COLUMNS_COMPARED: usize = 128;

/// Whether a column's name says it holds an id (`order_id`, `Ref`, `SKU`,
/// `Customer No`).
fn id_like(name: &str) -> bool {
    let n: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    !n.is_empty()
        && ["id", "ref", "key", "code", "sku", "no", "number", "num"]
            .iter()
            .any(|s| n.ends_with(s))
}

/// The hash of `v` as a reader would compare it: trimmed, case folded,
/// runs of spaces as one, and a number by its value (`1,200.00` = `1200`).
fn normal_hash(v: &str) -> u64 {
    let v = v.trim();
    if let (_, Some(n), _) = classify::classify_full(v) {
        return hash::fnv(&n.to_bits().to_le_bytes()) ^ 0x5bd1_e995;
    }
    let mut h = hash::fnv(b"");
    let mut space = false;
    for c in v.chars().flat_map(char::to_lowercase) {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space {
            h = hash::mix(h ^ u64::from(b' '));
            space = false;
        }
        h = hash::mix(h ^ u64::from(c));
    }
    h
}

/// The rows that repeat an id, compared with the id's first row.
struct KeyTally {
    column: usize,
    /// Per id: the first row's (raw, normalised) hash per column.
    first: std::collections::HashMap<
        u64,
        Vec<(u64, u64)>,
        std::hash::BuildHasherDefault<hash::Identity>,
    >,
    /// The current row's (raw, normalised) hash per column.
    row: Vec<(u64, u64)>,
    rows: u64,
    exact: u64,
    normal: u64,
    /// Per column: repeats differing, of them only in format.
    differ: Vec<(u64, u64)>,
}

impl KeyTally {
    fn new(column: usize) -> Self {
        Self {
            column,
            first: Default::default(),
            row: Vec::new(),
            rows: 0,
            exact: 0,
            normal: 0,
            differ: Vec::new(),
        }
    }

    fn cell(&mut self, column: usize, value: &str) {
        if column >= KEY_COLUMNS_COMPARED {
            return;
        }
        if self.row.len() <= column {
            self.row.resize(column + 1, (0, 0));
        }
        self.row[column] = (hash::fnv(value.trim().as_bytes()), normal_hash(value));
    }

    fn end_row(&mut self) {
        let row = std::mem::take(&mut self.row);
        let Some(&(_, key)) = row.get(self.column).filter(|c| c.0 != 0) else {
            return;
        };
        let Some(first) = self.first.get(&key) else {
            if self.first.len() < REPEATED_KEYS_CAP {
                self.first.insert(key, row);
            }
            return;
        };
        self.rows += 1;
        let width = row.len().max(first.len());
        if self.differ.len() < width {
            self.differ.resize(width, (0, 0));
        }
        let (mut raw_same, mut normal_same) = (true, true);
        for i in 0..width {
            let a = first.get(i).copied().unwrap_or((0, 0));
            let b = row.get(i).copied().unwrap_or((0, 0));
            if a.0 != b.0 {
                raw_same = false;
                self.differ[i].0 += 1;
                if a.1 == b.1 {
                    self.differ[i].1 += 1;
                } else {
                    normal_same = false;
                }
            }
        }
        if raw_same {
            self.exact += 1;
        } else if normal_same {
            self.normal += 1;
        }
    }

    fn finish(self, names: &[String]) -> Option<RepeatedKeys> {
        if self.rows == 0 {
            return None;
        }
        let name = |i: usize| {
            names
                .get(i)
                .filter(|s| !s.is_empty())
                .cloned()
                .unwrap_or_else(|| format!("column_{}", i + 1))
        };
        let differing = self
            .differ
            .iter()
            .enumerate()
            .filter(|(_, d)| d.0 > 0)
            .map(|(i, d)| DifferingColumn {
                column: name(i),
                rows: d.0,
                only_format: d.1,
            })
            .collect();
        Some(RepeatedKeys {
            column: name(self.column),
            rows: self.rows,
            exact: self.exact,
            same_after_normalising: self.normal,
            differing,
        })
    }
}

/// One profiled table and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfiledTable {
    /// The sheet's name, in a workbook.
    pub sheet: Option<String>,
    /// Its profile.
    pub profile: TableProfile,
}

/// Profiles every table of the file at `path` (see the module's doc).
pub fn profile_path(
    registry: &Registry,
    path: &Path,
    options: &ValueOptions,
) -> Result<Vec<ProfiledTable>, ExtractError> {
    let mut profiler = Profiler::default();
    registry.values(path, options, &mut profiler)?;
    Ok(profiler.finish())
}

/// Puts each profile where its table is in `extract`: a delimited file's
/// one table at the top, a workbook's by sheet name (its top level mirrors
/// its first sheet, so it gets that sheet's profile too).
pub fn attach(extract: &mut FileExtract, tables: Vec<ProfiledTable>) {
    if let Some(sheets) = extract.sheets.as_mut() {
        for t in &tables {
            if let Some(s) = sheets
                .iter_mut()
                .find(|s| Some(&s.name) == t.sheet.as_ref())
            {
                s.profile = Some(t.profile.clone());
            }
        }
        let first = sheets
            .iter()
            .find(|s| s.columns == extract.columns && s.row_count == extract.row_count)
            .and_then(|s| s.profile.clone());
        extract.profile = first;
    } else if extract.document.is_none()
        && let Some(t) = tables.into_iter().find(|t| t.sheet.is_none())
    {
        extract.profile = Some(t.profile);
    }
}

/// A [`ValueSink`] that profiles every table it is shown.
#[derive(Default)]
pub struct Profiler {
    done: Vec<ProfiledTable>,
    current: Option<TableState>,
    header_first: bool,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("tables_done", &self.done.len())
            .field("header_first", &self.header_first)
            .finish_non_exhaustive()
    }
}

struct TableState {
    sheet: Option<String>,
    names: Vec<String>,
    /// The first row is the header, still to be read.
    pending_header: bool,
    width: Option<usize>,
    columns: Vec<ColumnState>,
    rows: u64,
    duplicates: u64,
    row_hash: u64,
    row_cells: u32,
    seen_rows: Hashes,
    keys: Option<KeyTally>,
}

impl Profiler {
    /// A profiler that takes a table's first row as its header whenever the
    /// extractor found none: for files a script wrote (pandas writes a
    /// header even over no rows, which alone cannot be told from data).
    pub fn header_first() -> Self {
        Self {
            header_first: true,
            ..Self::default()
        }
    }

    /// Every table's profile, in file order.
    pub fn finish(mut self) -> Vec<ProfiledTable> {
        self.close();
        self.done
    }

    fn close(&mut self) {
        let Some(mut t) = self.current.take() else {
            return;
        };
        t.end_row();
        let rows = t.rows;
        let repeated_keys = t.keys.take().and_then(|k| k.finish(&t.names));
        let n = t.columns.len().max(t.names.len());
        let mut unique = Vec::new();
        let mut columns = Vec::with_capacity(n);
        let mut states = t.columns.into_iter();
        for i in 0..n {
            let name = t
                .names
                .get(i)
                .filter(|s| !s.is_empty())
                .cloned()
                .unwrap_or_else(|| format!("column_{}", i + 1));
            let state = states.next().unwrap_or_else(ColumnState::new);
            let profile = state_profile(state, name, rows, &mut unique);
            columns.push(profile);
        }
        self.done.push(ProfiledTable {
            sheet: t.sheet,
            profile: TableProfile {
                rows_profiled: rows,
                duplicate_rows: t.duplicates,
                unique_columns: unique,
                columns,
                repeated_keys,
            },
        });
    }
}

fn state_profile(
    state: ColumnState,
    name: String,
    rows: u64,
    unique: &mut Vec<String>,
) -> ColumnProfile {
    let key = rows >= 2 && state.all_distinct && state.values == rows;
    let profile = state.finish(name, rows);
    if key && profile.placeholders == 0 {
        unique.push(profile.name.clone());
    }
    profile
}

impl TableState {
    fn end_row(&mut self) {
        if self.row_cells == 0 {
            return;
        }
        if let Some(k) = self.keys.as_mut() {
            k.end_row();
        }
        self.rows += 1;
        let h = mix(self.row_hash ^ u64::from(self.row_cells));
        if self.seen_rows.len() < DUPLICATE_ROWS_CAP {
            if !self.seen_rows.insert(h) {
                self.duplicates += 1;
            }
        } else if self.seen_rows.contains(&h) {
            self.duplicates += 1;
        }
        self.row_hash = 0;
        self.row_cells = 0;
    }
}

impl ValueSink for Profiler {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        self.close();
        self.current = Some(TableState {
            sheet: sheet.map(str::to_owned),
            names: columns.to_vec(),
            pending_header: self.header_first && columns.is_empty(),
            width: None,
            columns: Vec::new(),
            rows: 0,
            duplicates: 0,
            row_hash: 0,
            row_cells: 0,
            seen_rows: Hashes::default(),
            keys: columns.iter().position(|n| id_like(n)).map(KeyTally::new),
        });
    }

    fn table_width(&mut self, width: usize) {
        if let Some(t) = self.current.as_mut() {
            t.width = Some(width);
        }
    }

    fn cell(&mut self, column: usize, value: &str) {
        self.add_cell(column, value, false);
    }

    fn text_cell(&mut self, column: usize, value: &str) {
        self.add_cell(column, value, true);
    }

    fn text(&mut self, _text: &str) {}

    fn row_end(&mut self) {
        if let Some(t) = self.current.as_mut() {
            if t.pending_header {
                t.pending_header = false;
            } else {
                t.end_row();
            }
        }
    }
}

impl Profiler {
    fn add_cell(&mut self, column: usize, value: &str, as_text: bool) {
        if self.current.is_none() {
            self.table(None, &[]);
        }
        let Some(t) = self.current.as_mut() else {
            return;
        };
        if t.width.is_some_and(|w| column >= w) || value.trim().is_empty() {
            return;
        }
        if t.pending_header {
            if t.names.len() <= column {
                t.names.resize(column + 1, String::new());
            }
            t.names[column] = value.trim().to_owned();
            return;
        }
        while t.columns.len() <= column {
            t.columns.push(ColumnState::new());
        }
        let h = if as_text {
            t.columns[column].add_text(value)
        } else {
            t.columns[column].add(value)
        };
        // Order matters within a row: each cell's hash is mixed with its column.
        t.row_hash = t
            .row_hash
            .wrapping_add(mix(h ^ (column as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        t.row_cells += 1;
        if let Some(k) = t.keys.as_mut() {
            k.cell(column, value);
        }
    }
}
