//! The egress ledger: one `llm_calls` row per outbound LLM request — what
//! was sent (the exact body), to whom, what came back, how long it took and
//! whether the guard blocked it. This is the user's answer to "what left my
//! machine". A blocked request records no body (it was not sent). The rows
//! are read and written by `maskflow_core::store::llm_calls`.

use serde::{Deserialize, Serialize};

/// How a call ended; `in_flight` only while it is listed and its process
/// still waits for the reply (never stored: its row says `cancelled` until
/// the call ends).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// The reply came.
    Ok,
    /// The back end failed.
    Error,
    /// The privacy guard refused to send it.
    Blocked,
    /// Stopped before the reply came.
    Cancelled,
    /// Waiting for the reply.
    InFlight,
}

impl CallOutcome {
    /// The outcomes a stored row may hold.
    pub const STORED: [CallOutcome; 4] = [Self::Ok, Self::Error, Self::Blocked, Self::Cancelled];

    /// The word stored and sent (`ok`, `in_flight`…).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Blocked => "blocked",
            Self::Cancelled => "cancelled",
            Self::InFlight => "in_flight",
        }
    }

    /// The outcome a word names, if any.
    pub fn parse(word: &str) -> Option<CallOutcome> {
        [Self::InFlight]
            .into_iter()
            .chain(Self::STORED)
            .find(|o| o.as_str() == word)
    }
}

/// One row of the ledger.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LedgerEntry {
    /// `call_…`
    pub id: String,
    /// When the request was made (RFC 3339).
    pub created_at: String,
    /// The role that asked: `validator`, `clarifier`, `builder`, `agent:<name>`.
    pub role: String,
    /// The back end: `openai`, `anthropic`, `ollama`, `manual`, `replay`.
    pub provider: String,
    /// The model asked ("" when the back end has none).
    pub model: String,
    /// The workflow it was for.
    pub workflow_id: Option<String>,
    /// Where it was sent (network back ends).
    pub url: Option<String>,
    /// The exact body sent ("" when nothing was sent).
    pub request_body: String,
    /// The reply's text.
    pub reply: Option<String>,
    /// Prompt tokens, when the server said.
    pub input_tokens: Option<i64>,
    /// Reply tokens, when the server said.
    pub output_tokens: Option<i64>,
    /// Milliseconds from sending to the whole reply.
    pub latency_ms: i64,
    /// How it ended; listed as `in_flight` while the process that sent it
    /// waits for the reply.
    pub outcome: CallOutcome,
    /// Whether the privacy guard refused to send it.
    pub blocked: bool,
    /// What went wrong, in words.
    pub error: Option<String>,
    /// The workflow's name once it was deleted: the ledger outlives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub deleted_workflow: Option<String>,
    /// The flow run it was for (a flow agent's call), as a build's calls
    /// carry their workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub flow_run_id: Option<String>,
    /// The step of that run that asked: its label and path (`summarize [2, 0]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub flow_step: Option<String>,
    /// Whether the call ran on the embedded model in this process: nothing
    /// left the machine (the guard checked it all the same).
    #[serde(default)]
    pub local: bool,
    /// What the guard noted of a request it sent: values of the user's
    /// files that the user's words (or an LLM reply) held and that identify
    /// no one ("your words included values of your file: …", issue #38).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
}

/// The note on a call's row while it is in flight (and after, if it never ends).
pub const IN_FLIGHT: &str = "the request was stopped before the reply came";

/// Receives ledger entries (the service stores them and announces them).
pub trait CallSink: Send + Sync + std::fmt::Debug {
    /// Records a call that was not sent (blocked by the guard).
    fn record(&self, entry: LedgerEntry);

    /// Writes a call's row before its request is sent (outcome `cancelled`
    /// until [`CallSink::finish`]). An error means nothing may be sent.
    fn begin(&self, entry: &LedgerEntry) -> Result<(), String> {
        let _ = entry;
        Ok(())
    }

    /// Completes the row written by [`CallSink::begin`].
    fn finish(&self, entry: LedgerEntry) {
        self.record(entry);
    }
}

/// Token totals of a group of ledger rows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageRow {
    /// The role key (`validator`, `agent:critic`…), or the workflow's id.
    pub key: String,
    /// The workflow's name, for a workflow row that has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    /// Calls recorded (every outcome).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub calls: i64,
    /// Prompt tokens the servers reported.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub input_tokens: i64,
    /// Reply tokens the servers reported.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub output_tokens: i64,
    /// Calls whose server reported no token counts (not in the sums).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub unreported: i64,
}

/// `GET /api/ledger/usage`: token totals from the ledger, in all, per role
/// and per workflow (calls outside a workflow, such as flow agents', count
/// in the total and their role only).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Usage {
    /// Every call.
    pub total: UsageRow,
    /// Per role, most tokens first.
    pub by_role: Vec<UsageRow>,
    /// Per workflow, most tokens first.
    pub by_workflow: Vec<UsageRow>,
}
