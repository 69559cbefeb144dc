//! The one conversation list of seed 004 (`GET /conversations`): builder
//! conversations (one per workflow) and flow runs together, each flow run
//! with its `flowName`, filterable by flow name or by `__none__` (the
//! builder conversations, which have no flow name).

use serde::Serialize;
use ts_rs::TS;
use utoipa::ToSchema;

use super::{Service, current_of};
use crate::error::Result;
use crate::store;
use crate::store::conversations::BuilderConversation;
use maskflow_flows::store as flow_store;

/// The `flowName` filter value that selects conversations without a flow name.
pub const NO_FLOW: &str = "__none__";
/// The title of a workflow with neither a name nor a user message yet.
pub const UNTITLED: &str = "Untitled workflow";
/// Longest title taken from a first user message, in characters.
const TITLE_CHARS: usize = 80;

/// What a conversation is.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ConversationKind {
    /// A workflow's validator → clarifier → builder conversation.
    Builder,
    /// A flow run (seed 004's flow conversation).
    Flow,
}

/// One conversation in the list (seed 004's `ConversationSummary`).
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// The workflow (`wf_…`) of a builder conversation, the run (`flow_…`) of a flow.
    pub conversation_id: String,
    /// Builder conversation or flow run.
    pub kind: ConversationKind,
    /// The workflow's name (else the user's first message), or the run's title.
    pub title: String,
    /// The flow of a flow run; absent for builder conversations.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub flow_name: Option<String>,
    /// The workflow's current version status, or the run's status.
    pub status: String,
    /// A flow run stored as `running` that no live Maskflow process runs
    /// (its process was killed or crashed); derived, not stored.
    pub interrupted: bool,
    /// An archived flow run (builder conversations are never archived).
    pub archived: bool,
    /// RFC 3339.
    pub created_at: String,
    /// The last message's or turn's time, else the creation time (RFC 3339).
    pub last_message_at: String,
}

/// `GET /api/conversations`.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct ConversationList {
    /// Most recent activity first (`lastMessageAt`, then the id, descending).
    pub conversations: Vec<ConversationSummary>,
}

/// Which conversations a `flowName` filter keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter<'a> {
    All,
    Builder,
    Flow(&'a str),
}

impl<'a> Filter<'a> {
    fn of(flow_name: Option<&'a str>) -> Self {
        match flow_name {
            None | Some("") => Filter::All,
            Some(NO_FLOW) => Filter::Builder,
            Some(name) => Filter::Flow(name),
        }
    }
}

impl Service {
    /// Builder conversations and flow runs, most recent activity first;
    /// `flow_name` keeps one flow's runs, or with `__none__` the builder
    /// conversations only. An unknown flow name gives an empty list.
    pub fn list_conversations(&self, flow_name: Option<&str>) -> Result<ConversationList> {
        let filter = Filter::of(flow_name);
        let mut out = Vec::new();
        let db = self.db();
        if matches!(filter, Filter::All | Filter::Builder) {
            for c in store::conversations::builder_conversations(&db)? {
                let versions = store::versions_of(&db, &c.workflow_id)?;
                let Some(current) = current_of(&versions) else {
                    continue;
                };
                out.push(builder_summary(c, current.status.as_str()));
            }
        }
        if !matches!(filter, Filter::Builder) {
            let only = match filter {
                Filter::Flow(name) => Some(name),
                _ => None,
            };
            for r in flow_store::run_outlines(&db, only)? {
                out.push(ConversationSummary {
                    conversation_id: r.id,
                    kind: ConversationKind::Flow,
                    title: r.title,
                    flow_name: Some(r.flow_name),
                    status: r.status,
                    interrupted: false,
                    archived: r.archived,
                    created_at: r.created_at,
                    last_message_at: r.last_turn_at,
                });
            }
        }
        drop(db);
        for c in &mut out {
            if c.kind == ConversationKind::Flow && c.status == "running" {
                c.interrupted = self.flow_run_interrupted(&c.conversation_id);
            }
        }
        sort(&mut out);
        Ok(ConversationList { conversations: out })
    }
}

fn builder_summary(c: BuilderConversation, status: &str) -> ConversationSummary {
    let title = c
        .name
        .filter(|n| !n.trim().is_empty())
        .or_else(|| c.first_user_message.as_deref().and_then(first_line))
        .unwrap_or_else(|| UNTITLED.to_owned());
    ConversationSummary {
        conversation_id: c.workflow_id,
        kind: ConversationKind::Builder,
        title,
        flow_name: None,
        status: status.to_owned(),
        interrupted: false,
        archived: false,
        created_at: c.created_at,
        last_message_at: c.last_message_at,
    }
}

/// The first non-empty line of a message, cut to [`TITLE_CHARS`].
fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.chars().count() <= TITLE_CHARS {
        return Some(line.to_owned());
    }
    let cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

/// Most recent activity first; the id breaks ties (ids grow with time).
fn sort(list: &mut [ConversationSummary]) {
    list.sort_by(|a, b| {
        b.last_message_at
            .cmp(&a.last_message_at)
            .then_with(|| b.conversation_id.cmp(&a.conversation_id))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_reads_none_as_builder_only_and_empty_as_all() {
        assert_eq!(Filter::of(None), Filter::All);
        assert_eq!(Filter::of(Some("")), Filter::All);
        assert_eq!(Filter::of(Some(NO_FLOW)), Filter::Builder);
        assert_eq!(Filter::of(Some("review")), Filter::Flow("review"));
    }

    #[test]
    fn a_title_is_the_name_else_the_first_line_of_the_first_message() {
        let c = |name: Option<&str>, first: Option<&str>| BuilderConversation {
            workflow_id: "wf_1".into(),
            name: name.map(Into::into),
            first_user_message: first.map(Into::into),
            created_at: "t".into(),
            last_message_at: "t".into(),
        };
        assert_eq!(
            builder_summary(c(Some("Merge"), Some("x")), "approved").title,
            "Merge"
        );
        assert_eq!(
            builder_summary(c(None, Some("\n merge them \nplease")), "validated").title,
            "merge them"
        );
        assert_eq!(builder_summary(c(None, None), "validating").title, UNTITLED);
        let long = "a".repeat(200);
        let t = builder_summary(c(None, Some(&long)), "validating").title;
        assert_eq!(t.chars().count(), TITLE_CHARS);
        assert!(t.ends_with('…'));
    }
}
