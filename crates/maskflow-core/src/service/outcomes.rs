//! How a message or a build ended, told in the conversation (issue 28,
//! point 4): every outcome — built, failed, cancelled, waiting — is stored
//! as a message, so the chat says it whatever version the view shows beside
//! it and after a reload. Maskflow's own notes are `notice`s: shown to the
//! user, never part of an LLM's history (`Service::history`).

use rusqlite::Connection;

use super::Service;
use crate::builder::BuildState;
use crate::error::{CoreError, ErrorCode, Result};
use crate::views::MessageView;

/// The role of Maskflow's own notes in a conversation.
pub const NOTICE: &str = "notice";

/// The notice of a message whose reply the user stopped (a cancel, a
/// dismissed manual prompt).
pub(super) const STOPPED_REPLY: &str =
    "You stopped the reply; your message was not answered. Send it again, or change it first.";

/// The notice of a build that ended without a workflow: cancelled by the
/// user, or failed with `reason` — each with the way on.
pub(super) fn build_ended(version: i64, reason: &str) -> String {
    if reason == super::cancel::CANCELLED_BY_USER {
        format!(
            "You stopped the build of version {version}. To build again, choose Edit on the \
             workflow (or send a message) and say what to change."
        )
    } else {
        let weak = if reason.contains(UNUSABLE_TWICE) {
            " If the model keeps answering in a shape Maskflow cannot use, choose another \
             model for the builder (Settings → Models): a small model often cannot."
        } else {
            ""
        };
        format!(
            "The build of version {version} failed: {}. To try again, choose Edit on the \
             workflow (or send a message) and say what to change; Maskflow drafts a new \
             version and builds it.{weak}",
            reason.trim().trim_end_matches('.')
        )
    }
}

/// What every "unusable reply twice" failure says (`ProviderError::InvalidReply`,
/// the builder's and the planner's own).
const UNUSABLE_TWICE: &str = "gave an unusable reply twice";

/// The notice of a build that waits for the user, `None` when it does not.
pub(super) fn build_waiting(version: i64, state: &BuildState) -> Option<String> {
    if let Some(packages) = state.pending_packages.as_ref().filter(|p| !p.is_empty()) {
        let names: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
        return Some(format!(
            "The build of version {version} is waiting for you: its script needs the Python \
             package{} {}. Approve them in the build's progress below to go on, or reject them \
             to have the script rewritten without them.",
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        ));
    }
    if let Some(missing) = &state.pending_environment {
        return Some(format!(
            "The build of version {version} is waiting: this machine is missing what its \
             script's test needs — {}.{} Fix it (\"Install uv\" in the build's progress below \
             does it in one click) and the build goes on.",
            missing.detail.trim().trim_end_matches('.'),
            missing
                .fix
                .as_deref()
                .map(|f| format!(" Fix: {f}."))
                .unwrap_or_default()
        ));
    }
    if state.pending_binding.is_some() {
        return Some(format!(
            "The build of version {version} is waiting for you: its inputs' names do not say \
             which file feeds which. Pick each input's file in the build's progress below."
        ));
    }
    state.pending_gate.then(|| {
        format!(
            "The build of version {version} is waiting for you: review the builder's reply in \
             the build's progress below, then approve it or send it back with what to fix."
        )
    })
}

/// The notice of a message the validator or the clarifier could not
/// answer because a back end failed, timed out or was stopped; `None` for
/// anything the user's side answers at once (a privacy check to confirm,
/// settings to fix, a conflict where nothing happened: the reply says so).
pub(super) fn message_failed(error: &CoreError) -> Option<String> {
    if let CoreError::Provider(maskflow_llm::ProviderError::InvalidReply { role, .. }) = error {
        // A weak model (issue 44): the two ways on, named.
        return Some(format!(
            "Your last message was not answered: {}. Nothing changed. Try again (send it \
             again; a model's replies vary), or choose another model for the {role} in \
             Settings → Models: a small model often cannot answer in the shape Maskflow asks for.",
            error.to_string().trim().trim_end_matches('.')
        ));
    }
    match error.code() {
        ErrorCode::Cancelled => Some(STOPPED_REPLY.to_owned()),
        ErrorCode::ProviderError | ErrorCode::ProviderTimeout => Some(format!(
            "Your last message was not answered: {}. Nothing changed; send it again (or \
             reword it) when the back end is ready.",
            error.to_string().trim().trim_end_matches('.')
        )),
        _ => None,
    }
}

impl Service {
    /// Stores a notice in the workflow's conversation, on `version_id`.
    pub(super) fn add_notice(
        &self,
        conn: &Connection,
        workflow_id: &str,
        version_id: &str,
        text: &str,
        now: &str,
    ) -> Result<MessageView> {
        self.add_message(conn, workflow_id, version_id, NOTICE, text, now)
    }

    /// Stores and publishes the notice of a failed message turn on the
    /// workflow's current version; a failure to store it is only logged
    /// (the caller answers the turn's own error).
    pub(super) fn notice_message_failed(&self, workflow_id: &str, error: &CoreError) {
        let Some(text) = message_failed(error) else {
            return;
        };
        let now = self.now();
        let stored = {
            let db = self.db();
            crate::store::versions_of(&db, workflow_id)
                .map_err(CoreError::from)
                .and_then(|all| {
                    let current = super::current_of(&all).ok_or_else(|| {
                        CoreError::Corrupt(format!("workflow {workflow_id} has no version"))
                    })?;
                    self.add_notice(&db, workflow_id, &current.id, &text, &now)
                })
        };
        match stored {
            Ok(m) => self.publish_messages(workflow_id, [m]),
            Err(e) => eprintln!("maskflow: could not store the notice of {workflow_id}: {e}"),
        }
    }

    /// Stores and publishes the notice of a build that paused for the user.
    pub(super) fn notice_build_waiting(
        &self,
        workflow_id: &str,
        version_id: &str,
        state: &BuildState,
    ) {
        let db = self.db();
        let version = match crate::store::get_version(&db, version_id) {
            Ok(Some(v)) => v.version,
            _ => return,
        };
        let Some(text) = build_waiting(version, state) else {
            return;
        };
        let now = self.now();
        match self.add_notice(&db, workflow_id, version_id, &text, &now) {
            Ok(m) => {
                drop(db);
                self.publish_messages(workflow_id, [m]);
            }
            Err(e) => eprintln!("maskflow: could not store the notice of {workflow_id}: {e}"),
        }
    }
}
