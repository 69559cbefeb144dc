//! Two-step deletes (seed 002's `SafeDatabaseClient`, issue 18): deleting a
//! workflow, a flow run or a backup first answers what would be deleted
//! and a confirmation token valid for [`CONFIRM_TTL_MS`]; only the same
//! call with that token deletes. A token is single-use, bound to its
//! target, and refused when what would be deleted has changed since (a new
//! run, a new message): the caller gets the new counts and a new token.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Service;
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::store::{self, backups, deletes::DeleteCounts};
use maskflow_clock::format_rfc3339;

/// How long a confirmation token is valid.
pub const CONFIRM_TTL_MS: u64 = 120_000;

/// The answer to a delete: either what would be deleted with a token to
/// confirm it, or what was deleted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
#[ts(optional_fields)]
pub struct DeleteReply {
    /// Whether it was deleted (false: nothing changed yet; confirm with the token).
    pub deleted: bool,
    /// What the delete removes (or removed); `ledger_entries_kept` stay.
    pub would_delete: DeleteCounts,
    /// The token to send back to delete (when not deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm_token: Option<String>,
    /// When the token stops being accepted (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// In words: what to confirm, or why a token was not accepted.
    pub message: String,
}

/// A token handed out and not yet used.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    target: String,
    counts: DeleteCounts,
    expires_ms: u64,
}

/// The tokens handed out by one service.
pub(super) type Confirmations = HashMap<String, Pending>;

