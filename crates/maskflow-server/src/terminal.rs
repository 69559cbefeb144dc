//! Text a script or an LLM controls, made safe to print on a terminal
//! (issue #26, break 7): output names, a failed script's stderr, flow
//! turns, prompts and replies may hold escape sequences that set the
//! window title, write the clipboard (OSC 52) or rewrite the screen. Every
//! C0 control but newline and tab, DEL, every C1 control (U+0080–U+009F)
//! and the bidirectional overrides are printed as escapes instead: `\x1b`,
//! `\x7f`, `\u{9b}`, `\u{202e}`. Printable text, newlines and tabs pass as
//! they are.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is.
fn unsafe_char(c: char) -> bool {
    let n = u32::from(c);
    (c.is_control() && c != '\n' && c != '\t')
        || (0x202a..=0x202e).contains(&n)
        || (0x2066..=0x2069).contains(&n)
}

fn escaped(c: char, out: &mut String) {
    let n = u32::from(c);
    if n < 0x80 {
        out.push_str(&format!("\\x{n:02x}"));
    } else {
        out.push_str(&format!("\\u{{{n:x}}}"));
    }
}

/// `text` with every control character escaped but newlines and tabs
/// (multi-line text: a script's stderr, a prompt, a reply).
pub fn safe(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` on one line: newlines and tabs escaped too (a name, a status,
/// a message printed beside others).
pub fn safe_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> Cow<'_, str> {
    let bad = |c: char| unsafe_char(c) || (one_line && (c == '\n' || c == '\t'));
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if bad(c) {
            escaped(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text (as `serde_json` writes it, which escapes C0 but not DEL, C1
/// or the bidirectional overrides) with those written as `\uXXXX` too: the
/// same JSON value, safe on a terminal.
pub fn safe_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_shown_not_sent() {
        let osc52 = "ok\x1b]52;c;aGk=\x07 \u{9b}31m\r\x7f\u{202e}gpj.exe";
        assert_eq!(
            safe(osc52),
            "ok\\x1b]52;c;aGk=\\x07 \\u{9b}31m\\x0d\\x7f\\u{202e}gpj.exe"
        );
        assert_eq!(safe("line 1\n\tline 2 · é"), "line 1\n\tline 2 · é");
        assert!(matches!(safe("plain"), Cow::Borrowed(_)));
        assert_eq!(safe_line("a\nb\tc"), "a\\x0ab\\x09c");
    }

    #[test]
    fn json_stays_the_same_value() {
        let v = serde_json::json!({"name": "x\u{9b}y\x1b\u{7f}"});
        let text = safe_json(&v.to_string()).into_owned();
        assert!(!text.contains(['\u{9b}', '\x1b', '\u{7f}']), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(back, v);
    }
}
