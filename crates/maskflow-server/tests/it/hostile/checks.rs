//! What a request body must not carry: a raw value of a file, or its
//! base64, hex, reversal or spelling in a script's vocabulary, or an
//! absolute path of the machine. Bodies are searched as received and with
//! their JSON strings decoded, so escaping hides nothing.

use serde_json::Value;

/// The text of a request body as the back end reads it: the raw body and
/// every JSON string in it, decoded.
pub fn readable(body: &str) -> String {
    fn strings(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut out = body.to_owned();
    out.push('\n');
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        strings(&v, &mut out);
    }
    out
}

/// The needles that give a cell away: the cell itself, and for the names
/// and e-mail addresses (the first two columns) each of their words of 5
/// characters or more.
pub fn raw_needles(csv: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in csv.lines().skip(1) {
        for (i, cell) in line.split(',').enumerate() {
            if cell.len() >= 6 {
                out.push(cell.to_owned());
            }
            if i < 2 {
                out.extend(
                    cell.split(|c: char| !c.is_alphanumeric())
                        .filter(|w| w.len() >= 5)
                        .map(str::to_owned),
                );
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every window of `width` characters of `s` (all of `s` when shorter).
pub fn windows(s: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= width {
        return vec![s.to_owned()];
    }
    chars.windows(width).map(|w| w.iter().collect()).collect()
}

/// Standard base64 (with padding) of `bytes`.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first needle of `needles` found in any of `bodies` (decoded), with
/// the body's index.
pub fn first_found(bodies: &[String], needles: &[String]) -> Option<(String, usize)> {
    let texts: Vec<String> = bodies.iter().map(|b| readable(b)).collect();
    needles.iter().find_map(|n| {
        texts
            .iter()
            .position(|t| t.contains(n.as_str()))
            .map(|i| (n.clone(), i))
    })
}

/// Panics naming the needle and showing where it was found.
pub fn assert_none_found(what: &str, bodies: &[String], needles: &[String]) {
    if let Some((needle, i)) = first_found(bodies, needles) {
        let text = readable(&bodies[i]);
        let at = text.find(needle.as_str()).unwrap_or(0);
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(200)
            .map_or(0, |(i, _)| i);
        let to = text[at..]
            .char_indices()
            .nth(needle.chars().count() + 200)
            .map_or(text.len(), |(i, _)| at + i);
        panic!(
            "{what}: {needle:?} reached the back end (request {i} of {}): …{}…",
            bodies.len(),
            &text[from..to]
        );
    }
}

#[test]
fn the_encoders_and_needles_behave() {
    assert_eq!(base64(b"Ma"), "TWE=");
    assert_eq!(base64(b"Man"), "TWFu");
    assert_eq!(base64(b"M"), "TQ==");
    assert_eq!(hex(b"Hi!"), "486921");
    assert_eq!(windows("abcd", 3), vec!["abc", "bcd"]);
    let needles = raw_needles(super::PEOPLE);
    assert!(needles.contains(&"Okonkwo".to_owned()), "{needles:?}");
    assert!(needles.contains(&"1284.50".to_owned()), "{needles:?}");
    assert!(
        first_found(&[r#"{"a":"x \"Okonkwo\" y"}"#.to_owned()], &needles).is_some(),
        "a value inside a JSON string is found"
    );
}
