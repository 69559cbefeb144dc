//! What the guard compares, derived the same way from a file's values and
//! from outbound text: case-folded tokens (maximal runs of letters and
//! digits), phrases of consecutive tokens, the digits of numbers, phone
//! numbers, IDs and amounts with their separators, grouping and trailing
//! decimal zeros normalised away, and dates in the common formats. Keys are
//! 64-bit hashes, so an index keeps no raw text. Pure functions, and none
//! allocates per key: the guard runs them over every cell of a 100 MB file
//! and over every outbound request.

/// Most tokens in a phrase key (a whole cell of up to this many tokens).
pub const MAX_PHRASE: usize = 6;
/// Fewest digits in a number key (shorter numbers are counts and line numbers).
pub const MIN_DIGITS: usize = 4;
/// Fewest digits in a key made of part of a number (a phone without its country code).
pub const MIN_PART_DIGITS: usize = 7;
/// Most digit groups in a key made of part of a longer run of numbers (a
/// phone or an ID has fewer; a list of numbers joined by `, ` would
/// otherwise give a key per pair of its groups).
pub const MAX_PART_GROUPS: usize = 6;

/// Keys are already well mixed: sets and maps of keys use them as they are.
#[derive(Default, Clone, Copy, Debug)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
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

/// A set of keys.
pub type KeySet = std::collections::HashSet<u64, std::hash::BuildHasherDefault<KeyHasher>>;

/// One token of a text: its byte span and its hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset past the last character.
    pub end: usize,
    /// The case-folded token's hash.
    pub hash: u64,
    /// Whether every character is a digit.
    pub digits: bool,
}

/// Starting state of a key's hash.
const SEED: u64 = 0xcbf2_9ce4_8422_2325;
/// Multiplier of the hash's rounds (odd, bits well spread).
const ROUND: u64 = 0x9fb2_1c65_1e98_df25;

/// A streaming hash over case-folded text, eight bytes a round (a byte at
/// a time was a multiply per byte, the most of keying a 100 MB file after
/// the table's cache misses). Fed piece by piece it gives the key of the
/// pieces written together: a key made of several groups hashes them as if
/// they were one string, without joining them.
#[derive(Clone, Copy, Debug)]
struct KeyHash {
    h: u64,
    /// Bytes not yet hashed, the first in the low byte.
    buf: u64,
    /// How many bytes `buf` holds (0–7).
    n: u32,
}

impl KeyHash {
    fn new() -> Self {
        Self {
            h: SEED,
            buf: 0,
            n: 0,
        }
    }

    /// Number and date keys start with a byte no token holds, so the token
    /// `n85000` never shares a key with the number `85000`.
    fn tagged(tag: u8) -> Self {
        let mut h = Self::new();
        h.byte(tag);
        h
    }

    fn round(&mut self, word: u64) {
        // A folded 64×64→128-bit multiply, as in wyhash and ahash.
        let p = u128::from(self.h ^ word) * u128::from(ROUND);
        self.h = (p as u64) ^ ((p >> 64) as u64);
    }

    fn byte(&mut self, b: u8) {
        self.buf |= u64::from(b.to_ascii_lowercase()) << (8 * self.n);
        self.n += 1;
        if self.n == 8 {
            self.round(self.buf);
            self.buf = 0;
            self.n = 0;
        }
    }

    fn bytes(&mut self, mut s: &[u8]) {
        if self.n != 0 {
            // Top up the buffer in one go (a key made of pieces, such as
            // the groups of a number, comes here for every piece but the first).
            let take = (8 - self.n as usize).min(s.len());
            self.buf |= ascii_lowercase(load_tail(&s[..take])) << (8 * self.n);
            self.n += take as u32;
            s = &s[take..];
            if self.n < 8 {
                return;
            }
            self.round(self.buf);
            self.buf = 0;
            self.n = 0;
        }
        let mut words = s.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            self.round(ascii_lowercase(w));
        }
        // What is left fits the empty buffer: loaded and lowered at once
        // (most tokens are shorter than eight bytes).
        let rest = words.remainder();
        self.buf = ascii_lowercase(load_tail(rest));
        self.n = rest.len() as u32;
    }

    fn text(&mut self, s: &str) {
        if s.is_ascii() {
            return self.bytes(s.as_bytes());
        }
        for c in s.chars().flat_map(char::to_lowercase) {
            fold_letter(c, |f| {
                let mut buf = [0u8; 4];
                self.bytes(f.encode_utf8(&mut buf).as_bytes());
            });
        }
    }

    fn finish(mut self) -> u64 {
        // The count of pending bytes goes in the byte they leave free, so
        // texts that differ only in trailing zero bytes still differ.
        self.round(self.buf | (u64::from(self.n) << 56));
        mix(self.h)
    }
}

