//! Masking a failed script's error output before it can reach any LLM: raw
//! values from the input files and every string literal of an exception
//! message are masked; the traceback's structure, the exception types, file
//! names of the script and line numbers are kept. Anything else the script
//! printed is masked whole. Pure: the engine gathers the raw values.

use maskflow_extractors::mask;

/// Shortest raw value replaced wherever it appears (shorter ones are only
/// masked inside quotes or in masked lines).
pub const MIN_VALUE_CHARS: usize = 3;

/// Masks `stderr` of a run in `workdir`; `raw_values` are the cell values of
/// the input files.
pub fn mask_error(stderr: &str, workdir: &str, raw_values: &[String]) -> String {
    let mut values: Vec<&str> = raw_values
        .iter()
        .map(|v| v.trim())
        .filter(|v| v.chars().count() >= MIN_VALUE_CHARS)
        .collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.dedup();
    let mut out = Vec::new();
    let mut after_file_line = false;
    for line in stderr.lines() {
        let line = if workdir.is_empty() {
            line.to_owned()
        } else {
            line.replace(workdir, ".")
        };
        let masked = if is_structure(&line) {
            after_file_line = line.trim_start().starts_with("File \"");
            replace_values(&line, &values)
        } else if after_file_line && line.starts_with("    ") {
            // A source line of the script (written by the LLM, not data).
            after_file_line = false;
            replace_values(&line, &values)
        } else if is_caret_line(&line) {
            line.clone()
        } else if let Some((kind, message)) = exception_line(&line) {
            after_file_line = false;
            format!(
                "{kind}: {}",
                mask_literals(&replace_values(message, &values))
            )
        } else {
            after_file_line = false;
            mask(&line)
        };
        out.push(masked);
    }
    out.join("\n")
}

fn is_structure(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t == "Traceback (most recent call last):"
        || t == "During handling of the above exception, another exception occurred:"
        || t == "The above exception was the direct cause of the following exception:"
        || (t.starts_with("File \"") && t.contains("\", line "))
}

fn is_caret_line(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && t.chars().all(|c| matches!(c, '^' | '~' | ' '))
}

/// `Type: message` or `pkg.Type: message` or a bare `Type`.
fn exception_line(line: &str) -> Option<(&str, &str)> {
    let (kind, message) = match line.split_once(": ") {
        Some((k, m)) => (k, m),
        None => (line.trim_end_matches(':'), ""),
    };
    let ok = !kind.is_empty()
        && kind
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && (kind.ends_with("Error")
            || kind.ends_with("Exception")
            || kind.ends_with("Warning")
            || kind.ends_with("Interrupt")
            || kind.ends_with("Exit")
            || kind.ends_with("Iteration")
            || kind.contains('.'));
    ok.then_some((kind, message))
}

fn replace_values(text: &str, values: &[&str]) -> String {
    let mut s = text.to_owned();
    for v in values {
        if s.contains(v) {
            s = s.replace(v, &mask(v));
        }
    }
    s
}

/// Masks the content of every '…' or "…" literal.
fn mask_literals(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in message.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => out.push(maskflow_extractors::mask::mask_char(c)),
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "Traceback (most recent call last):
  File \"/data/test-runs/wv_1/iteration-1/script.py\", line 7, in <module>
    total += int(row[\"age\"])
             ^^^^^^^^^^^^^^^^
ValueError: invalid literal for int() with base 10: 'John Smith'
debug: Ada Lovelace 1815";

    #[test]
    fn values_and_literals_are_masked_and_structure_kept() {
        let out = mask_error(
            TRACE,
            "/data/test-runs/wv_1/iteration-1",
            &["John Smith".into(), "Ada Lovelace".into(), "41".into()],
        );
        assert!(
            out.contains("File \"./script.py\", line 7, in <module>"),
            "{out}"
        );
        assert!(out.contains("total += int(row[\"age\"])"));
        assert!(out.contains("ValueError: invalid literal for int() with base 10: 'Aaaa Aaaaa'"));
        assert!(out.contains("aaaaa: Aaa Aaaaaaaa ####"), "{out}");
        for raw in ["John", "Smith", "Ada", "Lovelace", "1815"] {
            assert!(!out.contains(raw), "{raw} leaked: {out}");
        }
    }

    #[test]
    fn a_quoted_value_not_in_the_files_is_masked_too() {
        let out = mask_error("KeyError: 'secret-42'", "", &[]);
        assert_eq!(out, "KeyError: 'aaaaaa-##'");
    }
}
