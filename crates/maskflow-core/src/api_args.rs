//! The small argument types that exist only on the wire (query strings and
//! bodies of the calls in [`crate::api`]), re-exported there.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::{IntoParams, ToSchema};

/// `?confirm=TOKEN` of a two-step delete.
#[derive(Deserialize, Serialize, Clone, Debug, Default, IntoParams, TS)]
#[into_params(parameter_in = Query)]
pub struct Confirm {
    /// The token from the first call's answer; absent on the first call.
    #[serde(default)]
    #[ts(optional)]
    pub confirm: Option<String>,
}

impl Confirm {
    /// The token, if one was given (an empty one counts as none).
    pub fn token(&self) -> Option<&str> {
        self.confirm.as_deref().filter(|t| !t.is_empty())
    }
}

/// Ledger search and paging.
#[derive(Deserialize, Serialize, Clone, Debug, Default, IntoParams, TS)]
#[into_params(parameter_in = Query)]
pub struct LedgerQuery {
    /// Text to look for in bodies, replies, roles, providers, models.
    #[ts(optional)]
    pub q: Option<String>,
    /// Most entries (1–500, default 50).
    #[ts(optional)]
    pub limit: Option<u32>,
    /// Entries to skip.
    #[ts(optional)]
    pub offset: Option<u32>,
}

/// `?flowName=` of the conversation list (seed 004).
#[derive(Deserialize, Serialize, Clone, Debug, Default, IntoParams, TS)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ConversationQuery {
    /// A flow's name: only its runs; `__none__`: only the conversations
    /// without a flow name (the builder's); absent: everything.
    #[serde(default)]
    #[ts(optional)]
    pub flow_name: Option<String>,
}

/// An API key to store.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct KeyInput {
    /// The key (kept in the system keyring; never echoed).
    pub key: String,
}

/// A pasted answer to a manual prompt.
#[derive(Deserialize, Serialize, Clone, Debug, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ManualAnswer {
    /// The AI tool's reply, as pasted.
    pub text: String,
}