/// A lowercase letter without its diacritics, as people write a name on a
/// keyboard that lacks them (`Müller` as `Muller`, `Đặng` as `Dang`,
/// issue #38 finding 11): the canonical decomposition without its
/// combining marks, and the letters that do not decompose spelled out
/// (Latin, Greek and Cyrillic letters; any other character is itself).
fn fold_letter(c: char, mut out: impl FnMut(char)) {
    let spelled = match c {
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'ł' => "l",
        'đ' | 'ð' => "d",
        'þ' => "th",
        'ı' => "i",
        // Latin, Greek and Cyrillic only: elsewhere a combining mark is
        // part of how the word is spelled (Devanagari's, Thai's vowels).
        _ if !matches!(u32::from(c), 0xC0..=0x52F | 0x1E00..=0x1FFF) => {
            out(c);
            return;
        }
        _ => {
            unicode_normalization::char::decompose_canonical(c, |d| {
                if !unicode_normalization::char::is_combining_mark(d) {
                    out(d);
                }
            });
            return;
        }
    };
    spelled.chars().for_each(out);
}

/// Whether `c` is of a script written without spaces between words (Han,
/// kana, Thai, Lao, Khmer, Myanmar): a name in it is written as one run
/// (`山田太郎`) as often as with a space.
pub fn unspaced(c: char) -> bool {
    matches!(u32::from(c),
        0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF | 0x3040..=0x30FF
        | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
        | 0xFF66..=0xFF9F | 0x20000..=0x2FFFF)
}

/// Up to seven bytes as one word, the first in the low byte (a loop of
/// shifts: a variable-length copy is a call to `memcpy`).
pub(crate) fn load_tail(rest: &[u8]) -> u64 {
    rest.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b))
}

/// Eight bytes with `A`–`Z` lowered, the rest as they are (what
/// `u8::to_ascii_lowercase` does to each).
fn ascii_lowercase(w: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let seven = w & LOW7;
    // The high bit of each byte: at least `A`, then above `Z`.
    let from_a = seven + 0x3f3f_3f3f_3f3f_3f3f;
    let past_z = seven + 0x2525_2525_2525_2525;
    let upper = from_a & !past_z & !w & HIGH;
    w | (upper >> 2)
}

/// A well-mixed 64-bit key (keys are looked up without further hashing).
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The key of one token (case-folded).
pub fn token_hash(s: &str) -> u64 {
    let mut h = KeyHash::new();
    h.text(s);
    h.finish()
}

/// The key of the tokens of `text` written together, without what
/// separates them: `AC-0100-0042` as `AC01000042`.
pub fn joined_hash(text: &str, tokens: &[Token]) -> u64 {
    let mut h = KeyHash::new();
    for t in tokens {
        h.text(&text[t.start..t.end]);
    }
    h.finish()
}

/// The key of a phrase from its tokens' keys (order matters).
pub fn phrase_hash(tokens: &[Token]) -> u64 {
    tokens
        .iter()
        .fold(PHRASE_START, |h, t| phrase_step(h, t.hash))
}

/// One more token of a phrase key: `phrase_hash(&t[..n + 1])` is
/// `phrase_step(phrase_hash(&t[..n]), t[n].hash)`.
pub fn phrase_step(h: u64, token: u64) -> u64 {
    mix(h.rotate_left(17) ^ token)
}

/// The key of a phrase of no tokens (see [`phrase_step`]).
pub const PHRASE_START: u64 = 0x9e37_79b9_7f4a_7c15;

