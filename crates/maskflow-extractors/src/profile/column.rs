//! One column's running tallies while a table is read, in bounded memory:
//! 64-bit hashes of values (never the values), at most [`MAX_SHAPES`]
//! masked shapes, and counts.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use super::classify::{DateLayout, Kind, TimeLayout, classify, is_placeholder, round2};
use super::hash::{Hashes, Identity, fnv, mask_hash};
use super::{ColumnProfile, ShapeCount};
use crate::mask::mask_char;

/// Distinct values counted exactly per column; past it `distinct_capped`.
pub const DISTINCT_CAP: usize = 65_536;
/// Values kept (as hashes) of a column that is still all-distinct, to tell
/// a unique key in a large table; past it the column is not called a key.
pub const KEY_CAP: usize = 1_000_000;
/// Different shapes tracked per column (the rest count as other shapes).
pub const MAX_SHAPES: usize = 64;
/// Shapes shown per column, most frequent first.
pub const SHOWN_SHAPES: usize = 5;
/// Characters of a shape kept (a longer one ends in `…`).
pub const SHAPE_CHARS: usize = 32;

/// One column's tallies.
#[derive(Default)]
pub(super) struct ColumnState {
    /// Cells with a value (not empty, not blank).
    pub values: u64,
    placeholders: u64,
    distinct: Hashes,
    distinct_seen: u64,
    capped: bool,
    /// Still no value repeated (a key candidate).
    pub all_distinct: bool,
    min_len: Option<u32>,
    max_len: Option<u32>,
    min: Option<f64>,
    max: Option<f64>,
    /// Few kinds per column: a list is cheaper per cell than a map.
    kinds: Vec<(KindKey, u64)>,
    day_first: bool,
    month_first: bool,
    shapes: HashMap<u64, (String, u64), BuildHasherDefault<Identity>>,
    other_shapes: u64,
}

/// A kind with the day/month evidence of a date taken out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KindKey {
    Integer,
    Decimal,
    Date(DateLayout),
    DateTime(DateLayout, TimeLayout),
    Time,
    Boolean,
    Text,
}

impl ColumnState {
    pub(super) fn new() -> Self {
        Self {
            all_distinct: true,
            ..Self::default()
        }
    }

