//! Flow definitions as stored in `flows/<name>.json`: the strict schema of
//! both shapes (seed 004's nested list, `steps`; seed 003's graph, `nodes`),
//! parsing with errors that carry a JSON path, and the semantic checks a
//! schema cannot express (targets exist, `break` sits in a loop, back edges
//! are guarded, conditions parse).
//!
//! These types are plain data (serialisable both ways) so that other
//! front ends — the Mermaid import/export of the next issue, a UI — can build
//! and print them. Running them is [`super::compile`]'s and the engine's job.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::expr;
use crate::providers::ChatRole;

/// Most items a `foreach` may fan out to (when it sets no `maxItems`).
pub const DEFAULT_MAX_ITEMS: u32 = 1000;
/// Most items of a `foreach` that may run at once.
pub const MAX_CONCURRENCY: u32 = 16;

/// A definition error: where (a JSON path such as `steps[0].steps[1].agentType`) and what.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{path}: {message}")]
pub struct DefinitionError {
    /// The JSON path of the offending value (`$` for the whole document).
    pub path: String,
    /// What is wrong, for people.
    pub message: String,
}

impl DefinitionError {
    fn at(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: if path.is_empty() {
                "$".into()
            } else {
                path.to_owned()
            },
            message: message.into(),
        }
    }
}

/// A trimmed, non-empty string.
#[derive(Serialize, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(transparent)]
pub struct Text(String);

impl Text {
    /// `s` trimmed, or `None` when nothing is left.
    pub fn new(s: &str) -> Option<Text> {
        let t = s.trim();
        (!t.is_empty()).then(|| Text(t.to_owned()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Text::new(&s).ok_or_else(|| de::Error::custom("must not be empty (after trimming spaces)"))
    }
}

/// A flow document: exactly one of `steps` (list form) or `nodes` (graph form).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FlowDef {
    /// What the flow does (shown in lists; empty when missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// List form: steps run in order; loops nest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Graph form: steps with ids joined by `next`, decision branches and gate options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<Step>>,
    /// Graph form: the first node's id (default: the first node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Text>,
    /// Default values of `input.*` (a subflow's input mapping overrides them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Map<String, Value>>,
}

/// A pre- or postcondition.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Condition {
    /// A short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Text>,
    /// The expression (see [`super::expr`]) that must be true.
    pub check: Text,
    /// The message when it is false.
    pub error: Text,
}

/// One message of an `llm` step or an agent command.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageDef {
    /// `user`, `system` or `assistant`.
    pub role: ChatRole,
    /// Lines, joined with newlines; `{{path}}` templates allowed.
    pub content: Vec<Text>,
}

/// `yes` or `no`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum YesNo {
    /// yes
    Yes,
    /// no
    No,
}

impl YesNo {
    /// `"yes"` or `"no"`.
    pub fn as_str(self) -> &'static str {
        match self {
            YesNo::Yes => "yes",
            YesNo::No => "no",
        }
    }
}

/// What a `join` does when some items of the `foreach` before it failed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum JoinPolicy {
    /// The run fails.
    #[default]
    Fail,
    /// Carry on with the items that succeeded.
    Skip,
    /// Pause as `needs_attention`: retry the failed items, skip them, or stop.
    NeedsAttention,
}

