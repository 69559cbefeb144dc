//! `GET /api/events`: a WebSocket that streams the service's events (status
//! changes, message deltas, new messages; flow runs in seed 004's
//! `user_turn`, `assistant_delta`, `tool_event` and `turn_final`) as JSON
//! text frames, and takes seed 004's `cancel_inflight` from the client:
//! `{"type": "cancel_inflight", "conversationId": "…", "inflightId": "…"}`
//! stops that flow run's step in flight; the stop arrives as the run's
//! `turn_final` with `status: "stopped"`. A message that cannot be done gets
//! one `{"type": "error", "code": …, "message": …}` frame back.
//!
//! A browser authenticates the socket by offering the subprotocols
//! `maskflow` and `maskflow.bearer.<token>` ([`super::auth`]); the server
//! selects `maskflow`, so the token is never echoed in the handshake.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use maskflow_core::Service;
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

/// Upgrades to the event stream (the guard has checked the token).
pub async fn stream(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    let ws = ws.protocols([super::auth::WS_PROTOCOL]);
    let events = state.service.subscribe();
    let service = state.service.clone();
    ws.on_upgrade(move |socket| forward(socket, events, service))
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
) {
    let (replies, mut replies_rx) = mpsc::unbounded_channel::<String>();
    loop {
        tokio::select! {
            event = events.recv() => {
                let text = match event {
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
