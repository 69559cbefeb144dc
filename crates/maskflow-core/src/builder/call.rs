//! Which call of a build a manual prompt answers (issue 19): the
//! validator's or the clarifier's call on one point of the conversation, or
//! the builder's call at one phase and iteration. The call that asks gives
//! its [`CallTag`] to its guarded back end (`GuardedProvider::tagged`, with
//! [`CallTag::for_the_call`]), which hands it to the manual back end with
//! the call; the prompt is stored with it,
//! and an answer given after a restart goes only to a later call of the
//! same waiter, role and tag. So the call asked again takes its answer even
//! when the prompt's wording changed (house rules edited, the context
//! fitted anew, a newer Maskflow), and a different question never does.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::table::Phase;
use crate::conversation::spec::WorkflowSpec;
use maskflow_llm::ChatMessage;

/// What a call is, for its manual prompt.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct CallTag {
    /// The call's identity within its waiter: the role and what the
    /// question depends on (hashed), e.g. `validator:<sha256>`.
    pub key: String,
    /// For a conversation call: the user's message, so the turn can go on
    /// after a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
}

/// The user's message a conversation call works on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The message, as the user sent it (trimmed).
    pub content: String,
    /// Whether it was already stored in the conversation (the validator
    /// passed it before the clarifier asked).
    pub stored: bool,
}

impl CallTag {
    /// The tag as the call carries it to the back end (and the store keeps
    /// it): the key, and the turn as JSON.
    pub fn for_the_call(&self) -> maskflow_llm::call::CallTag {
        maskflow_llm::call::CallTag {
            key: self.key.clone(),
            turn: self
                .turn
                .as_ref()
                .and_then(|t| serde_json::to_value(t).ok()),
        }
    }
}