macro_rules! step_struct {
    ($(#[$m:meta])* $name:ident { $($(#[$fm:meta])* $f:ident : $t:ty,)* }) => {
        $(#[$m])*
        #[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $name {
            /// The step's id: required in the graph form, optional in the list form
            /// (a step with an id keeps its output at `steps.<id>`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub id: Option<Text>,
            /// Shown in the transcript; defaults to the step type.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub label: Option<Text>,
            /// Graph form only: the node that follows (absent: the flow ends).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub next: Option<Text>,
            /// Must hold before the step runs; a failure stops the run with its message.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub preconditions: Vec<Condition>,
            /// Must hold after it ran; a failure retries once with feedback, then asks the user.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub postconditions: Vec<Condition>,
            $($(#[$fm])* pub $f: $t,)*
        }
    };
}

step_struct!(
    /// Asks an agent with the given messages.
    LlmStep {
        /// The agent (`agents/<agentType>.json`).
        agent_type: Text,
        /// Which of the agent's conversations (`agentType:identifier`).
        identifier: Text,
        /// The prompt.
        messages: Vec<MessageDef>,
    }
);

step_struct!(
    /// Runs an agent command (`agents/<agentType>/commands/<commandName>.json`).
    CommandStep {
        /// The agent.
        agent_type: Text,
        /// Which conversation.
        identifier: Text,
        /// The command's file stem.
        command_name: Text,
    }
);

step_struct!(
    /// Repeats its steps until a `break` inside exits it.
    LoopStep {
        /// The loop body (not empty).
        steps: Vec<Step>,
        /// Safety limit: starting iteration `maxIterations + 1` fails the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_iterations: Option<u32>,
    }
);

step_struct!(
    /// Asks an agent a yes/no question; the answer `breakOn` exits the closest loop.
    BreakStep {
        /// The agent.
        agent_type: Text,
        /// Which conversation.
        identifier: Text,
        /// The question.
        question: Text,
        /// The answer that exits the loop.
        break_on: YesNo,
    }
);

/// A branch of a decision.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Branch {
    /// The condition over the run context (e.g. `output.score >= 80`).
    pub condition: Text,
    /// List form: the steps run when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Graph form: the node to go to when it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Text>,
    /// Graph form: most times this branch may be taken in one run (required on back edges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
}

/// The branch taken when no condition holds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DefaultBranch {
    /// List form: the steps to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Graph form: the node to go to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<Text>,
}

step_struct!(
    /// Routes on the run context; no LLM is asked.
    DecisionStep {
        /// Tried in order; the first that holds is taken.
        branches: Vec<Branch>,
        /// Taken when none holds; without it the run fails.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<DefaultBranch>,
    }
);

step_struct!(
    /// Runs `step` once per item of an array in the context, a few at a time.
    ForeachStep {
        /// The array, e.g. `output.files`.
        items_path: Text,
        /// The name the item has in templates, e.g. `file` for `{{file.path}}`.
        item_variable: Text,
        /// How many items run at once (1 to 16; default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        concurrency: Option<u32>,
        /// More items than this fail the step (default 1000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u32>,
        /// The step run per item: `llm`, `command`, `script` or `subflow`.
        step: Box<Step>,
    }
);

step_struct!(
    /// Gathers the results of the `foreach` before it.
    JoinStep {
        /// What to do when some items failed (default `fail`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_failure: Option<JoinPolicy>,
    }
);

step_struct!(
    /// Runs another flow as one step.
    SubflowStep {
        /// The other flow's name (`flows/<flow>.json`).
        flow: Text,
        /// `input.<key>` of the child: a `{{path}}` template or a path such as `output.file`.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        input: BTreeMap<String, Text>,
    }
);

/// One choice offered by a gate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GateOption {
    /// What the person picks.
    pub label: Text,
    /// Absent: carry on; `null`: end the run; an id: go to that step.
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub next: Option<Option<Text>>,
    /// The person must type something with this choice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_input: bool,
}

fn double_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Text>>, D::Error> {
    Option::<Text>::deserialize(d).map(Some)
}

step_struct!(
    /// Waits for a person to choose (seed 002's human gate).
    GateStep {
        /// The question.
        prompt: Text,
        /// Context paths shown with it (e.g. `output.summary`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        context: Vec<Text>,
        /// The choices.
        options: Vec<GateOption>,
    }
);

step_struct!(
    /// Runs an approved workflow or a Python file, locally.
    ScriptStep {
        /// An approved workflow's id (`wf_…`): its active version's script.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        workflow: Option<Text>,
        /// A Python file (relative paths are under the working folder).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<Text>,
        /// Arguments; `{{path}}` templates allowed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<Text>,
        /// Time limit in seconds (default 300).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_seconds: Option<u32>,
    }
);

