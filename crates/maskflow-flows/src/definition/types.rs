//! The definition types: steps, branches, options, and the trimmed `Text`.

use super::*;

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

/// A confidence between 0 and 1 (seed 003's `confidence`).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, PartialOrd)]
#[serde(transparent)]
pub struct Confidence(f64);

impl Confidence {
    /// `v` when it lies between 0 and 1.
    pub fn new(v: f64) -> Option<Confidence> {
        (0.0..=1.0).contains(&v).then_some(Confidence(v))
    }

    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Confidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        Confidence::new(v).ok_or_else(|| de::Error::custom(format!("{v} is not between 0 and 1")))
    }
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

        /// Seed 003's workflow-step layer: what the step is for and what it must produce.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<Text>,
        /// Step ids the agent may send the run to with `suggested_next_stage`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next_stages: Vec<Text>,
        /// A reply whose `confidence` is below this waits for a person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence_threshold: Option<Confidence>,
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

        /// Seed 003's workflow-step layer: what the step is for and what it must produce.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instructions: Option<Text>,
        /// Step ids the agent may send the run to with `suggested_next_stage`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        next_stages: Vec<Text>,
        /// A reply whose `confidence` is below this waits for a person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence_threshold: Option<Confidence>,
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
        /// How many times a failed item is tried again (default 1, at most 10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_retries: Option<u32>,
    }
);

/// Retries of a failed foreach item when its step sets no `maxRetries`
/// (seed 002: one retry with feedback, then a person).
pub const DEFAULT_ITEM_RETRIES: u32 = 1;
/// Most retries a foreach may set per item.
pub const MAX_ITEM_RETRIES: u32 = 10;

step_struct!(
    /// Gathers the results of the `foreach` before it.
    JoinStep {
        /// What to do when some items failed (default `fail`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_failure: Option<JoinPolicy>,
        /// Seed 003's fan-in prompt: one agent call over the gathered results,
        /// whose parsed reply becomes the join's output (e.g. `output.score`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<Text>,
        /// The agent asked the fan-in prompt (required with `prompt`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_type: Option<Text>,
        /// Which of its conversations (required with `prompt`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        identifier: Option<Text>,
        /// Seconds the fan-out before it may take, from its first item (seed
        /// 003's join timeout): items not done by then are timed out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_seconds: Option<u32>,
        /// What the fan-out does with an item whose retries ran out. Unset,
        /// it asks a person (seed 002: one retry with feedback, then a
        /// human) unless `onFailure` already says what failed items do
        /// (`skip` or `needsAttention`); `fail` opts out of asking.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_exhausted: Option<JoinExhausted>,
        /// What a timeout does (default `proceed`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        on_timeout: Option<JoinTimeout>,
    }
);

/// What happens to a fan-out item whose retries ran out.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum JoinExhausted {
    /// It is a failed item; the join's `onFailure` decides.
    Fail,
    /// When the other items are done, the run waits for a person: `retry`
    /// the item, `skip` it, or `stop` the run.
    Ask,
}

impl JoinStep {
    /// What this join's fan-out does with an item past its retries: its
    /// `onExhausted`, or, unset, a person is asked unless `onFailure` says
    /// what failed items do (seed 002's escalation is the default).
    pub fn exhausted(&self) -> JoinExhausted {
        match (self.on_exhausted, self.on_failure) {
            (Some(e), _) => e,
            (None, None | Some(JoinPolicy::Fail)) => JoinExhausted::Ask,
            (None, Some(JoinPolicy::Skip | JoinPolicy::NeedsAttention)) => JoinExhausted::Fail,
        }
    }
}

/// What a `join` does when its `timeoutSeconds` ran out before every item was done.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "camelCase")]
pub enum JoinTimeout {
    /// Go on with the finished items; the others are listed in `output.timedOut`.
    #[default]
    Proceed,
    /// The run fails, naming the items that were not done.
    Fail,
}

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

pub(super) fn double_option<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<Text>>, D::Error> {
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
            Step::Join(s) => s.agent_type.as_ref().zip(s.identifier.as_ref()),
            _ => None,
        }
    }
}
