//! Where each piece of an outbound message came from (issue #38): a message
//! is assembled from [`Part`]s, each of one [`PartKind`], and the privacy
//! guard judges each part by its kind rather than the message as one flat
//! text. Maskflow's fixed instructions, its masked extracts and the numbers
//! it computed cannot hold a raw value by construction, so they are never
//! matched against the files; the user's words and the LLM's replies are
//! checked; runtime text and any text given as a plain string are checked
//! strictly.
//!
//! A message keeps its text (`content`, what every back end sends) and the
//! byte ends of its parts, with a fingerprint of the text they were made
//! for: a message whose text was changed after it was assembled no longer
//! matches its parts and is judged as one untyped text (the strictest
//! check), so no edit can pass text off as Maskflow's.
//!
//! Neither a message nor a part can be made with a kind it does not come
//! from other than through their constructors: their fields are private.
//!
//! ```compile_fail
//! use maskflow_llm::{ChatMessage, ChatRole};
//! // A message with no parts of its own cannot be written as a literal.
//! let m = ChatMessage { role: ChatRole::System, content: "raw".into() };
//! ```
//!
//! ```compile_fail
//! use maskflow_llm::{Part, PartKind};
//! // Nor can text be labelled as Maskflow's instructions by hand.
//! let p = Part { kind: PartKind::Instructions, text: "raw".into() };
//! ```
//!
//! ```
//! use maskflow_llm::{ChatMessage, ChatRole, Part, PartKind};
//! let m = ChatMessage::from_parts(ChatRole::System, vec![Part::instructions("Hi")]);
//! assert_eq!(m.parts(), vec![(PartKind::Instructions, "Hi")]);
//! ```

use std::hash::{Hash, Hasher};

/// What a part of a message is, by where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartKind {
    /// Maskflow's fixed instructions (a prompt's wording, a schema's text).
    Instructions,
    /// The approved masked extracts: masked samples, real column names only
    /// where they are not values, and the profile's computed figures.
    Extract,
    /// Numbers Maskflow computed (counts, rounded ranges, shape counts).
    Aggregate,
    /// Values the user switched on to be sent as they are (a category).
    Consented,
    /// Words the user typed (a message, a house rule).
    UserWords,
    /// Text an LLM wrote in an earlier reply.
    LlmReply,
    /// Text made while Maskflow ran: a repair's feedback, a script's output.
    Runtime,
    /// Text given as a plain string ([`crate::ChatMessage::new`] of a
    /// system or user message): checked as strictly as the guard can.
    Untyped,
}

impl PartKind {
    /// Whether the guard must match this part against the files' values:
    /// every kind but Maskflow's own instructions, extracts and figures
    /// and what the user consented to send.
    pub fn is_checked(self) -> bool {
        !matches!(
            self,
            Self::Instructions | Self::Extract | Self::Aggregate | Self::Consented
        )
    }

    /// Whether a match in this part is only refused when it identifies
    /// someone (the user's words and the LLM's replies, issue #38 point 4);
    /// other checked parts are refused for any value of the files.
    pub fn refuses_only_identifying(self) -> bool {
        matches!(self, Self::UserWords | Self::LlmReply)
    }

    /// The part in words, for a refusal and the ledger.
    pub fn label(self) -> &'static str {
        match self {
            Self::Instructions => "Maskflow's instructions",
            Self::Extract => "the masked extracts",
            Self::Aggregate => "Maskflow's computed figures",
            Self::Consented => "the values you chose to send",
            Self::UserWords => "your words",
            Self::LlmReply => "an earlier reply of the LLM",
            Self::Runtime => "text Maskflow made while running (a test's output or a script's)",
            Self::Untyped => "text of the request",
        }
    }
}

/// A piece of text of one kind. Made only through the constructor of its
/// kind, so a prompt builder says where each piece came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    kind: PartKind,
    text: String,
}

impl Part {
    /// Maskflow's fixed wording.
    pub fn instructions(text: impl Into<String>) -> Self {
        Self::of(PartKind::Instructions, text)
    }
    /// Text rendered from the approved masked extracts.
    pub fn extract(text: impl Into<String>) -> Self {
        Self::of(PartKind::Extract, text)
    }
    /// A number Maskflow computed.
    pub fn aggregate(n: u64) -> Self {
        Self::of(PartKind::Aggregate, n.to_string())
    }
    /// Values the user consented to send, as consented.
    pub fn consented(text: impl Into<String>) -> Self {
        Self::of(PartKind::Consented, text)
    }
    /// The user's own words.
    pub fn user_words(text: impl Into<String>) -> Self {
        Self::of(PartKind::UserWords, text)
    }
    /// An LLM's earlier reply.
    pub fn llm_reply(text: impl Into<String>) -> Self {
        Self::of(PartKind::LlmReply, text)
    }
    /// Text made at run time (feedback, output).
    pub fn runtime(text: impl Into<String>) -> Self {
        Self::of(PartKind::Runtime, text)
    }

