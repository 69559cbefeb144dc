//! `GET /api/events`: a WebSocket that streams the service's events (status
//! changes, message deltas, new messages) as JSON text frames.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;

use super::AppState;

pub async fn stream(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    let events = state.service.subscribe();
    ws.on_upgrade(move |socket| forward(socket, events))
}

async fn forward(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<maskflow_core::Event>,
) {
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
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
}
