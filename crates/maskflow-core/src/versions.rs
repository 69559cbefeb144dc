//! The version status machine (seed 000, "Workflow Version Statuses") as one
//! table. Every status change in Maskflow goes through [`apply`]; a move that
//! is not a row of [`TRANSITIONS`] is an [`InvalidTransition`].

use serde::{Deserialize, Serialize};

use maskflow_table::{Edge, Table};

/// The status of one workflow version.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, utoipa::ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for the user's task description and the validator's verdict.
    Validating,
    /// The task is feasible; the clarifier runs next.
    Validated,
    /// The clarifier is asking questions.
    Clarifying,
    /// The builder is writing the script (in the background).
    Building,
    /// Built; waiting for the user to approve or edit.
    PendingUserApproval,
    /// Approved by the user; the active version when `is_active`.
    Approved,
    /// The validator found the task infeasible (terminal).
    Rejected,
    /// The build failed (terminal; the user can edit to rebuild).
    Failed,
    /// Superseded by a newer version (terminal).
    Archived,
}

/// Something that happens to a version.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum VersionEvent {
    /// The validator found the task feasible.
    Feasible,
    /// The validator found the task infeasible.
    Infeasible,
    /// The conversation moves on to the clarifier (always after validation).
    StartClarifying,
    /// The clarifier asked a question.
    AskQuestion,
    /// The clarifier has enough to build.
    StartBuild,
    /// The builder produced a valid workflow.
    BuildSucceeded,
    /// The build failed (bad replies, provider error, or interrupted).
    BuildFailed,
    /// The user approved the version.
    Approve,
    /// The user asked for changes: a new version N+1 starts in `validated`.
    Edit,
    /// A newer version replaced this one.
    Archive,
    /// The user restores this (earlier) version: a new version starts in
    /// `building` with its script, fields and execution, to be tested and
    /// approved again; this one stays as it is.
    Restore,
    /// The build failed on its environment (uv missing, the index
    /// unreachable): it is retried with the script the builder wrote.
    Retry,
}

use Status::*;
use VersionEvent::*;

/// Every legal move: `(from, event, to)`. Nothing else changes a status.
pub const TRANSITIONS: &[(Status, VersionEvent, Status)] = &[
    (Validating, Feasible, Validated),
    (Validating, Infeasible, Rejected),
    (Validated, StartClarifying, Clarifying),
    (Clarifying, AskQuestion, Clarifying),
    (Clarifying, StartBuild, Building),
    (Building, BuildSucceeded, PendingUserApproval),
    (Building, BuildFailed, Failed),
    (PendingUserApproval, Approve, Approved),
    // Edit: the draft is replaced by version N+1 (`validated`, same extracts).
    (PendingUserApproval, Edit, Archived),
    (Failed, Edit, Archived),
    // An approved version stays approved and active while N+1 is drafted; it
    // is archived when N+1 is approved.
    (Approved, Edit, Approved),
    (Validating, Archive, Archived),
    (Validated, Archive, Archived),
    (Clarifying, Archive, Archived),
    (Building, Archive, Archived),
    (PendingUserApproval, Archive, Archived),
    (Approved, Archive, Archived),
    (Rejected, Archive, Archived),
    (Failed, Archive, Archived),
    // Rollback: only a superseded version is restored (the active one is
    // already in use); it stays archived, the copy is tested afresh.
    (Archived, Restore, Archived),
    // A build that failed on its environment runs its test again.
    (Failed, Retry, Building),
];

/// [`TRANSITIONS`] as a table: its lookup, drawing and walk.
pub const TABLE: Table<Status, VersionEvent, Status> = Table::new(TRANSITIONS);

/// The status of a workflow's first version.
pub const INITIAL: Status = Validating;
/// The status of a version created by an edit.
pub const INITIAL_AFTER_EDIT: Status = Validated;
/// The status of a version created by a restore: its copied script goes
/// straight to the build's test on the real files.
pub const INITIAL_AFTER_RESTORE: Status = Building;

/// A move the table does not allow.
#[derive(thiserror::Error, Debug, Clone, Copy, PartialEq, Eq)]
#[error("a version that is {} cannot {}", from.as_str(), event.describe())]
pub struct InvalidTransition {
    /// The status the version was in.
    pub from: Status,
    /// What was attempted.
    pub event: VersionEvent,
}

/// The status after `event` happens to a version in `from`.
pub fn apply(from: Status, event: VersionEvent) -> Result<Status, InvalidTransition> {
    TABLE
        .apply(from, event)
        .ok_or(InvalidTransition { from, event })
}

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 9] = [
        Validating,
        Validated,
        Clarifying,
        Building,
        PendingUserApproval,
        Approved,
        Rejected,
        Failed,
        Archived,
    ];

    /// The status as stored and sent, e.g. `"pending_user_approval"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Validating => "validating",
            Validated => "validated",
            Clarifying => "clarifying",
            Building => "building",
            PendingUserApproval => "pending_user_approval",
            Approved => "approved",
            Rejected => "rejected",
            Failed => "failed",
            Archived => "archived",
        }
    }

    /// Parses a stored status.
    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether this is a draft: the one version per workflow still being
    /// worked on (the database allows at most one).
    pub fn is_draft(self) -> bool {
        matches!(
            self,
            Validating | Validated | Clarifying | Building | PendingUserApproval
        )
    }
}

