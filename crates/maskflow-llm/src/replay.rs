//! The replay provider: gives the replies listed per role in a JSON file, in
//! order, for tests and demos (`maskflow serve --replay replies.json`).
//!
//! The file maps a role key (`validator`, `clarifier`, `builder`,
//! `agent:<name>`) to a list of replies; a reply is a string (sent as is,
//! so malformed replies can be replayed too) or any JSON value (sent as its
//! JSON text). A role whose list is used up fails with
//! [`ProviderError::Exhausted`].

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use super::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, Role};

/// Replies given in order, per role.
#[derive(Debug, Default)]
pub struct ReplayProvider {
    replies: Mutex<HashMap<String, VecDeque<String>>>,
    /// The requests received, for tests; `None` when serving from a replay
    /// file, where keeping every request would grow without bound.
    seen: Option<Mutex<Vec<LlmRequest>>>,
}

impl ReplayProvider {
    /// Reads a replay file, for `serve --replay` and the desktop's
    /// `MASKFLOW_REPLAY`: the requests are not kept ([`Self::requests`] is empty).
    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ProviderError::ReplayFile(format!("cannot read {}: {e}", path.display()))
        })?;
        let provider = Self::from_json_str(&text)
            .map_err(|e| ProviderError::ReplayFile(format!("{}: {e}", path.display())))?;
        Ok(Self {
            seen: None,
            ..provider
        })
    }

    /// Parses the text of a replay file.
    pub fn from_json_str(text: &str) -> Result<Self, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Self::from_value(&value)
    }

    /// Builds the provider from a replay document.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        let Some(map) = value.as_object() else {
            return Err("the top level must be an object mapping roles to lists of replies".into());
        };
        let mut replies = HashMap::new();
        for (key, list) in map {
            if Role::parse(key).is_none() {
                return Err(format!(
                    "unknown role {key:?}; use validator, clarifier, builder or agent:<name>"
                ));
            }
            let Some(items) = list.as_array() else {
                return Err(format!("the replies of {key:?} must be a list"));
            };
            let texts = items
                .iter()
                .map(|item| match item {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            replies.insert(key.clone(), texts);
        }
        Ok(Self {
            replies: Mutex::new(replies),
            seen: Some(Mutex::new(Vec::new())),
        })
    }

    /// Every request received so far, in order (none when read [`Self::from_file`]).
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.seen.as_ref().map_or_else(Vec::new, |seen| {
            seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
        })
    }

    /// How many replies are left for `role`.
    pub fn remaining(&self, role: &Role) -> usize {
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&role.key())
            .map_or(0, VecDeque::len)
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            if let Some(seen) = &self.seen {
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(request.clone());
            }
            let key = request.role.key();
            let next = self
                .replies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(&key)
                .and_then(VecDeque::pop_front);
            let text = next.ok_or(ProviderError::Exhausted { role: key })?;
            // Stream in small pieces, on character boundaries.
            let mut piece = String::new();
            for c in text.chars() {
                piece.push(c);
                if piece.len() >= 16 {
                    on_delta(&piece);
                    piece.clear();
                }
            }
            if !piece.is_empty() {
                on_delta(&piece);
            }
            Ok(LlmReply { text })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChatMessage, ChatRole};
    use std::sync::Arc;

    fn request(role: Role) -> LlmRequest {
        LlmRequest {
            role,
            messages: vec![ChatMessage::new(ChatRole::User, "hi")],
            schema: None,
        }
    }

    /// `serve --replay` answers for as long as it runs: the requests it
    /// answered must not pile up in memory (the soak benchmark's growth).
    #[tokio::test]
    async fn a_replay_file_served_keeps_no_requests_and_a_test_double_does() {
        let path =
            std::env::temp_dir().join(format!("maskflow-replay-{}.json", std::process::id()));
        std::fs::write(&path, r#"{"validator": ["a", "b"]}"#).expect("write");
        let served = ReplayProvider::from_file(&path).expect("valid");
        std::fs::remove_file(&path).ok();
        let recorded =
            ReplayProvider::from_json_str(r#"{"validator": ["a", "b"]}"#).expect("valid");
        for p in [&served, &recorded] {
            p.complete(&request(Role::Validator), &|_| {})
                .await
                .expect("reply");
        }
        assert!(served.requests().is_empty());
        assert_eq!(served.remaining(&Role::Validator), 1);
        assert_eq!(recorded.requests().len(), 1);
    }

    #[tokio::test]
    async fn replies_come_in_order_per_role_then_run_out() {
        let p = ReplayProvider::from_json_str(
            r#"{"validator": [{"feasible": true}, "plain text"], "clarifier": [], "agent:critic": ["ok"]}"#,
        )
        .expect("valid");
        let deltas = Arc::new(Mutex::new(String::new()));
        let d = deltas.clone();
        let sink = move |s: &str| d.lock().expect("lock").push_str(s);
        let first = p
            .complete(&request(Role::Validator), &sink)
            .await
            .expect("first");
        assert_eq!(first.text, r#"{"feasible":true}"#);
        assert_eq!(*deltas.lock().expect("lock"), first.text);
        let second = p
            .complete(&request(Role::Validator), &sink)
            .await
            .expect("second");
        assert_eq!(second.text, "plain text");
        let err = p
            .complete(&request(Role::Validator), &sink)
            .await
            .expect_err("exhausted");
        assert_eq!(
            err,
            ProviderError::Exhausted {
                role: "validator".into()
            }
        );
        assert!(
            err.to_string()
                .contains("no more replies for the validator role")
        );
        let agent = p
            .complete(&request(Role::Agent("critic".into())), &sink)
            .await
            .expect("agent");
        assert_eq!(agent.text, "ok");
        assert_eq!(p.requests().len(), 4);
    }

    #[test]
    fn bad_files_are_refused_with_a_reason() {
        assert!(ReplayProvider::from_json_str("[]").is_err());
        assert!(
            ReplayProvider::from_json_str(r#"{"critic": []}"#)
                .expect_err("role")
                .contains("unknown role")
        );
        assert!(
            ReplayProvider::from_json_str(r#"{"builder": "x"}"#)
                .expect_err("list")
                .contains("must be a list")
        );
        assert!(ReplayProvider::from_json_str("{").is_err());
    }
}
