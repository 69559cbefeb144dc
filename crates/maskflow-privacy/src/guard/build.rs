//! Building the guard's index: the keys of every value of a file, fed by
//! the extractors' `values()` visitor (see the parent module's doc for what
//! is keyed). The visitor's thread only copies cells into batches; keying
//! threads, one per core, key them and fill the shared
//! [`KeyTable`](super::table::KeyTable) (inserting is mostly waiting on
//! cache misses, and keying a 100 MB file on one core took longer than the
//! issue's target for the whole build). Nothing allocates per value:
//! tokens and number keys go to scratch buffers reused across cells, and
//! batches go back to the reader once keyed.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use maskflow_extractors::ValueSink;

use super::repeats::{Repeats, Seen};
use super::table::{COMMON, SOURCE, STARTS_PHRASE, Scatter, SharedTable, VALUE};
use super::{CATEGORY_REPEATS, GuardIndex, MIN_TOKEN_CHARS};
use crate::keys::{self, KeySet, MAX_PHRASE, Token};
use crate::names::classify;
use crate::words::is_common;

/// Most distinct values tracked per column to tell categories from values:
/// a column with more is not a handful of categories (and a small set stays
/// in cache while a 100 MB file is read).
const MAX_TRACKED_DISTINCT: usize = 4096;

/// How varied one column's values are, and what they look like: its
/// profile, which decides whether its values identify (issue #38 point 4).
#[derive(Clone, Debug, Default)]
struct Variety {
    /// Cells that are phrases (2–6 tokens), and how many distinct.
    cells: u64,
    distinct: KeySet,
    overflow: bool,
    /// Every cell; those seen before in the column; those that are numbers;
    /// those numbers with a fractional part.
    all: u64,
    repeated: u64,
    numeric: u64,
    decimal: u64,
    /// New cells classified ([`NAMED_SAMPLE`] at most), and how many of
    /// them are a person's or organisation's name, an e-mail address, a
    /// phone number or an id ([`classify`]).
    sampled: u32,
    named: u32,
}

/// New cells per column and keying thread looked at to tell a column of
/// names, e-mails, phones or ids (identifying however often each repeats).
const NAMED_SAMPLE: u32 = 64;

impl Variety {
    fn count(&mut self, phrase: u64) {
        self.cells += 1;
        if !self.overflow {
            self.distinct.insert(phrase);
            if self.distinct.len() > MAX_TRACKED_DISTINCT {
                self.overflow = true;
                self.distinct = KeySet::default();
            }
        }
    }

    /// Counts one cell of the column (`repeated`: seen before in it).
    fn cell(&mut self, value: &str, repeated: bool) {
        self.all += 1;
        self.repeated += u64::from(repeated);
        match number_shape(value) {
            NumberShape::NotANumber => {}
            NumberShape::Whole => self.numeric += 1,
            NumberShape::Fraction => {
                self.numeric += 1;
                self.decimal += 1;
            }
        }
    }

    /// Whether the column's values identify someone or a record: not a
    /// column of a few repeated values (a category) and not a measure (most
    /// cells numbers with a fractional part). Ids, names, e-mails, phones,
    /// codes and free text do.
    fn identifying(&self) -> bool {
        if self.sampled > 0 && self.named * 2 >= self.sampled {
            return true; // people, e-mails, phones, ids: however often they repeat
        }
        let category = self.categorical()
            || (self.all >= u64::from(CATEGORY_REPEATS)
                && self.repeated * u64::from(CATEGORY_REPEATS)
                    >= self.all * u64::from(CATEGORY_REPEATS - 1));
        let measure = self.numeric * 2 > self.all && self.decimal * 2 > self.numeric;
        !category && !measure
    }

    /// Adds what another keying thread saw of the same column.
    fn merge(&mut self, other: Variety) {
        self.all += other.all;
        self.sampled += other.sampled;
        self.named += other.named;
        self.repeated += other.repeated;
        self.numeric += other.numeric;
        self.decimal += other.decimal;
        self.cells += other.cells;
        self.overflow |= other.overflow;
        if !self.overflow {
            self.distinct.extend(other.distinct);
            if self.distinct.len() > MAX_TRACKED_DISTINCT {
                self.overflow = true;
                self.distinct = KeySet::default();
            }
        }
    }