impl VersionEvent {
    /// Every event.
    pub const ALL: [VersionEvent; 12] = [
        Feasible,
        Infeasible,
        StartClarifying,
        AskQuestion,
        StartBuild,
        BuildSucceeded,
        BuildFailed,
        Approve,
        Edit,
        Archive,
        Restore,
        Retry,
    ];

    /// The event's name, e.g. `"start_build"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Feasible => "feasible",
            Infeasible => "infeasible",
            StartClarifying => "start_clarifying",
            AskQuestion => "ask_question",
            StartBuild => "start_build",
            BuildSucceeded => "build_succeeded",
            BuildFailed => "build_failed",
            Approve => "approve",
            Edit => "edit",
            Archive => "archive",
            Restore => "restore",
            Retry => "retry",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Feasible | Infeasible => "be validated",
            StartClarifying | AskQuestion => "take a clarifying question",
            StartBuild => "start building",
            BuildSucceeded | BuildFailed => "finish a build",
            Approve => "be approved",
            Edit => "be edited",
            Archive => "be archived",
            Restore => "be restored",
            Retry => "be retried",
        }
    }
}

/// The table as a Mermaid state diagram, for the docs and the UI.
pub fn mermaid() -> String {
    let start = [
        format!("[*] --> {}", INITIAL.as_str()),
        format!(
            "[*] --> {}: edit (new version)",
            INITIAL_AFTER_EDIT.as_str()
        ),
        format!(
            "[*] --> {}: restore (new version)",
            INITIAL_AFTER_RESTORE.as_str()
        ),
    ];
    TABLE.mermaid(&start, |from, event, to| Edge {
        from: from.as_str().to_owned(),
        to: to.as_str().to_owned(),
        label: event.as_str().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_applies_and_every_other_pair_is_refused() {
        // The walk also refuses a (status, event) pair listed twice.
        let walk = TABLE
            .walk(&Status::ALL, &VersionEvent::ALL, apply)
            .expect("the table and apply agree");
        assert_eq!(walk.rows, TRANSITIONS.len());
        for (from, event, e) in &walk.refused {
            assert_eq!(
                *e,
                InvalidTransition {
                    from: *from,
                    event: *event
                }
            );
        }
        assert_eq!(
            walk.refused.len() + TRANSITIONS.len(),
            Status::ALL.len() * VersionEvent::ALL.len()
        );
    }

    #[test]
    fn the_seeds_moves_are_in_the_table() {
        assert_eq!(apply(Validating, Feasible), Ok(Validated));
        assert_eq!(apply(Validating, Infeasible), Ok(Rejected));
        assert_eq!(apply(Validated, StartClarifying), Ok(Clarifying));
        assert_eq!(apply(Clarifying, AskQuestion), Ok(Clarifying));
        assert_eq!(apply(Clarifying, StartBuild), Ok(Building));
        assert_eq!(apply(Building, BuildSucceeded), Ok(PendingUserApproval));
        assert_eq!(apply(Building, BuildFailed), Ok(Failed));
        assert_eq!(apply(PendingUserApproval, Approve), Ok(Approved));
        for s in Status::ALL {
            if s != Archived {
                assert_eq!(apply(s, Archive), Ok(Archived), "{s:?} must archive");
            }
        }
    }

    #[test]
    fn terminal_statuses_only_archive_or_edit() {
        for e in VersionEvent::ALL {
            if e != Archive {
                assert!(apply(Rejected, e).is_err());
            }
            if e != Restore {
                assert!(apply(Archived, e).is_err(), "archived must refuse {e:?}");
            }
        }
    }

    #[test]
    fn only_a_failed_version_is_retried_and_it_builds_again() {
        for s in Status::ALL {
            let got = apply(s, Retry);
            if s == Failed {
                assert_eq!(got, Ok(Building));
            } else {
                assert!(got.is_err(), "{s:?} must not be retried");
            }
        }
    }

    #[test]
    fn only_an_archived_version_is_restored_and_it_stays_archived() {
        for s in Status::ALL {
            let got = apply(s, Restore);
            if s == Archived {
                assert_eq!(got, Ok(Archived));
            } else {
                assert!(got.is_err(), "{s:?} must not be restorable");
            }
        }
        assert!(INITIAL_AFTER_RESTORE.is_draft());
    }

    #[test]
    fn status_names_round_trip_and_match_serde() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::json!(s.as_str()))
            );
        }
        for e in VersionEvent::ALL {
            assert_eq!(
                serde_json::to_value(e).ok(),
                Some(serde_json::json!(e.as_str()))
            );
        }
    }

    #[test]
    fn mermaid_has_one_line_per_row() {
        let m = mermaid();
        assert!(m.starts_with("stateDiagram-v2\n"));
        assert!(m.contains("    building --> pending_user_approval: build_succeeded\n"));
        assert_eq!(m.lines().count(), 1 + 3 + TRANSITIONS.len());
        assert!(m.contains("    archived --> archived: restore\n"));
    }
}
