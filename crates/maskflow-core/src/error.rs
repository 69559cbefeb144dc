//! The service's error type: every failure a shell can show, each with a
//! stable [`ErrorCode`] (what the UI branches on) and a sentence for people.

use crate::versions::InvalidTransition;
use maskflow_llm::ProviderError;

/// Machine-readable error codes, stable on the wire (`code` of [`crate::api::ErrorBody`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The request itself is wrong (bad field, empty content, unknown file id).
    InvalidRequest,
    /// The workflow, version or file does not exist.
    NotFound,
    /// The request clashes with work in progress or the current status.
    Conflict,
    /// The version was archived and can no longer change.
    Archived,
    /// The LLM back end failed or replied with something unusable.
    ProviderError,
    /// The LLM back end did not answer in time.
    ProviderTimeout,
    /// The user stopped the call (a cancelled reply, a dismissed manual
    /// prompt): nothing failed, the request may be sent again.
    Cancelled,
    /// The privacy guard refused to send a request with raw values in it.
    PrivacyBlocked,
    /// No system keyring could be used (the message names the env variable).
    KeyringUnavailable,
    /// A flow run's stored agent conversation belongs to another agent.
    AgentMismatch,
    /// The disk holding the data folder is (nearly) full.
    DiskFull,
    /// Something went wrong inside Maskflow (database, disk).
    Internal,
}

impl ErrorCode {
    /// The code as sent on the wire, e.g. `"not_found"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Archived => "archived",
            ErrorCode::ProviderError => "provider_error",
            ErrorCode::ProviderTimeout => "provider_timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::PrivacyBlocked => "privacy_blocked",
            ErrorCode::KeyringUnavailable => "keyring_unavailable",
            ErrorCode::AgentMismatch => "agent_mismatch",
            ErrorCode::DiskFull => "disk_full",
            ErrorCode::Internal => "internal",
        }
    }
}

