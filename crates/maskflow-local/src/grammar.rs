//! The grammar a structured reply is sampled under: llama.cpp's own
//! JSON-schema-to-GBNF converter (the one `llama-server` uses for
//! `response_format: json_schema`), so a reply can only be JSON that
//! matches the role's schema.

use crate::LocalError;

/// The GBNF grammar (root rule `root`) of replies matching `schema`.
pub fn schema_grammar(schema: &serde_json::Value) -> Result<String, LocalError> {
    llama_cpp_2::json_schema_to_grammar(&schema.to_string())
        .map_err(|e| LocalError::Grammar(e.to_string()))
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
    fn an_unusable_schema_is_an_error_not_a_panic() {
        let e = schema_grammar(
            &json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}),
        );
        assert!(matches!(e, Err(LocalError::Grammar(_))), "{e:?}");
    }
}