    /// Whether each value repeats [`CATEGORY_REPEATS`] times on average
    /// (a status or a category column, not names or notes).
    fn categorical(&self) -> bool {
        self.cells > 0
            && !self.overflow
            && self.distinct.len() as u64 * u64::from(CATEGORY_REPEATS) <= self.cells
    }
}

/// Buffers reused from one value to the next, and the keys of the values
/// not yet handed to the table.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Keys of the value being keyed, with their entries.
    keys: Vec<(u64, u32)>,
    tokens: Vec<Token>,
    numbers: Vec<u64>,
    dates: Vec<(usize, usize, u64)>,
    runs: Vec<std::ops::Range<usize>>,
    /// Tokens of an e-mail address inside a value.
    inner: Vec<Token>,
    /// Spans of the e-mail addresses in a value.
    spans: Vec<(usize, usize)>,
    /// Per source: how varied its phrases are.
    variety: Vec<Variety>,
    /// Per source: the cells already keyed.
    repeats: Vec<Repeats>,
}

impl Scratch {
    /// Keys one raw value (a cell, or a line of text) from `source`.
    /// A cell seen before in its column is only counted for the column's
    /// variety: its keys are in already.
    pub(super) fn add_value(&mut self, value: &str, source: u32) {
        let at = source as usize;
        if self.repeats.len() <= at {
            self.repeats.resize_with(at + 1, Repeats::default);
        }
        if self.variety.len() <= at {
            self.variety.resize_with(at + 1, Variety::default);
        }
        let seen = self.repeats[at].seen(value);
        let v = &mut self.variety[at];
        v.cell(value, matches!(seen, Seen::Before(_)));
        if !matches!(seen, Seen::Before(_)) && v.sampled < NAMED_SAMPLE {
            use crate::names::NameKind::{Email, Id, Organisation, Person, Phone};
            v.sampled += 1;
            let kind = classify(value);
            v.named += u32::from(
                matches!(kind, Some(Email | Id | Organisation | Person | Phone))
                    || crate::names::person_like(value),
            );
        }
        let fp = match seen {
            Seen::Before(phrase) => {
                if let Some(h) = phrase {
                    self.variety[at].count(h);
                }
                return;
            }
            Seen::New(fp) => Some(fp),
            Seen::Untracked => None,
        };
        let mut toks = std::mem::take(&mut self.tokens);
        keys::tokenize_into(value, &mut toks);
        let phrase = self.add_tokens(value, &toks, source);
        self.tokens = toks;
        if let Some(fp) = fp {
            self.repeats[at].remember(fp, phrase);
        }
    }

    fn insert(&mut self, key: u64, entry: u32) {
        self.keys.push((key, entry));
    }

    /// Keys a value's tokens; returns the key of its whole-cell phrase,
    /// if it is one (counted for the column's variety).
    fn add_tokens(&mut self, value: &str, toks: &[Token], source: u32) -> Option<u64> {
        if toks.is_empty() {
            return None;
        }
        let of = VALUE | source;
        let mut whole = None;
        if (2..=MAX_PHRASE).contains(&toks.len()) {
            // The whole cell as a phrase, unless it is language: a short run
            // of common lowercase words (`to the`, `as the`, `a single`) is
            // not a value on its own (issue #38 point 3); names (`John
            // Smith`), codes, addresses and e-mails stay values.
            let h = if is_language(value, toks) {
                keys::phrase_hash(toks)
            } else {
                self.add_phrase(toks, source)
            };
            whole = Some(h);
            let at = source as usize;
            if self.variety.len() <= at {
                self.variety.resize_with(at + 1, Variety::default);
            }
            self.variety[at].count(h);
            // A code written without its separators: `AC-0100-0042` as
            // `AC01000042`; a name of a script written without spaces, as
            // one run: `山田 太郎` as `山田太郎`.
            let unspaced = || {
                toks.iter()
                    .all(|t| value[t.start..t.end].chars().all(keys::unspaced))
            };
            if (toks.iter().any(|t| t.digits) && toks.iter().any(|t| !t.digits)) || unspaced() {
                self.insert(keys::joined_hash(value, toks), of);
            }
            // A name of 2–3 capitalised words, last word first: `Smith, John`.
            if toks.len() <= 3 && toks.iter().all(|t| capitalised(value, t)) {
                let last = toks[toks.len() - 1];
                let mut turned = [last; 3];
                turned[1..toks.len()].copy_from_slice(&toks[..toks.len() - 1]);
                self.add_phrase(&turned[..toks.len()], source);
            }
        } else if toks.len() > MAX_PHRASE {
            self.add_capitalised_runs(value, toks, source);
        }
        if value.contains('@') {
            let mut inner = std::mem::take(&mut self.inner);
            self.add_emails(value, source, whole.is_some(), &mut inner);
            self.inner = inner;
        }
        let mut any_digits = false;
        for t in toks {
            any_digits |= t.digits;
            if !t.digits && identifying(&value[t.start..t.end], t.hash) {
                self.insert(t.hash, of);
            }
        }
        if !any_digits {
            return whole;
        }
        self.numbers.clear();
        keys::numeric_runs_into(value, toks, &mut self.runs);
        for r in &self.runs {
            keys::number_keys(value, &toks[r.clone()], true, &mut self.numbers);
        }
        self.dates.clear();
        keys::month_name_dates(value, toks, &mut self.dates);
        self.numbers.extend(self.dates.iter().map(|(_, _, k)| *k));
        self.keys.extend(self.numbers.iter().map(|&k| (k, of)));
        whole
    }

