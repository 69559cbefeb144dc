//! Approval gates (seed 001): after each piece of content is created, an
//! [`Approver`] returns APPROVED, REJECTED (with feedback) or PENDING (a
//! person decides later). Every back end's replies are approved
//! automatically, the manual one's too: its reply is what the user just
//! pasted (#28). Packages and input bindings still wait for the user.

use serde::{Deserialize, Serialize};

use super::table::{Phase, Stage};
use maskflow_llm::BoxFuture;

/// A gate's decision.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Continue.
    Approved,
    /// Go back with feedback.
    Rejected,
    /// Wait for a person.
    Pending,
}

/// What a gate returns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ApprovalResult {
    /// The decision.
    pub decision: Decision,
    /// Why, for a rejection.
    #[serde(default)]
    pub feedback: Option<String>,
}

impl ApprovalResult {
    /// An approval.
    pub fn approved() -> Self {
        Self {
            decision: Decision::Approved,
            feedback: None,
        }
    }
}

/// The content a gate looks at. Only LLM-written or masked content is ever
/// given to a gate (never test output with real data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateInput {
    /// The phase that made it.
    pub phase: Phase,
    /// The stage that made it.
    pub stage: Stage,
    /// The content (a prompt, or the builder's reply).
    pub content: String,
}

/// Judges content after it is created.
pub trait Approver: Send + Sync + std::fmt::Debug {
    /// The decision on `input`.
    fn evaluate<'a>(&'a self, input: &'a GateInput) -> BoxFuture<'a, ApprovalResult>;
}

/// Approves everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn evaluate<'a>(&'a self, _input: &'a GateInput) -> BoxFuture<'a, ApprovalResult> {
        Box::pin(async { ApprovalResult::approved() })
    }
}