/// One step of a flow.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Step {
    /// Ask an agent.
    Llm(LlmStep),
    /// Run an agent command.
    Command(CommandStep),
    /// A loop (list form).
    StartLoop(LoopStep),
    /// Exit the closest loop on an agent's yes/no (list form).
    Break(BreakStep),
    /// Route on a condition.
    Decision(DecisionStep),
    /// Fan out over items.
    Foreach(ForeachStep),
    /// Gather the fan-out.
    Join(JoinStep),
    /// Another flow.
    Subflow(SubflowStep),
    /// A human choice.
    Gate(GateStep),
    /// A local script.
    Script(ScriptStep),
}

/// The step types, as written in `type`.
pub const STEP_TYPES: &[&str] = &[
    "llm",
    "command",
    "startLoop",
    "break",
    "decision",
    "foreach",
    "join",
    "subflow",
    "gate",
    "script",
];

/// The fields every step shares.
#[derive(Debug, Clone, Copy)]
pub struct Common<'a> {
    /// `id`
    pub id: Option<&'a Text>,
    /// `label`
    pub label: Option<&'a Text>,
    /// `next`
    pub next: Option<&'a Text>,
    /// `preconditions`
    pub preconditions: &'a [Condition],
    /// `postconditions`
    pub postconditions: &'a [Condition],
}

macro_rules! each_step {
    ($s:expr, $x:ident => $body:expr) => {
        match $s {
            Step::Llm($x) => $body,
            Step::Command($x) => $body,
            Step::StartLoop($x) => $body,
            Step::Break($x) => $body,
            Step::Decision($x) => $body,
            Step::Foreach($x) => $body,
            Step::Join($x) => $body,
            Step::Subflow($x) => $body,
            Step::Gate($x) => $body,
            Step::Script($x) => $body,
        }
    };
}

impl Step {
    /// The `type` as written.
    pub fn type_name(&self) -> &'static str {
        match self {
            Step::Llm(_) => "llm",
            Step::Command(_) => "command",
            Step::StartLoop(_) => "startLoop",
            Step::Break(_) => "break",
            Step::Decision(_) => "decision",
            Step::Foreach(_) => "foreach",
            Step::Join(_) => "join",
            Step::Subflow(_) => "subflow",
            Step::Gate(_) => "gate",
            Step::Script(_) => "script",
        }
    }

    /// The shared fields.
    pub fn common(&self) -> Common<'_> {
        each_step!(self, s => Common {
            id: s.id.as_ref(),
            label: s.label.as_ref(),
            next: s.next.as_ref(),
            preconditions: &s.preconditions,
            postconditions: &s.postconditions,
        })
    }

    /// The label, or the type when there is none.
    pub fn display_label(&self) -> String {
        self.common()
            .label
            .map_or_else(|| self.type_name().to_owned(), |l| l.to_string())
    }

    /// The agent and identifier of an agent step.
    pub fn agent(&self) -> Option<(&Text, &Text)> {
        match self {
            Step::Llm(s) => Some((&s.agent_type, &s.identifier)),
            Step::Command(s) => Some((&s.agent_type, &s.identifier)),
            Step::Break(s) => Some((&s.agent_type, &s.identifier)),
            _ => None,
        }
    }
}

const MARK: char = '\u{1}';

fn marked(path: &str, message: &str) -> String {
    format!("{MARK}{path}{MARK}{message}")
}

