//! The egress guard: an index of the raw values in the files behind a
//! version, and a check of an outbound request against it.
//!
//! The files are read by the extractors' own `values()` visitor (content
//! sniffed; every sheet; Word, PDF and OCR text; a header only where the
//! extractor found one). The index keeps no raw value, only the 64-bit keys
//! of [`super::keys`], each with the file and column it came from, and only
//! for what identifies a person or a record, not for language:
//! - whole cells of 2–6 tokens (`John Smith`, `john.smith@acme.com`), and
//!   runs of capitalised words in longer text (`Patient John Smith`); a
//!   phrase of common words in a column of few, repeated values is a
//!   category (`Order shipped`), not a value;
//! - single tokens only when identifying: with digits, or not among the
//!   language's common words ([`super::words`]) — rare names, codes;
//! - numbers, phone numbers, IDs and amounts by their digits (any
//!   separators, grouping, trailing decimal zeros), and dates by their day.
//!
//! Column, sheet and file names are allowed only as whole names. Maskflow's
//! own text, the approved (masked) extracts and text the LLM wrote are
//! allowed key by key. Checking is one pass over the request's tokens with
//! a few hash lookups each, so it runs on every request.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use maskflow_extractors::{Registry, ValueOptions, ValueSink};
use serde::Serialize;

use super::keys::{self, MAX_PHRASE, Token};
use super::words::is_common;
use crate::providers::{ChatRole, LlmRequest};

/// The shortest single token indexed, in characters.
pub const MIN_TOKEN_CHARS: usize = 4;
/// How much of each file is read, at most.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Most matches reported for one request.
pub const MAX_MATCHES: usize = 20;
/// A column whose values repeat this often on average holds categories.
pub const CATEGORY_REPEATS: u32 = 10;

/// A raw value found in an outbound request, shown masked.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct GuardMatch {
    /// The matching text, masked (`John` → `Aaaa`).
    pub masked: String,
    /// Where the value came from: `sales.csv, column "customer"`.
    pub source: String,
    /// Whether it is in text the user typed (which the user may confirm).
    #[serde(skip)]
    pub in_user_text: bool,
}

/// The sentence for a blocked request.
pub fn blocked_message(matches: &[GuardMatch]) -> String {
    let shown: Vec<String> = matches
        .iter()
        .take(5)
        .map(|m| format!("{} (from {})", m.masked, m.source))
        .collect();
    let more = matches.len().saturating_sub(5);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let hint = if !matches.is_empty() && matches.iter().all(|m| m.in_user_text) {
        "; if you meant to send it, send the message again with confirmation"
    } else {
        ""
    };
    format!(
        "the request was not sent: it contains values from your files: {}{tail}{hint}",
        shown.join(", ")
    )
}

/// Keys are already well mixed: they are looked up as they are.
#[derive(Default, Clone, Copy, Debug)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Keys<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;
type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// A phrase's source, and whether it is common words only.
#[derive(Clone, Copy, Debug)]
struct Phrase {
    source: u32,
    common: bool,
}

/// Most distinct values tracked per column to tell categories from values.
const MAX_TRACKED_DISTINCT: usize = 100_000;

/// How varied one column's values are.
#[derive(Clone, Debug, Default)]
struct Variety {
    cells: u64,
    distinct: HashSet<u64, BuildHasherDefault<KeyHasher>>,
    overflow: bool,
}

impl Variety {
    /// Whether each value repeats [`CATEGORY_REPEATS`] times on average
    /// (a status or a category column, not names or notes).
    fn categorical(&self) -> bool {
        !self.overflow && self.distinct.len() as u64 * u64::from(CATEGORY_REPEATS) <= self.cells
    }
}

/// What the index holds for one token (memoised per scan).
#[derive(Clone, Copy, Debug)]
struct Lookup {
    name: bool,
    token: Option<u32>,
    phrase: bool,
}

/// The index of one version's files.
#[derive(Debug, Default, Clone)]
pub struct GuardIndex {
    tokens: Keys<u32>,
    phrases: Keys<Phrase>,
    phrase_first: KeySet,
    numbers: Keys<u32>,
    allowed: KeySet,
    names: KeySet,
    name_first: KeySet,
    sources: Vec<String>,
    source_ids: HashMap<String, u32>,
    variety: HashMap<u32, Variety>,
    /// Files that could not be indexed, with why (shown in diagnostics).
    pub skipped: Vec<String>,
}

