//! The build's state machine (seed 001) as one table: `(phase, stage,
//! command) → (phase, stage, action)`. The engine asks [`apply`] for every
//! move; a pair that is not a row is an [`InvalidMove`].

use serde::{Deserialize, Serialize};

use maskflow_table::{Edge, Table};

/// Where a build is.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, utoipa::ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Not started.
    Init,
    /// The builder writes the first script.
    Generate,
    /// The script runs on the real input files (the auto-test).
    Review,
    /// The builder fixes the script after a failed test or a rejection.
    Revise,
    /// Built and tested (terminal).
    Complete,
    /// Given up (terminal).
    Failed,
}

/// The step inside a phase.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, utoipa::ToSchema, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The material is made (a prompt; for review, the test run).
    Prompt,
    /// The answer is made (the LLM's reply; for review, the verdict).
    Response,
}

/// What moves a build on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Begin.
    Start,
    /// The gate after the current content approved it.
    Approve,
    /// The gate rejected it (with feedback).
    Reject,
    /// The test passed.
    Pass,
    /// The test failed and a revision is allowed.
    Fail,
    /// Stop: a second failure, a provider error, or no Python.
    GiveUp,
    /// Begin with a script that already exists (a restored version): it
    /// goes straight to the test on the real files.
    Retest,
}

/// What the engine does on arriving.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Build the generation prompt.
    CreateGenerationPrompt,
    /// Send the prompt to the builder and process its reply.
    CallBuilder,
    /// Run the script on the real input files.
    RunTest,
    /// Judge the test report.
    JudgeTest,
    /// Start a new iteration and build the revision prompt.
    CreateRevisionPrompt,
    /// Save the built workflow.
    Finish,
    /// Mark the build failed.
    FailBuild,
}

use Action::*;
use Command::*;
use Phase::*;
use Stage::*;

/// Where a build is: its phase and the step inside it.
pub type At = (Phase, Option<Stage>);

/// One row: from `(phase, stage)` on `command` to `(phase, stage)`, doing `action`.
pub type Row = (At, Command, (Phase, Option<Stage>, Action));

/// Every legal move of a build.
pub const TRANSITIONS: &[Row] = &[
    (
        (Init, None),
        Start,
        (Generate, Some(Prompt), CreateGenerationPrompt),
    ),
    ((Init, None), Retest, (Review, Some(Prompt), RunTest)),
    (
        (Generate, Some(Prompt)),
        Approve,
        (Generate, Some(Response), CallBuilder),
    ),
    ((Generate, Some(Prompt)), Reject, (Failed, None, FailBuild)),
    ((Generate, Some(Prompt)), GiveUp, (Failed, None, FailBuild)),
    (
        (Generate, Some(Response)),
        Approve,
        (Review, Some(Prompt), RunTest),
    ),
    (
        (Generate, Some(Response)),
        Reject,
        (Revise, Some(Prompt), CreateRevisionPrompt),
    ),
    (
        (Generate, Some(Response)),
        GiveUp,
        (Failed, None, FailBuild),
    ),
    (
        (Review, Some(Prompt)),
        Approve,
        (Review, Some(Response), JudgeTest),
    ),
    ((Review, Some(Prompt)), GiveUp, (Failed, None, FailBuild)),
    // The AI reviewer, deciding the gate, sent the script back before its test.
    (
        (Review, Some(Prompt)),
        Reject,
        (Revise, Some(Prompt), CreateRevisionPrompt),
    ),
    ((Review, Some(Response)), Pass, (Complete, None, Finish)),
    (
        (Review, Some(Response)),
        Fail,
        (Revise, Some(Prompt), CreateRevisionPrompt),
    ),
    ((Review, Some(Response)), GiveUp, (Failed, None, FailBuild)),
    (
        (Revise, Some(Prompt)),
        Approve,
        (Revise, Some(Response), CallBuilder),
    ),
    ((Revise, Some(Prompt)), Reject, (Failed, None, FailBuild)),
    ((Revise, Some(Prompt)), GiveUp, (Failed, None, FailBuild)),
    (
        (Revise, Some(Response)),
        Approve,
        (Review, Some(Prompt), RunTest),
    ),
    (
        (Revise, Some(Response)),
        Reject,
        (Revise, Some(Prompt), CreateRevisionPrompt),
    ),
    ((Revise, Some(Response)), GiveUp, (Failed, None, FailBuild)),
];

/// [`TRANSITIONS`] as a table: its lookup, drawing and walk.
pub const TABLE: Table<At, Command, (Phase, Option<Stage>, Action)> = Table::new(TRANSITIONS);

/// A move that is not a row of [`TRANSITIONS`].
#[derive(thiserror::Error, Debug, Clone, Copy, PartialEq, Eq)]
#[error("a build at {phase:?}/{stage:?} cannot take the command {command:?}")]
pub struct InvalidMove {
    /// The phase.
    pub phase: Phase,
    /// The stage.
    pub stage: Option<Stage>,
    /// The command.
    pub command: Command,
}

/// The next `(phase, stage, action)` for `command` at `(phase, stage)`.
pub fn apply(
    phase: Phase,
    stage: Option<Stage>,
    command: Command,
) -> Result<(Phase, Option<Stage>, Action), InvalidMove> {
    TABLE.apply((phase, stage), command).ok_or(InvalidMove {
        phase,
        stage,
        command,
    })
}

/// The table as a Mermaid state diagram (for docs and the UI).
pub fn mermaid() -> String {
    let name = |p: Phase, s: Option<Stage>| match s {
        Some(s) => format!("{p:?}_{s:?}"),
        None => format!("{p:?}"),
    };
    TABLE.mermaid(&[], |(p, s), c, (tp, ts, a)| Edge {
        from: name(*p, *s),
        to: name(*tp, *ts),
        label: format!("{c:?} / {a:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHASES: [Phase; 6] = [Init, Generate, Review, Revise, Complete, Failed];
    const STAGES: [Option<Stage>; 3] = [None, Some(Prompt), Some(Response)];
    const COMMANDS: [Command; 7] = [Start, Approve, Reject, Pass, Fail, GiveUp, Retest];

    #[test]
    fn every_row_applies_and_every_other_pair_is_refused() {
        let places: Vec<At> = PHASES
            .iter()
            .flat_map(|p| STAGES.iter().map(move |s| (*p, *s)))
            .collect();
        // The walk also refuses a (place, command) pair listed twice.
        let walk = TABLE
            .walk(&places, &COMMANDS, |(p, s), c| apply(p, s, c))
            .expect("the table and apply agree");
        assert_eq!(walk.rows, TRANSITIONS.len());
        for ((p, s), c, e) in &walk.refused {
            assert_eq!(
                *e,
                InvalidMove {
                    phase: *p,
                    stage: *s,
                    command: *c
                }
            );
        }
    }

    #[test]
    fn terminal_phases_have_no_way_out_and_every_phase_can_give_up() {
        for ((p, s), _, _) in TRANSITIONS {
            assert!(!matches!(p, Complete | Failed));
            if !matches!(p, Init) {
                assert!(apply(*p, *s, GiveUp).is_ok(), "{p:?}/{s:?}");
            }
        }
        assert!(mermaid().contains("Review_Response --> Complete: Pass / Finish"));
        assert!(mermaid().contains("Init --> Review_Prompt: Retest / RunTest"));
    }
}
