//! Fitting the masked extracts into a model's context window: when a
//! prompt is too long, its extracts are reduced in a stated, deterministic
//! order until the prompt leaves the role's reply budget free, and the user
//! is told exactly what was left out. Pure: it measures with
//! [`context::estimate_tokens`] and never calls a provider.
//!
//! The order (each rung applies to every table of every file, a table being
//! a CSV, a sheet or a document's table):
//! 1. a workbook's top-level copy of its first sheet goes (nothing is lost);
//! 2. fewer sample rows per table (down to one);
//! 3. sample values for fewer columns (down to none); from here
//!    every table carries `column_types` (coarse types read from the masked
//!    samples) so the names and types of all columns stay;
//!    then the parts of Maskflow's own text a caller marks optional go
//!    ([`fit_request_with`]: the builder's sizes and limits, and the
//!    schema's written copy when the back end gives the model the schema);
//! 4. the tables' profiles (counts and shapes over every row) go, with
//!    the files' join keys;
//! 5. fewer column names per table (down to none), with
//!    `columns_left_out` saying how many (a profile kept by a rung of
//!    one's own making loses its columns' lines with their names);
//! 6. fewer sheets per workbook (down to none), with
//!    `sheets_left_out` naming them.
//!
//! When no rung leaves the budget free, the least reduced prompt that leaves
//! at least [`context::MIN_REPLY_TOKENS`] is sent (the back end lowers the
//! reply's budget to the room left); when none does, the call is refused
//! before sending, with the numbers.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use maskflow_llm::budget::thousands;
use maskflow_llm::{LlmRequest, ProviderError, context};

/// What was left out of a prompt to fit the model's context window.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS)]
pub struct ContextReduction {
    /// The role whose prompt was reduced: `validator`, `clarifier`, `builder`.
    pub role: String,
    /// The model's context window, in tokens.
    pub window: u32,
    /// The prompt's estimated tokens before the reduction.
    pub prompt_tokens_before: u32,
    /// The prompt's estimated tokens as sent.
    pub prompt_tokens: u32,
    /// What was left out, one sentence each, in the order it was dropped.
    pub left_out: Vec<String>,
    /// All of it in one sentence for the user.
    pub summary: String,
}

impl ContextReduction {
    /// The reduction of `role`'s prompt, with its summary.
    pub fn new(role: String, window: u32, before: u32, after: u32, left_out: Vec<String>) -> Self {
        let mut r = Self {
            role,
            window,
            prompt_tokens_before: before,
            prompt_tokens: after,
            left_out,
            summary: String::new(),
        };
        r.summary = r.summary_text();
        r
    }

    fn summary_text(&self) -> String {
        format!(
            "To fit the model's {}-token context window, the {}'s prompt was cut from about {} to {} tokens, leaving out: {}.",
            thousands(u64::from(self.window)),
            self.role,
            thousands(u64::from(self.prompt_tokens_before)),
            thousands(u64::from(self.prompt_tokens)),
            self.left_out.join("; ")
        )
    }
}

/// The tokens a prompt must leave free for the reply: the role's budget,
/// but at most half the window (a builder's 8,192-token budget would
/// otherwise leave nothing of a small model's window for the prompt), and
/// at least [`context::MIN_REPLY_TOKENS`].
pub fn reply_reserve(window: u32, budget: u32) -> u32 {
    budget.min(window / 2).max(context::MIN_REPLY_TOKENS)
}

/// Builds the request from `extracts` with `build`, reducing the extracts
/// when the prompt does not leave [`reply_reserve`] free in `window`.
/// Returns the request to send and, when something was left out, what.
/// Refuses with [`ProviderError::ContextOverflow`] (nothing is sent) when
/// even the most reduced prompt leaves no room for a reply.
pub fn fit_request(
    extracts: &Value,
    window: Option<u32>,
    budget: u32,
    model: &str,
    build: &dyn Fn(&Value) -> LlmRequest,
) -> Result<(LlmRequest, Option<ContextReduction>), ProviderError> {
    fit_request_with(extracts, window, budget, model, &[], &|e, _| build(e))
}