impl GuardIndex {
    /// An empty index (nothing is blocked).
    pub fn new() -> Self {
        Self::default()
    }

    /// How many distinct values are indexed.
    pub fn len(&self) -> usize {
        self.tokens.len() + self.phrases.len() + self.numbers.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn source(&mut self, label: String) -> u32 {
        if let Some(id) = self.source_ids.get(&label) {
            return *id;
        }
        let id = self.sources.len() as u32;
        self.sources.push(label.clone());
        self.source_ids.insert(label, id);
        id
    }

    /// Indexes one raw value (a cell, or a line of text) from `source`.
    pub fn add_value(&mut self, value: &str, source: u32) {
        let toks = keys::tokenize(value);
        if toks.is_empty() {
            return;
        }
        // The whole cell as a phrase.
        if (2..=MAX_PHRASE).contains(&toks.len()) {
            self.add_phrase(&toks, source);
            let v = self.variety.entry(source).or_default();
            v.cells += 1;
            if !v.overflow {
                v.distinct.insert(keys::phrase_hash(&toks));
                if v.distinct.len() > MAX_TRACKED_DISTINCT {
                    v.overflow = true;
                    v.distinct = HashSet::default();
                }
            }
        }
        // A code written without its separators: `AC-0100-0042` as `AC01000042`.
        if (2..=MAX_PHRASE).contains(&toks.len())
            && toks.iter().any(|t| t.digits)
            && toks.iter().any(|t| !t.digits)
        {
            let compact: String = toks.iter().map(|t| &value[t.start..t.end]).collect();
            self.tokens
                .entry(keys::token_hash(&compact))
                .or_insert(source);
        }
        // Runs of capitalised words inside longer text: names in prose.
        if toks.len() > MAX_PHRASE {
            let capital = |t: &Token| {
                !t.digits
                    && value[t.start..t.end]
                        .chars()
                        .next()
                        .is_some_and(char::is_uppercase)
            };
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
        for (a, b) in keys::email_spans(value) {
            let inner = keys::tokenize(&value[a..b]);
            if inner.len() >= 2 {
                self.add_phrase(&inner, source);
            }
            if let Some(at) = value[a..b].find('@') {
                let local = keys::tokenize(&value[a..a + at]);
                if local.len() >= 2 {
                    self.add_phrase(&local, source);
                }
            }
        }
        for t in &toks {
            let text = &value[t.start..t.end];
            let has_digit = text.chars().any(|c| c.is_numeric());
            let identifying = if t.digits {
                false // numbers are keyed by their digits below
            } else if has_digit {
                text.chars().count() >= MIN_TOKEN_CHARS
            } else {
                text.chars().count() >= MIN_TOKEN_CHARS && !is_common(t.hash)
            };
            if identifying {
                self.tokens.entry(t.hash).or_insert(source);
            }
        }
        let mut out = Vec::new();
        for r in keys::numeric_runs(value, &toks) {
            keys::number_keys(value, &toks[r], true, &mut out);
        }
        let mut dates = Vec::new();
        keys::month_name_dates(value, &toks, &mut dates);
        out.extend(dates.into_iter().map(|(_, _, k)| k));
        for k in out {
            self.numbers.entry(k).or_insert(source);
        }
    }

    fn add_phrase(&mut self, toks: &[Token], source: u32) {
        let common = toks.iter().all(|t| t.digits || is_common(t.hash));
        self.phrases
            .entry(keys::phrase_hash(toks))
            .or_insert(Phrase { source, common });
        self.phrase_first.insert(toks[0].hash);
    }

    /// Allows every key of `text` (Maskflow's own words, masked extracts,
    /// text the LLM wrote).
    pub fn allow(&mut self, text: &str) {
        let mut set = std::mem::take(&mut self.allowed);
        add_all_keys(text, &mut set);
        self.allowed = set;
    }

    /// Allows `name` (a file, sheet or column name) as a whole name only:
    /// its words stay blocked where they are values.
    pub fn allow_name(&mut self, name: &str) {
        let toks = keys::tokenize(name);
        if toks.is_empty() || toks.len() > MAX_NAME_TOKENS {
            return;
        }
        self.names.insert(keys::phrase_hash(&toks));
        self.name_first.insert(toks[0].hash);
    }

    /// Indexes a file through the extractors' `values()` visitor (the kind
    /// is sniffed from the content). `name` is the user's file name; at most
    /// `max_bytes` of a delimited file are read. A file that cannot be read
    /// is noted in [`GuardIndex::skipped`].
    pub fn add_file(&mut self, path: &Path, name: &str, max_bytes: u64) {
        self.allow_name(name);
        let fallback = self.source(name.to_owned());
        let mut sink = FileSink {
            index: self,
            file: name,
            columns: Vec::new(),
            fallback,
            headerless: false,
            text: None,
        };
        let options = ValueOptions { max_bytes };
        if let Err(e) = Registry::with_defaults().values(path, &options, &mut sink) {
            self.skipped.push(e.to_string());
        }
        // A phrase of common words in a column of a few repeated values is
        // a category (`Order shipped`), not a value.
        let variety = std::mem::take(&mut self.variety);
        self.phrases
            .retain(|_, p| !(p.common && variety.get(&p.source).is_some_and(Variety::categorical)));
    }

    fn push(&self, out: &mut Vec<GuardMatch>, raw: &str, src: u32, user: bool) {
        let m = GuardMatch {
            masked: maskflow_extractors::mask(raw),
            source: self
                .sources
                .get(src as usize)
                .cloned()
                .unwrap_or_else(|| "your files".into()),
            in_user_text: user,
        };
        if !out
            .iter()
            .any(|o| o.masked == m.masked && o.source == m.source && o.in_user_text == user)
        {
            out.push(m);
        }
    }

    /// Finds indexed values in `text`; keys in `extra` are allowed too.
    fn scan(&self, text: &str, extra: &KeySet, user: bool, out: &mut Vec<GuardMatch>) {
        let toks = keys::tokenize(text);
        let ok = |k: &u64| self.allowed.contains(k) || extra.contains(k);
        let mut covered = vec![false; toks.len()];
        // Requests repeat their words: each distinct token is looked up in
        // the (large, cache-cold) index once per scan.
        let mut seen: Keys<Lookup> = Keys::default();
        let mut lookup = |h: u64| {
            *seen.entry(h).or_insert_with(|| Lookup {
                name: self.name_first.contains(&h),
                token: self.tokens.get(&h).copied(),
                phrase: self.phrase_first.contains(&h),
            })
        };
        let mut i = 0;
        while i < toks.len() {
            if out.len() >= MAX_MATCHES {
                return;
            }
            let t = toks[i];
            let found = lookup(t.hash);
            // A whole file, sheet or column name is itself.
            if found.name {
                let longest = (1..=MAX_NAME_TOKENS.min(toks.len() - i))
                    .rev()
                    .find(|&n| self.names.contains(&keys::phrase_hash(&toks[i..i + n])));
                if let Some(n) = longest {
                    covered[i..i + n].iter_mut().for_each(|c| *c = true);
                    i += n;
                    continue;
                }
            }
            if let Some(src) = found.token
                && !ok(&t.hash)
            {
                self.push(out, &text[t.start..t.end], src, user);
            }
            if found.phrase {
                for n in 2..=MAX_PHRASE.min(toks.len() - i) {
                    let h = keys::phrase_hash(&toks[i..i + n]);
                    if let Some(p) = self.phrases.get(&h)
                        && !ok(&h)
                    {
                        self.push(out, &text[t.start..toks[i + n - 1].end], p.source, user);
                        break;
                    }
                }
            }
            i += 1;
        }
        if self.numbers.is_empty() {
            return;
        }
        let mut found = Vec::new();
        for r in keys::numeric_runs(text, &toks) {
            if covered[r.start] {
                continue;
            }
            let mut ks = Vec::new();
            keys::number_keys(text, &toks[r.clone()], true, &mut ks);
            for k in ks {
                found.push((toks[r.start].start, toks[r.end - 1].end, k));
            }
        }
        keys::month_name_dates(text, &toks, &mut found);
        for (a, b, k) in found {
            if out.len() >= MAX_MATCHES {
                return;
            }
            if let Some(src) = self.numbers.get(&k)
                && !ok(&k)
            {
                self.push(out, &text[a..b], *src, user);
            }
        }
    }

    /// Checks a whole request: every message and the schema. Keys of the
    /// `allowed` texts and of the assistant's own messages are allowed.
    pub fn check_request(&self, request: &LlmRequest, allowed: &[String]) -> Vec<GuardMatch> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut extra = KeySet::default();
        for t in allowed {
            add_all_keys(t, &mut extra);
        }
        for m in &request.messages {
            if m.role == ChatRole::Assistant {
                add_all_keys(&m.content, &mut extra);
            }
        }
        let mut out = Vec::new();
        for m in &request.messages {
            if m.role != ChatRole::Assistant {
                self.scan(&m.content, &extra, m.role == ChatRole::User, &mut out);
            }
        }
        if let Some(schema) = &request.schema {
            self.scan(&schema.to_string(), &extra, false, &mut out);
        }
        out
    }

    /// Checks free text (e.g. a body about to be sent).
    pub fn check_text(&self, text: &str) -> Vec<GuardMatch> {
        let mut out = Vec::new();
        self.scan(text, &KeySet::default(), false, &mut out);
        out
    }
}

/// Most tokens of a file, sheet or column name.
const MAX_NAME_TOKENS: usize = 12;

/// Every key the scan could find in `text`: tokens, phrases, numbers, dates.
fn add_all_keys(text: &str, set: &mut KeySet) {
    let toks = keys::tokenize(text);
    for (i, t) in toks.iter().enumerate() {
        set.insert(t.hash);
        for n in 2..=MAX_PHRASE.min(toks.len() - i) {
            set.insert(keys::phrase_hash(&toks[i..i + n]));
        }
    }
    let mut out = Vec::new();
    for r in keys::numeric_runs(text, &toks) {
        keys::number_keys(text, &toks[r], true, &mut out);
    }
    set.extend(out);
    let mut dates = Vec::new();
    keys::month_name_dates(text, &toks, &mut dates);
    set.extend(dates.into_iter().map(|(_, _, k)| k));
}

/// Feeds one file's values into the index, each with its file and column.
struct FileSink<'a> {
    index: &'a mut GuardIndex,
    file: &'a str,
    columns: Vec<u32>,
    fallback: u32,
    headerless: bool,
    text: Option<u32>,
}

