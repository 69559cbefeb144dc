//! Agents that steer (seed 003): what an agent's reply does to its run.
//! Its `status` (SUCCESS, PARTIAL, BLOCKED, FAILED) and `nextAction`
//! (COMPLETE, CONTINUE, ESCALATE, HOLD) map to an [`Action`] through one
//! table, [`TABLE`]; its `confidence` under the step's threshold asks a
//! person; its `suggested_next_stage` is followed when the step lists it in
//! `nextStages`. Replies come as JSON (asked for) or as seed 003's markdown
//! sections; a malformed steering field is a [`FlowError`] that names it.
//! Pure functions only.

use serde_json::{Map, Value};

use super::error::FlowError;
use super::prompt;

/// One word an agent may steer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Status: the work is done.
    Success,
    /// Status: some of it is done.
    Partial,
    /// Status: the agent cannot go on.
    Blocked,
    /// Status: the work failed.
    Failed,
    /// Next action: nothing more to do.
    Complete,
    /// Next action: the flow goes on.
    Continue,
    /// Next action: a person must decide.
    Escalate,
    /// Next action: the agent waits for something a person provides.
    Hold,
}

/// Why a reply waits for a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// The agent escalated.
    Escalate,
    /// The agent holds for something.
    Hold,
    /// The agent's confidence is under the step's threshold.
    LowConfidence,
}

impl Ask {
    /// As shown to the person.
    pub fn as_str(self) -> &'static str {
        match self {
            Ask::Escalate => "ESCALATE",
            Ask::Hold => "HOLD",
            Ask::LowConfidence => "low confidence",
        }
    }
}

/// What a signal does to the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The step completes and the run goes on.
    Proceed,
    /// The step fails through its contract: retried with feedback, then needs attention.
    FailStep,
    /// The run waits for a person, who continues it, answers the agent or stops it.
    AskPerson(Ask),
}

/// Signal → action, the whole mapping.
pub const TABLE: &[(Signal, &str, Action)] = &[
    (Signal::Success, "SUCCESS", Action::Proceed),
    (Signal::Partial, "PARTIAL", Action::Proceed),
    (Signal::Blocked, "BLOCKED", Action::FailStep),
    (Signal::Failed, "FAILED", Action::FailStep),
    (Signal::Complete, "COMPLETE", Action::Proceed),
    (Signal::Continue, "CONTINUE", Action::Proceed),
    (
        Signal::Escalate,
        "ESCALATE",
        Action::AskPerson(Ask::Escalate),
    ),
    (Signal::Hold, "HOLD", Action::AskPerson(Ask::Hold)),
];

/// The signals a `status` may carry.
const STATUSES: [Signal; 4] = [
    Signal::Success,
    Signal::Partial,
    Signal::Blocked,
    Signal::Failed,
];
/// The signals a `nextAction` may carry.
const NEXT_ACTIONS: [Signal; 4] = [
    Signal::Complete,
    Signal::Continue,
    Signal::Escalate,
    Signal::Hold,
];

/// The action of `signal`, looked up in [`TABLE`].
pub fn action(signal: Signal) -> Action {
    TABLE
        .iter()
        .find(|(s, _, _)| *s == signal)
        .map_or(Action::Proceed, |(_, _, a)| *a)
}

/// The word as the agent writes it.
pub fn word(signal: Signal) -> &'static str {
    TABLE
        .iter()
        .find(|(s, _, _)| *s == signal)
        .map_or("", |(_, w, _)| w)
}

fn signal_of(word: &str, among: &[Signal]) -> Option<Signal> {
    let w = word
        .trim()
        .trim_matches(['[', ']', ':', '.', ',', '*'])
        .trim();
    TABLE
        .iter()
        .find(|(s, name, _)| among.contains(s) && name.eq_ignore_ascii_case(w))
        .map(|(s, _, _)| *s)
}