    /// Runs of capitalised words inside longer text: names in prose.
    fn add_capitalised_runs(&mut self, value: &str, toks: &[Token], source: u32) {
        let capital = |t: &Token| capitalised(value, t);
        let mut i = 0;
        while i < toks.len() {
            let mut j = i;
            while j < toks.len() && capital(&toks[j]) && j - i < MAX_PHRASE {
                j += 1;
            }
            if j - i >= 2 {
                for w in toks[i..j].windows(2) {
                    self.add_phrase(w, source);
                }
            }
            i = j.max(i + 1);
        }
    }

    /// `whole`: the value's tokens are indexed as a phrase already (an
    /// address that is the whole cell is not keyed twice).
    fn add_emails(&mut self, value: &str, source: u32, whole: bool, inner: &mut Vec<Token>) {
        let mut spans = std::mem::take(&mut self.spans);
        keys::email_spans_into(value, &mut spans);
        for &(a, b) in &spans {
            if !(whole && a == 0 && b == value.len()) {
                keys::tokenize_into(&value[a..b], inner);
                if inner.len() >= 2 {
                    self.add_phrase(inner, source);
                }
            }
            if let Some(at) = value[a..b].find('@') {
                keys::tokenize_into(&value[a..a + at], inner);
                if inner.len() >= 2 {
                    self.add_phrase(inner, source);
                }
            }
        }
        self.spans = spans;
    }

    /// Indexes a phrase; returns its key.
    fn add_phrase(&mut self, toks: &[Token], source: u32) -> u64 {
        let common = toks.iter().all(|t| t.digits || is_common(t.hash));
        let h = keys::phrase_hash(toks);
        let flags = if common { VALUE | COMMON } else { VALUE };
        self.insert(h, flags | source);
        self.insert(toks[0].hash, STARTS_PHRASE);
        h
    }
}

/// Bytes of cell text per batch handed to the keying threads.
const BATCH_BYTES: usize = 1 << 16;
/// Batches in flight to the keying threads (bounds the memory held).
const IN_FLIGHT: usize = 8;
/// Most keying threads.
const MAX_WORKERS: usize = 4;

/// Cells copied out of the visitor, each with its source.
#[derive(Debug, Default)]
pub(super) struct Cells {
    text: String,
    /// Each cell's source and the end of its text.
    cells: Vec<(u32, u32)>,
}

impl Cells {
    fn push(&mut self, source: u32, value: &str) {
        self.text.push_str(value);
        self.cells.push((source, self.text.len() as u32));
    }

    fn clear(&mut self) {
        self.text.clear();
        self.cells.clear();
    }
}

/// One keying thread: keys the batches it takes into the shared table and
/// hands each emptied batch back; returns what it saw of each column.
fn key_cells(
    table: &SharedTable,
    batches: &Mutex<Receiver<Cells>>,
    free: &SyncSender<Cells>,
) -> Vec<Variety> {
    let mut scratch = Scratch::default();
    let mut scatter = Scatter::default();
    loop {
        // The lock is only held while waiting for the next batch.
        let next = batches
            .lock()
            .map_err(drop)
            .and_then(|b| b.recv().map_err(drop));
        let Ok(mut batch) = next else { break };
        let mut start = 0;
        for &(source, end) in &batch.cells {
            let end = end as usize;
            scratch.add_value(&batch.text[start..end], source);
            start = end;
            for (k, e) in scratch.keys.drain(..) {
                scatter.insert(table, k, e);
            }
        }
        batch.clear();
        // The reader may have finished already: then the batch is dropped.
        let _ = free.try_send(batch);
    }
    scatter.flush(table);
    scratch.variety
}

