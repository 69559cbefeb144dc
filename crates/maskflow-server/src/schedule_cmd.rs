//! `maskflow schedule list|add|pause|resume|rm|install`: schedules from the
//! command line, over the same data folder and service calls as the app.
//! They run while the app or `maskflow serve` is up; `install` hands a
//! cron schedule to the operating system's own scheduler instead (a
//! systemd user timer here), which calls `maskflow run` or `maskflow flows
//! run`; `--dry-run` prints the units without writing them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use maskflow_core::service::{ScheduleInput, ScheduleView};
use maskflow_server::schedule_units::UnitSpec;
use maskflow_server::terminal::safe_line;

/// Flags of `maskflow schedule`.
#[derive(clap::Args, Debug)]
pub struct ScheduleArgs {
    #[command(subcommand)]
    command: ScheduleCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ScheduleCommand {
    /// List the schedules with their last run, last error and next run.
    List,
    /// Schedule an approved workflow or a flow, by cron or by a watched folder.
    Add {
        /// The schedule's name as you write it ("weekly sales report"; its
        /// units and folder get a safe name, shown by `list`).
        name: String,
        /// The workflow (id or exact name) to run.
        #[arg(long, conflicts_with = "flow", required_unless_present = "flow")]
        workflow: Option<String>,
        /// The flow to run.
        #[arg(long)]
        flow: Option<String>,
        /// A 5-field cron expression in local time, e.g. "0 7 * * 1-5".
        #[arg(long, conflicts_with = "folder", required_unless_present = "folder")]
        cron: Option<String>,
        /// A folder to watch: its new and changed files each run the workflow once.
        #[arg(long)]
        folder: Option<PathBuf>,
        /// Where results go (default: next to the file, or the run's own folder).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Pause a schedule.
    Pause {
        /// The schedule's name or id.
        name: String,
    },
    /// Resume a paused schedule from its next time.
    Resume {
        /// The schedule's name or id.
        name: String,
    },
    /// Remove a schedule (its runs stay in the history).
    Rm {
        /// The schedule's name or id.
        name: String,
    },
    /// Write a systemd user timer and service for a cron schedule, so it
    /// runs even when neither the app nor `maskflow serve` is up.
    Install {
        /// The schedule's name or id.
        name: String,
        /// Print the units instead of writing them.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Runs the subcommand.
pub fn run(args: ScheduleArgs) -> anyhow::Result<ExitCode> {
    let home = crate::serve::data_home()?;
    let service = crate::serve::open_service(&home, None)?;
    match args.command {
        ScheduleCommand::List => {
            let all = service.list_schedules()?;
            if all.is_empty() {
                eprintln!("maskflow schedule: no schedules");
            }
            for s in &all {
                println!("{}", safe_line(&line(s)));
            }
        }
        ScheduleCommand::Add {
            name,
            workflow,
            flow,
            cron,
            folder,
            out,
        } => {
            let absolute = |p: PathBuf| -> anyhow::Result<String> {
                let p = if p.is_absolute() {
                    p
                } else {
                    std::env::current_dir()
                        .context("reading the current folder")?
                        .join(p)
                };
                Ok(p.display().to_string())
            };
            let input = ScheduleInput {
                name,
                workflow,
                flow,
                cron,
                folder: folder.map(absolute).transpose()?,
                output_folder: out.map(absolute).transpose()?,
            };
            println!("{}", safe_line(&line(&service.create_schedule(input)?)));
        }
        ScheduleCommand::Pause { name } => {
            println!("{}", safe_line(&line(&service.pause_schedule(&name)?)));
        }
        ScheduleCommand::Resume { name } => {
            println!("{}", safe_line(&line(&service.resume_schedule(&name)?)));
        }
        ScheduleCommand::Rm { name } => {
            service.delete_schedule(&name)?;
            eprintln!("maskflow schedule: removed {}", safe_line(&name));
        }
        ScheduleCommand::Install { name, dry_run } => {
            install(&service.get_schedule(&name)?, &home, dry_run)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The name as written, with its safe file and unit name when that differs
/// (`weekly sales report (weekly-sales-report)`).
fn shown_name(s: &ScheduleView) -> String {
    if s.slug == s.name {
        s.name.clone()
    } else {
        format!("{} ({})", s.name, s.slug)
    }
}

/// One schedule on one line, fields two spaces apart: name, state,
/// target, trigger, next run, last run (and its error).
fn line(s: &ScheduleView) -> String {
    let trigger = match (&s.cron, &s.folder) {
        (Some(c), _) => format!("cron {c:?}"),
        (None, Some(f)) => format!("folder {f}"),
        (None, None) => "-".into(),
    };
    let state = if s.paused { "paused" } else { "active" };
    let mut text = format!(
        "{}  {state}  {} {}  {trigger}  next {}  last {} {}",
        shown_name(s),
        s.target_kind,
        s.target_label,
        s.next_run_at.as_deref().unwrap_or("-"),
        s.last_run_at.as_deref().unwrap_or("-"),
        s.last_status.as_deref().unwrap_or("-"),
    );
    if let Some(e) = &s.last_error {
        text.push_str(&format!("  error ({} in a row): {e}", s.failures));
    }
    if s.stale {
        let since = s.last_success_at.as_deref().unwrap_or("-");
        text.push_str(&format!("  stale: its outputs are from {since}"));
    }
    text
}

/// The command the operating system's scheduler runs for `s`.
fn command(s: &ScheduleView, home: &Path) -> anyhow::Result<(Vec<String>, String)> {
    let exe = std::env::current_exe().context("finding the maskflow program")?;
    let mut cmd = vec![exe.display().to_string()];
    let what = match s.target_kind.as_str() {
        "workflow" => {
            let out = match &s.output_folder {
                Some(out) => PathBuf::from(out),
                None => home.join("scheduled").join(&s.slug),
            };
            cmd.extend(["run".into(), s.target.clone(), "--out".into()]);
            cmd.push(out.display().to_string());
            // By id: the person's name may hold anything a command line quotes.
            cmd.extend(["--schedule".into(), s.id.clone()]);
            format!("run workflow {}", s.target_label)
        }
        _ => {
            cmd.extend(["flows".into(), "run".into(), s.target.clone()]);
            if let Some(out) = &s.output_folder {
                cmd.extend(["--working-folder".into(), out.clone()]);
            }
            format!("run flow {}", s.target)
        }
    };
    Ok((cmd, what))
}

fn install(s: &ScheduleView, home: &Path, dry_run: bool) -> anyhow::Result<()> {
    let Some(cron) = &s.cron else {
        bail!(
            "schedule {} watches a folder; a timer cannot watch one: keep the app or \
             `maskflow serve` running for it",
            s.name
        );
    };
    let (command, what) = command(s, home)?;
    // The units are named by the safe name (`maskflow-weekly-sales-report.timer`).
    let spec = UnitSpec {
        name: s.slug.clone(),
        what,
        cron: cron.clone(),
        command,
        home: home.display().to_string(),
    };
    #[cfg(target_os = "macos")]
    return crate::schedule_os::install_launchd(&spec, dry_run);
    #[cfg(windows)]
    return crate::schedule_os::install_schtasks(&spec, dry_run);
    #[cfg(not(any(target_os = "macos", windows)))]
    {
        let units = maskflow_server::schedule_units::systemd_units(&spec)?;
        if dry_run {
            for (file, text) in &units {
                println!("# {file}\n{text}");
            }
            return Ok(());
        }
        let dir = dirs::config_dir()
            .context("no configuration folder is known (XDG_CONFIG_HOME)")?
            .join("systemd/user");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for (file, text) in &units {
            let path = dir.join(file);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("{}", path.display());
        }
        eprintln!(
            "maskflow schedule: to start it: systemctl --user daemon-reload && \
             systemctl --user enable --now maskflow-{}.timer",
            s.slug
        );
        Ok(())
    }
}
