//! Sniffing a delimited text file's encoding and delimiter from its head.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

/// Delimiters Maskflow recognises, in order of preference on a tie.
pub const DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];

/// The encoding of the file, from its byte-order mark or its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Detected {
    /// The encoding the text is in.
    pub encoding: &'static Encoding,
    /// Length of the byte-order mark to skip.
    pub bom: usize,
}

impl Detected {
    /// Whether the bytes are ASCII-compatible (quotes, line ends and
    /// delimiters are single bytes), so they can be scanned undecoded.
    pub fn ascii_compatible(&self) -> bool {
        self.encoding != UTF_16LE && self.encoding != UTF_16BE
    }
}

/// Detects the encoding: a BOM (UTF-8, UTF-16LE/BE); else UTF-8 when the head
/// is valid UTF-8 (a sequence cut at the end of the head is allowed); else
/// Windows-1252.
pub fn detect_encoding(head: &[u8]) -> Detected {
    if let Some((encoding, bom)) = Encoding::for_bom(head) {
        return Detected { encoding, bom };
    }
    let valid = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    };
    Detected {
        encoding: if valid { UTF_8 } else { WINDOWS_1252 },
        bom: 0,
    }
}

/// Picks the delimiter whose count per line is the most consistent over the
/// first lines of `text` (quoted parts ignored). `prefer` wins ties (tab for `.tsv`).
pub fn sniff_delimiter(text: &str, prefer: Option<u8>) -> u8 {
    let lines = logical_lines(text, 50);
    let mut best: Option<(u8, usize, usize)> = None; // (delimiter, lines agreeing, count)
    let mut order: Vec<u8> = prefer.into_iter().collect();
    order.extend(DELIMITERS.iter().copied().filter(|d| Some(*d) != prefer));
    for d in order {
        let counts: Vec<usize> = lines.iter().map(|l| count_outside_quotes(l, d)).collect();
        let Some(mode) = mode(&counts) else { continue };
        if mode == 0 {
            continue;
        }
        let agreeing = counts.iter().filter(|&&c| c == mode).count();
        if best
            .is_none_or(|(_, a, c)| agreeing > a || (agreeing == a && mode > c && prefer.is_none()))
        {
            best = Some((d, agreeing, mode));
        }
    }
    best.map(|(d, ..)| d).or(prefer).unwrap_or(b',')
}

/// The first `max` lines of `text`, keeping quoted line breaks inside a line.
fn logical_lines(text: &str, max: usize) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '\n' if !quoted => {
                let line = text[start..i].trim_end_matches('\r');
                if !line.is_empty() {
                    lines.push(line);
                }
                start = i + 1;
                if lines.len() == max {
                    return lines;
                }
            }
            _ => {}
        }
    }
    // The last line may be cut by the end of the head: use it only if alone.
    if lines.is_empty() && start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

fn count_outside_quotes(line: &str, d: u8) -> usize {
    let mut quoted = false;
    line.bytes()
        .filter(|&b| {
            if b == b'"' {
                quoted = !quoted;
            }
            !quoted && b == d
        })
        .count()
}

fn mode(counts: &[usize]) -> Option<usize> {
    let mut freq = std::collections::HashMap::new();
    for &c in counts {
        *freq.entry(c).or_insert(0usize) += 1;
    }
    freq.into_iter()
        .max_by_key(|&(c, n)| (n, c))
        .map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_delimiter() {
        assert_eq!(sniff_delimiter("a,b,c\n1,2,3\n", None), b',');
        assert_eq!(sniff_delimiter("a;b;c\n1,5;2,5;3\n", None), b';');
        assert_eq!(sniff_delimiter("a\tb\n1\t2\n", None), b'\t');
        assert_eq!(sniff_delimiter("a|b\n1|2\n", None), b'|');
        assert_eq!(sniff_delimiter("\"x,y\";b\n\"1,2\";3\n", None), b';');
        assert_eq!(sniff_delimiter("just one column\nvalue\n", None), b',');
        assert_eq!(sniff_delimiter("just one column\n", Some(b'\t')), b'\t');
    }

    #[test]
    fn detects_encodings() {
        assert_eq!(detect_encoding(b"\xEF\xBB\xBFa,b").encoding, UTF_8);
        assert_eq!(detect_encoding(b"\xEF\xBB\xBFa,b").bom, 3);
        assert_eq!(detect_encoding(b"\xFF\xFEa\0").encoding, UTF_16LE);
        assert_eq!(detect_encoding(b"\xFE\xFF\0a").encoding, UTF_16BE);
        assert_eq!(detect_encoding("café,b".as_bytes()).encoding, UTF_8);
        assert_eq!(detect_encoding(b"caf\xE9,b").encoding, WINDOWS_1252);
        // A multi-byte character cut by the end of the head is still UTF-8.
        assert_eq!(detect_encoding(&"café".as_bytes()[..4]).encoding, UTF_8);
    }
}