/// The way of a file's cells to the keying threads.
pub(super) struct Feed {
    batch: Cells,
    to_workers: SyncSender<Cells>,
    free: Receiver<Cells>,
}

impl Feed {
    /// Queues one value; hands the batch over once it is full.
    fn push(&mut self, source: u32, value: &str) {
        self.batch.push(source, value);
        if self.batch.text.len() >= BATCH_BYTES {
            self.pass();
        }
    }

    /// Hands the queued values over.
    fn pass(&mut self) {
        if self.batch.cells.is_empty() {
            return;
        }
        let next = self.free.try_recv().unwrap_or_default();
        let batch = std::mem::replace(&mut self.batch, next);
        // Fails only if every keying thread panicked, which joining reports.
        let _ = self.to_workers.send(batch);
    }

    /// Hands over what is left at the end of a file.
    pub(super) fn finish(mut self) {
        self.pass();
    }
}

impl GuardIndex {
    /// Runs `read` (which visits a file's values into the [`Feed`]) while
    /// keying threads fill the table, made room for `expected` more keys;
    /// then ends the file (see [`GuardIndex::finish_file`]).
    pub(super) fn with_workers<R>(
        &mut self,
        expected: usize,
        read: impl FnOnce(&mut Self, Feed) -> R,
    ) -> R {
        let table = std::mem::take(&mut self.table).share(expected);
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_WORKERS);
        let (to_workers, batches) = std::sync::mpsc::sync_channel(IN_FLIGHT);
        let (to_reader, free) = std::sync::mpsc::sync_channel(IN_FLIGHT + workers);
        // Shared by the keying threads: when they all end, a send fails.
        let batches = Arc::new(Mutex::new(batches));
        let (variety, out) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let (batches, free, table) = (batches.clone(), to_reader.clone(), &table);
                    scope.spawn(move || key_cells(table, &batches, &free))
                })
                .collect();
            drop((batches, to_reader));
            let feed = Feed {
                batch: Cells::default(),
                to_workers,
                free,
            };
            // `read` drops the feed when it returns: the workers see the end.
            let out = read(self, feed);
            let mut variety: Vec<Variety> = Vec::new();
            for h in handles {
                let seen = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                if variety.len() < seen.len() {
                    variety.resize_with(seen.len(), Variety::default);
                }
                for (mine, theirs) in variety.iter_mut().zip(seen) {
                    mine.merge(theirs);
                }
            }
            (variety, out)
        });
        self.table = table.into_table();
        self.finish_file(&variety);
        out
    }

    /// Ends a file: notes its columns of a few repeated values, whose
    /// phrases of common words are categories, not values.
    fn finish_file(&mut self, variety: &[Variety]) {
        if self.categories.len() < variety.len() {
            self.categories.resize(variety.len(), false);
        }
        for (category, v) in self.categories.iter_mut().zip(variety) {
            *category |= v.categorical();
        }
        if self.identifying.len() < variety.len() {
            self.identifying.resize(variety.len(), true);
        }
        for (identifying, v) in self.identifying.iter_mut().zip(variety) {
            if v.all > 0 {
                *identifying = v.identifying();
            }
        }
    }
}

/// What a cell is as a number.
#[derive(Debug, PartialEq, Eq)]
enum NumberShape {
    NotANumber,
    Whole,
    Fraction,
}

/// Whether `value` is a number (digits, signs, currency and grouping
/// marks, no letters) and whether it has a fractional part: a last `.` or
/// `,` followed by one or two digits, or a single `.` followed by more.
fn number_shape(value: &str) -> NumberShape {
    let v = value.trim();
    let number = v.bytes().any(|b| b.is_ascii_digit())
        && v.chars()
            .all(|c| c.is_ascii_digit() || " .,-+$€£¥%'".contains(c));
    if !number {
        return NumberShape::NotANumber;
    }
    let tail = v.trim_end_matches('%').trim_end();
    let fraction = match tail.rfind(['.', ',']) {
        Some(at) => {
            let after = &tail[at + 1..];
            let digits = !after.is_empty() && after.bytes().all(|b| b.is_ascii_digit());
            digits
                && (after.len() <= 2
                    || (tail[at..at + 1] == *"." && tail.matches('.').count() == 1))
        }
        None => false,
    };
    if fraction {
        NumberShape::Fraction
    } else {
        NumberShape::Whole
    }
}