/// What the user is told when the builder's sizes-and-limits block went.
pub const SIZES_LEFT_OUT: &str = "the inputs' sizes and the run's limits";

/// What the user is told when the builder's prompt named the packages
/// without what each is for.
pub const PACKAGES_LEFT_OUT: &str =
    "what each available Python package is for (their names are kept)";

/// What the user is told when the builder's prompt stopped writing out the
/// reply's schema, which its back end gives the model itself.
pub const SCHEMA_LEFT_OUT: &str = "the reply's schema written out in the prompt (the model is still given it as the reply's format)";

/// [`fit_request`] for a prompt with parts of Maskflow's own text that can
/// go too (the builder's sizes and limits, issue 43; the schema's written
/// copy): `build`'s second argument says whether to keep them, `optional`
/// says what they are, for the user. They go once the sample values have
/// gone, before the profiles.
pub fn fit_request_with(
    extracts: &Value,
    window: Option<u32>,
    budget: u32,
    model: &str,
    optional: &[&str],
    build: &dyn Fn(&Value, bool) -> LlmRequest,
) -> Result<(LlmRequest, Option<ContextReduction>), ProviderError> {
    let full = build(extracts, true);
    let Some(window) = window else {
        return Ok((full, None));
    };
    let measure = |r: &LlmRequest| context::estimate_tokens(&r.messages, r.schema.as_ref());
    let before = measure(&full);
    let target = window.saturating_sub(reply_reserve(window, budget));
    if before <= target {
        return Ok((full, None));
    }
    // Every rung, in order, until one reaches the target.
    let mut tried = vec![(full, before, Vec::new())];
    let mut guidance = true;
    let mut steps: Vec<(Rung, bool)> = Vec::new();
    let mut last = ALL;
    for rung in ladder(extracts) {
        if guidance && (!rung.profiles || rung.named_columns.is_some()) {
            guidance = false;
            steps.push((last, false));
        }
        steps.push((rung, guidance));
        last = rung;
    }
    if guidance {
        steps.push((last, false));
    }
    for (rung, keep) in steps {
        let (reduced, mut left_out) = reduce(extracts, &rung);
        if !keep {
            left_out.extend(optional.iter().map(|s| (*s).to_owned()));
        }
        let request = build(&reduced, keep);
        let tokens = measure(&request);
        tried.push((request, tokens, left_out));
        if tokens <= target {
            break;
        }
    }
    // None reached it: dropping more would lose information without giving
    // the reply its budget, so send the least reduced prompt that can be
    // sent at all (the back end lowers the reply's budget to the room left).
    let reached = tried.last().is_some_and(|t| t.1 <= target);
    let at = if reached {
        Some(tried.len() - 1)
    } else {
        tried
            .iter()
            .position(|t| context::fit(t.1, Some(window), budget).is_ok())
    };
    let Some(i) = at else {
        let smallest = tried.iter().map(|t| t.1).min().unwrap_or(before);
        return Err(ProviderError::ContextOverflow {
            role: tried[0].0.role.key(),
            model: model.to_owned(),
            prompt_tokens: smallest,
            window,
        });
    };
    let (request, tokens, left_out) = tried.swap_remove(i);
    let reduction = (!left_out.is_empty())
        .then(|| ContextReduction::new(request.role.key(), window, before, tokens, left_out));
    Ok((request, reduction))
}

/// One rung of the reduction: what each table keeps (`None`: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rung {
    /// Sample rows kept per table.
    pub rows: Option<usize>,
    /// Columns whose sample values are kept, per table.
    pub sampled_columns: Option<usize>,
    /// Columns whose names (and types) are kept, per table.
    pub named_columns: Option<usize>,
    /// Whether tables keep their profiles.
    pub profiles: bool,
    /// Sheets kept per workbook.
    pub sheets: Option<usize>,
}

