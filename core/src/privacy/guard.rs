//! The egress guard: an index of the raw values in the files behind a
//! version, and a check of an outbound request against it.
//!
//! The index keeps no raw value: only 64-bit hashes of (case-folded)
//! tokens — maximal runs of letters and digits of at least
//! [`MIN_TOKEN_CHARS`] characters — plus "compact" hashes of short
//! multi-part cells (`$1,234.56` → `123456`), each with the file and column
//! it came from. Text that is known not to be data is allowed: column and
//! file names, everything in the approved (masked) extracts, Maskflow's own
//! prompt text, and whatever the caller adds (text the LLM wrote, text the
//! user confirmed). Checking is one pass over the request's text with a
//! hash lookup per token, so it runs on every request.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::providers::{ChatRole, LlmRequest};

/// The shortest token indexed, in characters.
pub const MIN_TOKEN_CHARS: usize = 4;
/// How much of each file is read, at most.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Most matches reported for one request.
pub const MAX_MATCHES: usize = 20;
/// Most tokens joined into one compact key.
const MAX_COMPACT_PARTS: usize = 6;

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

/// FNV-1a over the case-folded characters of `s`.
fn hash_str(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in s.chars().flat_map(char::to_lowercase) {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn hash_continue(mut h: u64, s: &str) -> u64 {
    for c in s.chars().flat_map(char::to_lowercase) {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The byte ranges of the alphanumeric runs of `text`.
fn tokens(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = chars.peek() {
            if c.is_alphanumeric() {
                break;
            }
            chars.next();
        }
        let (start, _) = *chars.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        Some((start, end))
    })
}

fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// The index of one version's files.
#[derive(Debug, Default, Clone)]
pub struct GuardIndex {
    tokens: HashMap<u64, u32>,
    compact: HashMap<u64, u32>,
    allowed: HashSet<u64>,
    sources: Vec<String>,
    source_ids: HashMap<String, u32>,
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
        self.tokens.len() + self.compact.len()
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

    /// Indexes one raw cell value from `source`.
    pub fn add_value(&mut self, value: &str, source: u32) {
        let mut parts = 0usize;
        let mut short = false;
        let mut compact = FNV_START;
        let mut compact_chars = 0usize;
        for (a, b) in tokens(value) {
            let t = &value[a..b];
            let n = char_len(t);
            if n >= MIN_TOKEN_CHARS {
                self.tokens.entry(hash_str(t)).or_insert(source);
            } else {
                short = true;
            }
            parts += 1;
            compact = hash_continue(compact, t);
            compact_chars += n;
        }
        if short && (2..=MAX_COMPACT_PARTS).contains(&parts) && compact_chars >= MIN_TOKEN_CHARS {
            self.compact.entry(compact).or_insert(source);
        }
    }

    /// Allows every token of `text` (names, masked extracts, Maskflow's own words).
    pub fn allow(&mut self, text: &str) {
        for (a, b) in tokens(text) {
            self.allowed.insert(hash_str(&text[a..b]));
        }
    }

    /// Indexes a file: delimited text (CSV, TSV, TXT) or a workbook; other
    /// kinds are noted in [`GuardIndex::skipped`]. `name` is the user's file
    /// name; at most `max_bytes` of the file are read.
    pub fn add_file(&mut self, path: &Path, name: &str, max_bytes: u64) {
        self.allow(name);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let result = match ext.as_str() {
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => self.add_workbook(path, name),
            "pdf" | "docx" | "png" | "jpg" | "jpeg" | "gif" | "bmp" | "tif" | "tiff" | "webp" => {
                Err("this file type is not indexed yet".to_owned())
            }
            _ => self.add_delimited(path, name, max_bytes),
        };
        if let Err(why) = result {
            self.skipped.push(format!("{name}: {why}"));
        }
    }

    fn add_delimited(&mut self, path: &Path, name: &str, max_bytes: u64) -> Result<(), String> {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read it ({e})"))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file.take(max_bytes));
        let mut head = vec![0u8; 64 * 1024];
        let mut filled = 0;
        while filled < head.len() {
            match reader.read(&mut head[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Err(format!("cannot read it ({e})")),
            }
        }
        head.truncate(filled);
        let head_text = String::from_utf8_lossy(&head).into_owned();
        let delimiter = maskflow_extractors::csv::dialect::sniff_delimiter(&head_text, None);
        let chained = std::io::Cursor::new(head).chain(reader);
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delimiter)
            .from_reader(chained);
        let mut record = csv::ByteRecord::new();
        let mut columns: Vec<u32> = Vec::new();
        let mut header = true;
        let fallback = self.source(name.to_owned());
        loop {
            match csv.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                // A broken tail (e.g. cut at max_bytes) ends the index there.
                Err(_) => break,
            }
            if header {
                header = false;
                for (i, field) in record.iter().enumerate() {
                    let col = String::from_utf8_lossy(field).trim().to_owned();
                    self.allow(&col);
                    let label = if col.is_empty() {
                        format!("{name}, column {}", i + 1)
                    } else {
                        format!("{name}, column \"{col}\"")
                    };
                    columns.push(self.source(label));
                }
                continue;
            }
            for (i, field) in record.iter().enumerate() {
                let src = columns.get(i).copied().unwrap_or(fallback);
                match std::str::from_utf8(field) {
                    Ok(s) => self.add_value(s, src),
                    Err(_) => self.add_value(&String::from_utf8_lossy(field), src),
                }
            }
        }
        Ok(())
    }

    fn add_workbook(&mut self, path: &Path, name: &str) -> Result<(), String> {
        use calamine::Reader;
        let mut book = calamine::open_workbook_auto(path).map_err(|e| e.to_string())?;
        for sheet in book.sheet_names() {
            self.allow(&sheet);
            let Ok(range) = book.worksheet_range(&sheet) else {
                continue;
            };
            let mut columns: Vec<u32> = Vec::new();
            for (r, row) in range.rows().enumerate() {
                if r == 0 {
                    for (i, cell) in row.iter().enumerate() {
                        let col = cell.to_string();
                        self.allow(&col);
                        columns.push(self.source(format!(
                            "{name}, sheet \"{sheet}\", column {}",
                            if col.is_empty() {
                                (i + 1).to_string()
                            } else {
                                format!("\"{col}\"")
                            }
                        )));
                    }
                    continue;
                }
                for (i, cell) in row.iter().enumerate() {
                    let src = match columns.get(i) {
                        Some(s) => *s,
                        None => self.source(format!("{name}, sheet \"{sheet}\"")),
                    };
                    self.add_value(&cell.to_string(), src);
                }
            }
        }
        Ok(())
    }

    /// Finds indexed values in `text`; `extra` is allowed too.
    fn scan(&self, text: &str, extra: &HashSet<u64>, user: bool, out: &mut Vec<GuardMatch>) {
        let spans: Vec<(usize, usize)> = tokens(text).collect();
        for (i, &(a, b)) in spans.iter().enumerate() {
            if out.len() >= MAX_MATCHES {
                return;
            }
            let t = &text[a..b];
            if char_len(t) >= MIN_TOKEN_CHARS {
                let h = hash_str(t);
                if let Some(src) = self.tokens.get(&h)
                    && !self.allowed.contains(&h)
                    && !extra.contains(&h)
                {
                    self.push(out, t, *src, user);
                    continue;
                }
            }
            if self.compact.is_empty() {
                continue;
            }
            // Short parts joined by single punctuation marks: `1,234.56`.
            let mut h = hash_continue(FNV_START, t);
            let mut end = b;
            for &(na, nb) in spans.iter().skip(i + 1).take(MAX_COMPACT_PARTS - 1) {
                let gap = &text[end..na];
                if gap.chars().count() != 1 || gap.chars().any(char::is_whitespace) {
                    break;
                }
                h = hash_continue(h, &text[na..nb]);
                end = nb;
                if let Some(src) = self.compact.get(&h) {
                    self.push(out, &text[a..end], *src, user);
                    break;
                }
            }
        }
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

    /// Checks a whole request: every message and the schema. Tokens of the
    /// `allowed` texts and of the assistant's own messages are allowed.
    pub fn check_request(&self, request: &LlmRequest, allowed: &[String]) -> Vec<GuardMatch> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut extra = HashSet::new();
        let mut add = |text: &str| {
            for (a, b) in tokens(text) {
                extra.insert(hash_str(&text[a..b]));
            }
        };
        for t in allowed {
            add(t);
        }
        for m in &request.messages {
            if m.role == ChatRole::Assistant {
                add(&m.content);
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
        self.scan(text, &HashSet::new(), false, &mut out);
        out
    }
}

/// Allows every string, key and number of a JSON value (an approved extract).
pub fn allow_json(index: &mut GuardIndex, value: &serde_json::Value) {
    match value {
        serde_json::Value::String(s) => index.allow(s),
        serde_json::Value::Number(n) => index.allow(&n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| allow_json(index, v)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                index.allow(k);
                allow_json(index, v);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{ChatMessage, Role};

    fn csv_index(text: &str) -> GuardIndex {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("people.csv");
        std::fs::write(&p, text).expect("write");
        let mut g = GuardIndex::new();
        g.add_file(&p, "people.csv", DEFAULT_MAX_BYTES);
        g
    }

    fn req(role: ChatRole, text: &str) -> LlmRequest {
        LlmRequest {
            role: Role::Clarifier,
            messages: vec![ChatMessage::new(role, text)],
            schema: None,
        }
    }

    #[test]
    fn raw_values_are_found_masked_with_their_column() {
        let g = csv_index("name,amount,sku\nJohn Smith,\"$1,234.56\",PROD-194211\n");
        let m = g.check_request(
            &req(ChatRole::User, "please find smith and prod-194211"),
            &[],
        );
        let masked: Vec<&str> = m.iter().map(|m| m.masked.as_str()).collect();
        assert!(masked.contains(&"aaaaa"), "{m:?}");
        assert!(masked.contains(&"######"), "{m:?}");
        assert!(m.iter().any(|x| x.source == "people.csv, column \"name\""));
        assert!(m.iter().all(|x| x.in_user_text));
        let m = g.check_request(&req(ChatRole::System, "total was $1,234.56 ok"), &[]);
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!(
            m[0].masked,
            "1,234.56"
                .chars()
                .map(maskflow_extractors::mask::mask_char)
                .collect::<String>()
        );
        assert!(!m[0].in_user_text);
        assert!(blocked_message(&m).contains("column \"amount\""));
    }

    #[test]
    fn names_allowed_text_and_assistant_text_pass() {
        let mut g = csv_index("customer_name,city\nJohn Smith,Springfield\n");
        assert!(
            g.check_request(
                &req(
                    ChatRole::User,
                    "group by customer_name and city in people.csv"
                ),
                &[]
            )
            .is_empty()
        );
        assert!(
            !g.check_request(&req(ChatRole::User, "only Springfield"), &[])
                .is_empty()
        );
        assert!(
            g.check_request(
                &req(ChatRole::User, "only Springfield"),
                &["only Springfield".into()]
            )
            .is_empty()
        );
        assert!(
            g.check_request(&req(ChatRole::Assistant, "Springfield?"), &[])
                .is_empty()
        );
        g.allow("springfield");
        assert!(
            g.check_request(&req(ChatRole::User, "only Springfield"), &[])
                .is_empty()
        );
        // short tokens are never matched alone
        let g = csv_index("code\nAB\n");
        assert!(g.check_request(&req(ChatRole::User, "AB"), &[]).is_empty());
    }

    #[test]
    fn the_index_keeps_no_raw_text() {
        let g = csv_index("secret\nZebulonQuux\n");
        assert!(!format!("{g:?}").contains("ZebulonQuux"));
        assert!(!format!("{g:?}").to_lowercase().contains("zebulonquux"));
    }

    #[test]
    fn unknown_kinds_are_noted_and_empty_index_blocks_nothing() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("scan.pdf");
        std::fs::write(&p, b"%PDF-1.4").expect("write");
        let mut g = GuardIndex::new();
        g.add_file(&p, "scan.pdf", DEFAULT_MAX_BYTES);
        assert_eq!(g.skipped.len(), 1);
        assert!(
            g.check_request(&req(ChatRole::User, "anything at all"), &[])
                .is_empty()
        );
    }
}
