//! One column's running tallies while a table is read, in bounded memory:
//! 64-bit hashes of values (never the values), at most [`MAX_SHAPES`]
//! masked shapes, and counts.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use super::classify::{
    Case, DateLayout, Kind, NumberFormat, TimeLayout, classify_full, may_be_category, placeholder,
    placeholder_word, round2,
};
use super::hash::{Hashes, Identity, fnv, mask_hash};
use super::{ColumnProfile, ShapeCount};
use crate::extract::FormatCount;
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
/// Different formats tracked per column (the rest count as other formats).
pub const MAX_FORMATS: usize = 64;
/// Excel's serial day numbers a date column may hold among its dates
/// (1954 to 2119): whole numbers in this range count as serials there.
const SERIALS: std::ops::RangeInclusive<f64> = 20_000.0..=80_000.0;

/// How one value is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Date(DateLayout),
    DateTime(DateLayout, TimeLayout),
    Time,
    Number(NumberFormat),
    Boolean,
    Text {
        case: Case,
        /// Spaces before or after the value.
        padded: bool,
        /// Two spaces in a row inside it.
        spaced: bool,
    },
}

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
    formats: Vec<(Format, u64)>,
    other_formats: u64,
    /// Whole numbers in Excel's serial range (dates, in a date column).
    serials: u64,
    numbers: u64,
    /// Placeholder words met: Maskflow's word, how it was cased, count.
    words: Vec<(usize, Case, u64)>,
    /// The next value is a workbook's text cell.
    as_text: bool,
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

    /// One cell of a workbook stored as text (not empty); see [`Self::add`].
    pub(super) fn add_text(&mut self, raw: &str) -> u64 {
        self.as_text = true;
        let h = self.add(raw);
        self.as_text = false;
        h
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
        if let Some(word) = placeholder(v) {
            self.placeholders += 1;
            let case = Case::of(v);
            match self
                .words
                .iter_mut()
                .find(|(w, c, _)| *w == word && *c == case)
            {
                Some((.., n)) => *n += 1,
                None => self.words.push((word, case, 1)),
            }
            return h;
        }
        self.distinct(h);
        let len = u32::try_from(v.chars().count()).unwrap_or(u32::MAX);
        self.min_len = Some(self.min_len.map_or(len, |m| m.min(len)));
        self.max_len = Some(self.max_len.map_or(len, |m| m.max(len)));
        let (kind, number, number_format) = classify_full(v);
        if let Some(n) = number {
            self.numbers += 1;
            self.min = Some(self.min.map_or(n, |m| m.min(n)));
            self.max = Some(self.max.map_or(n, |m| m.max(n)));
        }
        let (key, format) = match kind {
            Kind::Integer | Kind::Decimal => {
                let mut f = number_format.unwrap_or_default();
                f.as_text = self.as_text;
                if kind == Kind::Integer && number.is_some_and(|n| SERIALS.contains(&n)) {
                    self.serials += 1;
                }
                let key = if kind == Kind::Integer {
                    KindKey::Integer
                } else {
                    KindKey::Decimal
                };
                (key, Format::Number(f))
            }
            Kind::Date(d) => {
                self.evidence(d);
                (KindKey::Date(d.key()), Format::Date(d))
            }
            Kind::DateTime(d, t) => {
                self.evidence(d);
                (KindKey::DateTime(d.key(), t), Format::DateTime(d, t))
            }
            Kind::Time => (KindKey::Time, Format::Time),
            Kind::Boolean => (KindKey::Boolean, Format::Boolean),
            Kind::Text => (
                KindKey::Text,
                Format::Text {
                    case: Case::of(v),
                    padded: raw.len() != v.len(),
                    spaced: v.contains("  "),
                },
            ),
        };
        match self.kinds.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => self.kinds.push((key, 1)),
        }
        if let Some((_, n)) = self.formats.iter_mut().find(|(f, _)| *f == format) {
            *n += 1;
        } else if self.formats.len() < MAX_FORMATS {
            self.formats.push((format, 1));
        } else {
            self.other_formats += 1;
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
        let mut distinct = if self.capped {
            self.distinct_seen
        } else {
            self.distinct.len() as u64
        };
        let (placeholder_words, category_words) = self.words(inferred);
        let categories: u64 = category_words.iter().map(|w| w.count).sum();
        distinct += category_words.len() as u64;
        let formats = self.format_counts(inferred);
        let mut shapes: Vec<(String, u64)> = self.shapes.into_values().collect();
        shapes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let rest: u64 = shapes.iter().skip(SHOWN_SHAPES).map(|s| s.1).sum();
        shapes.truncate(SHOWN_SHAPES);
        ColumnProfile {
            name,
            inferred_type: inferred.into(),
            date_format,
            nulls,
            placeholders: self.placeholders - categories,
            distinct,
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
            range_values: (self.numbers > 0).then_some(self.numbers),
            formats,
            other_formats: self.other_formats,
            placeholder_words,
            category_words,
        }
    }

    /// The placeholder words met, by Maskflow's word: those that stand for
    /// a missing value, and those that are entries of the column — a word
    /// like `unknown` met once in a text column with no value twice (a
    /// list's `UNKNOWN` operator). Elsewhere the word is named, so the
    /// reader can tell a category `NONE` from a missing value.
    fn words(&self, inferred: &str) -> (Vec<FormatCount>, Vec<FormatCount>) {
        let list = inferred == "text" && self.all_distinct;
        let (mut missing, mut entries): (Vec<FormatCount>, Vec<FormatCount>) = (vec![], vec![]);
        let add = |list: &mut Vec<FormatCount>, word: &str, n: u64| match list
            .iter_mut()
            .find(|w| w.format == word)
        {
            Some(w) => w.count += n,
            None => list.push(FormatCount {
                format: word.to_owned(),
                count: n,
            }),
        };
        for &(word, _, n) in &self.words {
            let once = self
                .words
                .iter()
                .filter(|w| w.0 == word)
                .map(|w| w.2)
                .sum::<u64>()
                == 1;
            let entry = list && once && may_be_category(word);
            let list = if entry { &mut entries } else { &mut missing };
            add(list, placeholder_word(word), n);
        }
        for list in [&mut missing, &mut entries] {
            list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.format.cmp(&b.format)));
        }
        (missing, entries)
    }

    /// Every format of the column with its count, most frequent first: in
    /// a date column the date formats, Excel serials and the values that
    /// are not dates; in a number column the number formats and the
    /// values that are not numbers; elsewhere every format met.
    fn format_counts(&self, inferred: &str) -> Vec<FormatCount> {
        let dated = matches!(inferred, "date" | "datetime");
        let numeric = matches!(inferred, "integer" | "decimal");
        let mut out: Vec<FormatCount> = Vec::new();
        let mut add = |label: String, n: u64| {
            if n == 0 {
                return;
            }
            match out.iter_mut().find(|f| f.format == label) {
                Some(f) => f.count += n,
                None => out.push(FormatCount {
                    format: label,
                    count: n,
                }),
            }
        };
        let date = |d: &DateLayout| match d {
            DateLayout::YearLast(_, day, month) if *day || *month => d.format(*day, *month),
            _ => d.format(self.day_first, self.month_first),
        };
        let mut serials = if dated { self.serials } else { 0 };
        for (f, n) in &self.formats {
            let n = *n;
            let label = match f {
                Format::Date(d) => date(d),
                Format::DateTime(d, t) => {
                    let time = if t.seconds { "%H:%M:%S" } else { "%H:%M" };
                    format!("{}{}{time}", date(d), char::from(t.joint))
                }
                Format::Time => "time of day".into(),
                Format::Number(nf) if dated => {
                    // Serials are whole numbers: they come out of these.
                    let taken = if nf.decimal == 0 && !nf.scientific {
                        serials.min(n)
                    } else {
                        0
                    };
                    serials -= taken;
                    add("Excel serial".into(), taken);
                    add("not a date".into(), n - taken);
                    continue;
                }
                Format::Number(nf) if numeric => nf.describe(),
                Format::Number(nf) => format!("number, {}", nf.describe()),
                Format::Boolean => "yes/no word".into(),
                Format::Text {
                    case,
                    padded,
                    spaced,
                } => {
                    let mut l = format!("text, {}", case.describe());
                    if *padded {
                        l.push_str(", spaces around");
                    }
                    if *spaced {
                        l.push_str(", double spaces inside");
                    }
                    l
                }
            };
            let label = match f {
                Format::Date(_) | Format::DateTime(..) | Format::Number(_) => label,
                _ if dated => "not a date".into(),
                _ if numeric => "not a number".into(),
                _ => label,
            };
            add(label, n);
        }
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.format.cmp(&b.format)));
        out
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
        // Excel serials among dates are dates written as day numbers.
        let dates = by_type.get("date").copied().unwrap_or(0);
        if dates * 10 >= typed && self.serials > 0 {
            if let Some(i) = by_type.get_mut("integer") {
                let moved = self.serials.min(*i);
                *i -= moved;
                *by_type.entry("date").or_insert(0) += moved;
            }
            by_type.retain(|_, n| *n > 0);
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