fn join_path(outer: &str, rel: &str) -> String {
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
fn unmark(message: &str) -> (String, String) {
    if let Some(rest) = message.strip_prefix(MARK)
        && let Some((path, msg)) = rest.split_once(MARK)
    {
        return (path.to_owned(), msg.to_owned());
    }
    (String::new(), message.to_owned())
}

fn nested<T: DeserializeOwned, E: de::Error>(value: Value) -> Result<T, E> {
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
    let def: FlowDef = serde_path_to_error::deserialize(&mut de).map_err(|e| {
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
    validate(&def)?;
    Ok(def)
}

/// Parses a value the same way as [`parse`] (for definitions built in code).
pub fn from_value(value: &Value) -> Result<FlowDef, DefinitionError> {
    parse(&value.to_string())
}

fn check_conditions(step: &Step, path: &str) -> Result<(), DefinitionError> {
    let c = step.common();
    for (kind, list) in [
        ("preconditions", c.preconditions),
        ("postconditions", c.postconditions),
    ] {
        for (i, cond) in list.iter().enumerate() {
            expr::parse(cond.check.as_str()).map_err(|e| {
                DefinitionError::at(&format!("{path}.{kind}[{i}].check"), e.to_string())
            })?;
        }
    }
    Ok(())
}

fn check_step_fields(step: &Step, path: &str) -> Result<(), DefinitionError> {
    check_conditions(step, path)?;
    match step {
        Step::Llm(s) => {
            if s.messages.is_empty() {
                return Err(DefinitionError::at(
                    &format!("{path}.messages"),
                    "must list at least one message",
                ));
            }
            for (i, m) in s.messages.iter().enumerate() {
                if m.content.is_empty() {
                    return Err(DefinitionError::at(
                        &format!("{path}.messages[{i}].content"),
                        "must list at least one line",
                    ));
                }
            }
        }
        Step::StartLoop(s) => {
            if s.max_iterations == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.maxIterations"),
                    "must be at least 1",
                ));
            }
        }
        Step::Decision(s) => {
            if s.branches.is_empty() {
                return Err(DefinitionError::at(
                    &format!("{path}.branches"),
                    "must list at least one branch",
                ));
            }
            for (i, b) in s.branches.iter().enumerate() {
                expr::parse(b.condition.as_str()).map_err(|e| {
                    DefinitionError::at(&format!("{path}.branches[{i}].condition"), e.to_string())
                })?;
                if b.max_iterations == Some(0) {
                    return Err(DefinitionError::at(
                        &format!("{path}.branches[{i}].maxIterations"),
                        "must be at least 1",
                    ));
                }
            }
        }
        Step::Foreach(s) => {
            expr::parse_path(s.items_path.as_str())
                .map_err(|e| DefinitionError::at(&format!("{path}.itemsPath"), e.to_string()))?;
            if !s
                .item_variable
                .as_str()
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_')
            {
                return Err(DefinitionError::at(
                    &format!("{path}.itemVariable"),
                    "must be a plain name (letters, digits, _)",
                ));
            }
            if let Some(c) = s.concurrency
                && !(1..=MAX_CONCURRENCY).contains(&c)
            {
                return Err(DefinitionError::at(
                    &format!("{path}.concurrency"),
                    format!("must be between 1 and {MAX_CONCURRENCY}"),
                ));
            }
            if s.max_items == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.maxItems"),
                    "must be at least 1",
                ));
            }
            if !matches!(
                *s.step,
                Step::Llm(_) | Step::Command(_) | Step::Script(_) | Step::Subflow(_)
            ) {
                return Err(DefinitionError::at(
                    &format!("{path}.step.type"),
                    "a foreach runs an llm, command, script or subflow step per item",
                ));
            }
            if s.step.common().next.is_some() || s.step.common().id.is_some() {
                return Err(DefinitionError::at(
                    &format!("{path}.step"),
                    "the per-item step takes no id or next",
                ));
            }
            check_step_fields(&s.step, &format!("{path}.step"))?;
        }
        Step::Gate(s) => {
            if s.options.is_empty() {
                return Err(DefinitionError::at(
                    &format!("{path}.options"),
                    "must list at least one option",
                ));
            }
            let mut seen = HashSet::new();
            for (i, o) in s.options.iter().enumerate() {
                if !seen.insert(o.label.as_str()) {
                    return Err(DefinitionError::at(
                        &format!("{path}.options[{i}].label"),
                        format!("{:?} is listed twice", o.label.as_str()),
                    ));
                }
            }
            for (i, c) in s.context.iter().enumerate() {
                expr::parse_path(c.as_str()).map_err(|e| {
                    DefinitionError::at(&format!("{path}.context[{i}]"), e.to_string())
                })?;
            }
        }
        Step::Script(s) => {
            if s.workflow.is_some() == s.path.is_some() {
                return Err(DefinitionError::at(
                    path,
                    "a script step needs exactly one of workflow or path",
                ));
            }
            if s.timeout_seconds == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.timeoutSeconds"),
                    "must be at least 1",
                ));
            }
        }
        Step::Command(_) | Step::Break(_) | Step::Join(_) | Step::Subflow(_) => {}
    }
    Ok(())
}

