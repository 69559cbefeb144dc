//! The build's optional PLAN phase (seed 001, issue 31 point 3): before
//! any code, the builder proposes the workflow's steps, inputs and
//! outputs; a person (or, when the workflow says so, the AI reviewer)
//! approves or edits it, and the approved plan goes to the builder with
//! the conversation. Pure: the prompt and the reply's parser and
//! rendering; the engine calls the back end (behind the guard and the
//! ledger) and writes `planning-prompt.md`, `planning-response.md` and
//! `plan.md`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conversation::prompts;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Part, Role, parse_reply};

/// Most steps, inputs or outputs a plan may list.
pub const MAX_ITEMS: usize = 30;
/// Longest line of a plan, in characters.
pub const MAX_ITEM_CHARS: usize = 500;
/// Longest plan a person may approve (edited), in characters.
pub const MAX_PLAN_CHARS: usize = 20_000;

/// The planner's reply.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// What the script will do, in order.
    pub steps: Vec<String>,
    /// The inputs it will read (one per file, usually).
    pub inputs: Vec<String>,
    /// The files it will write.
    pub outputs: Vec<String>,
}

/// The JSON schema of the planner's reply.
pub fn plan_schema() -> Value {
    let list = json!({"type": "array", "minItems": 1, "maxItems": MAX_ITEMS,
                      "items": {"type": "string", "minLength": 1, "maxLength": MAX_ITEM_CHARS}});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["steps", "inputs", "outputs"],
        "properties": {"steps": list, "inputs": list, "outputs": list}
    })
}

/// Refuses a plan outside the schema's bounds, or with a control character
/// in a line (it is shown to the user as it is).
pub fn check(plan: &Plan) -> Result<(), String> {
    for (name, items) in [
        ("steps", &plan.steps),
        ("inputs", &plan.inputs),
        ("outputs", &plan.outputs),
    ] {
        if items.is_empty() || items.len() > MAX_ITEMS {
            return Err(format!("`{name}` must list 1 to {MAX_ITEMS} items"));
        }
        for item in items {
            if item.trim().is_empty() || item.chars().count() > MAX_ITEM_CHARS {
                return Err(format!(
                    "each item of `{name}` must be 1 to {MAX_ITEM_CHARS} characters"
                ));
            }
            if item.chars().any(char::is_control) {
                return Err(format!("an item of `{name}` holds a control character"));
            }
        }
    }
    Ok(())
}

/// The planner's reply parsed and checked, or why it is unusable.
pub fn parse(reply: &str) -> Result<Plan, String> {
    parse_reply::<Plan>(reply, &check)
}

/// The planner's request: the masked extracts and the conversation, and
/// the person's feedback on an earlier proposal when there was one.
pub fn planning_request(
    extracts: &Value,
    history: &[ChatMessage],
    feedback: Option<&str>,
) -> LlmRequest {
    let schema = plan_schema();
    let mut system = vec![Part::instructions(
        "You are Maskflow's planner. Before any code is written, propose the plan of the workflow the conversation asks for: \
the steps the Python script will take, in order, the inputs it will read and the output files it will write. \
Plain sentences, one per item; no code.\n\n",
    )];
    system.extend(prompts::extracts_parts(extracts));
    system.push(Part::instructions(format!(
        "\n\nReply with only one JSON object, no prose and no code fence, matching this JSON schema:\n```json\n{schema}\n```"
    )));
    let mut messages = vec![ChatMessage::from_parts(ChatRole::System, system)];
    messages.extend(
        history
            .iter()
            .filter(|m| m.role != ChatRole::System)
            .cloned(),
    );
    let ask = match feedback.filter(|f| !f.trim().is_empty()) {
        Some(f) => vec![
            Part::instructions("Propose the plan again, changed as follows: "),
            Part::user_words(f),
        ],
        None => vec![Part::instructions("Propose the plan now.")],
    };
    messages.push(ChatMessage::from_parts(ChatRole::User, ask));
    LlmRequest {
        role: Role::Builder,
        messages,
        schema: Some(schema),
    }
}

/// The plan as Markdown (`plan.md`, and what the person approves or edits).
pub fn render(plan: &Plan) -> String {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|i| format!("- {}\n", i.trim()))
            .collect::<String>()
    };
    let steps: String = plan
        .steps
        .iter()
        .enumerate()
        .map(|(n, s)| format!("{}. {}\n", n + 1, s.trim()))
        .collect();
    format!(
        "# Plan\n\n## Steps\n\n{steps}\n## Inputs\n\n{}\n## Outputs\n\n{}",
        list(&plan.inputs),
        list(&plan.outputs)
    )
}

/// A plan a person approved, maybe edited: checked for length and control
/// characters (newlines and tabs allowed) before it goes to the builder.
pub fn check_edited(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the edited plan is empty".into());
    }
    if text.chars().count() > MAX_PLAN_CHARS {
        return Err(format!(
            "the edited plan is longer than {MAX_PLAN_CHARS} characters"
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err("the edited plan holds a control character".into());
    }
    Ok(text.to_owned())
}

/// The message that carries the approved plan to the builder, as the
/// person's own words (they approved it).
pub fn approved_message(plan: &str) -> ChatMessage {
    ChatMessage::from_parts(
        ChatRole::User,
        vec![
            Part::instructions("Follow this plan, which I approved:\n\n"),
            Part::llm_reply(plan),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_parsed_rendered_and_bounded() {
        let plan = parse(
            r#"{"steps":["Read the orders","Total per customer"],"inputs":["orders.csv"],"outputs":["totals.csv"]}"#,
        )
        .expect("plan");
        let md = render(&plan);
        assert!(
            md.contains("1. Read the orders\n2. Total per customer"),
            "{md}"
        );
        assert!(md.contains("## Outputs\n\n- totals.csv"), "{md}");
        // Hostile or broken replies are refused with the reason.
        assert!(parse("not json").is_err());
        assert!(parse(r#"{"steps":[],"inputs":["a"],"outputs":["b"]}"#).is_err());
        let smuggled = r#"{"steps":["a"],"inputs":["a"],"outputs":["b"],"script":"import os"}"#;
        assert!(parse(smuggled).is_err(), "an unknown field is refused");
        let escape =
            "{\"steps\":[\"a\\u001b]52;c;eA==\\u0007\"],\"inputs\":[\"a\"],\"outputs\":[\"b\"]}";
        assert!(parse(escape).is_err());
        assert!(check_edited("  ").is_err());
        assert!(check_edited("1. a\n\t2. b").is_ok());
        assert!(check_edited("a\u{1b}[2J").is_err());
    }

    #[test]
    fn the_request_carries_the_schema_and_the_feedback() {
        let extracts = json!([{"filename": "o.csv", "columns": ["a"], "sample_rows": [["#"]], "row_count": 1}]);
        let req = planning_request(&extracts, &[], Some("add a step for tax"));
        assert_eq!(req.role, Role::Builder);
        assert_eq!(req.schema, Some(plan_schema()));
        let last = req.messages.last().expect("last").content.clone();
        assert!(last.contains("add a step for tax"), "{last}");
        assert!(req.messages[0].content.contains("o.csv"));
    }
}
