//! A message's turn cut off by a restart (issue 19): the validator's or the
//! clarifier's prompt it waited on is stored with the user's message and
//! the call it is ([`crate::builder::call`]). Listed again, it can be
//! answered while the conversation is still where that call was asked; the
//! answer is stored and the turn goes on from that phase — the same call is
//! made again and takes the answer — then on as usual (the clarifier's
//! question, or the build).

use super::{ManualInterruption, cut, elsewhere, ended};
use crate::builder::call::{self, Turn};
use crate::error::{CoreError, Result};
use crate::service::{BusyGuard, Service, leases as held};
use crate::store::manual_prompts::StoredPrompt;
use crate::store::{self, VersionRow};
use crate::versions::Status;
use maskflow_llm::call::ManualWaiter;
use maskflow_llm::{ChatMessage, Provider, Role};

/// The workflow of a stored prompt of a message's turn (the validator's or
/// the clarifier's call, with the user's message), if it is one.
pub(super) fn is_turn(row: &StoredPrompt) -> Option<&str> {
    role_of(row)?;
    row.call.as_ref()?.turn.as_ref()?;
    match &row.prompt.waiter {
        Some(ManualWaiter::Build { workflow_id, .. }) => Some(workflow_id),
        _ => None,
    }
}

fn role_of(row: &StoredPrompt) -> Option<Role> {
    [Role::Validator, Role::Clarifier]
        .into_iter()
        .find(|r| r.key() == row.prompt.role)
}

/// A turn claimed to go on: the workflow is held busy until it ends.
pub(super) struct ClaimedTurn {
    busy: BusyGuard,
    workflow_id: String,
    version: VersionRow,
    history: Vec<ChatMessage>,
    turn: Turn,
}

impl Service {
    /// Where the turn of `row` goes on from: its version and the
    /// conversation its call is asked on — or, in words, why it cannot
    /// (the version moved on, the conversation went on).
    fn turn_point(
        &self,
        row: &StoredPrompt,
        workflow_id: &str,
    ) -> std::result::Result<(VersionRow, Vec<ChatMessage>, Turn), String> {
        let (Some(role), Some(tag)) = (role_of(row), row.call.as_ref()) else {
            return Err("it is not a message's prompt".into());
        };
        let Some(turn) = tag.turn.clone() else {
            return Err("the message it was for was not kept".into());
        };
        let turn: Turn = serde_json::from_value(turn)
            .map_err(|e| format!("the message it was for could not be read: {e}"))?;
        let Some(ManualWaiter::Build { version_id, .. }) = &row.prompt.waiter else {
            return Err("it names no version".into());
        };
        let version = store::get_version(&self.db(), version_id)
            .map_err(|e| format!("its version could not be read: {e}"))?
            .ok_or("its version was deleted")?;
        let at_phase = match role {
            Role::Validator => version.status == Status::Validating,
            _ => matches!(version.status, Status::Validated | Status::Clarifying),
        };
        if !at_phase {
            return Err(format!(
                "the version is {}",
                version.status.as_str().replace('_', " ")
            ));
        }
        let mut history = self
            .history(workflow_id)
            .map_err(|e| format!("the conversation could not be read: {e}"))?;
        if !turn.stored {
            history.push(ChatMessage::user_words(turn.content.clone()));
        }
        // The same call on the same conversation, or nothing: an answer
        // never goes to another question.
        if call::conversation(&role.key(), &history, turn.clone()).key != tag.key {
            return Err("the conversation went on since".into());
        }
        Ok((version, history, turn))
    }

    /// "your message to “Name”" (or to workflow `wf_…`).
    fn message_name(&self, workflow_id: &str) -> String {
        let name = store::get_workflow(&self.db(), workflow_id)
            .ok()
            .flatten()
            .and_then(|w| w.name);
        match name {
            Some(n) => format!("your message to \u{201c}{n}\u{201d}"),
            None => format!("your message to workflow {workflow_id}"),
        }
    }

