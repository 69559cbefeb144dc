//! Cancel for the builder conversation's LLM call in flight. A message is
//! sent through [`Service::send_message_cancellable`], which races the
//! conversation against the workflow's cancel signal; cancelling drops the
//! conversation's future, so the HTTP request is dropped with it, the
//! privacy guard's pending ledger entry is recorded as `cancelled` with the
//! body that was sent, and the workflow's busy claim is released: the user
//! can send again at once. A step already stored stays stored (the same as
//! a failed call).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use utoipa::ToSchema;

use super::{MessageReply, Service};
use crate::error::{CoreError, Result};
use crate::providers::ProviderError;

// Keyed by the service's home as well: tests run many services (with the
// same generated ids) in one process.
type Key = (PathBuf, String);
static IN_FLIGHT: LazyLock<Mutex<HashMap<Key, Arc<Notify>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn in_flight() -> std::sync::MutexGuard<'static, HashMap<Key, Arc<Notify>>> {
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes this message's signal when the message ends (or is dropped).
struct Registration {
    key: Key,
    notify: Arc<Notify>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut map = in_flight();
        if map
            .get(&self.key)
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify))
        {
            map.remove(&self.key);
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
    fn cancel_key(&self, workflow_id: &str) -> Key {
        (self.inner.home.clone(), workflow_id.to_owned())
    }

    /// [`Service::send_message_with`], stoppable with
    /// [`Service::cancel_message`]: a stopped message fails with
    /// [`ProviderError::Cancelled`].
    pub async fn send_message_cancellable(
        &self,
        workflow_id: &str,
        content: &str,
        confirm_privacy: bool,
    ) -> Result<MessageReply> {
        let key = self.cancel_key(workflow_id);
        let registration = {
            let mut map = in_flight();
            if map.contains_key(&key) {
                // Another message is in flight: the busy claim refuses this one.
                None
            } else {
                let notify = Arc::new(Notify::new());
                map.insert(key.clone(), notify.clone());
                Some(Registration { key, notify })
            }
        };
        let Some(registration) = registration else {
            return self
                .send_message_with(workflow_id, content, confirm_privacy)
                .await;
        };
        let notify = registration.notify.clone();
        let result = tokio::select! {
            r = self.send_message_with(workflow_id, content, confirm_privacy) => r,
            () = notify.notified() => Err(CoreError::Provider(ProviderError::Cancelled {
                provider: "the LLM call".into(),
                reason: "stopped by the user".into(),
            })),
        };
        drop(registration);
        result
    }

    /// Stops the message in flight on `workflow_id`, if any.
    pub fn cancel_message(&self, workflow_id: &str) -> Result<CancelReply> {
        crate::store::get_workflow(&self.db(), workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        let notify = in_flight().get(&self.cancel_key(workflow_id)).cloned();
        if let Some(n) = &notify {
            // A stored permit: a cancel that lands before the race starts
            // still stops it.
            n.notify_one();
        }
        Ok(CancelReply {
            cancelled: notify.is_some(),
        })
    }
}
