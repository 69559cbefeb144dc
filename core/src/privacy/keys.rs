//! What the guard compares, derived the same way from a file's values and
//! from outbound text: case-folded tokens (maximal runs of letters and
//! digits), phrases of consecutive tokens, the digits of numbers, phone
//! numbers, IDs and amounts with their separators, grouping and trailing
//! decimal zeros normalised away, and dates in the common formats. Keys are
//! 64-bit hashes, so an index keeps no raw text. Pure functions.

/// Most tokens in a phrase key (a whole cell of up to this many tokens).
pub const MAX_PHRASE: usize = 6;
/// Fewest digits in a number key (shorter numbers are counts and line numbers).
pub const MIN_DIGITS: usize = 4;
/// Fewest digits in a key made of part of a number (a phone without its country code).
pub const MIN_PART_DIGITS: usize = 7;

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

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut h: u64, s: &str) -> u64 {
    if s.is_ascii() {
        // The common case, without decoding characters.
        for b in s.bytes() {
            h ^= u64::from(b.to_ascii_lowercase());
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        return h;
    }
    for c in s.chars().flat_map(char::to_lowercase) {
        let mut buf = [0u8; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
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
    mix(fnv(FNV_START, s))
}

/// The key of a phrase from its tokens' keys (order matters).
pub fn phrase_hash(tokens: &[Token]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for t in tokens {
        h = mix(h.rotate_left(17) ^ t.hash);
    }
    h
}

/// The key of a normalised number (`n` + digits) or date (`d` + yyyymmdd).
fn tagged(tag: char, s: &str) -> u64 {
    let mut buf = [0u8; 4];
    mix(fnv(fnv(FNV_START, tag.encode_utf8(&mut buf)), s))
}

/// The tokens of `text`.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut digits = true;
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
                digits = true;
            }
            digits &= c.is_ascii_digit();
        } else if let Some(s) = start.take() {
            out.push(make(text, s, i, digits));
        }
    }
    if let Some(s) = start {
        out.push(make(text, s, text.len(), digits));
    }
    out
}

fn make(text: &str, start: usize, end: usize, digits: bool) -> Token {
    Token {
        start,
        end,
        hash: token_hash(&text[start..end]),
        digits,
    }
}

/// Characters that may join the digit groups of one number, phone or date.
fn joins(gap: &str) -> bool {
    !gap.is_empty()
        && gap.len() <= 2
        && gap.chars().all(|c| {
            matches!(
                c,
                ' ' | '-' | '.' | ',' | '/' | '(' | ')' | '+' | '\'' | '_'
            )
        })
}

/// The runs of digit tokens joined by separators: `555-867-5309`,
/// `92,000.50`, `14/03/2021`, as token index ranges.
pub fn numeric_runs(text: &str, tokens: &[Token]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
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
    out
}

/// The number and date keys of one run of digit groups. `parts` also adds
/// the digits of every shorter stretch of groups with at least
/// [`MIN_PART_DIGITS`] digits (a phone number inside a longer one).
pub fn number_keys(text: &str, run: &[Token], parts: bool, out: &mut Vec<u64>) {
    let groups: Vec<&str> = run.iter().map(|t| &text[t.start..t.end]).collect();
    let all: String = groups.concat();
    if all.len() >= MIN_DIGITS {
        out.push(tagged('n', &all));
    }
    if groups.len() >= 2 {
        let last = run[run.len() - 1];
        let prev = run[run.len() - 2];
        let sep = &text[prev.end..last.start];
        let frac = groups[groups.len() - 1];
        if (sep == "." || sep == ",") && (frac.len() <= 2 || (sep == "." && groups.len() == 2)) {
            let int: String = groups[..groups.len() - 1].concat();
            let frac = frac.trim_end_matches('0');
            let n = if frac.is_empty() {
                int.clone()
            } else {
                format!("{int}.{frac}")
            };
            if int.len() + frac.len() >= MIN_DIGITS {
                out.push(tagged('n', &n));
            }
        }
        if parts {
            for a in 0..groups.len() {
                for b in (a + 1)..=groups.len() {
                    if b - a == groups.len() {
                        continue;
                    }
                    let d: String = groups[a..b].concat();
                    if d.len() >= MIN_PART_DIGITS {
                        out.push(tagged('n', &d));
                    }
                }
            }
        }
    }
    date_keys(&groups, out);
}

/// The date keys of three digit groups (every reading: y-m-d, d-m-y,
/// m-d-y) or of eight digits (yyyymmdd).
fn date_keys(groups: &[&str], out: &mut Vec<u64>) {
    let num = |s: &str| s.parse::<u32>().ok();
    let mut push = |y: u32, m: u32, d: u32| {
        if (1000..=2999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d) {
            out.push(tagged('d', &format!("{y:04}{m:02}{d:02}")));
        }
    };
    match groups {
        [y, m, d] if y.len() == 4 => {
            if let (Some(y), Some(m), Some(d)) = (num(y), num(m), num(d)) {
                push(y, m, d);
            }
        }
        [a, b, y] if y.len() == 4 => {
            if let (Some(a), Some(b), Some(y)) = (num(a), num(b), num(y)) {
                push(y, b, a);
                push(y, a, b);
            }
        }
        [s] if s.len() == 8 => {
            if let (Some(y), Some(m), Some(d)) = (num(&s[..4]), num(&s[4..6]), num(&s[6..])) {
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
        let (a, b, c) = (s(&w[0]), s(&w[1]), s(&w[2]));
        // Cheap tests first: most windows hold no year at all.
        if !w[2].digits || c.len() != 4 {
            continue;
        }
        let found = if w[1].digits && !w[0].digits {
            month(a).map(|m| (c, m, b))
        } else if w[0].digits && !w[1].digits {
            month(b).map(|m| (c, m, a))
        } else {
            None
        };
        if let Some((y, m, d)) = found
            && let (Ok(y), Ok(d)) = (y.parse::<u32>(), d.parse::<u32>())
            && (1..=31).contains(&d)
        {
            out.push((
                w[0].start,
                w[2].end,
                tagged('d', &format!("{y:04}{m:02}{d:02}")),
            ));
        }
    }
}

/// Whether a token is an e-mail address's: `x@y.z` around the `@`.
pub fn email_spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
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
    out
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
        let t = tokenize("John SMITH, jöhn");
        assert_eq!(t.len(), 3);
        assert_eq!(t[1].hash, token_hash("smith"));
        assert_ne!(t[0].hash, t[2].hash);
        let text = "write to john.smith@acme.com today";
        let spans = email_spans(text);
        assert_eq!(spans.len(), 1);
        assert_eq!(&text[spans[0].0..spans[0].1], "john.smith@acme.com");
    }
}
