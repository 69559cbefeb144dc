//! The HTTP transport's sessions, bounded (issue 39): at most
//! [`MAX_SESSIONS`] at once (each `initialize` makes one, and 3,000 of them
//! grew the server by 165 MB), each ended after [`IDLE`] without a request.
//! A thin wrapper over `rmcp`'s in-memory session manager that refuses a
//! new session when the table is full, with a sentence saying what to do.

use std::fmt;
use std::time::Duration;

use futures_util::stream::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionTransport,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// The most sessions open at once.
pub const MAX_SESSIONS: usize = 32;
/// A session with no request for this long is closed.
pub const IDLE: Duration = Duration::from_secs(300);

/// [`LocalSessionManager`] with a bound on the number of sessions.
#[derive(Debug)]
pub struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
}

impl BoundedSessions {
    /// At most `max` sessions, each closed after [`IDLE`].
    pub fn new(max: usize) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(IDLE);
        BoundedSessions { inner, max }
    }
}

/// Why a session call failed.
#[derive(Debug)]
pub enum SessionsError {
    /// The table is full.
    Full(usize),
    /// The session manager's own error.
    Session(LocalSessionManagerError),
}

impl fmt::Display for SessionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionsError::Full(n) => write!(
                f,
                "Maskflow's MCP server already holds {n} sessions, its most: end one (HTTP \
                 DELETE with its Mcp-Session-Id) or wait {} s for an idle one to close, then \
                 connect again",
                IDLE.as_secs()
            ),
            SessionsError::Session(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionsError::Session(e)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let open = self.inner.sessions.read().await.len();
        if open >= self.max {
            return Err(SessionsError::Full(open));
        }
        Ok(self.inner.create_session().await?)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_table_refuses_a_new_session_until_one_closes() {
        let sessions = BoundedSessions::new(2);
        let (a, _ta) = sessions.create_session().await.expect("first");
        let (_b, _tb) = sessions.create_session().await.expect("second");
        let Err(e) = sessions.create_session().await else {
            panic!("a third session was made");
        };
        assert!(e.to_string().contains("2 sessions"), "{e}");
        sessions.close_session(&a).await.expect("close");
        assert!(sessions.create_session().await.is_ok(), "room again");
    }
}
