//! Prompt assembly for flow agents, in seed 003's layers — base response
//! format → agent persona → step instructions → task context — and the
//! parsers of what agents reply: a JSON object (asked for), else seed 003's
//! markdown sections (`## Status`, `## Summary`, `## Output`, `## Next
//! Action`, `## Metadata`), else the plain text. Pure functions only.

use serde_json::{Map, Value, json};

use super::definition::YesNo;
use super::error::FlowError;
use maskflow_llm::{ChatMessage, ChatRole, extract_json};

/// Layer 1: the response format every flow agent is asked for.
pub const BASE_FORMAT: &str = "You are an agent in an automated flow. Reply with one JSON object and nothing else. \
Put the result of your work in its fields (for example {\"summary\": \"...\", \"score\": 80}); \
the flow routes on these fields. If you cannot reply in JSON, use these markdown sections instead: \
## Status (SUCCESS, PARTIAL, BLOCKED or FAILED), ## Summary, ## Output, ## Next Action (COMPLETE, CONTINUE, ESCALATE or HOLD), \
## Metadata (a JSON block).";

/// What the task-context layer shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskContext {
    /// The flow's name.
    pub flow: String,
    /// The step's label.
    pub step: String,
    /// `iteration` of each enclosing loop, outermost first.
    pub iterations: Vec<u32>,
    /// The foreach item, when there is one (already masked if local).
    pub item: Option<(String, Value)>,
}

/// The system message: the four layers joined by `---`.
pub fn system_message(
    persona: Option<&str>,
    step_instructions: Option<&str>,
    task: &TaskContext,
) -> String {
    let mut parts = vec![BASE_FORMAT.to_owned()];
    if let Some(p) = persona.map(str::trim).filter(|p| !p.is_empty()) {
        parts.push(format!("## Agent Context\n{p}"));
    }
    if let Some(s) = step_instructions.map(str::trim).filter(|s| !s.is_empty()) {
        parts.push(format!("## Workflow Step: {}\n{s}", task.step));
    }
    let mut ctx = format!(
        "## Task Context\n**Flow:** {}\n**Step:** {}",
        task.flow, task.step
    );
    if !task.iterations.is_empty() {
        let it: Vec<String> = task.iterations.iter().map(u32::to_string).collect();
        ctx.push_str(&format!("\n**Loop iteration:** {}", it.join(" / ")));
    }
    if let Some((name, value)) = &task.item {
        let v = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        ctx.push_str(&format!("\n**{name}:** {v}"));
    }
    parts.push(ctx);
    parts.join("\n\n---\n\n")
}

/// The whole request: system layers, the agent conversation so far, the
/// step's messages, and the feedback of a failed attempt.
pub fn assemble(
    system: String,
    history: &[ChatMessage],
    step_messages: Vec<ChatMessage>,
    feedback: Option<&str>,
) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(history.len() + step_messages.len() + 2);
    out.push(ChatMessage::new(ChatRole::System, system));
    out.extend(history.iter().cloned());
    out.extend(step_messages);
    if let Some(f) = feedback {
        out.push(ChatMessage::new(
            ChatRole::User,
            format!("Previous attempt failed: {f}\nFix this and reply again."),
        ));
    }
    out
}

/// The question of a `break` step, with the reply shape it needs.
pub fn break_question(question: &str) -> String {
    format!(
        "{question}\n\nReply with exactly this JSON and nothing else: {{\"answer\": \"yes\"}} or {{\"answer\": \"no\"}}."
    )
}

/// Parses a break reply: `{"answer": "yes"|"no"}` or an error saying what is wrong.
pub fn parse_break(text: &str) -> Result<YesNo, FlowError> {
    let value = extract_json(text).map_err(|e| {
        FlowError::reply(format!(
            "the break reply is not JSON ({e}); expected {{\"answer\": \"yes\"|\"no\"}}"
        ))
    })?;
    match value.get("answer").and_then(Value::as_str).map(str::trim) {
        Some(a) if a.eq_ignore_ascii_case("yes") => Ok(YesNo::Yes),
        Some(a) if a.eq_ignore_ascii_case("no") => Ok(YesNo::No),
        Some(a) => Err(FlowError::reply(format!(
            "the break reply's answer is {a:?}; expected \"yes\" or \"no\""
        ))),
        None => Err(FlowError::reply(format!(
            "the break reply {value} has no \"answer\" string; expected {{\"answer\": \"yes\"|\"no\"}}"
        ))),
    }
}

