//! A name as a person writes it ("weekly sales report", "Relevé März")
//! mapped to a safe file and unit name ([`slug`]: `weekly-sales-report`,
//! `releve-marz`): lower-case ASCII letters, digits and `-`, accents
//! folded, every other run of characters one `-`. What a systemd unit, a
//! launchd label, a scheduled-results folder or a Windows task is called;
//! the person's own name is kept and shown beside it. Pure functions.

use unicode_normalization::UnicodeNormalization;

/// Longest safe name, in bytes (ASCII).
pub const MAX_SLUG: usize = 64;

/// Letters that do not decompose into a base letter and an accent.
fn folded(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        'ø' | 'Ø' => "o",
        'ł' | 'Ł' => "l",
        'đ' | 'Đ' | 'ð' | 'Ð' => "d",
        'þ' | 'Þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// The safe file and unit name of `name`: accents folded, lower-case,
/// every run of anything but an ASCII letter or digit one `-`, none at
/// either end, at most [`MAX_SLUG`] bytes. A name with no letter or digit
/// that folds to ASCII (`週報`) gets `x-` and the hex of its first
/// characters' code points, so it is never empty and stays distinct.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    let mut push = |piece: &str, out: &mut String| {
        for c in piece.chars() {
            if c.is_ascii_alphanumeric() {
                if dash && !out.is_empty() {
                    out.push('-');
                }
                dash = false;
                out.push(c.to_ascii_lowercase());
            } else {
                dash = true;
            }
        }
    };
    for c in name.trim().chars() {
        if let Some(f) = folded(c) {
            push(f, &mut out);
            continue;
        }
        // The base letter of an accented one; anything else separates.
        let base: String = c.nfd().filter(char::is_ascii_alphanumeric).collect();
        push(if base.is_empty() { "-" } else { &base }, &mut out);
    }
    if out.is_empty() {
        let hex: Vec<String> = name
            .trim()
            .chars()
            .take(8)
            .map(|c| format!("{:x}", u32::from(c)))
            .collect();
        out = format!("x-{}", hex.join("-"));
    }
    if out.len() > MAX_SLUG {
        out.truncate(MAX_SLUG);
        while out.ends_with('-') {
            out.pop();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_people_write_them_become_safe_names() {
        assert_eq!(slug("weekly sales report"), "weekly-sales-report");
        assert_eq!(slug("  Weekly  Sales / Report! "), "weekly-sales-report");
        assert_eq!(slug("Relevé März"), "releve-marz");
        assert_eq!(slug("Straße Øst"), "strasse-ost");
        assert_eq!(slug("daily_2"), "daily-2");
        assert_eq!(slug("nightly-backup"), "nightly-backup");
        assert_eq!(slug("週報"), "x-9031-5831");
        assert_eq!(slug("週報 2026"), "2026");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("a\nb\u{7}c"), "a-b-c");
    }

    #[test]
    fn a_safe_name_holds_only_what_a_unit_or_file_name_may() {
        for name in [
            "é".repeat(100),
            "x y".repeat(40),
            "-".into(),
            "🙂 report".into(),
        ] {
            let s = slug(&name);
            assert!(!s.is_empty() && s.len() <= MAX_SLUG, "{name:?} -> {s:?}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{s:?}"
            );
            assert!(!s.starts_with('-') && !s.ends_with('-'), "{s:?}");
        }
    }
}
