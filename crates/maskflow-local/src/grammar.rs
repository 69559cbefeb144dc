//! The grammar a structured reply is sampled under: llama.cpp's own
//! JSON-schema-to-GBNF converter (the one `llama-server` uses for
//! `response_format: json_schema`), so a reply can only be JSON that
//! matches the role's schema.

use crate::LocalError;

/// The most items an array of a structured reply may hold when its schema
/// sets no limit: a small model otherwise lists variations of one item
/// until its token budget is gone (seen: `"python-docx-a"`, `-b`, … in a
/// builder's requirements).
pub const DEFAULT_MAX_ITEMS: u64 = 24;

/// The GBNF grammar (root rule `root`) of replies matching `schema`.
pub fn schema_grammar(schema: &serde_json::Value) -> Result<String, LocalError> {
    let mut bounded = schema.clone();
    bound_arrays(&mut bounded);
    llama_cpp_2::json_schema_to_grammar(&bounded.to_string())
        .map_err(|e| LocalError::Grammar(e.to_string()))
}

/// Gives every array schema without `maxItems` [`DEFAULT_MAX_ITEMS`].
fn bound_arrays(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            if map.get("type").and_then(|t| t.as_str()) == Some("array")
                && !map.contains_key("maxItems")
            {
                map.insert("maxItems".into(), DEFAULT_MAX_ITEMS.into());
            }
            map.values_mut().for_each(bound_arrays);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(bound_arrays),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_becomes_a_grammar_with_its_keys() {
        let g = schema_grammar(&json!({
            "type": "object",
            "properties": {"feasible": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["feasible", "reason"],
            "additionalProperties": false
        }))
        .expect("grammar");
        assert!(g.contains("root ::="), "{g}");
        assert!(g.contains("feasible") && g.contains("reason"), "{g}");
    }

    #[test]
    fn arrays_without_a_limit_get_one() {
        let mut s = json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"type": "string"}},
            "b": {"type": "array", "maxItems": 3, "items": {"type": "array", "items": {}}}
        }});
        bound_arrays(&mut s);
        assert_eq!(s["properties"]["a"]["maxItems"], DEFAULT_MAX_ITEMS);
        assert_eq!(s["properties"]["b"]["maxItems"], 3);
        assert_eq!(s["properties"]["b"]["items"]["maxItems"], DEFAULT_MAX_ITEMS);
    }

    #[test]
    fn an_unusable_schema_is_an_error_not_a_panic() {
        let e = schema_grammar(
            &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        );
        assert!(matches!(e, Err(LocalError::Grammar(_))), "{e:?}");
    }
}
