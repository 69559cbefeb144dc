//! `maskflow-desktop`: starts the desktop app.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[allow(unsafe_code)] // removing the secrets from the environment
fn main() -> std::process::ExitCode {
    // SAFETY: first thing in `main`, before any thread exists. Keys stay
    // readable in memory; children (scripts, uv, tesseract) never see them.
    unsafe { maskflow_llm::keys::forget_env_secrets() };
    match maskflow_desktop::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
