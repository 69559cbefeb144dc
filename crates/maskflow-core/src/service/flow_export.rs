//! `GET /api/flows/{name}/export?format=…`: the default bundle (Maskflow's
//! flow and agent files, which every client so far reads) or seed 003's own
//! shape (`format=seed003`: `workflow.steps`, `agents[{id, displayName,
//! agentPrompt}]`), which re-imports to the same flow.

use serde::{Deserialize, Serialize};
use ts_rs::TS;
use utoipa::IntoParams;

use super::Service;
use crate::error::{CoreError, Result};
use maskflow_flows::bundle::FlowBundle;

/// `?format=` of an export: absent or `maskflow` (the default), or `seed003`.
#[derive(Deserialize, Serialize, Clone, Debug, Default, IntoParams, TS)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `maskflow` (default: flow and agent files as written) or `seed003`.
    #[serde(default)]
    #[ts(optional)]
    pub format: Option<String>,
}

impl Service {
    /// A flow with its agents as one bundle, in the shape `query` asks for.
    pub fn flow_export_as(&self, name: &str, query: &ExportQuery) -> Result<FlowBundle> {
        match query.format.as_deref().map(str::trim) {
            None | Some("") | Some("maskflow") => self.flow_export(name),
            Some("seed003") => Ok(self.flows().export_seed003(name)?),
            Some(other) => Err(CoreError::InvalidRequest(format!(
                "format {other:?} is not known; use maskflow (the default) or seed003"
            ))),
        }
    }
}
