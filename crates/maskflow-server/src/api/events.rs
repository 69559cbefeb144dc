//! `GET /api/events`: a WebSocket that streams the service's events (status
//! changes, message deltas, new messages; flow runs in seed 004's
//! `user_turn`, `assistant_delta`, `tool_event` and `turn_final`) as JSON
//! text frames, and takes seed 004's `cancel_inflight` from the client:
//! `{"type": "cancel_inflight", "conversationId": "…", "inflightId": "…"}`
//! stops that flow run's step in flight; the stop arrives as the run's
//! `turn_final` with `status: "stopped"`. A message that cannot be done gets
//! one `{"type": "error", "code": …, "message": …}` frame back.
//!
//! By default the socket carries only the seed's event types for flow runs:
//! Maskflow's own `flow_turn` and `flow_status` (a committed transcript turn,
//! a waiting or ended status), and a flow run's `llm_call_started` and
//! `ledger_entry` (its agents' calls in the ledger), are sent only to a
//! client that asks for them with the query parameter `events`, a
//! comma-separated list such as `/api/events?events=flow_turn,flow_status`;
//! an unknown name there is a `400 invalid_request` naming it. Events of
//! builds and uploads (their LLM calls too) are not flow events and always
//! come.
//!
//! A browser authenticates the socket by offering the subprotocols
//! `maskflow` and `maskflow.bearer.<token>` ([`super::auth`]); the server
//! selects `maskflow`, so the token is never echoed in the handshake.

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::response::Response;
use maskflow_core::{Event, Service};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::AppState;

/// What a client may send over the socket.
#[derive(Deserialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum ClientMessage {
    /// Stop a flow run's step in flight (seed 004).
    CancelInflight {
        #[serde(rename = "conversationId")]
        conversation_id: String,
        #[serde(rename = "inflightId", default)]
        inflight_id: Option<String>,
    },
}

/// The event types beyond the seed's that a client may ask for (the last
/// two: those of a flow run's LLM calls; a build's always come).
pub const OPT_IN_EVENTS: [&str; 4] = [
    "flow_turn",
    "flow_status",
    "llm_call_started",
    "ledger_entry",
];

/// The socket's query: `events=flow_turn,flow_status` asks for the extras.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Comma-separated extra event types ([`OPT_IN_EVENTS`]).
    #[serde(default)]
    events: Option<String>,
}

/// Which of the opt-in event types a subscriber gets.
#[derive(Clone, Copy, Debug, Default)]
struct Extras {
    flow_turn: bool,
    flow_status: bool,
    llm_call_started: bool,
    ledger_entry: bool,
}

impl Extras {
    /// Reads the `events` list; an unknown name is refused by name.
    fn parse(list: Option<&str>) -> Result<Self, super::error::AppError> {
        let mut extras = Self::default();
        for name in list.unwrap_or("").split(',').map(str::trim) {
            match name {
                "" => {}
                "flow_turn" => extras.flow_turn = true,
                "flow_status" => extras.flow_status = true,
                "llm_call_started" => extras.llm_call_started = true,
                "ledger_entry" => extras.ledger_entry = true,
                other => {
                    return Err(super::error::AppError::invalid(format!(
                        "unknown event type {other:?} in `events`; the ones to ask for are {}",
                        OPT_IN_EVENTS.join(", ")
                    )));
                }
            }
        }
        Ok(extras)
    }

    /// Whether `event` goes to this subscriber.
    fn wants(self, event: &Event) -> bool {
        match event {
            Event::FlowTurn { .. } => self.flow_turn,
            Event::FlowStatus { .. } => self.flow_status,
            Event::LlmCallStarted {
                flow_run_id: Some(_),
                ..
            } => self.llm_call_started,
            Event::LedgerEntry { entry } if entry.flow_run_id.is_some() => self.ledger_entry,
            _ => true,
        }
    }
}

/// Upgrades to the event stream (the guard has checked the token).
pub async fn stream(
    State(state): State<AppState>,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
    ws: WebSocketUpgrade,
) -> Result<Response, super::error::AppError> {
    let Query(query) = query?;
    let extras = Extras::parse(query.events.as_deref())?;
    let ws = ws.protocols([super::auth::WS_PROTOCOL]);
    let events = state.service.subscribe();
    let service = state.service.clone();
    Ok(ws.on_upgrade(move |socket| forward(socket, events, service, extras)))
}

fn error_frame(code: &str, message: &str) -> String {
    json!({"type": "error", "code": code, "message": message}).to_string()
}

/// Carries out one client message; a stop waits for the step to end, so
/// it runs beside the socket and answers through `replies` only on error.
fn handle(text: &str, service: &Service, replies: &mpsc::UnboundedSender<String>) {
    let message = match serde_json::from_str::<ClientMessage>(text) {
        Ok(m) => m,
        Err(e) => {
            let _ = replies.send(error_frame(
                "invalid_request",
                &format!("unknown or malformed message ({e}); send {{\"type\": \"cancel_inflight\", \"conversationId\": …, \"inflightId\": …}}"),
            ));
            return;
        }
    };
    match message {
        ClientMessage::CancelInflight {
            conversation_id,
            inflight_id,
        } => {
            let (service, replies) = (service.clone(), replies.clone());
            tokio::spawn(async move {
                let result = service
                    .flow_cancel_inflight(&conversation_id, inflight_id.as_deref())
                    .await;
                if let Err(e) = result {
                    let e = super::error::AppError::from(e);
                    let (code, message) = e.code_and_message();
                    let _ = replies.send(error_frame(code, message));
                }
            });
        }
    }
}

async fn forward(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<maskflow_core::Event>,
    service: Service,
    extras: Extras,
) {
    let (replies, mut replies_rx) = mpsc::unbounded_channel::<String>();
    loop {
        tokio::select! {
            event = events.recv() => {
                let text = match event {
                    Ok(event) if !extras.wants(&event) => continue,
                    Ok(event) => match serde_json::to_string(&event) {
                        Ok(text) => text,
                        Err(_) => continue,
                    },
                    Err(RecvError::Lagged(missed)) => format!("{{\"type\":\"lagged\",\"missed\":{missed}}}"),
                    Err(RecvError::Closed) => break,
                };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            Some(reply) = replies_rx.recv() => {
                if socket.send(Message::Text(reply.into())).await.is_err() {
                    break;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(Message::Text(text))) => handle(text.as_str(), &service, &replies),
                Some(Ok(_)) => {}
            },
        }
    }
}
