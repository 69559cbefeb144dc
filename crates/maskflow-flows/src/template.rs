//! `{{path}}` interpolation over the run context (seed 003): a path that
//! resolves is replaced by its value (strings as they are, other values as
//! pretty JSON); one that does not is left as written, so a missing value is
//! visible instead of silently empty. Pure: no I/O.
//!
//! Besides the run context (`input`, `output`, `steps`, `loop`, `flow`…), a
//! `foreach` item's prompt sees its item variable, `{{index}}` (from 0) and
//! `{{total}}`, as in seed 003's `interpolateTemplate`.

use serde_json::Value;

use super::expr;

/// Renders `template` over `ctx`.
pub fn render(template: &str, ctx: &Value) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = after[..end].trim();
        let value = expr::parse_path(inner)
            .ok()
            .and_then(|p| expr::lookup(ctx, &p));
        match value {
            Some(Value::String(s)) => out.push_str(&s),
            Some(v @ (Value::Array(_) | Value::Object(_))) => {
                out.push_str(&serde_json::to_string_pretty(&v).unwrap_or_default())
            }
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// One piece of a template: text as written, or a `{{...}}` hole with its
/// inner text as written (spaces included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text copied as it is.
    Text(String),
    /// A hole: what stands between `{{` and `}}`.
    Hole(String),
}

/// Splits `template` into pieces the way [`render`] reads it: a `{{` without
/// a closing `}}` is text. Printing the pieces gives `template` back.
pub fn parse(template: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut rest = template;
    let mut text = String::new();
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            break;
        };
        text.push_str(&rest[..start]);
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Hole(after[..end].to_owned()));
        rest = &after[end + 2..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    pieces
}

/// Prints a piece as written in a template.
impl std::fmt::Display for Piece {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Piece::Text(t) => f.write_str(t),
            Piece::Hole(h) => write!(f, "{{{{{h}}}}}"),
        }
    }
}

/// Prints pieces back into a template.
pub fn print(pieces: &[Piece]) -> String {
    pieces.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_are_replaced_and_missing_ones_kept() {
        let ctx =
            json!({"file": {"path": "a.csv", "rows": 3}, "input": {"n": [1, 2]}, "flag": true});
        assert_eq!(
            render("Review {{file.path}} ({{ file.rows }} rows)", &ctx),
            "Review a.csv (3 rows)"
        );
        assert_eq!(
            render("{{missing.x}} and {{flag}}", &ctx),
            "{{missing.x}} and true"
        );
        assert_eq!(render("{{input.n}}", &ctx), "[\n  1,\n  2\n]");
        assert_eq!(render("open {{ only", &ctx), "open {{ only");
        assert_eq!(render("{{input.n[1]}}", &ctx), "2");
    }

    #[test]
    fn a_foreach_items_index_and_total_render() {
        let ctx = json!({"file": {"path": "b.rs"}, "index": 1, "total": 3});
        assert_eq!(
            render("Review {{file.path}} [{{index}}/{{total}}]", &ctx),
            "Review b.rs [1/3]"
        );
    }
}

#[cfg(test)]
mod proptests;
