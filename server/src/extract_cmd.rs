//! `maskflow extract [--samples N] FILE…`

use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `maskflow extract`.
#[derive(clap::Args, Debug)]
pub struct ExtractArgs {
    /// Number of masked sample rows per table (1–50).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=50))]
    samples: u16,
    /// Files to extract.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Runs the command.
pub fn run(_args: ExtractArgs) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