    /// What became of a stored prompt of a message's turn; `None` while
    /// this process goes on with it (the answer is being taken).
    pub(super) fn turn_interruption(
        &self,
        row: &StoredPrompt,
        workflow_id: &str,
    ) -> Option<ManualInterruption> {
        if let Some(l) = self.held_elsewhere(&held::workflow(workflow_id)) {
            return row.answer.is_none().then(|| elsewhere(l.owner_pid));
        }
        // A turn running here is taking the answer, or storing the prompt
        // it is about to wait on.
        let busy_here = crate::service::lock(&self.inner.busy).contains_key(workflow_id);
        if busy_here && (row.answer.is_some() || row.owner_id == self.inner.owner.id) {
            return None;
        }
        let what = self.message_name(workflow_id);
        if row.answer.is_some() {
            return Some(ended(format!(
                "Your answer was kept, but {what} did not take it (the conversation asked \
                 something else when it went on)"
            )));
        }
        Some(match self.turn_point(row, workflow_id) {
            Ok(_) => cut(
                &what,
                "the conversation goes on from this step (or dismiss it and send your message \
                 again)",
            ),
            Err(why) => ended(format!("{what} no longer waits for it ({why})")),
        })
    }

    /// Claims the workflow for the turn of `row` (a conflict while it
    /// handles another message) and checks that the turn can go on.
    pub(super) fn claim_turn(&self, row: &StoredPrompt, workflow_id: &str) -> Result<ClaimedTurn> {
        let (Some(role), Some(ManualWaiter::Build { version_id, .. })) =
            (role_of(row), &row.prompt.waiter)
        else {
            return Err(CoreError::Conflict(format!(
                "manual prompt {} is not a message's prompt",
                row.prompt.id
            )));
        };
        // Only the manual back end takes the stored answer.
        let llm = self.llm(&role, Some(workflow_id), Some(version_id), None)?;
        if !Provider::is_manual(&llm) {
            return Err(CoreError::Conflict(format!(
                "the {} now uses the {} back end, not the manual one, so your message would not \
                 take this answer; set it back to manual in Settings to answer it, or dismiss it \
                 and send your message again",
                role.key(),
                Provider::name(&llm)
            )));
        }
        let busy = self.claim(workflow_id)?;
        let (version, history, turn) = self.turn_point(row, workflow_id).map_err(|why| {
            CoreError::Conflict(format!(
                "{} no longer waits for this answer ({why}); dismiss it",
                self.message_name(workflow_id)
            ))
        })?;
        Ok(ClaimedTurn {
            busy,
            workflow_id: workflow_id.to_owned(),
            version,
            history,
            turn,
        })
    }

    /// Goes on with a claimed turn in the background: its call takes the
    /// stored answer, then the turn continues as if never cut off. A turn
    /// that fails says so on the version's status (nobody waits on the
    /// request that started it any more).
    pub(super) fn continue_turn(&self, claimed: ClaimedTurn) {
        let service = self.clone();
        tokio::spawn(async move {
            let ClaimedTurn {
                busy,
                workflow_id,
                version,
                history,
                turn,
            } = claimed;
            let version_id = version.id.clone();
            let went_on = service
                .message_turn(&workflow_id, &turn.content, &history, version, turn.stored)
                .await;
            // Free before saying so: the user may send the message at once.
            drop(busy);
            if let Err(e) = went_on {
                eprintln!("maskflow: the message to workflow {workflow_id} could not go on: {e}");
                service.notice_message_failed(&workflow_id, &e);
                let status = store::get_version(&service.db(), &version_id)
                    .ok()
                    .flatten()
                    .map(|v| v.status);
                if let Some(status) = status {
                    service.publish_status(
                        &workflow_id,
                        &version_id,
                        status,
                        Some(format!(
                            "your message could not go on after Maskflow restarted ({e}); send \
                             it again"
                        )),
                    );
                }
            }
        });
    }
}
