//! The confirmation argument of two-step deletes (workflows, flow runs,
//! backups, agents), apart from the call list to keep that file short.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::IntoParams;

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
