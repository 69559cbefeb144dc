//! The views the wire events carry (and the service's replies share): they
//! live below both, so the events need not reach into the service.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::builder::{BuildState, Phase, Stage};
use crate::store::MessageRow;

/// One message of a conversation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct MessageView {
    /// `msg_…`
    pub id: String,
    /// `user`, `assistant`, or `notice` (Maskflow telling how a message or a
    /// build ended; never sent to an LLM).
    pub role: String,
    /// The text.
    pub content: String,
    /// The version that was the draft when it was sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

impl From<MessageRow> for MessageView {
    fn from(m: MessageRow) -> Self {
        Self {
            id: m.id,
            role: m.role,
            content: m.content,
            version_id: m.version_id,
            created_at: m.created_at,
        }
    }
}

/// Where a version's build is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct BuildView {
    /// The phase: `generate`, `review`, `revise`, `complete`, `failed`.
    pub phase: Phase,
    /// `prompt` or `response` (none when finished).
    pub stage: Option<Stage>,
    /// 1-based iteration.
    pub iteration: u32,
    /// Whether a gate waits for the user's decision.
    pub pending_gate: bool,
    /// What the builder's prompt left out to fit the model's context window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_reduction: Option<crate::fit::ContextReduction>,
    /// Python packages outside the curated set waiting for the user's
    /// approval (the gate decides: approve installs them, reject ends the build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_packages: Option<Vec<maskflow_pyenv::PackageRequest>>,
    /// What this machine is missing for the script's test (Python, or uv
    /// for a script that needs packages), with its fix and one-click
    /// action: the build waits; it goes on after "Install uv" or when the
    /// gate is approved once it is fixed; rejecting it ends the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_environment: Option<crate::needs::PreflightItem>,
    /// The build failed on its Python environment or test run (uv missing,
    /// the index unreachable): it can be retried with the same script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub retryable: Option<bool>,
    /// Inputs whose file the names could not settle: the gate waits for the
    /// user to pick each one's file (`bindings` of the gate's request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_binding: Option<Vec<crate::builder::inputs::BindingQuestion>>,
    /// The plan the builder proposed, waiting for the person to approve or
    /// edit it (`plan` of the gate's request) or to reject it with feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pending_plan: Option<String>,
    /// The approved plan the builder follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub plan: Option<String>,
    /// The AI reviewer's reviews (of the plan, of each script), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<crate::builder::review::ReviewNote>>")]
    pub reviews: Vec<crate::builder::review::ReviewNote>,
}

impl From<&BuildState> for BuildView {
    fn from(s: &BuildState) -> Self {
        Self {
            phase: s.phase,
            stage: s.stage,
            iteration: s.iteration,
            pending_gate: s.pending_gate,
            context_reduction: s.context_reduction.clone(),
            pending_packages: s.pending_packages.clone(),
            pending_environment: s.pending_environment.clone(),
            retryable: s.environment_failed().then_some(true),
            pending_binding: s.pending_binding.clone(),
            pending_plan: s.pending_plan.clone(),
            plan: s.plan.clone(),
            reviews: s.reviews.clone(),
        }
    }
}
