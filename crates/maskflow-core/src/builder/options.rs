//! A workflow's build choices (issue 31 point 3): propose a plan before
//! any code, have an LLM review the script before its local test, and let
//! that AI reviewer decide the build's gates (the plan, and whether the
//! script goes to its test or back for one revision) instead of a person.
//! Packages outside the curated set and which file feeds which input are
//! never the reviewer's to decide: those gates stay with the person.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The build choices of one workflow (all off by default).
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, ToSchema, ts_rs::TS,
)]
#[serde(deny_unknown_fields)]
pub struct BuildOptions {
    /// Propose the steps, inputs and outputs first, for approval.
    #[serde(default)]
    pub plan: bool,
    /// Have an LLM review the script before the local test (advice).
    #[serde(default)]
    pub review: bool,
    /// Let the AI reviewer approve the gates: the plan, and the script
    /// before its test (its reasons are recorded with each decision).
    #[serde(default)]
    pub ai_approver: bool,
}

impl BuildOptions {
    /// Whether the script is reviewed before its test.
    pub fn reviews_script(&self) -> bool {
        self.review || self.ai_approver
    }
}
