//! The build pipeline (seed 001): generate → review → (revise → review)* →
//! complete, each phase with a PROMPT and a RESPONSE stage, declared in one
//! table ([`table`]); pure profiles ([`profile`], first of them
//! [`script_builder`]); gates after each piece of content ([`gate`]); and
//! the [`engine`], which alone calls providers and the runner and writes the
//! session folder. The review phase runs the script on the real files in
//! the sandboxed runner; its error output is masked ([`mask`]) before it can
//! reach an LLM, and what it wrote is profiled ([`output_shape`]) so an
//! empty table is caught like an error.

pub mod call;
pub mod engine;
pub mod gate;
pub mod inputs;
pub mod mask;
pub mod options;
pub mod output_shape;
pub mod plan;
pub mod profile;
pub mod review;
pub mod script_builder;
pub mod table;

pub use engine::{BuildJob, BuildState, Engine, InputFile, Outcome, TestReport};
pub use gate::{ApprovalResult, Approver, AutoApprove, Decision};
pub use profile::{ProcessingResult, ProcessingStatus, Profile, WriteOp, WritePlan};
pub use table::{Action, Command, Phase, Stage};

/// The session folder of a version: `<home>/sessions/<version_id>/`.
pub fn session_dir(home: &std::path::Path, version_id: &str) -> std::path::PathBuf {
    home.join("sessions").join(version_id)
}

/// The auto-test's working folders of a version: `<home>/test-runs/<version_id>/`.
pub fn test_dir(home: &std::path::Path, version_id: &str) -> std::path::PathBuf {
    home.join("test-runs").join(version_id)
}