/// What a reply says about the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steering {
    /// `status`.
    pub status: Option<Signal>,
    /// `nextAction`.
    pub next_action: Option<Signal>,
    /// Why the agent fails or asks (its next action's note, else its summary).
    pub reason: Option<String>,
    /// `confidence`, 0 to 1.
    pub confidence: Option<f64>,
    /// `suggested_next_stage`.
    pub suggested_next_stage: Option<String>,
}

/// A parsed reply: the step's output and its steering.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// What the step outputs (as [`prompt::parse_output`] reads it).
    pub output: Value,
    /// What the reply asks of the run.
    pub steering: Steering,
}

/// Reads a reply. In seed 003's sections every steering field must be well
/// formed; in a JSON reply `status` and `nextAction` steer only when they
/// hold one of the seed's words (otherwise they are the step's own data).
pub fn read_reply(text: &str) -> Result<Reply, FlowError> {
    let output = prompt::parse_output(text);
    let sections = prompt::parse_sections(text).is_some();
    let steering = if sections {
        steering_of_sections(text, &output)?
    } else {
        steering_of(&output, false)?
    };
    Ok(Reply { output, steering })
}

fn malformed(what: &str, problem: String) -> FlowError {
    FlowError::reply(format!("the agent's {what} {problem}"))
}

fn words(among: &[Signal]) -> String {
    let w: Vec<&str> = among.iter().map(|s| word(*s)).collect();
    w.join(", ")
}

fn steering_of_sections(text: &str, output: &Value) -> Result<Steering, FlowError> {
    let mut note = None;
    for (head, body) in &prompt::sections(text) {
        let (what, among) = match head.as_str() {
            "status" => ("## Status", &STATUSES),
            "next action" => ("## Next Action", &NEXT_ACTIONS),
            _ => continue,
        };
        let first = body.split_whitespace().next().unwrap_or("");
        if first.is_empty() {
            return Err(malformed(
                what,
                format!("is empty; expected one of {}", words(among)),
            ));
        }
        if head == "next action" {
            // The rest of the section is the agent's note ("ESCALATE: legal must sign").
            let rest = body[body.find(first).unwrap_or(0) + first.len()..]
                .trim_start_matches([':', '-', ' ', '\n', '\t'])
                .trim();
            note = Some(rest.to_owned()).filter(|n| !n.is_empty());
        }
    }
    if let Some(m) = output.get("metadata")
        && !m.is_object()
    {
        return Err(malformed(
            "## Metadata",
            "is not a JSON object; expected e.g. {\"confidence\": 0.8, \"suggested_next_stage\": null}".into(),
        ));
    }
    let mut steering = steering_of(output, true)?;
    if note.is_some() {
        steering.reason = note;
    }
    Ok(steering)
}

/// The steering of a parsed output. `strict`: unknown status words are errors.
pub fn steering_of(output: &Value, strict: bool) -> Result<Steering, FlowError> {
    let Some(obj) = output.as_object() else {
        return Ok(Steering::default());
    };
    let empty = Map::new();
    let meta = obj
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let field = |names: &[&str]| -> Option<&Value> {
        names
            .iter()
            .find_map(|n| obj.get(*n).or_else(|| meta.get(*n)))
            .filter(|v| !v.is_null())
    };
    let (sname, nname) = if strict {
        ("## Status", "## Next Action")
    } else {
        ("status", "nextAction")
    };
    let mut s = Steering {
        status: word_field(field(&["status"]), sname, &STATUSES, strict)?,
        next_action: word_field(
            field(&["nextAction", "next_action"]),
            nname,
            &NEXT_ACTIONS,
            strict,
        )?,
        ..Steering::default()
    };
    if let Some(v) = field(&["confidence"]) {
        let c = v.as_f64().filter(|c| (0.0..=1.0).contains(c));
        s.confidence = Some(c.ok_or_else(|| {
            malformed(
                "confidence",
                format!("is {v}; expected a number from 0 to 1"),
            )
        })?);
    }
    if let Some(v) = field(&["suggested_next_stage", "suggestedNextStage"]) {
        let stage = v.as_str().map(str::trim).ok_or_else(|| {
            malformed(
                "suggested_next_stage",
                format!("is {v}; expected a step id or null"),
            )
        })?;
        s.suggested_next_stage = (!stage.is_empty()).then(|| stage.to_owned());
    }
    s.reason = ["reason", "summary"]
        .iter()
        .find_map(|n| obj.get(*n).and_then(Value::as_str))
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned);
    Ok(s)
}

