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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;
use utoipa::ToSchema;

use super::{MessageReply, Service};
use crate::error::{CoreError, Result};
use maskflow_llm::ProviderError;

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

/// Why a build the user cancelled failed (the version's failure reason).
pub const CANCELLED_BY_USER: &str = "cancelled by the user";

/// A build running in this process: the flag its auto-test's runner
/// watches (the script is killed) and the signal that drops its LLM call.
#[derive(Debug, Default)]
pub(super) struct BuildCancel {
    /// Set once the user cancels.
    pub flag: Arc<AtomicBool>,
    /// Wakes the build's driver.
    pub notify: Notify,
}

static BUILDS: LazyLock<Mutex<HashMap<Key, Arc<BuildCancel>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn builds() -> std::sync::MutexGuard<'static, HashMap<Key, Arc<BuildCancel>>> {
    BUILDS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running build's entry, removed when the build ends.
pub(super) struct BuildRegistration {
    key: Key,
    /// What a cancel sets and wakes.
    pub cancel: Arc<BuildCancel>,
}

impl Drop for BuildRegistration {
    fn drop(&mut self) {
        let mut map = builds();
        if map
            .get(&self.key)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cancel))
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

    /// Registers the build of `workflow_id` running in this process, so
    /// [`Service::cancel_message`] can stop it.
    pub(super) fn register_build(&self, workflow_id: &str) -> BuildRegistration {
        let key = self.cancel_key(workflow_id);
        let cancel = Arc::new(BuildCancel::default());
        builds().insert(key.clone(), cancel.clone());
        BuildRegistration { key, cancel }
    }

    /// Stops what `workflow_id` is doing: the message in flight, else the
    /// build in progress (its LLM call is dropped, its test script killed,
    /// and the version fails "cancelled by the user").
    pub fn cancel_message(&self, workflow_id: &str) -> Result<CancelReply> {
        crate::store::get_workflow(&self.db(), workflow_id)?
            .ok_or_else(|| CoreError::not_found("workflow", workflow_id))?;
        let key = self.cancel_key(workflow_id);
        if let Some(n) = in_flight().get(&key).cloned() {
            // A stored permit: a cancel that lands before the race starts
            // still stops it.
            n.notify_one();
            return Ok(CancelReply { cancelled: true });
        }
        if let Some(build) = builds().get(&key).cloned() {
            build.flag.store(true, Ordering::SeqCst);
            build.notify.notify_one();
            return Ok(CancelReply { cancelled: true });
        }
        Ok(CancelReply { cancelled: false })
    }
}