/// The semantic checks of a parsed document.
pub fn validate(def: &FlowDef) -> Result<(), DefinitionError> {
    match (&def.steps, &def.nodes) {
        (Some(_), Some(_)) => Err(DefinitionError::at(
            "$",
            "give either steps (list form) or nodes (graph form), not both",
        )),
        (None, None) => Err(DefinitionError::at(
            "$",
            "missing field `steps` (or `nodes` for the graph form)",
        )),
        (Some(steps), None) => {
            if def.start.is_some() {
                return Err(DefinitionError::at(
                    "start",
                    "only the graph form (nodes) has a start",
                ));
            }
            let mut ids = HashMap::new();
            let mut gate_targets = Vec::new();
            validate_list(steps, "steps", 0, &mut ids, &mut gate_targets)?;
            for (path, target) in gate_targets {
                if !ids.contains_key(&target) {
                    return Err(DefinitionError::at(
                        &path,
                        format!("no step has the id {target:?}"),
                    ));
                }
            }
            Ok(())
        }
        (None, Some(nodes)) => validate_graph(def, nodes),
    }
}

fn validate_list(
    steps: &[Step],
    path: &str,
    loop_depth: usize,
    ids: &mut HashMap<String, String>,
    gate_targets: &mut Vec<(String, String)>,
) -> Result<(), DefinitionError> {
    if steps.is_empty() {
        return Err(DefinitionError::at(path, "must list at least one step"));
    }
    for (i, step) in steps.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let c = step.common();
        if c.next.is_some() {
            return Err(DefinitionError::at(
                &format!("{p}.next"),
                "next belongs to the graph form (nodes); list steps run in order",
            ));
        }
        if let Some(id) = c.id
            && let Some(first) = ids.insert(id.to_string(), p.clone())
        {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                format!("{:?} is already the id of {first}", id.as_str()),
            ));
        }
        check_step_fields(step, &p)?;
        match step {
            Step::StartLoop(s) => validate_list(
                &s.steps,
                &format!("{p}.steps"),
                loop_depth + 1,
                ids,
                gate_targets,
            )?,
            Step::Break(_) if loop_depth == 0 => {
                return Err(DefinitionError::at(
                    &p,
                    "a break must be inside a startLoop",
                ));
            }
            Step::Decision(s) => {
                for (b, branch) in s.branches.iter().enumerate() {
                    let bp = format!("{p}.branches[{b}]");
                    if branch.next.is_some() || branch.max_iterations.is_some() {
                        return Err(DefinitionError::at(
                            &bp,
                            "list-form branches take steps, not next or maxIterations",
                        ));
                    }
                    match &branch.steps {
                        Some(list) => validate_list(
                            list,
                            &format!("{bp}.steps"),
                            loop_depth,
                            ids,
                            gate_targets,
                        )?,
                        None => {
                            return Err(DefinitionError::at(
                                &format!("{bp}.steps"),
                                "missing; list the steps of this branch",
                            ));
                        }
                    }
                }
                if let Some(d) = &s.default {
                    if d.next.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{p}.default.next"),
                            "list-form defaults take steps",
                        ));
                    }
                    if let Some(list) = &d.steps {
                        validate_list(
                            list,
                            &format!("{p}.default.steps"),
                            loop_depth,
                            ids,
                            gate_targets,
                        )?;
                    }
                }
            }
            Step::Foreach(_) if !matches!(steps.get(i + 1), Some(Step::Join(_))) => {
                return Err(DefinitionError::at(
                    &p,
                    "a foreach must be followed by a join step",
                ));
            }
            Step::Join(_) if i == 0 || !matches!(steps[i - 1], Step::Foreach(_)) => {
                return Err(DefinitionError::at(
                    &p,
                    "a join must come right after a foreach",
                ));
            }
            Step::Gate(s) => {
                for (o, opt) in s.options.iter().enumerate() {
                    if let Some(Some(t)) = &opt.next {
                        gate_targets.push((format!("{p}.options[{o}].next"), t.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn validate_graph(def: &FlowDef, nodes: &[Step]) -> Result<(), DefinitionError> {
    if nodes.is_empty() {
        return Err(DefinitionError::at("nodes", "must list at least one node"));
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let p = format!("nodes[{i}]");
        let Some(id) = node.common().id else {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                "missing; every node of the graph form needs an id",
            ));
        };
        if index.insert(id.as_str(), i).is_some() {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                format!("{:?} is used twice", id.as_str()),
            ));
        }
        if matches!(node, Step::StartLoop(_) | Step::Break(_)) {
            return Err(DefinitionError::at(
                &format!("{p}.type"),
                "startLoop and break belong to the list form; in a graph, loop with a decision branch back to an earlier node (with maxIterations)",
            ));
        }
        check_step_fields(node, &p)?;
    }
    let target = |path: String, t: &Text| -> Result<usize, DefinitionError> {
        index.get(t.as_str()).copied().ok_or_else(|| {
            DefinitionError::at(&path, format!("no node has the id {:?}", t.as_str()))
        })
    };
    let start = match &def.start {
        Some(s) => target("start".into(), s)?,
        None => 0,
    };
    // Edges: (from, to, guarded, path).
    let mut edges: Vec<Vec<(usize, bool, String)>> = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let p = format!("nodes[{i}]");
        if let Some(n) = node.common().next {
            edges[i].push((target(format!("{p}.next"), n)?, false, format!("{p}.next")));
        }
        match node {
            Step::Decision(s) => {
                if node.common().next.is_some() {
                    return Err(DefinitionError::at(
                        &format!("{p}.next"),
                        "a decision routes by its branches and default",
                    ));
                }
                for (b, br) in s.branches.iter().enumerate() {
                    let bp = format!("{p}.branches[{b}]");
                    if br.steps.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{bp}.steps"),
                            "graph-form branches name a node in next",
                        ));
                    }
                    let Some(n) = &br.next else {
                        return Err(DefinitionError::at(
                            &format!("{bp}.next"),
                            "missing; name the node this branch goes to",
                        ));
                    };
                    edges[i].push((
                        target(format!("{bp}.next"), n)?,
                        br.max_iterations.is_some(),
                        bp,
                    ));
                }
                if let Some(d) = &s.default {
                    if d.steps.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{p}.default.steps"),
                            "graph-form defaults name a node in next",
                        ));
                    }
                    if let Some(n) = &d.next {
                        edges[i].push((
                            target(format!("{p}.default.next"), n)?,
                            false,
                            format!("{p}.default"),
                        ));
                    }
                }
            }
            Step::Gate(s) => {
                for (o, opt) in s.options.iter().enumerate() {
                    if let Some(Some(n)) = &opt.next {
                        // A person chooses: a gate edge is its own guard.
                        edges[i].push((
                            target(format!("{p}.options[{o}].next"), n)?,
                            true,
                            format!("{p}.options[{o}]"),
                        ));
                    }
                }
            }
            Step::Foreach(_) => {
                let ok = node
                    .common()
                    .next
                    .and_then(|n| index.get(n.as_str()))
                    .is_some_and(|&j| matches!(nodes[j], Step::Join(_)));
                if !ok {
                    return Err(DefinitionError::at(
                        &format!("{p}.next"),
                        "a foreach's next must be a join node",
                    ));
                }
            }
            _ => {}
        }
    }
    // Every cycle must pass a guarded edge: find back edges by depth-first search.
    let mut state = vec![0u8; nodes.len()]; // 0 new, 1 on stack, 2 done
    let mut stack = vec![(start, 0usize)];
    state[start] = 1;
    while let Some(&mut (node, ref mut next_edge)) = stack.last_mut() {
        if let Some((to, guarded, path)) = edges[node].get(*next_edge) {
            *next_edge += 1;
            match state[*to] {
                0 => {
                    state[*to] = 1;
                    stack.push((*to, 0));
                }
                1 if !guarded => {
                    return Err(DefinitionError::at(
                        path,
                        "this edge closes a loop; loop through a decision branch with maxIterations",
                    ));
                }
                _ => {}
            }
        } else {
            state[node] = 2;
            stack.pop();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> DefinitionError {
        parse(text).expect_err(text)
    }

    #[test]
    fn errors_name_the_path_and_the_problem() {
        let e = err(
            r#"{"steps":[{"type":"startLoop","steps":[{"type":"llm","agentType":"a","identifier":"i","messages":[{"role":"user","content":["x"]}]},{"type":"llm","identifier":"i","messages":[]}]}]}"#,
        );
        assert_eq!(e.path, "steps[0].steps[1]");
        assert!(e.message.contains("agentType"), "{e}");
        let e = err(
            r#"{"steps":[{"type":"llm","agentType":"a","identifier":"i","messages":[{"role":"user","content":["x"]}],"colour":1}]}"#,
        );
        assert_eq!(e.path, "steps[0].colour");
        assert!(e.message.contains("unknown field `colour`"), "{e}");
        let e =
            err(r#"{"steps":[{"type":"llm","agentType":"  ","identifier":"i","messages":[]}]}"#);
        assert_eq!(e.path, "steps[0].agentType");
        assert!(e.message.contains("must not be empty"), "{e}");
        let e = err(r#"{"steps":[{"type":"startLoop","steps":[]}]}"#);
        assert_eq!(e.path, "steps[0].steps");
        let e = err(r#"{"steps":[{"type":"loop"}]}"#);
        assert_eq!(e.path, "steps[0].type");
        let e = err(r#"{"steps":[], "extra": 1}"#);
        assert!(e.message.contains("unknown field `extra`"), "{e}");
        let e = err(
            r#"{"steps":[{"type":"break","agentType":"a","identifier":"i","question":"q","breakOn":"yes"}]}"#,
        );
        assert!(e.message.contains("inside a startLoop"), "{e}");
        let e = err(
            r#"{"steps":[{"type":"startLoop","steps":[{"type":"break","agentType":"a","identifier":"i","question":"q","breakOn":"maybe"}]}]}"#,
        );
        assert_eq!(e.path, "steps[0].steps[0].breakOn");
        let e = err(
            r#"{"steps":[{"type":"decision","branches":[{"condition":"output.score >=","steps":[]}]}]}"#,
        );
        assert_eq!(e.path, "steps[0].branches[0].condition");
        let e = err("{not json");
        assert!(e.message.contains("not valid JSON"), "{e}");
        let e = err(r#"{"description":"x"}"#);
        assert!(e.message.contains("steps"), "{e}");
    }

    #[test]
    fn graph_loops_must_be_guarded() {
        let node = |id: &str, next: &str| {
            format!(
                r#"{{"id":"{id}","type":"llm","agentType":"a","identifier":"i","messages":[{{"role":"user","content":["x"]}}]{next}}}"#
            )
        };
        let unguarded = format!(
            r#"{{"nodes":[{},{{"id":"J","type":"decision","branches":[{{"condition":"output.shouldRetry","next":"A"}}],"default":{{"next":"K"}}}},{}]}}"#,
            node("A", r#","next":"J""#),
            node("K", "")
        );
        let e = err(&unguarded);
        assert_eq!(e.path, "nodes[1].branches[0]");
        let guarded = unguarded.replace(r#""next":"A"}"#, r#""next":"A","maxIterations":3}"#);
        parse(&guarded).expect("guarded loop is fine");
        let e = err(&guarded.replace(r#""next":"K""#, r#""next":"Z""#));
        assert!(e.message.contains("no node has the id \"Z\""), "{e}");
    }

    #[test]
    fn definitions_round_trip_through_serde() {
        let text = include_str!("../../../../tests/fixtures/flows/seed004/flows/seed_example.json");
        let def = parse(text).expect("seed 004's example loads as written");
        let again = from_value(&serde_json::to_value(&def).expect("serialises")).expect("reparses");
        assert_eq!(def, again);
    }
}
