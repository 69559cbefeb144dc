//! The LLM provider contract: one trait every back end implements (replay,
//! OpenAI-compatible, Anthropic, Ollama native and manual), the roles that
//! pick a provider, structured replies with one repair, the user's
//! provider configuration ([`config`]) and API keys ([`keys`]).
//!
//! A provider only moves text: it gets a request of messages (plus the JSON
//! schema the reply must match, for back ends that can enforce it) and
//! returns the reply's text, streaming deltas as they come. Parsing and
//! validating the reply, and the one "repair" round trip, live here in
//! [`ask_json`] so that every back end behaves the same.
//!
//! It must never depend on the privacy guard, the store, the app (maskflow-core)
//! or a shell: it sits below them all and uses only `maskflow-clock`
//! (checked by `scripts/structure.py`). The privacy guard wraps providers from
//! above; nothing here knows it exists.

#![deny(missing_docs)]

#[cfg(feature = "http")]
pub mod anthropic;
pub mod blocked;
pub mod budget;
pub mod call;
#[cfg(feature = "http")]
pub mod config;
pub mod context;
#[cfg(feature = "http")]
pub mod http;
pub mod keys;
pub mod local;
pub mod manual;
#[cfg(feature = "http")]
pub mod ollama;
#[cfg(feature = "http")]
pub mod openai;
pub mod parts;
pub mod replay;
pub mod structured;

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use parts::{Part, PartKind};
pub use replay::ReplayProvider;
pub use structured::{ask_json, extract_json, parse_reply};

/// A boxed, sendable future (the trait stays object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Called with each piece of streamed reply text.
pub type DeltaSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// Who is speaking in a prompt.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ChatRole {
    /// Instructions.
    System,
    /// The user (or Maskflow speaking for the user).
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt: its text, and where each piece of it came
/// from ([`parts`]; not on the wire).
#[derive(Serialize, Deserialize, Clone, Debug)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatMessage {
    /// Who says it.
    pub role: ChatRole,
    /// What is said.
    pub content: String,
    /// The kinds of its parts (see [`ChatMessage::parts`]).
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    layout: parts::Layout,
}

/// Two messages are equal when they say the same thing in the same role
/// (as on the wire); where their parts came from does not enter.
impl PartialEq for ChatMessage {
    fn eq(&self, other: &Self) -> bool {
        self.role == other.role && self.content == other.content
    }
}

impl Eq for ChatMessage {}

impl ChatMessage {
    /// A message from `role` given as a plain string: an assistant's is an
    /// LLM's reply; a system or user message is untyped text, which the
    /// guard checks strictly. Prompt builders use [`ChatMessage::from_parts`].
    pub fn new(role: ChatRole, content: impl Into<String>) -> Self {
        let content = content.into();
        let layout = match role {
            ChatRole::Assistant => parts::Layout::whole(PartKind::LlmReply, &content),
            _ => parts::Layout::default(),
        };
        Self {
            role,
            content,
            layout,
        }
    }

    /// A message of `role` assembled from `parts`, in order.
    pub fn from_parts(role: ChatRole, parts: Vec<Part>) -> Self {
        let (content, layout) = parts::Layout::of(parts);
        Self {
            role,
            content,
            layout,
        }
    }

    /// A user message of words the user typed.
    pub fn user_words(content: impl Into<String>) -> Self {
        Self::from_parts(ChatRole::User, vec![Part::user_words(content)])
    }

    /// Its parts, each with its kind. A message whose text changed since it
    /// was assembled, or that was read back from JSON, is one untyped part.
    pub fn parts(&self) -> Vec<(PartKind, &str)> {
        self.layout.parts(&self.content)
    }
}

/// The job an LLM is doing; each role may use its own provider.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Decides whether a local Python script can do the task.
    Validator,
    /// Asks questions until the task is clear.
    Clarifier,
    /// Writes the workflow (script, fields, execution).
    Builder,
    /// A flow agent, by name (later issues).
    Agent(String),
}

impl Role {
    /// The role's key, as in replay files: `validator`, `agent:<name>`.
    pub fn key(&self) -> String {
        match self {
            Role::Validator => "validator".into(),
            Role::Clarifier => "clarifier".into(),
            Role::Builder => "builder".into(),
            Role::Agent(name) => format!("agent:{name}"),
        }
    }

    /// Parses a role key.
    pub fn parse(key: &str) -> Option<Role> {
        match key {
            "validator" => Some(Role::Validator),
            "clarifier" => Some(Role::Clarifier),
            "builder" => Some(Role::Builder),
            _ => key
                .strip_prefix("agent:")
                .filter(|n| !n.is_empty())
                .map(|n| Role::Agent(n.to_owned())),
        }
    }
}

/// What is sent to a provider.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmRequest {
    /// The role asking.
    pub role: Role,
    /// The prompt, in order.
    pub messages: Vec<ChatMessage>,
    /// The JSON schema the reply must match, when a structured reply is wanted.
    pub schema: Option<Value>,
}

/// What a provider returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlmReply {
    /// The whole reply text.
    pub text: String,
}

