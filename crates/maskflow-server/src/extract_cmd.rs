//! `maskflow extract [--samples N] FILE…`: prints a JSON array of masked
//! extracts (column and sheet names that are values masked too, as the app
//! sends them); a file that cannot be read is reported on stderr and the
//! others are still extracted.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use maskflow_extractors::{ExtractOptions, Progress, Registry};

/// Files at least this large get a progress bar (when stderr is a terminal).
const PROGRESS_BAR_BYTES: u64 = 64 * 1024 * 1024;

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

/// Runs the command: exit code 1 when any file failed.
pub fn run(args: ExtractArgs) -> anyhow::Result<ExitCode> {
    let registry = Registry::with_defaults();
    let options = ExtractOptions::with_samples(usize::from(args.samples));
    let show_progress = std::io::stderr().is_terminal();
    let mut extracts = Vec::new();
    let mut failed = false;
    for path in &args.files {
        let bar = show_progress.then(|| file_bar(path)).flatten();
        let mut on_progress = |p: Progress| {
            if let Some(bar) = &bar {
                bar.set_length(p.total);
                bar.set_position(p.done);
            }
        };
        match registry.extract(path, &options, &mut on_progress) {
            // Column and sheet names that are values are masked too (#26).
            Ok(extract) => extracts.push(
                maskflow_core::names::outbound(
                    &serde_json::to_value(&extract).context("could not write the extracts")?,
                    &[],
                )
                .extract,
            ),
            Err(err) => {
                failed = true;
                let text = err.to_string();
                eprintln!("error: {}", maskflow_server::terminal::safe(&text));
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }
    let json = serde_json::to_string_pretty(&extracts).context("could not write the extracts")?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", maskflow_server::terminal::safe_json(&json))
        .context("could not write the extracts")?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A byte progress bar for a large file, or `None` for a small one.
fn file_bar(path: &std::path::Path) -> Option<ProgressBar> {
    let size = std::fs::metadata(path).ok()?.len();
    if size < PROGRESS_BAR_BYTES {
        return None;
    }
    let bar = ProgressBar::new(size);
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .ok()?
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(format!("counting rows of {}", path.display()));
    Some(bar)
}
