//! `state.json` in a version's session folder (issue 31 point 4, seed
//! 001's on-disk session): the conversation and build state as it is now,
//! rewritten at each step (a status change, a message turn, each build
//! state the engine reports), so a person or a script can follow a build
//! from the folder alone. It holds the user's own words and the build's
//! state: local files only, never sent anywhere.

use serde::Serialize;
use serde_json::Value;

use super::Service;
use crate::builder;
use crate::store::{self, builds as rows};
use crate::versions::Status;

/// The file's name inside `sessions/<version_id>/`.
pub const STATE_FILE: &str = "state.json";

/// One message of the conversation, as `state.json` lists it.
#[derive(Serialize)]
struct StateMessage {
    role: String,
    content: String,
    version_id: Option<String>,
    created_at: String,
}

/// What `state.json` holds.
#[derive(Serialize)]
struct SessionState {
    workflow_id: String,
    version_id: String,
    version: i64,
    status: Status,
    is_active: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    rejection_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_reason: Option<String>,
    /// The build engine's whole state (phase, stage, iteration, gate, test
    /// report…), once building started.
    #[serde(skip_serializing_if = "Option::is_none")]
    build: Option<Value>,
    conversation: Vec<StateMessage>,
    updated_at: String,
}

impl Service {
    /// Rewrites `state.json` of `version_id` from the store. Must be called
    /// without the database held. A failure to write is reported and
    /// otherwise ignored: the store, not this file, is the record.
    pub(super) fn write_session_state(&self, workflow_id: &str, version_id: &str) {
        let state = {
            let db = self.db();
            let Ok(Some(v)) = store::get_version(&db, version_id) else {
                return;
            };
            let conversation = store::messages_of(&db, workflow_id)
                .unwrap_or_default()
                .into_iter()
                .map(|m| StateMessage {
                    role: m.role,
                    content: m.content,
                    version_id: m.version_id,
                    created_at: m.created_at,
                })
                .collect();
            let build = rows::get_build(&db, version_id)
                .ok()
                .flatten()
                .map(|r| r.state);
            SessionState {
                workflow_id: workflow_id.to_owned(),
                version_id: version_id.to_owned(),
                version: v.version,
                status: v.status,
                is_active: v.is_active,
                rejection_reason: v.rejection_reason,
                failure_reason: v.failure_reason,
                build,
                conversation,
                updated_at: self.now(),
            }
        };
        let dir = builder::session_dir(self.home(), version_id);
        if let Err(e) = write_atomically(&dir, &state, &self.id("state")) {
            eprintln!(
                "maskflow: could not write {}: {e}",
                dir.join(STATE_FILE).display()
            );
        }
    }
}

/// Writes `state` to `dir/state.json` through a file of its own name then
/// a rename, so a reader never sees half a file and two writers never
/// share a temporary file.
fn write_atomically(dir: &std::path::Path, state: &SessionState, tmp: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::other)?;
    let tmp = dir.join(format!(".{tmp}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, dir.join(STATE_FILE)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
