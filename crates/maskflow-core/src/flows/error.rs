//! [`FlowError`]: why a step, and so its run, failed — a code to branch on
//! and the sentence people read (stored as the run's `error` and shown in
//! its `Failed: …` turn).

/// The kind of a [`FlowError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FlowErrorCode {
    /// The flow went wrong on its own terms: a loop past its limit, no
    /// branch that holds, an unknown command, failed foreach items.
    Step,
    /// A precondition does not hold.
    Contract,
    /// An agent's back end could not be set up (its provider or model settings).
    Backend,
    /// An agent call failed.
    Agent,
    /// An agent's reply has the wrong shape.
    Reply,
    /// A script could not run or exited with an error.
    Script,
    /// A subflow could not start, failed, stopped or cannot wait.
    Subflow,
    /// The run's state could not be saved or read.
    Store,
}

/// Why a step failed.
#[derive(thiserror::Error, Clone, Debug, PartialEq, Eq)]
#[error("{message}")]
pub struct FlowError {
    /// What kind of failure.
    pub code: FlowErrorCode,
    /// What went wrong, for people.
    pub message: String,
}

impl FlowError {
    /// A failure of `code` saying `message`.
    pub fn new(code: FlowErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// [`FlowErrorCode::Step`].
    pub fn step(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Step, message)
    }

    /// [`FlowErrorCode::Contract`].
    pub fn contract(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Contract, message)
    }

    /// [`FlowErrorCode::Backend`].
    pub fn backend(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Backend, message)
    }

    /// [`FlowErrorCode::Agent`].
    pub fn agent(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Agent, message)
    }

    /// [`FlowErrorCode::Reply`].
    pub fn reply(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Reply, message)
    }

    /// [`FlowErrorCode::Script`].
    pub fn script(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Script, message)
    }

    /// [`FlowErrorCode::Subflow`].
    pub fn subflow(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Subflow, message)
    }

    /// [`FlowErrorCode::Store`].
    pub fn store(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Store, message)
    }
}
