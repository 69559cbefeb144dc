//! `maskflow`: the command line over Maskflow's crates.
//!
//! Thin glue only: each subcommand parses its flags and delegates to one
//! library call; errors get their context here (`anyhow`).

mod build_cmd;
mod build_io;
#[cfg(test)]
mod docs_lines;
#[cfg(test)]
mod docs_tests;
mod extract_cmd;
mod flows_cmd;
mod models_cmd;
mod run_cmd;
mod schedule_cmd;
#[cfg(any(target_os = "macos", windows))]
mod schedule_os;

use maskflow_server::serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Maskflow: local-first data automations, without your data leaving your machine.
#[derive(Parser, Debug)]
#[command(name = "maskflow", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the masked extract of each file as a JSON array.
    Extract(extract_cmd::ExtractArgs),
    /// List, run, resume and stop flows.
    Flows(flows_cmd::FlowsArgs),
    /// Serve the HTTP API on 127.0.0.1 (prints the URL with its token).
    Serve(serve::ServeArgs),
    /// Run an approved workflow on local files; prints the output paths.
    Run(run_cmd::RunArgs),
    /// List, download, add, remove and use models of the embedded back end.
    Models(models_cmd::ModelsArgs),
    /// Serve AI clients over MCP (stdio, or HTTP on 127.0.0.1 with --http).
    Mcp(maskflow_server::mcp::McpArgs),
    /// Build a workflow from files on the terminal: masked extracts first, then the conversation.
    Build(build_cmd::BuildArgs),
    /// Approve a workflow's built version (it becomes the active one).
    Approve(build_cmd::ApproveArgs),
    /// Ask for changes to a workflow's built version; it is built again.
    Reject(build_cmd::RejectArgs),
    /// List, add, pause, resume, remove and install schedules (cron or a watched folder).
    Schedule(schedule_cmd::ScheduleArgs),
}

/// How many malloc arenas glibc may keep: its default (8 per core) let the
/// soak benchmark's server (issue 19) grow 112 → 142 MiB in steps as threads
/// got arenas of their own, where 2 kept it flat at 84–87 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 2;

/// Bounds glibc's arenas unless `MALLOC_ARENA_MAX` already says how many.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // one libc call
fn bound_malloc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: called first in `main`, before any thread allocates;
        // `mallopt` only sets a tunable (a refusal returns 0, kept as is).
        unsafe { libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS) };
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn bound_malloc_arenas() {}

#[allow(unsafe_code)] // removing the secrets from the environment
fn main() -> ExitCode {
    bound_malloc_arenas();
    // SAFETY: first thing in `main`, before any thread exists (#13).
    unsafe { maskflow_llm::keys::forget_env_secrets() };
    maskflow_extractors::quiet_contained_panics();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Extract(args) => extract_cmd::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Flows(args) => flows_cmd::run(args),
        Command::Models(args) => models_cmd::run(args),
        Command::Mcp(args) => maskflow_server::mcp::run(args),
        Command::Build(args) => build_cmd::run(args),
        Command::Approve(args) => build_cmd::approve(args),
        Command::Reject(args) => build_cmd::reject(args),
        Command::Schedule(args) => schedule_cmd::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            // An error may quote a script's output name or an LLM's text.
            let text = format!("{err:#}");
            eprintln!("error: {}", maskflow_server::terminal::safe(&text));
            ExitCode::FAILURE
        }
    }
}