const ALL: Rung = Rung {
    rows: None,
    sampled_columns: None,
    named_columns: None,
    profiles: true,
    sheets: None,
};

/// The steps below `n`, each about three quarters of the one before (fine
/// enough to keep most of what fits, few enough to try them all), down to 1,
/// then `0` when `to_zero`.
fn steps(n: usize, to_zero: bool) -> Vec<usize> {
    let mut out = Vec::new();
    let mut k = n;
    while k > 1 {
        k = (k * 3 / 4).min(k - 1);
        out.push(k);
    }
    if to_zero && n > 0 {
        out.push(0);
    }
    out
}

/// The rungs for `extracts`, in order (see the module's doc).
pub fn ladder(extracts: &Value) -> Vec<Rung> {
    let (mut rows, mut cols, mut sheets) = (0, 0, 0);
    let mut profiled = false;
    for f in files(extracts) {
        for t in tables(f) {
            rows = rows.max(array_len(&t["sample_rows"]));
            cols = cols.max(array_len(&t["columns"]));
            profiled |= t["profile"].is_object();
        }
        sheets = sheets.max(array_len(&f["sheets"]));
    }
    let mut out = vec![ALL];
    let mut rung = ALL;
    for r in steps(rows, false) {
        rung.rows = Some(r);
        out.push(rung);
    }
    for c in steps(cols, true) {
        rung.sampled_columns = Some(c);
        out.push(rung);
    }
    if profiled {
        rung.profiles = false;
        out.push(rung);
    }
    for c in steps(cols, true) {
        rung.named_columns = Some(c);
        out.push(rung);
    }
    for s in steps(sheets, true) {
        rung.sheets = Some(s);
        out.push(rung);
    }
    out
}

fn files(extracts: &Value) -> impl Iterator<Item = &Value> {
    extracts.as_array().into_iter().flatten()
}