/// The tokens of `text`.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::with_capacity(text.len() / 6 + 1);
    tokenize_into(text, &mut out);
    out
}

/// What a byte is to the tokeniser.
const SEPARATOR: u8 = 0;
const DIGIT: u8 = 1;
const LETTER: u8 = 2;
/// Part of a character outside ASCII (decoded to know).
const WIDE: u8 = 3;

/// The class of every byte.
static CLASSES: [u8; 256] = {
    let mut t = [SEPARATOR; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b >= 0x80 {
            WIDE
        } else if b.is_ascii_digit() {
            DIGIT
        } else if b.is_ascii_alphabetic() {
            LETTER
        } else {
            SEPARATOR
        };
        i += 1;
    }
    t
};

/// The tokens of `text`, into `out` (cleared first). ASCII is classified
/// by a table and hashed eight bytes at a time; other characters are
/// decoded.
pub fn tokenize_into(text: &str, out: &mut Vec<Token>) {
    out.clear();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match CLASSES[usize::from(bytes[i])] {
            SEPARATOR => {
                i += 1;
                continue;
            }
            WIDE => {
                let c = char_at(text, i);
                if !c.is_alphanumeric() {
                    i += c.len_utf8();
                    continue;
                }
            }
            _ => {}
        }
        let start = i;
        // ASCII letters and digits first, the common case: one table
        // look-up a byte and no branch on which of the two it is.
        let mut seen = 0;
        while let Some(&b) = bytes.get(i) {
            let class = CLASSES[usize::from(b)];
            if class != DIGIT && class != LETTER {
                break;
            }
            seen |= class;
            i += 1;
        }
        let mut digits = seen & LETTER == 0;
        let mut ascii = true;
        // Then anything else the token holds (characters outside ASCII).
        while i < bytes.len() {
            match CLASSES[usize::from(bytes[i])] {
                DIGIT => i += 1,
                LETTER => {
                    digits = false;
                    i += 1;
                }
                SEPARATOR => break,
                _ => {
                    let c = char_at(text, i);
                    if !c.is_alphanumeric() {
                        break;
                    }
                    digits = false;
                    ascii = false;
                    i += c.len_utf8();
                }
            }
        }
        let hash = if ascii {
            let mut h = KeyHash::new();
            h.bytes(&bytes[start..i]);
            h.finish()
        } else {
            token_hash(&text[start..i])
        };
        out.push(Token {
            start,
            end: i,
            hash,
            digits,
        });
    }
}