    /// One cell's value (not empty). Returns the value's hash (for the row's).
    pub(super) fn add(&mut self, raw: &str) -> u64 {
        let v = raw.trim();
        let h = fnv(v.as_bytes());
        if v.is_empty() {
            return h;
        }
        self.values += 1;
        self.shape(v);
        if is_placeholder(v) {
            self.placeholders += 1;
            return h;
        }
        self.distinct(h);
        let len = u32::try_from(v.chars().count()).unwrap_or(u32::MAX);
        self.min_len = Some(self.min_len.map_or(len, |m| m.min(len)));
        self.max_len = Some(self.max_len.map_or(len, |m| m.max(len)));
        let (kind, number) = classify(v);
        if let Some(n) = number {
            self.min = Some(self.min.map_or(n, |m| m.min(n)));
            self.max = Some(self.max.map_or(n, |m| m.max(n)));
        }
        let key = match kind {
            Kind::Integer => KindKey::Integer,
            Kind::Decimal => KindKey::Decimal,
            Kind::Date(d) => {
                self.evidence(d);
                KindKey::Date(d.key())
            }
            Kind::DateTime(d, t) => {
                self.evidence(d);
                KindKey::DateTime(d.key(), t)
            }
            Kind::Time => KindKey::Time,
            Kind::Boolean => KindKey::Boolean,
            Kind::Text => KindKey::Text,
        };
        match self.kinds.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((key, 1)),
        }
        h
    }

    fn evidence(&mut self, d: DateLayout) {
        if let DateLayout::YearLast(_, day, month) = d {
            self.day_first |= day;
            self.month_first |= month;
        }
    }

    fn distinct(&mut self, h: u64) {
        if self.capped {
            self.all_distinct = false;
            return;
        }
        let fresh = self.distinct.insert(h);
        if fresh {
            self.distinct_seen += 1;
        } else {
            self.all_distinct = false;
        }
        let cap = if self.all_distinct {
            KEY_CAP
        } else {
            DISTINCT_CAP
        };
        if self.distinct.len() >= cap {
            // Counting stops here: the count is a lower bound from now on.
            self.capped = true;
            self.all_distinct = false;
            self.distinct = HashSet::default();
        }
    }

    fn shape(&mut self, v: &str) {
        let (h, long) = mask_hash(v, SHAPE_CHARS);
        if let Some(entry) = self.shapes.get_mut(&h) {
            entry.1 += 1;
        } else if self.shapes.len() < MAX_SHAPES {
            let mut s: String = v.chars().take(SHAPE_CHARS).map(mask_char).collect();
            if long {
                s.push('…');
            }
            self.shapes.insert(h, (s, 1));
        } else {
            self.other_shapes += 1;
        }
    }

    /// The column's profile, given the table's rows.
    pub(super) fn finish(self, name: String, rows: u64) -> ColumnProfile {
        let nulls = rows.saturating_sub(self.values);
        let typed: u64 = self.kinds.iter().map(|(_, n)| n).sum();
        let (inferred, date_format) = self.inferred(typed);
        let mut shapes: Vec<(String, u64)> = self.shapes.into_values().collect();
        shapes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let rest: u64 = shapes.iter().skip(SHOWN_SHAPES).map(|s| s.1).sum();
        shapes.truncate(SHOWN_SHAPES);
        ColumnProfile {
            name,
            inferred_type: inferred.into(),
            date_format,
            nulls,
            placeholders: self.placeholders,
            distinct: if self.capped {
                self.distinct_seen
            } else {
                self.distinct.len() as u64
            },
            distinct_capped: self.capped,
            min_length: self.min_len,
            max_length: self.max_len,
            min: self.min.map(round2),
            max: self.max.map(round2),
            shapes: shapes
                .into_iter()
                .map(|(shape, count)| ShapeCount { shape, count })
                .collect(),
            other_shapes: self.other_shapes + rest,
        }
    }

    /// The column's type: the kind of every value, or of at least nine in
    /// ten (the rest shows in the shapes); integers among decimals are
    /// decimals, dates of two layouts are dates.
    fn inferred(&self, typed: u64) -> (&'static str, Option<String>) {
        if typed == 0 {
            return ("empty", None);
        }
        let mut by_type: HashMap<&'static str, u64> = HashMap::new();
        for (k, n) in &self.kinds {
            let t = match k {
                KindKey::Integer => "integer",
                KindKey::Decimal => "decimal",
                KindKey::Date(_) => "date",
                KindKey::DateTime(..) => "datetime",
                KindKey::Time => "time",
                KindKey::Boolean => "boolean",
                KindKey::Text => "text",
            };
            *by_type.entry(t).or_insert(0) += n;
        }
        if let (Some(i), Some(d)) = (by_type.get("integer"), by_type.get("decimal")) {
            let i = *i;
            *by_type.entry("decimal").or_insert(0) = d + i;
            by_type.remove("integer");
        }
        let Some((&top, &count)) = by_type
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        else {
            return ("empty", None);
        };
        if count * 10 < typed * 9 {
            return ("mixed", None);
        }
        let format = self
            .kinds
            .iter()
            .filter_map(|(k, n)| match k {
                KindKey::Date(d) if top == "date" => {
                    Some((d.format(self.day_first, self.month_first), *n))
                }
                KindKey::DateTime(d, t) if top == "datetime" => {
                    let time = if t.seconds { "%H:%M:%S" } else { "%H:%M" };
                    let date = d.format(self.day_first, self.month_first);
                    Some((format!("{date}{}{time}", char::from(t.joint)), *n))
                }
                _ => None,
            })
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
            .map(|(f, _)| f);
        (top, format)
    }
}