/// The tables of one file: its top-level table, its sheets, its document's
/// tables.
fn tables(f: &Value) -> Vec<&Value> {
    let mut out = vec![f];
    out.extend(f["sheets"].as_array().into_iter().flatten());
    out.extend(
        f.pointer("/document/tables")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    out
}

fn array_len(v: &Value) -> usize {
    v.as_array().map_or(0, Vec::len)
}

/// Tallies of what one rung left out, for the sentences.
#[derive(Default)]
struct Tally {
    rows_dropped: usize,
    rows_total: usize,
    rows_kept_max: usize,
    columns_unsampled: usize,
    names_dropped: usize,
    profiles_dropped: usize,
    joins_dropped: usize,
    sheets: Vec<String>,
}

/// Applies `rung` to every table of `extracts`; returns the reduced
/// extracts and what was left out, in words.
pub fn reduce(extracts: &Value, rung: &Rung) -> (Value, Vec<String>) {
    let mut tally = Tally::default();
    let reduced = match extracts.as_array() {
        Some(list) => Value::Array(
            list.iter()
                .map(|f| reduce_file(f, rung, &mut tally))
                .collect(),
        ),
        None => extracts.clone(),
    };
    (reduced, sentences(rung, &tally))
}

fn reduce_file(f: &Value, rung: &Rung, tally: &mut Tally) -> Value {
    let Some(obj) = f.as_object() else {
        return f.clone();
    };
    let mut out = obj.clone();
    let filename = obj
        .get("filename")
        .and_then(Value::as_str)
        .unwrap_or("a file");
    if let Some(sheets) = obj.get("sheets").and_then(Value::as_array) {
        // A workbook's top level mirrors its first sheet: drop the copy.
        for k in [
            "columns",
            "sample_rows",
            "has_header",
            "row_count",
            "profile",
        ] {
            out.remove(k);
        }
        let keep = rung.sheets.unwrap_or(usize::MAX).min(sheets.len());
        let kept: Vec<Value> = sheets[..keep]
            .iter()
            .map(|s| reduce_table(s, rung, tally))
            .collect();
        let dropped: Vec<String> = sheets[keep..]
            .iter()
            .map(|s| s["name"].as_str().unwrap_or("?").to_owned())
            .collect();
        if !dropped.is_empty() {
            tally
                .sheets
                .push(format!("{} of {filename}", quoted_list(&dropped)));
            out.insert("sheets_left_out".into(), Value::from(dropped));
        }
        out.insert("sheets".into(), Value::Array(kept));
    } else if obj.contains_key("columns") {
        out = match reduce_table(f, rung, tally) {
            Value::Object(m) => m,
            _ => out,
        };
    }
    if let Some(tables) = f.pointer("/document/tables").and_then(Value::as_array) {
        let reduced: Vec<Value> = tables
            .iter()
            .map(|t| reduce_table(t, rung, tally))
            .collect();
        if let Some(doc) = out.get_mut("document").and_then(Value::as_object_mut) {
            doc.insert("tables".into(), Value::Array(reduced));
        }
    }
    // The join keys are profile figures too (counts over every row).
    if !rung.profiles && out.remove("join_matches").is_some() {
        tally.joins_dropped += 1;
    }
    Value::Object(out)
}

fn reduce_table(t: &Value, rung: &Rung, tally: &mut Tally) -> Value {
    let Some(obj) = t.as_object() else {
        return t.clone();
    };
    let mut out: Map<String, Value> = obj.clone();
    if !rung.profiles && out.remove("profile").is_some() {
        tally.profiles_dropped += 1;
    }
    let columns: Vec<Value> = obj
        .get("columns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let rows: Vec<Vec<Value>> = obj
        .get("sample_rows")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| r.as_array().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    let keep_rows = rung.rows.unwrap_or(usize::MAX).min(rows.len());
    tally.rows_total += rows.len();
    tally.rows_dropped += rows.len() - keep_rows;
    tally.rows_kept_max = tally.rows_kept_max.max(keep_rows);
    let sampled = rung
        .sampled_columns
        .unwrap_or(usize::MAX)
        .min(columns.len());
    let named = rung.named_columns.unwrap_or(usize::MAX).min(columns.len());
    let mut kept_rows: Vec<Value> = rows[..keep_rows]
        .iter()
        .map(|r| Value::Array(r.iter().take(sampled.min(named)).cloned().collect()))
        .collect();
    if rung.sampled_columns.is_some() {
        // Types come from every sample row, before any is dropped.
        let types: Vec<Value> = (0..named)
            .map(|c| Value::from(column_type(rows.iter().filter_map(|r| r.get(c)))))
            .collect();
        out.insert("column_types".into(), Value::Array(types));
        if sampled < columns.len() && !rows.is_empty() {
            tally.columns_unsampled += columns.len() - sampled;
            out.insert("sampled_columns".into(), Value::from(sampled));
        }
        if sampled == 0 {
            kept_rows.clear();
        }
    }
    if named < columns.len() {
        tally.names_dropped += columns.len() - named;
        cut_profile(&mut out, named);
        out.insert("columns".into(), Value::Array(columns[..named].to_vec()));
        out.insert(
            "columns_left_out".into(),
            Value::from(columns.len() - named),
        );
    }
    if obj.contains_key("sample_rows") {
        if kept_rows.is_empty() && rung.sampled_columns == Some(0) {
            out.remove("sample_rows");
            out.remove("sampled_columns");
        } else {
            out.insert("sample_rows".into(), Value::Array(kept_rows));
        }
    }
    Value::Object(out)
}

/// Keeps the profile of the first `named` columns only (a profile line per
/// column goes with the column's name), saying how many were left out.
fn cut_profile(table: &mut Map<String, Value>, named: usize) {
    let Some(profile) = table.get_mut("profile").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(cols) = profile.get_mut("columns").and_then(Value::as_array_mut) else {
        return;
    };
    if cols.len() > named {
        let left = cols.len() - named;
        cols.truncate(named);
        profile.insert("columns_left_out".into(), Value::from(left));
    }
}

/// A coarse type read from a column's masked samples: `date`, `datetime`,
/// `time`, `number`, `text`, or `empty` when every sample is blank.
pub fn column_type<'a>(samples: impl Iterator<Item = &'a Value>) -> &'static str {
    let mut kind: Option<&'static str> = None;
    for s in samples {
        let s = match s {
            Value::String(s) => s.trim(),
            Value::Null => "",
            Value::Number(_) => "#",
            Value::Bool(_) => "a",
            _ => "a",
        };
        if s.is_empty() {
            continue;
        }
        let k = shape_type(s);
        kind = Some(match kind {
            None => k,
            Some(prev) if prev == k => k,
            Some(_) => "text",
        });
    }
    kind.unwrap_or("empty")
}

