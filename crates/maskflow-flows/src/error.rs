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
    /// The privacy guard refused to send a step's prompt: it held raw
    /// values of the user's files (nothing was sent; the run asks a person).
    Privacy,
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

    /// [`FlowErrorCode::Privacy`].
    pub fn privacy(message: impl Into<String>) -> Self {
        Self::new(FlowErrorCode::Privacy, message)
    }
}

/// Why a call on the flows API failed — the outcome a caller maps to its
/// own codes (maskflow-core turns each variant into the `CoreError` of the
/// same name, so the wire keeps its codes and sentences).
#[derive(thiserror::Error, Debug)]
pub enum Error {
    /// The caller sent something unusable.
    #[error("{0}")]
    InvalidRequest(String),
    /// A thing the caller named does not exist.
    #[error("{what} {id} does not exist")]
    NotFound {
        /// "flow", "flow run", …
        what: &'static str,
        /// The name or id the caller gave.
        id: String,
    },
    /// The request clashes with the current state.
    #[error("{0}")]
    Conflict(String),
    /// The run (or thing) is archived; its name is the text.
    #[error("{0} is archived")]
    Archived(String),
    /// A flow run is already running (seed 004's `RUN_IN_PROGRESS`).
    #[error("flow run {0} is already running; stop it or wait for it")]
    RunInProgress(String),
    /// A flow run's stored agent conversation belongs to another agent.
    #[error("{0}")]
    AgentMismatch(String),
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
    /// A file or folder could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Stored data does not read back.
    #[error("{0}")]
    Corrupt(String),
    /// An error of the app behind a port ([`crate::FlowStorage`]), handed
    /// back to it unchanged.
    #[error(transparent)]
    App(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// A file-system failure while doing `context`.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// `what` named `id` does not exist.
    pub fn not_found(what: &'static str, id: &str) -> Self {
        Error::NotFound {
            what,
            id: id.to_owned(),
        }
    }
}

/// The result of a flows API call.
pub type Result<T> = std::result::Result<T, Error>;
