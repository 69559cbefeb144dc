//! The desktop shell of Maskflow (Tauri 2): opens the core [`Service`] over
//! the data folder, registers one command per call of core's list
//! ([`commands`], generated), and forwards every core event to the window as the Tauri
//! event [`EVENT`]. No behaviour lives here: the UI in `ui/` talks to these
//! commands through its Tauri transport, exactly as it talks to `maskflow
//! serve` over HTTP.

#![deny(missing_docs)]

mod commands;

use std::path::{Path, PathBuf};

use maskflow_core::{Backends, Service, ServiceConfig};
use tauri::Emitter;
use tokio::sync::broadcast::error::RecvError;

/// The name of the Tauri event that carries every core event (as JSON, the
/// same shape as `maskflow serve`'s WebSocket frames).
pub const EVENT: &str = "maskflow://event";

/// Why the app could not start.
#[derive(Debug)]
pub struct StartError(String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// The data folder: `MASKFLOW_HOME`, else `<platform data dir>/maskflow`
/// (the same folder `maskflow serve` uses).
fn data_home() -> Result<PathBuf, StartError> {
    if let Some(home) = std::env::var_os("MASKFLOW_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    dirs::data_dir()
        .map(|d| d.join("maskflow"))
        .ok_or_else(|| StartError("no application-data folder is known; set MASKFLOW_HOME".into()))
}

/// How the window opens the service: every call's back end comes from the
/// stored settings (the Settings page; manual on first run), unless
/// `MASKFLOW_REPLAY=<file>` explicitly answers every role from a replay
/// file (tests and demos).
pub fn service_config(home: &Path, backends: &Backends) -> Result<ServiceConfig, StartError> {
    ServiceConfig::with_backends(home, backends)
        .map_err(|e| StartError(format!("{}: {e}", maskflow_core::service::REPLAY_VAR)))
}

/// Opens the service and runs the window until it is closed.
pub fn run() -> Result<(), StartError> {
    let home = data_home()?;
    let service = Service::open(service_config(&home, &Backends::from_env())?)
        .map_err(|e| StartError(format!("opening the data folder {}: {e}", home.display())))?;
    let events = service.subscribe();
    service.start_scheduler();
    tauri::Builder::default()
        // OS notifications when a run waits for the user, fails, or a
        // scheduled run ends (the UI's `notifications/` decides which).
        .plugin(tauri_plugin_notification::init())
        .manage(service)
        .invoke_handler(commands::handler())
        .setup(move |app| {
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(forward_events(handle, events));
            Ok(())
        })
        .run(tauri::generate_context!())
        .map_err(|e| StartError(format!("the window failed: {e}")))
}

/// Emits every core event to the window until the service is gone.
async fn forward_events(
    app: tauri::AppHandle,
    mut events: tokio::sync::broadcast::Receiver<maskflow_core::Event>,
) {
    loop {
        let sent = match events.recv().await {
            Ok(event) => app.emit(EVENT, &event),
            Err(RecvError::Lagged(missed)) => app.emit(
                EVENT,
                serde_json::json!({"type": "lagged", "missed": missed}),
            ),
            Err(RecvError::Closed) => break,
        };
        if sent.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use maskflow_llm::{Provider, Role};

    use super::*;

    #[test]
    fn a_fresh_data_folder_opens_on_the_manual_back_end() {
        let home = tempfile_dir();
        let service = Service::open(service_config(&home, &Backends::Settings).expect("config"))
            .expect("open");
        for role in [
            Role::Validator,
            Role::Builder,
            Role::Agent("coding_agent".into()),
        ] {
            let p = service.llm(&role, None, None, None).expect("provider");
            assert!(p.is_manual(), "{role:?} uses {}", p.name());
        }
        std::fs::remove_dir_all(&home).ok();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "maskflow-desktop-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }
}