fn shape_type(s: &str) -> &'static str {
    let date = |d: &str| {
        let b = d.as_bytes();
        b.len() == 10
            && b.iter().enumerate().all(|(i, c)| {
                if matches!(i, 4 | 7) {
                    matches!(c, b'-' | b'/')
                } else {
                    *c == b'#'
                }
            })
    };
    let time = |t: &str| {
        !t.is_empty() && t.bytes().all(|c| c == b'#' || c == b':' || c == b'.') && t.contains(':')
    };
    if date(s) {
        return "date";
    }
    if let Some((d, t)) = s.split_once([' ', 'T'])
        && date(d)
        && time(t)
    {
        return "datetime";
    }
    if time(s) {
        return "time";
    }
    if s.contains('#') && s.chars().all(|c| c == '#' || ".,-+()%$€£¥ ".contains(c)) {
        return "number";
    }
    "text"
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn sentences(rung: &Rung, t: &Tally) -> Vec<String> {
    let mut out = Vec::new();
    if rung.sampled_columns == Some(0) && t.rows_total > 0 {
        let kept = if t.names_dropped == 0 {
            "; the columns' names and types are kept"
        } else {
            ""
        };
        out.push(format!(
            "every sample value ({} sample rows of {} columns{kept})",
            t.rows_total, t.columns_unsampled
        ));
    } else if t.rows_dropped > 0 {
        out.push(format!(
            "{} of {} sample rows (at most {} kept per table)",
            t.rows_dropped, t.rows_total, t.rows_kept_max
        ));
    }
    if t.columns_unsampled > 0 && rung.sampled_columns != Some(0) {
        let which = match rung.sampled_columns {
            Some(n) => format!("of columns past the first {n} of each table"),
            None => String::new(),
        };
        out.push(format!(
            "the sample values {which} ({} columns; their names and types are kept)",
            t.columns_unsampled
        ));
    }
    if t.profiles_dropped > 0 {
        out.push(format!(
            "the profile{} of {} table{} (types, counts and shapes over every row)",
            if t.profiles_dropped == 1 { "" } else { "s" },
            t.profiles_dropped,
            if t.profiles_dropped == 1 { "" } else { "s" },
        ));
    }
    if t.joins_dropped > 0 {
        out.push(
            "the join keys found across the files (how many values each pair shares)".to_owned(),
        );
    }
    if t.names_dropped > 0 {
        let which = match rung.named_columns {
            Some(0) => "of every column".to_owned(),
            Some(n) => format!("of columns past the first {n} of each table"),
            None => String::new(),
        };
        out.push(format!(
            "the names and types {which} ({} columns)",
            t.names_dropped
        ));
    }
    if !t.sheets.is_empty() {
        out.push(format!("the sheets {}", t.sheets.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests;
