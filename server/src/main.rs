//! `maskflow`: the command line over Maskflow's crates.
//!
//! Thin glue only: each subcommand parses its flags and delegates to one
//! library call; errors get their context here (`anyhow`).

mod extract_cmd;
mod flows_cmd;
mod run_cmd;

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
}

fn main() -> ExitCode {
    forget_env_secrets();
    maskflow_extractors::quiet_contained_panics();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Extract(args) => extract_cmd::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Flows(args) => flows_cmd::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Keeps API keys and the token from the environment in memory only, and
/// removes them from it, so no child process (a script, uv, tesseract)
/// inherits them (#13).
#[allow(unsafe_code)]
fn forget_env_secrets() {
    for name in maskflow_core::keys::take_env_secrets() {
        // SAFETY: called first thing in `main`, before any thread exists, so
        // nothing reads the environment concurrently.
        unsafe { std::env::remove_var(&name) };
    }
}
