//! Approval gates (seed 001): after each piece of content is created, an
//! [`Approver`] returns APPROVED, REJECTED (with feedback) or PENDING (a
//! person decides later). Automated back ends approve automatically; the
//! manual back end pauses for the user; [`AiReviewer`] lets any provider act
//! as a reviewer.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::table::{Phase, Stage};
use crate::providers::{BoxFuture, ChatMessage, ChatRole, LlmRequest, Provider, Role, parse_reply};

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

/// Approves everything (automated back ends).
#[derive(Debug, Default, Clone, Copy)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn evaluate<'a>(&'a self, _input: &'a GateInput) -> BoxFuture<'a, ApprovalResult> {
        Box::pin(async { ApprovalResult::approved() })
    }
}

/// Pauses on every reply of the builder so the user approves or rejects it
/// (the manual back end); prompts pass.
#[derive(Debug, Default, Clone, Copy)]
pub struct ManualApproval;

impl Approver for ManualApproval {
    fn evaluate<'a>(&'a self, input: &'a GateInput) -> BoxFuture<'a, ApprovalResult> {
        Box::pin(async move {
            if input.stage == Stage::Response {
                ApprovalResult {
                    decision: Decision::Pending,
                    feedback: None,
                }
            } else {
                ApprovalResult::approved()
            }
        })
    }
}

/// Any provider as a reviewer of the builder's replies: it answers
/// `{"approved": bool, "feedback"?: string}`. An unusable answer or a
/// failed call is PENDING (a person decides) rather than a silent approval.
#[derive(Debug, Clone)]
pub struct AiReviewer {
    /// The reviewing back end.
    pub provider: Arc<dyn Provider>,
}

#[derive(Deserialize)]
struct Review {
    approved: bool,
    #[serde(default)]
    feedback: Option<String>,
}

impl Approver for AiReviewer {
    fn evaluate<'a>(&'a self, input: &'a GateInput) -> BoxFuture<'a, ApprovalResult> {
        Box::pin(async move {
            if input.stage != Stage::Response || input.phase == Phase::Review {
                return ApprovalResult::approved();
            }
            let request = LlmRequest {
                role: Role::Agent("reviewer".into()),
                messages: vec![
                    ChatMessage::new(
                        ChatRole::System,
                        "You review a workflow (a Python script and its inputs) that another assistant wrote. \
Reply with only {\"approved\": true} or {\"approved\": false, \"feedback\": \"what to fix\"}.",
                    ),
                    ChatMessage::new(ChatRole::User, input.content.clone()),
                ],
                schema: Some(serde_json::json!({
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}, "feedback": {"type": "string"}},
                    "required": ["approved"]
                })),
            };
            let pending = ApprovalResult {
                decision: Decision::Pending,
                feedback: None,
            };
            let Ok(reply) = self.provider.complete(&request, &|_| {}).await else {
                return pending;
            };
            match parse_reply::<Review>(&reply.text, &|_| Ok(())) {
                Ok(r) if r.approved => ApprovalResult::approved(),
                Ok(r) => ApprovalResult {
                    decision: Decision::Rejected,
                    feedback: Some(
                        r.feedback
                            .unwrap_or_else(|| "the reviewer rejected it".into()),
                    ),
                },
                Err(_) => pending,
            }
        })
    }
}