fn hex(hasher: Sha256) -> String {
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The tag of the validator's or the clarifier's (`role`) call on
/// `history` (the conversation with the user's `turn` message last). The
/// key hashes the whole history: the same question is the same role on the
/// same conversation (the waiter pins the version, hence the extracts).
pub fn conversation(role: &str, history: &[ChatMessage], turn: Turn) -> CallTag {
    let mut h = Sha256::new();
    for m in history {
        // Length-prefixed, so no two histories hash alike by shifting text
        // between messages.
        let role = serde_json::to_string(&m.role).unwrap_or_default();
        h.update((role.len() as u64).to_le_bytes());
        h.update(role.as_bytes());
        h.update((m.content.len() as u64).to_le_bytes());
        h.update(m.content.as_bytes());
    }
    CallTag {
        key: format!("{role}:{}", hex(h)),
        turn: Some(turn),
    }
}

/// The tag of the builder's call at `phase` and `iteration`, on the
/// feedback and the previous workflow it revises (the conversation and the
/// extracts are fixed for a version's build).
pub fn builder(
    phase: Phase,
    iteration: u32,
    feedback: Option<&str>,
    previous: Option<&WorkflowSpec>,
) -> CallTag {
    let phase = serde_json::to_value(phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let previous = previous.and_then(|s| serde_json::to_string(s).ok());
    CallTag {
        key: format!(
            "builder:{phase}:{iteration}:{}",
            parts(&[feedback, previous.as_deref()])
        ),
        turn: None,
    }
}

/// The tag of the planner's call, on the person's feedback to the plan it
/// makes again (none for the first plan).
pub fn plan(feedback: Option<&str>) -> CallTag {
    CallTag {
        key: format!("plan:{}", parts(&[feedback])),
        turn: None,
    }
}

/// The tag of the AI reviewer's call on a proposed plan.
pub fn plan_review(proposed: &str) -> CallTag {
    CallTag {
        key: format!("plan-review:{}", parts(&[Some(proposed)])),
        turn: None,
    }
}

/// The tag of the AI reviewer's call on the script of an iteration.
pub fn script_review(iteration: u32, spec: &WorkflowSpec) -> CallTag {
    let spec = serde_json::to_string(spec).ok();
    CallTag {
        key: format!("review:{iteration}:{}", parts(&[spec.as_deref()])),
        turn: None,
    }
}

/// The hash of optional texts, each length-prefixed and marked present or
/// absent, so empty text is not none and no text shifts into another.
fn parts(texts: &[Option<&str>]) -> String {
    let mut h = Sha256::new();
    for part in texts {
        match part {
            Some(text) => {
                h.update([1]);
                h.update((text.len() as u64).to_le_bytes());
                h.update(text.as_bytes());
            }
            None => h.update([0]),
        }
    }
    hex(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskflow_llm::ChatRole;

    fn turn(content: &str) -> Turn {
        Turn {
            content: content.into(),
            stored: false,
        }
    }

    #[test]
    fn a_conversation_key_changes_with_anything_the_question_depends_on() {
        let history = vec![
            ChatMessage::new(ChatRole::User, "Sum the amounts per client"),
            ChatMessage::new(ChatRole::Assistant, "Which currency?"),
            ChatMessage::new(ChatRole::User, "EUR"),
        ];
        let key = |role: &str, h: &[ChatMessage]| conversation(role, h, turn("EUR")).key;
        let base = key("clarifier", &history);
        assert!(base.starts_with("clarifier:"), "{base}");
        assert_eq!(base, key("clarifier", &history.clone()), "stable");
        assert_ne!(base, key("validator", &history), "another role");
        assert_ne!(base, key("clarifier", &history[..2]), "another point");
        let mut other = history.clone();
        other[2].content = "USD".into();
        assert_ne!(base, key("clarifier", &other), "another message");
        let mut swapped = history.clone();
        swapped[1].role = ChatRole::User;
        assert_ne!(base, key("clarifier", &swapped), "another speaker");
        // Text moved across a message boundary is another conversation.
        let a = [
            ChatMessage::new(ChatRole::User, "ab"),
            ChatMessage::new(ChatRole::User, "c"),
        ];
        let b = [
            ChatMessage::new(ChatRole::User, "a"),
            ChatMessage::new(ChatRole::User, "bc"),
        ];
        assert_ne!(key("clarifier", &a), key("clarifier", &b));
        let tag = conversation("validator", &history, turn("EUR"));
        assert_eq!(tag.turn, Some(turn("EUR")));
    }

    #[test]
    fn a_builder_key_names_the_phase_and_iteration_and_what_it_revises() {
        let first = builder(Phase::Generate, 1, None, None).key;
        assert!(first.starts_with("builder:generate:1:"), "{first}");
        assert_eq!(first, builder(Phase::Generate, 1, None, None).key);
        let revise = builder(Phase::Revise, 2, Some("fix the dates"), None).key;
        assert!(revise.starts_with("builder:revise:2:"), "{revise}");
        assert_ne!(
            revise,
            builder(Phase::Revise, 3, Some("fix the dates"), None).key
        );
        assert_ne!(
            revise,
            builder(Phase::Revise, 2, Some("fix the sums"), None).key
        );
        assert_ne!(revise, builder(Phase::Revise, 2, None, None).key);
        assert_ne!(
            builder(Phase::Revise, 2, Some(""), None).key,
            builder(Phase::Revise, 2, None, None).key,
            "empty feedback is not none"
        );
        assert_eq!(builder(Phase::Generate, 1, None, None).turn, None);
    }

    #[test]
    fn plan_and_review_keys_name_their_call_and_what_it_depends_on() {
        let first = plan(None).key;
        assert!(first.starts_with("plan:"), "{first}");
        assert_eq!(first, plan(None).key, "stable");
        assert_ne!(first, plan(Some("")).key, "empty feedback is not none");
        assert_ne!(plan(Some("fewer steps")).key, plan(Some("more steps")).key);
        let reviewed = plan_review("1. Read the file").key;
        assert!(reviewed.starts_with("plan-review:"), "{reviewed}");
        assert_ne!(reviewed, plan_review("1. Read the files").key);
        let spec: WorkflowSpec = serde_json::from_value(serde_json::json!({
            "name": "Totals", "description": "Sums per client", "script": "print(1)\n",
            "fields": [], "execution": {"runtime": "python3", "entrypoint": "script.py",
                                        "requirements": [], "outputs": []}
        }))
        .expect("spec");
        let mut other = spec.clone();
        other.script.push_str("\n# changed\n");
        let script = script_review(1, &spec).key;
        assert!(script.starts_with("review:1:"), "{script}");
        assert_eq!(script, script_review(1, &spec).key);
        assert_ne!(script, script_review(2, &spec).key, "another iteration");
        assert_ne!(script, script_review(1, &other).key, "another script");
    }

    #[test]
    fn a_tag_carried_by_the_call_keeps_its_key_and_turn() {
        let tag = builder(Phase::Generate, 1, None, None).for_the_call();
        assert!(tag.key.starts_with("builder:generate:1:"), "{}", tag.key);
        assert_eq!(tag.turn, None);
        let history = [ChatMessage::new(ChatRole::User, "EUR")];
        let carried = conversation("clarifier", &history, turn("EUR")).for_the_call();
        let back: Turn = serde_json::from_value(carried.turn.expect("turn")).expect("a turn");
        assert_eq!(back, turn("EUR"));
    }
}
