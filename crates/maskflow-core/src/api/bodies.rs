//! Request bodies that exist only on the wire (a key to store, a pasted
//! answer), apart from the call list in `api.rs`.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::ToSchema;

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
