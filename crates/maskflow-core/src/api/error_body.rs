//! The one error body of both shells: a failed call as the HTTP API and
//! the desktop's commands answer it (kept beside the list of calls).

use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

use crate::error::{CoreError, ErrorCode};
use maskflow_llm::ProviderError;
use maskflow_privacy::GuardMatch;

/// A failed call as both shells answer it.
#[derive(Serialize, Clone, Debug, ToSchema, TS)]
pub struct ErrorBody {
    /// `invalid_request`, `unauthorized`, `forbidden`, `not_found`, `conflict`,
    /// `archived`, `payload_too_large`, `provider_error`, `provider_timeout`,
    /// `cancelled`, `privacy_blocked`,
    /// `keyring_unavailable`, `agent_mismatch`, `disk_full` or `internal`.
    pub code: String,
    /// What went wrong, for people.
    pub message: String,
    /// For `privacy_blocked`: each value found, masked, and where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub matches: Option<Vec<GuardMatch>>,
    /// A finer code the UI branches on, e.g. `RUN_IN_PROGRESS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub detail: Option<String>,
    /// The ways on the UI offers as buttons, when there are some: after a
    /// weak model's unusable replies, `try_again` and
    /// `choose_another_model` (issue 44).
    #[serde(skip_serializing_if = "<[NextStep]>::is_empty")]
    #[ts(optional, as = "Option<Vec<NextStep>>")]
    #[schema(value_type = Option<Vec<NextStep>>)]
    pub next_steps: &'static [NextStep],
}

/// A way on after a failure, offered as a button.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum NextStep {
    /// Send the same message again (a model's replies vary).
    TryAgain,
    /// Choose another model for the role (Settings → Models).
    ChooseAnotherModel,
}

/// The ways on after `e` (none for most errors).
pub fn next_steps(e: &CoreError) -> &'static [NextStep] {
    match e {
        CoreError::Provider(ProviderError::InvalidReply { .. }) => {
            &[NextStep::TryAgain, NextStep::ChooseAnotherModel]
        }
        _ => &[],
    }
}

impl ErrorBody {
    /// An error with a code and a sentence only.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            matches: None,
            detail: None,
            next_steps: &[],
        }
    }

    /// The body of a service error. Internal errors are logged to stderr
    /// and shown as a sentence pointing at `log` (the server's or the app's
    /// log): their text may name paths or database details.
    pub fn from_core(e: CoreError, log: &str) -> Self {
        let code = e.code();
        let detail = e.detail_code().map(str::to_owned);
        let next_steps = next_steps(&e);
        if code == ErrorCode::Internal {
            eprintln!("maskflow: internal error: {e}");
            return Self::new(
                code.as_str(),
                format!("something went wrong inside Maskflow; see the {log}"),
            );
        }
        let message = e.to_string();
        let matches = match e {
            CoreError::Provider(ProviderError::PrivacyBlocked(m)) => Some(m),
            _ => None,
        };
        Self {
            code: code.as_str().to_owned(),
            message,
            matches,
            detail,
            next_steps,
        }
    }
}
