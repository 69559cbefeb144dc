//! `{{path}}` interpolation over the run context (seed 003): a path that
//! resolves is replaced by its value (strings as they are, other values as
//! pretty JSON); one that does not is left as written, so a missing value is
//! visible instead of silently empty. Pure: no I/O.

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
}
