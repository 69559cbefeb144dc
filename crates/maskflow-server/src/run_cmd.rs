//! `maskflow run <workflow> --input NAME=PATH… [--out DIR] [--force] [--accept-output]`: runs
//! an approved workflow on local files through the same service and runner
//! as the app, copies its outputs into DIR and prints their paths. A file
//! that differs from the approved one in what the script reads is named
//! (one line per difference, exit code 2) before any script runs, unless
//! `--force`; a difference in what it does not read is a `note:` line.
//! After the run it prints the script's stdout and how its output compares
//! with the approved run's; a jump holds the outputs (exit code 3) unless
//! `--accept-output`. What the
//! script controls (output names, its stderr, the run's message) is printed
//! with its control characters escaped ([`maskflow_server::terminal`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use maskflow_server::terminal::{safe, safe_line};

/// Flags of `maskflow run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The workflow's id or exact name.
    pub workflow: String,
    /// An input as NAME=PATH (a file) or NAME=VALUE; repeat a name for a list of files.
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
    /// Where to copy the outputs (default: a new `maskflow-run-<id>/` here).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run even when a file differs in shape (columns, types, sheets) from
    /// the one the workflow was approved with.
    #[arg(long)]
    pub force: bool,
    /// Take the outputs even when they jumped from the approved run's
    /// (rows halved, a column ten times larger): a run that needs a look.
    #[arg(long)]
    pub accept_output: bool,
    /// Record the run as this schedule's (what `maskflow schedule install`'s timer passes).
    #[arg(long, value_name = "NAME")]
    pub schedule: Option<String>,
}

/// The exit code when a file differs from the approved one (before any script ran).
pub const INPUTS_DIFFER: u8 = 2;

/// The exit code when the script succeeded but its output jumped from the
/// approved run's: held as "needs a look", not copied.
pub const NEEDS_LOOK: u8 = 3;

/// Runs the workflow; non-zero exit when the run fails.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut inputs: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in &args.inputs {
        let Some((name, value)) = pair.split_once('=') else {
            bail!("--input {pair:?} must be NAME=PATH");
        };
        inputs
            .entry(name.trim().to_owned())
            .or_default()
            .push(value.to_owned());
    }
    let home = crate::serve::data_home()?;
    let service = crate::serve::open_service(&home, None)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let workflow_id = service.find_workflow(&args.workflow)?;
    if let Some(name) = &args.schedule {
        service.get_schedule(name)?;
    }
    // What the script reads of a file that changed is named here, before
    // any script runs; what it does not read is only reported.
    let check = service.local_input_check(&workflow_id, &inputs)?;
    for n in &check.notes {
        eprintln!("maskflow run: note: {}", safe_line(n));
    }
    let differences = check.refusals;
    if !differences.is_empty() {
        for d in &differences {
            eprintln!("maskflow run: {}", safe_line(d));
        }
        if !args.force {
            eprintln!(
                "maskflow run: not run: the files differ from the ones {} was approved with; \
                 give --force to run anyway",
                safe_line(&workflow_id)
            );
            return Ok(ExitCode::from(INPUTS_DIFFER));
        }
        eprintln!("maskflow run: running anyway (--force)");
    }
    print_environment_progress(&service);
    eprintln!("maskflow run: running {}…", safe_line(&workflow_id));
    let _ = std::io::stderr().flush();
    let mut notes = check.notes;
    if args.force {
        notes.extend(differences);
    }
    let run = runtime.block_on(service.run_workflow_local_noted(&workflow_id, inputs, notes))?;
    if let Some(name) = &args.schedule {
        let failed = (run.status != "succeeded").then_some(run.message.as_str());
        service.record_timer_run(name, &run.id, &run.status, failed)?;
    }
    eprintln!(
        "maskflow run: {} {} ({} ms): {}",
        safe_line(&run.id),
        safe_line(&run.status),
        run.duration_ms.unwrap_or(0),
        safe(&run.message)
    );
    // The script's own account ("lines read: 80"), and its output against
    // the approved run's.
    for line in run.stdout.lines() {
        eprintln!("maskflow run: script: {}", safe_line(line));
    }
    for line in &run.output_comparison {
        eprintln!("maskflow run: output: {}", safe_line(line));
    }
    for line in &run.output_jumps {
        eprintln!("maskflow run: needs a look: {}", safe_line(line));
    }
    if run.status == "needs_look" && !args.accept_output {
        eprintln!(
            "maskflow run: held: the outputs stay with run {} (the Run panel shows them); \
             look at them, then give --accept-output to take them anyway",
            safe_line(&run.id)
        );
        return Ok(ExitCode::from(NEEDS_LOOK));
    }
    if !matches!(run.status.as_str(), "succeeded" | "needs_look") {
        if !run.stderr.is_empty() {
            eprintln!("{}", safe(run.stderr.trim_end()));
        }
        return Ok(ExitCode::FAILURE);
    }
    let out = match args.out {
        Some(dir) => dir,
        None => std::env::current_dir()
            .context("reading the current folder")?
            .join(format!("maskflow-run-{}", run.id)),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    copy_outputs(&service, &run, &out)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the progress of a Python environment being installed for the run.
fn print_environment_progress(service: &maskflow_core::Service) {
    let mut events = service.subscribe();
    std::thread::spawn(move || {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match events.blocking_recv() {
                Ok(maskflow_core::Event::EnvironmentProgress { stage, message, .. }) => {
                    eprintln!(
                        "maskflow run: python environment {}: {}",
                        safe_line(&stage),
                        safe(&message)
                    );
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// Copies the run's outputs into `out`, printing each copy's path.
fn copy_outputs(
    service: &maskflow_core::Service,
    run: &maskflow_core::service::RunView,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    for o in &run.outputs {
        let src = service.run_output(&run.id, &o.name)?;
        let dst = out.join(&o.name);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).with_context(|| {
                format!("creating {}", safe_line(&parent.display().to_string()))
            })?;
        }
        std::fs::copy(&src, &dst)
            .with_context(|| format!("copying to {}", safe_line(&dst.display().to_string())))?;
        println!("{}", safe_line(&dst.display().to_string()));
    }
    Ok(())
}