impl Service {
    /// Deletes a workflow with its versions, conversation and runs, in two
    /// steps (see the module). Its privacy-ledger entries stay, marked with
    /// its name; its uploaded files stay.
    pub fn delete_workflow(&self, workflow_id: &str, confirm: Option<&str>) -> Result<DeleteReply> {
        let counts = store::deletes::workflow_counts(&self.db(), workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        // Claimed before the token is used: a busy workflow keeps its token.
        let _busy = match confirm {
            Some(_) => Some(self.claim(workflow_id)?),
            None => None,
        };
        let target = format!("workflow:{workflow_id}");
        if let Some(preview) = self.check_confirmation(&target, counts, confirm) {
            return Ok(preview);
        }
        let name = store::get_workflow(&self.db(), workflow_id)?
            .and_then(|w| w.name)
            .unwrap_or_else(|| format!("unnamed workflow {workflow_id}"));
        if !store::deletes::delete_workflow_keeping_ledger(&mut self.db(), workflow_id, &name)? {
            return Err(CoreError::not_found("workflow", workflow_id));
        }
        self.inner.events.publish(Event::WorkflowDeleted {
            workflow_id: workflow_id.to_owned(),
        });
        Ok(deleted(counts, format!("deleted {name}")))
    }

    /// Deletes a flow run with its subflow runs, checkpoints and
    /// transcript, in two steps. A run in progress is refused.
    pub fn delete_flow_run(&self, run_id: &str, confirm: Option<&str>) -> Result<DeleteReply> {
        let counts = store::deletes::flow_run_counts(&self.db(), run_id)?
            .ok_or_else(|| CoreError::not_found("flow run", run_id))?;
        if let Some(preview) =
            self.check_confirmation(&format!("flow_run:{run_id}"), counts, confirm)
        {
            return Ok(preview);
        }
        self.flows().delete(run_id)?;
        Ok(deleted(counts, format!("deleted flow run {run_id}")))
    }

    /// Deletes a database backup (its file and its record), in two steps.
    pub fn delete_backup(&self, backup_id: &str, confirm: Option<&str>) -> Result<DeleteReply> {
        let backup = backups::get(&self.db(), backup_id)?
            .ok_or_else(|| CoreError::not_found("backup", backup_id))?;
        let counts = DeleteCounts {
            backups: 1,
            bytes: backup.size_bytes,
            ..DeleteCounts::default()
        };
        if let Some(preview) =
            self.check_confirmation(&format!("backup:{backup_id}"), counts, confirm)
        {
            return Ok(preview);
        }
        backups::remove(&self.db(), &backup)?;
        Ok(deleted(counts, format!("deleted backup {backup_id}")))
    }

    /// `None` when `confirm` is a live token for exactly this delete (it is
    /// used up); else the preview to show, with a new token.
    pub(super) fn check_confirmation(
        &self,
        target: &str,
        counts: DeleteCounts,
        confirm: Option<&str>,
    ) -> Option<DeleteReply> {
        let now = self.inner.clock.now_ms();
        let mut pending = super::lock(&self.inner.confirmations);
        pending.retain(|_, p| p.expires_ms > now);
        let why = match confirm.map(|t| (t, pending.get(t).cloned())) {
            None => "confirm to delete".to_owned(),
            Some((_, None)) => {
                "the confirmation token is unknown or has expired; confirm again".to_owned()
            }
            Some((_, Some(p))) if p.target != target => {
                "the confirmation token is for something else; confirm again".to_owned()
            }
            Some((token, Some(p))) if p.counts != counts => {
                pending.remove(token);
                "what would be deleted changed since the confirmation; confirm again".to_owned()
            }
            Some((token, Some(_))) => {
                pending.remove(token);
                return None;
            }
        };
        let token = maskflow_clock::random_token();
        let expires_ms = now + CONFIRM_TTL_MS;
        pending.insert(
            token.clone(),
            Pending {
                target: target.to_owned(),
                counts,
                expires_ms,
            },
        );
        Some(DeleteReply {
            deleted: false,
            would_delete: counts,
            confirm_token: Some(token),
            expires_at: Some(format_rfc3339(expires_ms)),
            message: why,
        })
    }
}

fn deleted(counts: DeleteCounts, message: String) -> DeleteReply {
    DeleteReply {
        deleted: true,
        would_delete: counts,
        confirm_token: None,
        expires_at: None,
        message,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::service::{CreateWorkflow, ServiceConfig};
    use crate::store::MessageRow;
    use crate::testing::HandClock;
    use maskflow_clock::{Clock, UlidGen};

    fn service(home: &std::path::Path) -> (Service, Arc<HandClock>) {
        let hand = Arc::new(HandClock::at(1_700_000_000_000));
        let clock: Arc<dyn Clock> = hand.clone();
        let s = Service::open(ServiceConfig {
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            ..ServiceConfig::from_settings(home)
        })
        .expect("service");
        (s, hand)
    }

    fn workflow(s: &Service) -> String {
        let req: CreateWorkflow = serde_json::from_value(serde_json::json!({"file_extracts": [
            {"filename": "a.csv", "columns": ["x"], "sample_rows": [["#"]], "row_count": 1}]}))
        .expect("request");
        s.create_workflow(req).expect("create").workflow_id
    }

    #[test]
    fn a_token_expires_is_bound_to_its_target_and_to_what_would_be_deleted() {
        let home = tempfile::tempdir().expect("tmp");
        let (s, hand) = service(home.path());
        let wf = workflow(&s);

        // Expired.
        let first = s.delete_workflow(&wf, None).expect("preview");
        hand.advance(CONFIRM_TTL_MS + 1);
        let again = s
            .delete_workflow(&wf, first.confirm_token.as_deref())
            .expect("expired");
        assert!(
            !again.deleted && again.message.contains("expired"),
            "{again:?}"
        );

        // For something else.
        let backup = s.create_backup().expect("backup");
        let other = s.delete_backup(&backup.id, None).expect("preview");
        let refused = s
            .delete_workflow(&wf, other.confirm_token.as_deref())
            .expect("other target");
        assert!(!refused.deleted && refused.message.contains("something else"));

        // What would be deleted changed since: new counts, new token.
        let token = refused.confirm_token.clone();
        store::insert_message(
            &s.db(),
            &MessageRow {
                id: "msg_late".into(),
                workflow_id: wf.clone(),
                version_id: None,
                role: "user".into(),
                content: "one more".into(),
                created_at: "t".into(),
            },
        )
        .expect("message");
        let changed = s.delete_workflow(&wf, token.as_deref()).expect("changed");
        assert!(!changed.deleted && changed.message.contains("changed"));
        assert_eq!(changed.would_delete.messages, 1);
        assert!(s.get_workflow(&wf).is_ok(), "still there");

        let done = s
            .delete_workflow(&wf, changed.confirm_token.as_deref())
            .expect("delete");
        assert!(done.deleted);
        assert!(s.get_workflow(&wf).is_err());
        // The backup's token is still good for the backup.
        let gone = s
            .delete_backup(&backup.id, other.confirm_token.as_deref())
            .expect("backup delete");
        assert!(gone.deleted);
        assert!(!std::path::Path::new(&backup.path).exists());
    }
}