/// Why a provider call failed.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderError {
    /// The replay file has no reply left for this role.
    #[error("the replay file has no more replies for the {role} role")]
    Exhausted {
        /// The role's key.
        role: String,
    },
    /// No back end is configured for this role.
    #[error("no LLM back end is configured for the {role} role")]
    Unconfigured {
        /// The role's key.
        role: String,
    },
    /// The reply could not be used, even after one repair.
    #[error("the {role} gave an unusable reply twice: {reason}")]
    InvalidReply {
        /// The role's key.
        role: String,
        /// What was wrong with the last reply.
        reason: String,
    },
    /// The back end failed.
    #[error("{provider} failed: {message}")]
    Failed {
        /// The back end's name.
        provider: String,
        /// What went wrong, in words.
        message: String,
    },
    /// The back end did not answer (or stopped answering) in time: a
    /// gateway timeout, told apart from other failures so the shells can
    /// say so (HTTP 504).
    #[error("{provider} failed: {message}")]
    TimedOut {
        /// The back end's name.
        provider: String,
        /// What timed out, in words.
        message: String,
    },
    /// The reply reached the role's output budget (or the room its context
    /// window left) before it ended.
    #[error("{}", budget::exceeded_message(.role, *.budget, *.window))]
    BudgetExceeded {
        /// The role's key.
        role: String,
        /// The budget, in tokens.
        budget: u32,
        /// The model's context window, when it (not the role's budget) set
        /// the limit: the prompt left only `budget` tokens for the reply.
        window: Option<u32>,
    },
    /// The prompt does not fit the model's context window; nothing was sent.
    #[error(
        "the {role}'s prompt is about {} tokens but {model}'s context window is {} tokens \
(with at least {} left for the reply); nothing was sent. Use a model with a larger context \
or smaller files",
        budget::thousands(u64::from(*.prompt_tokens)),
        budget::thousands(u64::from(*.window)),
        context::MIN_REPLY_TOKENS
    )]
    ContextOverflow {
        /// The role's key.
        role: String,
        /// The model.
        model: String,
        /// The prompt's estimated tokens.
        prompt_tokens: u32,
        /// The model's window.
        window: u32,
    },
    /// A replay file could not be used.
    #[error("replay file: {0}")]
    ReplayFile(String),
    /// The request was cancelled before a reply came (a pending manual
    /// prompt the user dismissed, or a stopped call).
    #[error("{provider}: the request was cancelled ({reason})")]
    Cancelled {
        /// The back end's name.
        provider: String,
        /// Who or what cancelled it.
        reason: String,
    },
    /// The privacy guard refused to send the request: it contains raw
    /// values of the user's files.
    #[error("{}", blocked::blocked_message(.0))]
    PrivacyBlocked(Vec<blocked::BlockedValue>),
}

/// An LLM back end.
pub trait Provider: Send + Sync + Debug {
    /// A short name for errors and the ledger, e.g. `"replay"`.
    fn name(&self) -> &str;

    /// The model it asks, for the ledger (empty when it has none).
    fn model(&self) -> &str {
        ""
    }

    /// Whether a person answers instead of a model (the manual back end):
    /// the build pipeline lets a human gate wait for it.
    fn is_manual(&self) -> bool {
        false
    }

    /// Whether the model runs in this process (the embedded back end):
    /// nothing is sent anywhere, and the ledger says so.
    fn is_local(&self) -> bool {
        false
    }

    /// Whether the back end gives the model the reply's schema itself (a
    /// response format, a forced tool, a grammar), so a prompt short of
    /// room may leave out its written copy. `false`: the prompt is all
    /// the model has.
    fn takes_schema(&self) -> bool {
        false
    }

    /// The model's context window in tokens, when known (set in Settings,
    /// reported by the server, or a known cloud model); `None`: unknown, no
    /// prompt is reduced or refused for its length.
    fn context_window(&self) -> BoxFuture<'_, Option<u32>> {
        Box::pin(async { None })
    }

    /// Checks that the back end can be reached, for Settings' "Test
    /// connection": a line saying where it connected and, where the server
    /// lists them, its models. Back ends that reach no server have nothing
    /// to check.
    fn probe(&self) -> BoxFuture<'_, Result<String, ProviderError>> {
        let line = format!("{} reaches no server; nothing to check", self.name());
        Box::pin(async move { Ok(line) })
    }

    /// Sends `request` and returns the whole reply, calling `on_delta` with
    /// each piece of text as it streams in.
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>>;
}

/// Which provider each role uses.
#[derive(Clone, Debug)]
pub struct Roles {
    /// For the validator.
    pub validator: Arc<dyn Provider>,
    /// For the clarifier.
    pub clarifier: Arc<dyn Provider>,
    /// For the builder.
    pub builder: Arc<dyn Provider>,
}

impl Roles {
    /// Every role uses `provider`.
    pub fn all(provider: Arc<dyn Provider>) -> Self {
        Self {
            validator: provider.clone(),
            clarifier: provider.clone(),
            builder: provider,
        }
    }

    /// The provider for `role` (agents use the builder's until flows exist).
    pub fn for_role(&self, role: &Role) -> &Arc<dyn Provider> {
        match role {
            Role::Validator => &self.validator,
            Role::Clarifier => &self.clarifier,
            Role::Builder | Role::Agent(_) => &self.builder,
        }
    }
}

/// A provider that refuses every call (no back end configured yet).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unconfigured;

impl Provider for Unconfigured {
    fn name(&self) -> &str {
        "unconfigured"
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            Err(ProviderError::Unconfigured {
                role: request.role.key(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_keys_round_trip() {
        for r in [
            Role::Validator,
            Role::Clarifier,
            Role::Builder,
            Role::Agent("x".into()),
        ] {
            assert_eq!(Role::parse(&r.key()), Some(r));
        }
        assert_eq!(Role::parse("agent:"), None);
        assert_eq!(Role::parse("critic"), None);
    }
}
