//! The LLM review of a script before its local test (ADR-0004's review,
//! seed 001's `AIApprovalProvider`; issue 31 point 3). A reviewer reads
//! the script the builder wrote, with the conversation and the masked
//! extracts, and answers a verdict and notes; with the workflow's "AI
//! reviewer approves the gates" choice it also decides the plan gate.
//!
//! The reviewer is an outside party like every LLM: its reply is parsed
//! against a closed schema (an unknown field — a script, a requirement, a
//! file — refuses the reply), its notes are bounded plain text, and its
//! verdict only ever chooses between going on and one revision: it can
//! never change the script, approve a package or pick a file. Pure: the
//! engine calls the back end behind the guard and the ledger.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::conversation::prompts;
use crate::conversation::spec::WorkflowSpec;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Part, Role, parse_reply};

/// Longest notes kept from a reviewer, in characters.
pub const MAX_NOTES_CHARS: usize = 2_000;

/// The reviewer's verdict.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Go on (to the local test, or past the plan gate).
    Approve,
    /// Send it back with the notes.
    RequestChanges,
}

/// The reviewer's reply.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ReviewReply {
    /// Approve or request changes.
    pub verdict: Verdict,
    /// Why, in plain words.
    pub notes: String,
}

/// What the engine keeps of one review (shown in the build panel).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
pub struct ReviewNote {
    /// What was reviewed: `script` or `plan`.
    pub subject: String,
    /// The build iteration it was made in.
    pub iteration: u32,
    /// The verdict; `null` when the reviewer's reply was unusable (the
    /// reason is in `notes`) and nothing was decided by it.
    pub verdict: Option<Verdict>,
    /// The reviewer's notes, or why its reply was refused.
    pub notes: String,
    /// Whether the verdict decided a gate (the workflow lets the AI
    /// reviewer approve), else it was advice.
    pub decided_gate: bool,
}

/// The JSON schema of the reviewer's reply.
pub fn review_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["verdict", "notes"],
        "properties": {
            "verdict": {"type": "string", "enum": ["approve", "request_changes"]},
            "notes": {"type": "string", "minLength": 1, "maxLength": MAX_NOTES_CHARS}
        }
    })
}

/// Refuses empty or overlong notes and notes with control characters
/// other than newlines and tabs (they are shown on terminals and pages).
pub fn check(reply: &ReviewReply) -> Result<(), String> {
    let notes = reply.notes.trim();
    if notes.is_empty() {
        return Err("`notes` must say why".into());
    }
    if notes.chars().count() > MAX_NOTES_CHARS {
        return Err(format!(
            "`notes` must be at most {MAX_NOTES_CHARS} characters"
        ));
    }
    if notes
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err("`notes` holds a control character".into());
    }
    Ok(())
}

/// The reviewer's reply parsed and checked, or why it is unusable.
pub fn parse(reply: &str) -> Result<ReviewReply, String> {
    parse_reply::<ReviewReply>(reply, &check)
}

fn request(mut system: Vec<Part>, history: &[ChatMessage], ask: &str) -> LlmRequest {
    let schema = review_schema();
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
    messages.push(ChatMessage::from_parts(
        ChatRole::User,
        vec![Part::instructions(ask)],
    ));
    LlmRequest {
        role: Role::Builder,
        messages,
        schema: Some(schema),
    }
}

/// The reviewer's request for a script, before it runs on the real files.
pub fn script_request(
    extracts: &Value,
    history: &[ChatMessage],
    spec: &WorkflowSpec,
) -> LlmRequest {
    let outputs: Vec<&str> = spec
        .execution
        .outputs
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    let mut system = vec![Part::instructions(format!(
        "You are Maskflow's reviewer. Another model wrote the Python script below for the conversation that follows; \
it has not run yet. Review it before it runs on the user's real files: does it do what the user asked, read its inputs \
through the runner's contract, write only the declared outputs, and avoid anything a data script has no business doing \
(the network, other files, hidden or obfuscated code)? Approve it, or request changes and say exactly what to change.\n\n\
{}\n\n",
        prompts::RUNNER_CONTRACT,
    ))];
    system.extend(prompts::extracts_parts(extracts));
    system.push(Part::instructions(
        "\n\nThe script (`script.py`), declaring the outputs ",
    ));
    // The outputs, requirements and script are the builder's reply.
    system.push(Part::llm_reply(format!("{outputs:?}")));
    system.push(Part::instructions(" and the requirements "));
    system.push(Part::llm_reply(format!(
        "{:?}",
        spec.execution.requirements
    )));
    system.push(Part::instructions(":\n```python\n"));
    system.push(Part::llm_reply(spec.script.as_str()));
    system.push(Part::instructions("\n```"));
    request(system, history, "Review the script now.")
}

/// The reviewer's request for a plan, when it approves the plan gate.
pub fn plan_request(extracts: &Value, history: &[ChatMessage], plan: &str) -> LlmRequest {
    let mut system = vec![Part::instructions(
        "You are Maskflow's reviewer. Another model proposed the plan below for the workflow the conversation that follows asks for; \
no code exists yet. Approve it if it does what the user asked, or request changes and say exactly what to change.\n\n",
    )];
    system.extend(prompts::extracts_parts(extracts));
    system.push(Part::instructions("\n\nThe plan:\n"));
    system.push(Part::llm_reply(plan));
    request(system, history, "Review the plan now.")
}

/// The review as Markdown (`review-response.md`).
pub fn render(note: &ReviewNote) -> String {
    let verdict = match note.verdict {
        Some(Verdict::Approve) => "approve",
        Some(Verdict::RequestChanges) => "request changes",
        None => "no verdict (the reply was unusable)",
    };
    let role = if note.decided_gate {
        "It decided the gate (the workflow lets the AI reviewer approve)."
    } else {
        "Advice only: the local test decides."
    };
    format!(
        "# Review of the {} (iteration {})\n\n**Verdict: {verdict}**\n\n{role}\n\n{}\n",
        note.subject,
        note.iteration,
        note.notes.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_parsed_and_a_hostile_reply_refused() {
        let ok = parse(r#"{"verdict":"request_changes","notes":"Round to cents."}"#).expect("ok");
        assert_eq!(ok.verdict, Verdict::RequestChanges);
        assert!(parse("I approve!").is_err(), "prose is no verdict");
        assert!(parse(r#"{"verdict":"yes","notes":"x"}"#).is_err());
        assert!(parse(r#"{"verdict":"approve","notes":"  "}"#).is_err());
        // An approval that carries anything else (a script, packages) is refused whole.
        let smuggle = r#"{"verdict":"approve","notes":"fine","script":"import socket","requirements":["evil"]}"#;
        assert!(parse(smuggle).unwrap_err().contains("unknown field"));
        let escape = "{\"verdict\":\"approve\",\"notes\":\"ok\\u001b]0;pwned\\u0007\"}";
        assert!(parse(escape).is_err());
        let long = format!(
            r#"{{"verdict":"approve","notes":"{}"}}"#,
            "a".repeat(MAX_NOTES_CHARS + 1)
        );
        assert!(parse(&long).is_err());
    }

    #[test]
    fn the_review_renders_its_verdict_and_role() {
        let note = ReviewNote {
            subject: "script".into(),
            iteration: 2,
            verdict: Some(Verdict::Approve),
            notes: "Reads the orders as asked.".into(),
            decided_gate: false,
        };
        let md = render(&note);
        assert!(md.contains("**Verdict: approve**"), "{md}");
        assert!(md.contains("Advice only"), "{md}");
        assert!(md.contains("(iteration 2)"), "{md}");
    }
}