/// Everything that can go wrong in a service call.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum CoreError {
    /// The caller sent something unusable.
    #[error("{0}")]
    InvalidRequest(String),
    /// A thing the caller named does not exist.
    #[error("{what} {id} does not exist")]
    NotFound {
        /// "workflow", "version" or "file".
        what: &'static str,
        /// The id the caller gave.
        id: String,
    },
    /// The request clashes with the current state.
    #[error("{0}")]
    Conflict(String),
    /// The version is archived.
    #[error("version {0} is archived; work on the workflow's current version instead")]
    Archived(String),
    /// A flow run is already running (seed 004's `RUN_IN_PROGRESS`).
    #[error("flow run {0} is already running; stop it or wait for it")]
    RunInProgress(String),
    /// A flow run's stored agent conversation belongs to another agent.
    #[error("{0}")]
    AgentMismatch(String),
    /// A status move that the version table does not allow.
    #[error(transparent)]
    Transition(#[from] InvalidTransition),
    /// The LLM back end failed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// A managed Python environment could not be resolved, made, checked
    /// or removed; a conflict the user can resolve (uv, the index, the lock).
    #[error(transparent)]
    Environment(#[from] maskflow_pyenv::EnvError),
    /// An API key could not be read, stored or removed.
    #[error(transparent)]
    Key(#[from] maskflow_llm::keys::KeyError),
    /// The database failed.
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
    /// The database could not be migrated.
    #[error("database migration failed: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    /// A file or folder could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What Maskflow was doing, with the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Stored JSON could not be read back (a damaged database).
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    /// The files given to a run differ in shape from the approved ones;
    /// one sentence per difference.
    #[error("the files differ from the ones this workflow was approved with (run anyway with force):\n{}", .0.join("\n"))]
    InputsDiffer(Vec<String>),
    /// Not enough free disk for a write; the sentence says what needed how
    /// much, and where.
    #[error("{0}")]
    DiskFull(String),
}

impl CoreError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            CoreError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            CoreError::NotFound { .. } => ErrorCode::NotFound,
            CoreError::InputsDiffer(_) => ErrorCode::InvalidRequest,
            CoreError::Conflict(_)
            | CoreError::Transition(_)
            | CoreError::RunInProgress(_)
            | CoreError::Environment(_) => ErrorCode::Conflict,
            CoreError::AgentMismatch(_) => ErrorCode::AgentMismatch,
            CoreError::Archived(_) => ErrorCode::Archived,
            CoreError::Provider(ProviderError::PrivacyBlocked(_)) => ErrorCode::PrivacyBlocked,
            CoreError::Provider(ProviderError::Cancelled { .. }) => ErrorCode::Cancelled,
            CoreError::Provider(ProviderError::TimedOut { .. }) => ErrorCode::ProviderTimeout,
            // Nothing was sent: the settings or the files are the user's to
            // change, no back end failed (the sentence says which).
            CoreError::Provider(
                ProviderError::Unconfigured { .. } | ProviderError::ContextOverflow { .. },
            ) => ErrorCode::InvalidRequest,
            CoreError::Provider(_) => ErrorCode::ProviderError,
            CoreError::Key(maskflow_llm::keys::KeyError::Invalid(_)) => ErrorCode::InvalidRequest,
            CoreError::Key(_) => ErrorCode::KeyringUnavailable,
            CoreError::DiskFull(_)
            | CoreError::Db(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error {
                    code: rusqlite::ErrorCode::DiskFull,
                    ..
                },
                _,
            )) => ErrorCode::DiskFull,
            CoreError::Db(_)
            | CoreError::Migration(_)
            | CoreError::Io { .. }
            | CoreError::Corrupt(_) => ErrorCode::Internal,
        }
    }

    /// A finer code for the UI to branch on (`RUN_IN_PROGRESS`), if any.
    pub fn detail_code(&self) -> Option<&'static str> {
        match self {
            CoreError::RunInProgress(_) => Some("RUN_IN_PROGRESS"),
            CoreError::InputsDiffer(_) => Some("INPUTS_DIFFER"),
            _ => None,
        }
    }

    /// An I/O error with what was being done; a full disk becomes
    /// [`CoreError::DiskFull`], saying so.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        if source.kind() == std::io::ErrorKind::StorageFull {
            return CoreError::DiskFull(format!(
                "{}: the disk is full; free some space (Settings → Storage shows what \
                 Maskflow keeps and clears it) and try again",
                context.into()
            ));
        }
        CoreError::Io {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: &str) -> Self {
        CoreError::NotFound {
            what,
            id: id.to_owned(),
        }
    }
}

/// Result of a service call.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;

/// The flows' errors keep their code and sentence on the wire: each maps to
/// the `CoreError` of the same name, and an app error handed through a port
/// comes back as it was.
impl From<maskflow_flows::error::Error> for CoreError {
    fn from(e: maskflow_flows::error::Error) -> Self {
        use maskflow_flows::error::Error as F;
        match e {
            F::InvalidRequest(m) => CoreError::InvalidRequest(m),
            F::NotFound { what, id } => CoreError::NotFound { what, id },
            F::Conflict(m) => CoreError::Conflict(m),
            F::Archived(m) => CoreError::Archived(m),
            F::RunInProgress(id) => CoreError::RunInProgress(id),
            F::AgentMismatch(m) => CoreError::AgentMismatch(m),
            F::Db(e) => CoreError::Db(e),
            F::Io { context, source } => CoreError::io(context, source),
            F::Corrupt(m) => CoreError::Corrupt(m),
            F::App(e) => match e.downcast::<CoreError>() {
                Ok(core) => *core,
                Err(other) => CoreError::Corrupt(other.to_string()),
            },
        }
    }
}

/// An app error on its way through a flows port ([`maskflow_flows::FlowStorage`]).
impl From<CoreError> for maskflow_flows::error::Error {
    fn from(e: CoreError) -> Self {
        maskflow_flows::error::Error::App(Box::new(e))
    }
}
