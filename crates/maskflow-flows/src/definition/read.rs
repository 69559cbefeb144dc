//! Parsing a definition with errors that carry the JSON path of the offending value.

use super::*;

pub(super) const MARK: char = '\u{1}';

pub(super) fn marked(path: &str, message: &str) -> String {
    format!("{MARK}{path}{MARK}{message}")
}

pub(super) fn join_path(outer: &str, rel: &str) -> String {
    if outer.is_empty() || outer == "." {
        rel.to_owned()
    } else if rel.is_empty() || rel == "." {
        outer.to_owned()
    } else if rel.starts_with('[') {
        format!("{outer}{rel}")
    } else {
        format!("{outer}.{rel}")
    }
}

/// Splits a possibly marked message into (relative path, message).
pub(super) fn unmark(message: &str) -> (String, String) {
    if let Some(rest) = message.strip_prefix(MARK)
        && let Some((path, msg)) = rest.split_once(MARK)
    {
        return (path.to_owned(), msg.to_owned());
    }
    (String::new(), message.to_owned())
}

pub(super) fn nested<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let outer = e.path().to_string();
        let (rel, msg) = unmark(&e.into_inner().to_string());
        E::custom(marked(&join_path(&outer, &rel), &msg))
    })
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(d)?;
        let Some(obj) = value.as_object_mut() else {
            return Err(de::Error::custom("a step must be a JSON object"));
        };
        let expected = STEP_TYPES.join(", ");
        let ty = match obj.remove("type") {
            None => {
                return Err(de::Error::custom(marked(
                    "type",
                    &format!("missing; every step needs a type (one of {expected})"),
                )));
            }
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(_) => return Err(de::Error::custom(marked("type", "must be a string"))),
        };
        Ok(match ty.as_str() {
            "llm" => Step::Llm(nested(value)?),
            "command" => Step::Command(nested(value)?),
            "startLoop" => Step::StartLoop(nested(value)?),
            "break" => Step::Break(nested(value)?),
            "decision" => Step::Decision(nested(value)?),
            "foreach" => Step::Foreach(nested(value)?),
            "join" => Step::Join(nested(value)?),
            "subflow" => Step::Subflow(nested(value)?),
            "gate" => Step::Gate(nested(value)?),
            "script" => Step::Script(nested(value)?),
            other => {
                return Err(de::Error::custom(marked(
                    "type",
                    &format!("unknown step type {other:?}; expected one of {expected}"),
                )));
            }
        })
    }
}

/// Parses and validates a flow document.
pub fn parse(text: &str) -> Result<FlowDef, DefinitionError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut def: FlowDef = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let outer = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return DefinitionError::at("$", format!("not valid JSON: {inner}"));
        }
        let (rel, msg) = unmark(&inner.to_string());
        let path = join_path(&outer, &rel);
        // serde_json appends the position of the document; keep the message short.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_owned(),
            None => msg,
        };
        DefinitionError::at(&path, msg)
    })?;
    de.end()
        .map_err(|e| DefinitionError::at("$", format!("not valid JSON: {e}")))?;
    super::labels::route_labels(&mut def);
    validate(&def)?;
    Ok(def)
}

/// Parses a value the same way as [`parse`] (for definitions built in code).
pub fn from_value(value: &Value) -> Result<FlowDef, DefinitionError> {
    parse(&value.to_string())
}