/// The character starting at byte `i` (a character boundary).
fn char_at(text: &str, i: usize) -> char {
    text[i..]
        .chars()
        .next()
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// Characters that may join the digit groups of one number, phone or date.
fn joins(gap: &str) -> bool {
    !gap.is_empty()
        && gap.len() <= 2
        && gap.bytes().all(|c| {
            matches!(
                c,
                b' ' | b'-' | b'.' | b',' | b'/' | b'(' | b')' | b'+' | b'\'' | b'_'
            )
        })
}

/// The runs of digit tokens joined by separators: `555-867-5309`,
/// `92,000.50`, `14/03/2021`, as token index ranges.
pub fn numeric_runs(text: &str, tokens: &[Token]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    numeric_runs_into(text, tokens, &mut out);
    out
}

/// [`numeric_runs`] into `out` (cleared first), for callers that reuse it.
pub fn numeric_runs_into(text: &str, tokens: &[Token], out: &mut Vec<std::ops::Range<usize>>) {
    out.clear();
    let mut i = 0;
    while i < tokens.len() {
        if !tokens[i].digits {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len()
            && tokens[j].digits
            && joins(&text[tokens[j - 1].end..tokens[j].start])
        {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
}

/// The number and date keys of one run of digit groups. `parts` also adds
/// the digits of every shorter stretch of up to [`MAX_PART_GROUPS`] groups
/// with at least [`MIN_PART_DIGITS`] digits (a phone number inside a longer
/// one). Dates are read from every three consecutive groups.
pub fn number_keys(text: &str, run: &[Token], parts: bool, out: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    let g = |t: &Token| &bytes[t.start..t.end];
    let total: usize = run.iter().map(|t| t.end - t.start).sum();
    if total >= MIN_DIGITS {
        let mut h = KeyHash::tagged(NUMBER);
        run.iter().for_each(|t| h.bytes(g(t)));
        out.push(h.finish());
    }
    let n = run.len();
    if n >= 2 {
        let (prev, last) = (run[n - 2], run[n - 1]);
        let sep = &text[prev.end..last.start];
        let frac = g(&last);
        if (sep == "." || sep == ",") && (frac.len() <= 2 || (sep == "." && n == 2)) {
            let int = total - frac.len();
            let frac = trim_zeros(frac);
            if int + frac.len() >= MIN_DIGITS {
                let mut h = KeyHash::tagged(NUMBER);
                run[..n - 1].iter().for_each(|t| h.bytes(g(t)));
                if !frac.is_empty() {
                    h.bytes(b".");
                    h.bytes(frac);
                }
                out.push(h.finish());
            }
        }
        if parts {
            for a in 0..n {
                let mut h = KeyHash::tagged(NUMBER);
                let mut digits = 0;
                for b in (a + 1)..=n.min(a + MAX_PART_GROUPS) {
                    let t = &run[b - 1];
                    h.bytes(g(t));
                    digits += t.end - t.start;
                    if b - a < n && digits >= MIN_PART_DIGITS {
                        out.push(h.finish());
                    }
                }
            }
        }
    }
    if n >= 3 {
        for w in run.windows(3) {
            date_keys(&[g(&w[0]), g(&w[1]), g(&w[2])], out);
        }
    }
    for t in run {
        date_keys(&[g(t)], out);
    }
}

/// Tag bytes of number and date keys (see [`KeyHash::tagged`]).
const NUMBER: u8 = 1;
const DATE: u8 = 2;

fn trim_zeros(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b'0'] = s {
        s = rest;
    }
    s
}

/// The key of the date `y-m-d`, if it is one.
fn date_key(y: u32, m: u32, d: u32) -> Option<u64> {
    if !((1000..=2999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d)) {
        return None;
    }
    let digits = [
        y / 1000,
        y / 100 % 10,
        y / 10 % 10,
        y % 10,
        m / 10,
        m % 10,
        d / 10,
        d % 10,
    ]
    .map(|v| b'0' + v as u8);
    let mut h = KeyHash::tagged(DATE);
    h.bytes(&digits);
    Some(h.finish())
}

fn number(s: &[u8]) -> Option<u32> {
    if s.is_empty() || s.len() > 9 {
        return None;
    }
    s.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// The date keys of three digit groups (every reading: y-m-d, d-m-y,
/// m-d-y) or of eight digits (yyyymmdd).
fn date_keys(groups: &[&[u8]], out: &mut Vec<u64>) {
    let mut push = |y, m, d| out.extend(date_key(y, m, d));
    match *groups {
        [y, m, d] if y.len() == 4 => {
            if let (Some(y), Some(m), Some(d)) = (number(y), number(m), number(d)) {
                push(y, m, d);
            }
        }
        [a, b, y] if y.len() == 4 => {
            if let (Some(a), Some(b), Some(y)) = (number(a), number(b), number(y)) {
                push(y, b, a);
                push(y, a, b);
            }
        }
        [s] if s.len() == 8 => {
            if let (Some(y), Some(m), Some(d)) =
                (number(&s[..4]), number(&s[4..6]), number(&s[6..]))
            {
                push(y, m, d);
            }
        }
        _ => {}
    }
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn month(word: &str) -> Option<u32> {
    if !(3..=9).contains(&word.len()) {
        return None;
    }
    let w = word.to_lowercase();
    MONTHS
        .iter()
        .position(|m| w.starts_with(m) && (w.len() == 3 || long_month(m).starts_with(&w)))
        .map(|i| i as u32 + 1)
}

fn long_month(short: &str) -> &'static str {
    match short {
        "jan" => "january",
        "feb" => "february",
        "mar" => "march",
        "apr" => "april",
        "may" => "may",
        "jun" => "june",
        "jul" => "july",
        "aug" => "august",
        "sep" => "september",
        "oct" => "october",
        "nov" => "november",
        _ => "december",
    }
}

/// Date keys of dates written with a month name: `14 March 2021`,
/// `March 14, 2021`, `14-Mar-2021`.
pub fn month_name_dates(text: &str, tokens: &[Token], out: &mut Vec<(usize, usize, u64)>) {
    let s = |t: &Token| &text[t.start..t.end];
    for w in tokens.windows(3) {
        // Cheap tests first, before any slicing: most windows hold no year.
        if !w[2].digits || w[2].end - w[2].start != 4 {
            continue;
        }
        let (a, b, c) = (s(&w[0]), s(&w[1]), s(&w[2]));
        let found = if w[1].digits && !w[0].digits {
            month(a).map(|m| (c, m, b))
        } else if w[0].digits && !w[1].digits {
            month(b).map(|m| (c, m, a))
        } else {
            None
        };
        if let Some((y, m, d)) = found
            && let (Some(y), Some(d)) = (number(y.as_bytes()), number(d.as_bytes()))
            && let Some(k) = date_key(y, m, d)
        {
            out.push((w[0].start, w[2].end, k));
        }
    }
}

/// Whether a token is an e-mail address's: `x@y.z` around the `@`.
pub fn email_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    email_spans_into(text, &mut out);
    out
}

/// [`email_spans`] into `out` (cleared first), for callers that reuse it.
pub fn email_spans_into(text: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    for (at, _) in text.match_indices('@') {
        let ok = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+');
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| ok(*c))
            .last()
            .map(|(i, _)| i);
        let end = text[at + 1..]
            .char_indices()
            .take_while(|(_, c)| ok(*c))
            .last()
            .map(|(i, c)| at + 1 + i + c.len_utf8());
        if let (Some(s), Some(e)) = (start, end)
            && text[at + 1..e].contains('.')
        {
            out.push((s, e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<u64> {
        let t = tokenize(text);
        let mut out = Vec::new();
        for r in numeric_runs(text, &t) {
            number_keys(text, &t[r], true, &mut out);
        }
        let mut d = Vec::new();
        month_name_dates(text, &t, &mut d);
        out.extend(d.into_iter().map(|(_, _, k)| k));
        out
    }

    fn shares(a: &str, b: &str) -> bool {
        let kb = keys(b);
        keys(a).iter().any(|k| kb.contains(k))
    }

    #[test]
    fn reformatted_numbers_phones_and_amounts_share_a_key() {
        assert!(shares("85000", "85,000"));
        assert!(shares("85000", "85000.00"));
        assert!(shares("92000.5", "92,000.50"));
        assert!(shares("92000.5", "92.000,50"));
        assert!(shares("5558675309", "555-867-5309"));
        assert!(shares("5558675309", "(555) 867-5309"));
        assert!(shares("5558675309", "+1 555 867 5309"));
        assert!(shares("AB-0042-7781", "0042 7781"));
        assert!(!shares("85000", "86,000"));
        assert!(keys("line 5, col 12").is_empty());
    }

    #[test]
    fn a_number_is_not_a_token_and_long_runs_stay_bounded() {
        // The token `n85000` is not the number 85000.
        let t = tokenize("n85000");
        assert!(!keys("85000").contains(&t[0].hash));
        // A list of 2,000 numbers joined by `, ` is one run: its keys grow
        // with its length, not with its length squared.
        let list: Vec<String> = (0..2000).map(|i| format!("{}", 1_000_000 + i)).collect();
        let n = keys(&list.join(", ")).len();
        assert!(n < 2000 * (MAX_PART_GROUPS + 4), "{n} keys");
    }

    #[test]
    fn a_date_inside_a_longer_run_of_numbers_is_found() {
        assert!(shares("2021-03-14", "2021-03-14 10 22"));
        assert!(shares("2021-03-14", "on 14/03/2021, 555 867 5309"));
        assert!(shares("20210314", "2021-03-14"));
    }

    #[test]
    fn tokens_and_joined_keys_agree_with_token_hash() {
        let text = "Jöhn AC-0100-0042 ÉCOLE x";
        for t in tokenize(text) {
            assert_eq!(t.hash, token_hash(&text[t.start..t.end]));
        }
        let t = tokenize("AC-0100-0042");
        assert_eq!(joined_hash("AC-0100-0042", &t), token_hash("ac01000042"));
        assert_eq!(
            phrase_hash(&t),
            t.iter().fold(PHRASE_START, |h, t| phrase_step(h, t.hash))
        );
    }

    #[test]
    fn the_hash_is_the_same_whole_or_in_pieces_and_folds_case_by_word() {
        // Every byte, eight at a time, is lowered as one at a time would be.
        for start in (0..256).step_by(8) {
            let w: Vec<u8> = (start..start + 8).map(|b| b as u8).collect();
            let lowered = ascii_lowercase(u64::from_le_bytes(w.clone().try_into().unwrap()));
            let one_by_one: Vec<u8> = w.iter().map(u8::to_ascii_lowercase).collect();
            assert_eq!(lowered.to_le_bytes().to_vec(), one_by_one, "{start}");
        }
        // Any split of a text gives the whole text's key.
        let text = "Quagmire1234-ZEBULON.x@Example-17.COM0123456789abcdefghij";
        let whole = token_hash(text);
        for a in 0..text.len() {
            for b in a..text.len() {
                let mut h = KeyHash::new();
                h.text(&text[..a]);
                h.text(&text[a..b]);
                h.text(&text[b..]);
                assert_eq!(h.finish(), whole, "{a} {b}");
            }
        }
        // Lengths around a word, and case, as tokens.
        for n in 1..20 {
            let lower = "abcdefghijklmnopqrstuvwxyz"[..n].to_owned();
            assert_eq!(token_hash(&lower), token_hash(&lower.to_uppercase()));
            assert_ne!(token_hash(&lower), token_hash(&lower[..n - 1]));
            let t = tokenize(&format!("({})", lower.to_uppercase()));
            assert_eq!(t[0].hash, token_hash(&lower));
        }
    }

    #[test]
    fn tokens_outside_ascii_and_digits_keep_their_rules() {
        // Letters and digits of any script join a token; a non-ASCII digit
        // does not make it a number; case folds beyond ASCII.
        let text = "Ünïcode ÉCOLE école 北京 ١٢٣ 123 a_b €5";
        let t: Vec<(&str, bool)> = tokenize(text)
            .iter()
            .map(|t| (&text[t.start..t.end], t.digits))
            .collect();
        assert_eq!(
            t,
            [
                ("Ünïcode", false),
                ("ÉCOLE", false),
                ("école", false),
                ("北京", false),
                ("١٢٣", false),
                ("123", true),
                ("a", false),
                ("b", false),
                ("5", true),
            ]
        );
        let toks = tokenize(text);
        assert_eq!(toks[1].hash, toks[2].hash);
        assert_eq!(toks[0].hash, token_hash("ünïcode"));
    }

    #[test]
    fn dates_in_common_formats_share_a_key() {
        for other in [
            "14/03/2021",
            "03/14/2021",
            "14.03.2021",
            "2021/03/14",
            "20210314",
            "14 March 2021",
            "March 14, 2021",
            "14-Mar-2021",
        ] {
            assert!(shares("2021-03-14", other), "{other}");
        }
        assert!(!shares("2021-03-14", "2021-03-15"));
    }

    #[test]
    fn tokens_fold_case_and_emails_are_found() {
        let t = tokenize("John SMITH, jöhn, Jóna, Straße");
        assert_eq!(t.len(), 5);
        assert_eq!(t[1].hash, token_hash("smith"));
        // Diacritics fold away (#38 finding 11): a name typed without them.
        assert_eq!(t[0].hash, t[2].hash);
        assert_eq!(t[3].hash, token_hash("jona"));
        assert_eq!(t[4].hash, token_hash("strasse"));
        assert_ne!(t[0].hash, t[3].hash);
        let text = "write to john.smith@acme.com today";
        let spans = email_spans(text);
        assert_eq!(spans.len(), 1);
        assert_eq!(&text[spans[0].0..spans[0].1], "john.smith@acme.com");
    }
}