    fn of(kind: PartKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> PartKind {
        self.kind
    }

    /// Its text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The layout of a message's parts: each part's kind and byte end, and a
/// fingerprint of the text they tile.
#[derive(Clone, Debug, Default)]
pub(crate) struct Layout {
    ends: Vec<(PartKind, usize)>,
    fingerprint: u64,
}

impl Layout {
    /// The layout of `parts` joined, with the joined text.
    pub(crate) fn of(parts: Vec<Part>) -> (String, Self) {
        let mut text = String::with_capacity(parts.iter().map(|p| p.text.len()).sum());
        let mut ends: Vec<(PartKind, usize)> = Vec::with_capacity(parts.len());
        for p in parts {
            text.push_str(&p.text);
            match ends.last_mut() {
                // Adjacent parts of one kind are one part.
                Some((k, end)) if *k == p.kind => *end = text.len(),
                _ => ends.push((p.kind, text.len())),
            }
        }
        let fingerprint = fingerprint(&text);
        (text, Self { ends, fingerprint })
    }

    /// One part of `kind` holding all of `text`.
    pub(crate) fn whole(kind: PartKind, text: &str) -> Self {
        Self {
            ends: vec![(kind, text.len())],
            fingerprint: fingerprint(text),
        }
    }

    /// The parts of `content`: as laid out if the layout was made for this
    /// very text, else the whole text as one untyped part.
    pub(crate) fn parts<'a>(&'a self, content: &'a str) -> Vec<(PartKind, &'a str)> {
        let fits = self.ends.last().is_some_and(|(_, e)| *e == content.len())
            && self.fingerprint == fingerprint(content);
        if !fits {
            return vec![(PartKind::Untyped, content)];
        }
        let mut start = 0;
        self.ends
            .iter()
            .map(|&(kind, end)| {
                let part = (kind, &content[start..end]);
                start = end;
                part
            })
            .collect()
    }
}

fn fingerprint(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChatMessage, ChatRole};

    #[test]
    fn parts_keep_their_kinds_and_adjacent_ones_merge() {
        let m = ChatMessage::from_parts(
            ChatRole::System,
            vec![
                Part::instructions("Rows: "),
                Part::aggregate(630_618),
                Part::instructions(". Ask: "),
                Part::instructions("go"),
                Part::user_words("keep 2021"),
            ],
        );
        assert_eq!(m.content, "Rows: 630618. Ask: gokeep 2021");
        assert_eq!(
            m.parts(),
            vec![
                (PartKind::Instructions, "Rows: "),
                (PartKind::Aggregate, "630618"),
                (PartKind::Instructions, ". Ask: go"),
                (PartKind::UserWords, "keep 2021"),
            ]
        );
    }

    /// A message changed after it was assembled is one untyped text: its
    /// parts cannot vouch for text they were not made of.
    #[test]
    fn an_edited_message_is_untyped_even_at_the_same_length() {
        let mut m = ChatMessage::from_parts(ChatRole::System, vec![Part::instructions("abcd")]);
        m.content = "wxyz".into();
        assert_eq!(m.parts(), vec![(PartKind::Untyped, "wxyz")]);
        m.content.push('!');
        assert_eq!(m.parts(), vec![(PartKind::Untyped, "wxyz!")]);
    }

    #[test]
    fn a_plain_message_is_judged_by_its_role() {
        let kinds = |role| ChatMessage::new(role, "hi").parts()[0].0;
        assert_eq!(kinds(ChatRole::System), PartKind::Untyped);
        assert_eq!(kinds(ChatRole::User), PartKind::Untyped);
        assert_eq!(kinds(ChatRole::Assistant), PartKind::LlmReply);
        assert_eq!(
            ChatMessage::user_words("hi").parts(),
            vec![(PartKind::UserWords, "hi")]
        );
        // A message read back from JSON (a stored prompt) has no parts.
        let read: ChatMessage =
            serde_json::from_str(r#"{"role":"system","content":"x"}"#).expect("json");
        assert_eq!(read.parts(), vec![(PartKind::Untyped, "x")]);
        assert_eq!(read, ChatMessage::new(ChatRole::System, "x"));
    }
}