/// The structured output of an agent reply.
pub fn parse_output(text: &str) -> Value {
    let mut v = if let Some(v) = parse_sections(text) {
        v
    } else if let Ok(v @ Value::Object(_)) = extract_json(text) {
        v
    } else {
        return json!({ "text": text.trim() });
    };
    keep_suggested_tags(&mut v);
    v
}

/// Seed 003's `suggested_tags` (in the reply's JSON or its `## Metadata`)
/// kept at the top of the step's output, as `suggested_tags`, so later
/// steps and conditions read them as `steps.<id>.suggested_tags`. Only
/// strings are tags; anything else in the list is left out.
fn keep_suggested_tags(output: &mut Value) {
    let Some(obj) = output.as_object_mut() else {
        return;
    };
    let named = |m: &Map<String, Value>| {
        ["suggested_tags", "suggestedTags"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_array).cloned())
    };
    let meta = obj.get("metadata").and_then(Value::as_object);
    let Some(list) = named(obj).or_else(|| meta.and_then(named)) else {
        return;
    };
    let tags: Vec<Value> = list.into_iter().filter(Value::is_string).collect();
    obj.insert("suggested_tags".into(), Value::Array(tags));
}

/// The `## Heading` sections of a reply: (heading in lower case, trimmed body).
pub fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.trim().strip_prefix("## ") {
            out.push((h.trim().to_ascii_lowercase(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    for (_, body) in &mut out {
        *body = body.trim().to_owned();
    }
    out
}

/// What the workflow-step layer says about one agent step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepBrief {
    /// The step's `instructions`.
    pub instructions: Option<String>,
    /// What its postconditions require, in the author's words.
    pub expected: Vec<String>,
    /// The step ids the agent may suggest as the next stage.
    pub next_stages: Vec<String>,
    /// The confidence under which a person reviews the reply.
    pub confidence_threshold: Option<f64>,
    /// Whether the reply's status and next action act on the run.
    pub steers: bool,
}

/// Layer 3 (seed 003's workflow step): the step's purpose, what its reply
/// must satisfy, and how the agent may steer the run from it.
pub fn step_instructions(brief: &StepBrief) -> Option<String> {
    let mut out = Vec::new();
    if let Some(i) = brief
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        out.push(i.to_owned());
    }
    if !brief.expected.is_empty() {
        let lines: Vec<String> = brief.expected.iter().map(|e| format!("- {e}")).collect();
        out.push(format!("Your reply must satisfy:\n{}", lines.join("\n")));
    }
    if !brief.next_stages.is_empty() {
        out.push(format!(
            "You may choose the next stage with \"suggested_next_stage\" (in your JSON or its metadata): one of {}. Leave it null to go on as planned.",
            brief.next_stages.join(", ")
        ));
    }
    if let Some(t) = brief.confidence_threshold {
        out.push(format!(
            "Give your \"confidence\" (0 to 1); below {t} a person reviews your reply before the flow goes on."
        ));
    }
    if brief.steers {
        out.push(STEERING.to_owned());
    }
    (!out.is_empty()).then(|| out.join("\n\n"))
}

/// How any agent step may report trouble or ask for a person.
pub const STEERING: &str = "If you cannot do this step, set \"status\" to BLOCKED or FAILED and say why in \"summary\". \
If a person must decide or provide something first, set \"nextAction\" to ESCALATE or HOLD and say what in \"reason\".";

/// Seed 003's markdown sections as an object (`status`, `summary`, `output`,
/// `nextAction`, `metadata`), when at least `Status` or `Output` is present.
pub fn parse_sections(text: &str) -> Option<Value> {
    let mut map = Map::new();
    for (head, body) in sections(text) {
        let key = match head.as_str() {
            "status" => "status",
            "summary" => "summary",
            "output" => "output",
            "next action" => "nextAction",
            "metadata" => "metadata",
            _ => continue,
        };
        let value = match key {
            "status" | "nextAction" => Value::String(
                body.split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_matches(['[', ']', ':', '.', ',', '*'])
                    .to_ascii_uppercase(),
            ),
            "metadata" => extract_json(&body).unwrap_or(Value::String(body)),
            "output" => match extract_json(&body) {
                Ok(v @ (Value::Object(_) | Value::Array(_))) => v,
                _ => Value::String(body),
            },
            _ => Value::String(body),
        };
        map.insert(key.to_owned(), value);
    }
    (map.contains_key("status") || map.contains_key("output")).then_some(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_come_in_order() {
        let task = TaskContext {
            flow: "f".into(),
            step: "Draft".into(),
            iterations: vec![2, 1],
            item: Some(("file".into(), json!({"path": "Aaaa.csv"}))),
        };
        let s = system_message(Some("You are terse."), Some("Summarise."), &task);
        let a = s
            .find("reply with one JSON")
            .or_else(|| s.find("Reply with one JSON"))
            .expect("base");
        let b = s.find("## Agent Context\nYou are terse.").expect("persona");
        let c = s.find("## Workflow Step: Draft\nSummarise.").expect("step");
        let d = s.find("## Task Context").expect("context");
        assert!(a < b && b < c && c < d);
        assert!(s.contains("**Loop iteration:** 2 / 1"));
        assert!(s.contains("**file:** {\"path\":\"Aaaa.csv\"}"));
        let none = system_message(None, None, &TaskContext::default());
        assert!(!none.contains("Agent Context") && !none.contains("Workflow Step"));
        let msgs = assemble(
            s,
            &[ChatMessage::new(ChatRole::Assistant, "earlier")],
            vec![ChatMessage::new(ChatRole::User, "now")],
            Some("score missing"),
        );
        assert_eq!(msgs.len(), 4);
        assert!(
            msgs[3]
                .content
                .contains("Previous attempt failed: score missing")
        );
    }

    #[test]
    fn the_workflow_step_layer_comes_from_the_step() {
        let brief = StepBrief {
            instructions: Some(" Summarise for the buyer. ".into()),
            expected: vec!["a summary is required".into()],
            next_stages: vec!["review".into(), "ship".into()],
            confidence_threshold: Some(0.7),
            steers: true,
        };
        let layer = step_instructions(&brief).expect("layer");
        assert!(layer.starts_with(
            "Summarise for the buyer.\n\nYour reply must satisfy:\n- a summary is required"
        ));
        assert!(layer.contains("one of review, ship"));
        assert!(layer.contains("below 0.7 a person reviews"));
        assert!(layer.ends_with(STEERING));
        let item = StepBrief {
            steers: false,
            ..StepBrief::default()
        };
        assert_eq!(step_instructions(&item), None);
        let only = step_instructions(&StepBrief {
            instructions: Some("Do it.".into()),
            ..StepBrief::default()
        });
        assert_eq!(only.as_deref(), Some("Do it."));
    }

    #[test]
    fn replies_parse_as_json_then_sections_then_text() {
        assert_eq!(
            parse_output("```json\n{\"score\": 85}\n```"),
            json!({"score": 85})
        );
        let md = "## Status\n**SUCCESS**\n\n## Summary\nDone.\n\n## Output\nAll good\n\n## Next Action\n[COMPLETE]: nothing left\n\n## Metadata\n```json\n{\"confidence\": 0.9}\n```\n";
        assert_eq!(
            parse_output(md),
            json!({"status": "SUCCESS", "summary": "Done.", "output": "All good", "nextAction": "COMPLETE", "metadata": {"confidence": 0.9}})
        );
        assert_eq!(parse_output("just words"), json!({"text": "just words"}));
    }

    #[test]
    fn break_replies_must_be_yes_or_no() {
        assert_eq!(parse_break(r#"{"answer":"yes"}"#), Ok(YesNo::Yes));
        assert_eq!(parse_break(r#"{"answer":" No "}"#), Ok(YesNo::No));
        assert!(
            parse_break("yes")
                .expect_err("not json")
                .message
                .contains("not JSON")
        );
        assert!(
            parse_break(r#"{"answer":"maybe"}"#)
                .expect_err("maybe")
                .message
                .contains("\"maybe\"")
        );
        assert!(
            parse_break(r#"{"result":"yes"}"#)
                .expect_err("shape")
                .message
                .contains("no \"answer\"")
        );
    }
}