fn word_field(
    v: Option<&Value>,
    what: &str,
    among: &[Signal],
    strict: bool,
) -> Result<Option<Signal>, FlowError> {
    let Some(v) = v else { return Ok(None) };
    let found = v.as_str().and_then(|w| signal_of(w, among));
    if found.is_none() && strict {
        return Err(malformed(
            what,
            format!("is {v}; expected one of {}", words(among)),
        ));
    }
    Ok(found)
}

/// Most times one step may send its run to the same suggested stage: these
/// edges carry no `maxIterations`, so an agent must not loop a run forever.
pub const MAX_STAGE_FOLLOWS: u32 = 10;

/// What a step allows its agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// Step ids `suggested_next_stage` may name.
    pub next_stages: Vec<String>,
    /// Under this confidence a person reviews the reply.
    pub confidence_threshold: Option<f64>,
}

/// What the run does with a reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Go on, to `stage` when the agent chose an allowed one; `note` says why a suggestion was ignored.
    Proceed {
        /// The allowed suggested stage.
        stage: Option<String>,
        /// Why a suggestion was not followed.
        note: Option<String>,
    },
    /// The step failed, for this reason.
    Fail(String),
    /// A person is asked.
    Ask(Ask, String),
}

/// Decides what a reply does: a request for a person first, then a
/// failure, then low confidence, else the run goes on.
pub fn decide(s: &Steering, policy: &Policy) -> Decision {
    let signals = [s.status, s.next_action];
    let actions: Vec<(Signal, Action)> =
        signals.iter().flatten().map(|g| (*g, action(*g))).collect();
    let reason = |fallback: &str| s.reason.clone().unwrap_or_else(|| fallback.to_owned());
    if let Some((_, Action::AskPerson(a))) = actions
        .iter()
        .find(|(_, a)| matches!(a, Action::AskPerson(_)))
    {
        return Decision::Ask(*a, reason("the agent gave no reason"));
    }
    if let Some((g, _)) = actions.iter().find(|(_, a)| *a == Action::FailStep) {
        return Decision::Fail(format!(
            "the agent replied {}: {}",
            word(*g),
            reason("it gave no reason")
        ));
    }
    if let (Some(c), Some(t)) = (s.confidence, policy.confidence_threshold)
        && c < t
    {
        return Decision::Ask(
            Ask::LowConfidence,
            format!("the agent's confidence {c} is below the step's threshold {t}"),
        );
    }
    let (stage, note) = route(s, policy);
    Decision::Proceed { stage, note }
}

/// The suggested stage when the step allows it, else a note saying why it is ignored.
pub fn route(s: &Steering, policy: &Policy) -> (Option<String>, Option<String>) {
    let Some(stage) = &s.suggested_next_stage else {
        return (None, None);
    };
    if policy.next_stages.iter().any(|n| n == stage) {
        return (Some(stage.clone()), None);
    }
    let allowed = if policy.next_stages.is_empty() {
        "the step allows none".to_owned()
    } else {
        format!("the step allows {}", policy.next_stages.join(", "))
    };
    (
        None,
        Some(format!(
            "The agent suggested the next stage {stage:?}; ignored: {allowed}."
        )),
    )
}

#[cfg(test)]
#[path = "steer_tests.rs"]
mod tests;