/// Columns of a headerless table named by number; the rest share the table's name.
const MAX_NUMBERED_COLUMNS: usize = 1000;

impl ValueSink for FileSink<'_> {
    fn table(&mut self, sheet: Option<&str>, columns: &[String]) {
        let at = match sheet {
            Some(s) => {
                self.index.allow_name(s);
                format!("{}, sheet \"{s}\"", self.file)
            }
            None => self.file.to_owned(),
        };
        self.fallback = self.index.source(at.clone());
        self.headerless = columns.is_empty();
        self.columns = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.index.allow_name(c);
                let label = if c.is_empty() {
                    format!("{at}, column {}", i + 1)
                } else {
                    format!("{at}, column \"{c}\"")
                };
                self.index.source(label)
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
        self.index.add_value(value, src);
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
        self.index.add_value(text, src);
    }
}

/// Allows a JSON value (an approved extract): file, sheet and column names
/// as whole names; every other string, key and number key by key (they are
/// masked samples and Maskflow's words).
pub fn allow_json(index: &mut GuardIndex, value: &serde_json::Value) {
    allow_json_in(index, value, false);
}

fn allow_json_in(index: &mut GuardIndex, value: &serde_json::Value, names: bool) {
    match value {
        serde_json::Value::String(s) if names => index.allow_name(s),
        serde_json::Value::String(s) => index.allow(s),
        serde_json::Value::Number(n) => index.allow(&n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| allow_json_in(index, v, names)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                index.allow(k);
                let is_name = matches!(k.as_str(), "columns" | "filename" | "name");
                allow_json_in(index, v, is_name);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
