//! Cancel for the builder conversation's LLM call in flight. A message is
//! sent through [`Service::send_message_cancellable`], which claims the
//! workflow with a cancel signal and races the conversation against it;
//! cancelling drops the conversation's future, so the HTTP request is
//! dropped with it, the privacy guard's pending ledger entry is recorded as
//! `cancelled` with the body that was sent, and the workflow's claim is
//! released: the user can send again at once. A step already stored stays
//! stored (the same as a failed call).
//!
//! The signals live in the service (its workflow claims and its builds), not
//! in the process: two services never stop each other's work.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use utoipa::ToSchema;

use super::{Inner, MessageReply, Service, lock};
use crate::error::{CoreError, Result};
use maskflow_llm::ProviderError;

/// Why a build the user cancelled failed (the version's failure reason).
pub const CANCELLED_BY_USER: &str = "cancelled by the user";

/// A build running in this service: the flag its auto-test's runner
/// watches (the script is killed) and the signal that drops its LLM call.
#[derive(Debug, Default)]
pub(super) struct BuildCancel {
    /// Set once the user cancels.
    pub flag: Arc<AtomicBool>,
    /// Wakes the build's driver.
    pub notify: Notify,
}

/// The builds running in one service, by workflow.
pub(super) type Builds = HashMap<String, Arc<BuildCancel>>;

/// A running build's entry, removed when the build ends.
pub(super) struct BuildRegistration {
    inner: Arc<Inner>,
    workflow_id: String,
    /// What a cancel sets and wakes.
    pub cancel: Arc<BuildCancel>,
}

impl Drop for BuildRegistration {
    fn drop(&mut self) {
        let mut map = lock(&self.inner.builds);
        if map
            .get(&self.workflow_id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cancel))
        {
            map.remove(&self.workflow_id);
        }
    }
}

/// The answer to a cancel.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, ts_rs::TS)]
pub struct CancelReply {
    /// Whether a message was in flight and is now stopped.
    pub cancelled: bool,
}

impl Service {
    /// [`Service::send_message_with`], stoppable with
    /// [`Service::cancel_message`]: a stopped message fails with
    /// [`ProviderError::Cancelled`].
    pub async fn send_message_cancellable(
        &self,
        workflow_id: &str,
        content: &str,
        confirm_privacy: bool,
    ) -> Result<MessageReply> {
        let content = super::checked_content(content)?;
        let notify = Arc::new(Notify::new());
        let busy = self.claim_with(workflow_id, Some(notify.clone()))?;
        let result = tokio::select! {
            r = self.claimed_message(workflow_id, content, confirm_privacy) => r,
            () = notify.notified() => {
                let stopped = CoreError::Provider(ProviderError::Cancelled {
                    provider: "the LLM call".into(),
                    reason: "stopped by the user".into(),
                });
                // The turn was dropped before it could say so (#28).
                self.notice_message_failed(workflow_id, &stopped);
                Err(stopped)
            }
        };
        drop(busy);
        result
    }

    /// Registers the build of `workflow_id` running in this service, so
    /// [`Service::cancel_message`] can stop it.
    pub(super) fn register_build(&self, workflow_id: &str) -> BuildRegistration {
        let cancel = Arc::new(BuildCancel::default());
        lock(&self.inner.builds).insert(workflow_id.to_owned(), cancel.clone());
        BuildRegistration {
            inner: self.inner.clone(),
            workflow_id: workflow_id.to_owned(),
            cancel,
        }
    }

    /// Stops what `workflow_id` is doing: the message in flight, else the
    /// build in progress (its LLM call is dropped, its test script killed,
    /// and the version fails "cancelled by the user").
    pub fn cancel_message(&self, workflow_id: &str) -> Result<CancelReply> {
        crate::store::get_workflow(&self.db(), workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        let message = lock(&self.inner.busy).get(workflow_id).cloned().flatten();
        if let Some(n) = message {
            // A stored permit: a cancel that lands before the race starts
            // still stops it.
            n.notify_one();
            return Ok(CancelReply { cancelled: true });
        }
        let build = lock(&self.inner.builds).get(workflow_id).cloned();
        if let Some(build) = build {
            build.flag.store(true, Ordering::SeqCst);
            build.notify.notify_one();
            return Ok(CancelReply { cancelled: true });
        }
        Ok(CancelReply { cancelled: false })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::service::tests::{create, service_with};
    use crate::testing::Gate;
    use maskflow_llm::budget::{RoleBudgets, VALIDATOR_DEFAULT};
    use maskflow_llm::{ProviderError, Role};

    use crate::error::CoreError;

    /// Two services on one data folder in one process share nothing but the
    /// database: a cancel, a claim or a budget of one never reaches the other.
    #[tokio::test]
    async fn two_services_keep_their_own_calls_in_flight_and_budgets() {
        let home = tempfile::tempdir().expect("tmp");
        let gate = Arc::new(Gate::default());
        let a = service_with(home.path(), gate.clone());
        let b = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
        let c = create(&a);
        let message = {
            let (a, id) = (a.clone(), c.workflow_id.clone());
            tokio::spawn(async move { a.send_message_cancellable(&id, "sum it", false).await })
        };
        gate.entered.notified().await;

        // The other service has nothing in flight to stop ...
        let reply = b.cancel_message(&c.workflow_id).expect("cancel in b");
        assert!(!reply.cancelled);
        // ... and is refused the workflow like another process (a's lease).
        let err = b
            .send_message(&c.workflow_id, "again")
            .await
            .expect_err("held by a");
        assert!(
            err.to_string().contains("in another Maskflow process"),
            "{err}"
        );

        // The budgets each put in force are their own.
        a.set_role_budgets(RoleBudgets {
            validator: Some(200),
            ..Default::default()
        })
        .expect("budgets");
        assert_eq!(a.budgets().max_tokens(&Role::Validator, None), 200);
        assert_eq!(
            b.budgets().max_tokens(&Role::Validator, None),
            VALIDATOR_DEFAULT
        );

        // The service that sent the message stops it.
        assert!(a.cancel_message(&c.workflow_id).expect("cancel").cancelled);
        let err = message.await.expect("join").expect_err("cancelled");
        assert!(
            matches!(err, CoreError::Provider(ProviderError::Cancelled { .. })),
            "{err:?}"
        );
        assert!(!a.cancel_message(&c.workflow_id).expect("cancel").cancelled);
    }
}