/// Tokens from which a run of common words is a verbatim run of a cell
/// (indexed), not a phrase of the language.
pub(super) const VERBATIM_TOKENS: usize = 5;

/// Whether a whole cell is a short phrase of the language: fewer than
/// [`VERBATIM_TOKENS`] tokens, each a common word, not every one
/// capitalised (a name or a title), no digits and no e-mail address.
fn is_language(value: &str, toks: &[Token]) -> bool {
    toks.len() < VERBATIM_TOKENS
        && !value.contains('@')
        && toks.iter().all(|t| !t.digits && is_common(t.hash))
        && !toks.iter().all(|t| capitalised(value, t))
}

/// Whether a token is a word that starts with a capital letter.
fn capitalised(value: &str, t: &Token) -> bool {
    !t.digits
        && value[t.start..t.end]
            .chars()
            .next()
            .is_some_and(char::is_uppercase)
}

/// Whether a token (not all digits) identifies alone: with a digit and at
/// least [`MIN_TOKEN_CHARS`] characters, or that long and not among the
/// language's common words.
fn identifying(text: &str, hash: u64) -> bool {
    if text.len() < MIN_TOKEN_CHARS {
        return false; // fewer bytes than characters needed
    }
    if !text.is_ascii() && text.chars().count() < MIN_TOKEN_CHARS {
        return false;
    }
    let has_digit = if text.is_ascii() {
        text.bytes().any(|b| b.is_ascii_digit())
    } else {
        text.chars().any(char::is_numeric)
    };
    has_digit || !is_common(hash)
}

/// Feeds one file's values into the index, each with its file and column.
pub(super) struct FileSink<'a> {
    pub(super) index: &'a mut GuardIndex,
    pub(super) file: &'a str,
    pub(super) columns: Vec<u32>,
    pub(super) fallback: u32,
    pub(super) headerless: bool,
    pub(super) text: Option<u32>,
    pub(super) feed: Feed,
}

/// Columns of a headerless table named by number; the rest share the table's name.
const MAX_NUMBERED_COLUMNS: usize = 1000;

impl ValueSink for FileSink<'_> {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        let at = match sheet {
            Some(s) => {
                if classify(s).is_none() {
                    self.index.allow_name(s);
                }
                format!("{}, sheet \"{s}\"", self.file)
            }
            None => self.file.to_owned(),
        };
        self.fallback = self.index.source(at.clone());
        // A sheet or column name that is a value (#26) is indexed as one; it
        // passes only where the approved extract holds it (sent as it is).
        if let Some(s) = sheet.filter(|s| classify(s).is_some()) {
            self.feed.push(self.fallback, s);
        }
        self.headerless = columns.is_empty();
        self.columns = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let label = if c.is_empty() {
                    format!("{at}, column {}", i + 1)
                } else {
                    format!("{at}, column \"{c}\"")
                };
                let source = self.index.source(label);
                if classify(c).is_some() {
                    self.feed.push(source, c);
                } else {
                    self.index.allow_name(c);
                }
                source
            })
            .collect();
    }

    fn cell(&mut self, column: usize, value: &str) {
        if column >= self.columns.len() && self.headerless {
            // Columns of a table without a header are named by number.
            let at = self.index.sources[self.fallback as usize].clone();
            for i in self.columns.len()..=column.min(MAX_NUMBERED_COLUMNS) {
                let id = self.index.source(format!("{at}, column {}", i + 1));
                self.columns.push(id);
            }
        }
        let src = self.columns.get(column).copied().unwrap_or(self.fallback);
        self.feed.push(src, value);
    }

    fn text(&mut self, text: &str) {
        let src = match self.text {
            Some(s) => s,
            None => {
                let s = self.index.source(format!("{}, text", self.file));
                self.text = Some(s);
                s
            }
        };
        self.feed.push(src, text);
    }
}

/// The sources a table entry can name.
pub(super) const MAX_SOURCES: u32 = SOURCE;
