//! `maskflow models list|pull|add|rm|use`: the model manager of the
//! embedded back end on the command line, over the same service calls as
//! Settings. `pull` shows a progress line on stderr (a bar on a terminal);
//! an interrupted pull resumes the next time. Text from a model file or a
//! URL is printed with its control characters escaped.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use maskflow_core::Service;
use maskflow_core::service::{AddModelFile, ModelsView, PullModel};
use maskflow_server::terminal::safe_line;

/// Flags of `maskflow models`.
#[derive(clap::Args, Debug)]
pub struct ModelsArgs {
    #[command(subcommand)]
    command: ModelsCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ModelsCommand {
    /// The installed models and the recommended ones, with size, memory and speed.
    List {
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a recommended model by name, or any GGUF file by URL with its SHA-256.
    Pull {
        /// A recommended model's name (see `maskflow models list`), or the
        /// name to give the URL's model.
        name: Option<String>,
        /// The GGUF file's URL.
        #[arg(long, requires = "sha256")]
        url: Option<String>,
        /// The SHA-256 the file must have (64 hex digits).
        #[arg(long)]
        sha256: Option<String>,
        /// Use the model once it is in.
        #[arg(long = "use")]
        use_it: bool,
    },
    /// Add a GGUF file from this machine.
    Add {
        /// The file.
        path: std::path::PathBuf,
        /// The name to give it (default: the file's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Remove a model (or its partial download).
    Rm {
        /// The model's name.
        name: String,
    },
    /// Use a model: the local back end answers the builder's roles with it.
    Use {
        /// The model's name.
        name: String,
    },
}

/// Runs the command.
pub fn run(args: ModelsArgs) -> anyhow::Result<ExitCode> {
    let home = crate::serve::data_home()?;
    let service = crate::serve::open_service(&home, None)?;
    match args.command {
        ModelsCommand::List { json } => {
            let view = service.models()?;
            if json {
                let text = serde_json::to_string_pretty(&view).context("writing the list")?;
                println!("{}", maskflow_server::terminal::safe_json(&text));
            } else {
                print_list(&view);
            }
        }
        ModelsCommand::Pull {
            name,
            url,
            sha256,
            use_it,
        } => {
            if name.is_none() && url.is_none() {
                bail!("give a recommended model's name, or --url URL --sha256 HEX");
            }
            let request = PullModel {
                name,
                url,
                sha256,
                use_when_done: Some(use_it),
            };
            pull(&service, request)?;
        }
        ModelsCommand::Add { path, name } => {
            let view = service.add_model_file(AddModelFile {
                path: path.display().to_string(),
                name,
            })?;
            if let Some(m) = view.installed.last() {
                println!("added {} ({})", safe_line(&m.name), size(m.bytes));
            }
        }
        ModelsCommand::Rm { name } => {
            service.remove_model(&name)?;
            println!("removed {}", safe_line(&name));
        }
        ModelsCommand::Use { name } => {
            service.use_model(&name)?;
            println!(
                "the local back end now uses {} for the validator, clarifier and builder",
                safe_line(&name)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn pull(service: &Service, request: PullModel) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut events = service.subscribe();
    let mut line = ProgressLine::new();
    // The events are printed as they come; those still queued when the
    // pull returns (its last ones) are printed after it.
    let result = runtime.block_on(async {
        let pull = service.pull_model(request);
        tokio::pin!(pull);
        loop {
            tokio::select! {
                event = events.recv() => {
                    if let Ok(event) = event {
                        line.event(event);
                    }
                }
                result = &mut pull => return result,
            }
        }
    });
    while let Ok(event) = events.try_recv() {
        line.event(event);
    }
    let model = result?;
    println!(
        "{} ({}, SHA-256 {})",
        safe_line(&model.name),
        size(model.bytes),
        model.sha256
    );
    Ok(())
}

/// The progress line of a pull: an indicatif bar on a terminal, else a line
/// at every tenth of the download.
struct ProgressLine {
    bar: Option<ProgressBar>,
    tenth: u64,
}

impl ProgressLine {
    fn new() -> Self {
        Self {
            bar: std::io::stderr().is_terminal().then(|| {
                let bar = ProgressBar::new(0);
                if let Ok(style) = ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
                ) {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar
            }),
            tenth: 0,
        }
    }

    fn event(&mut self, event: maskflow_core::Event) {
        if let maskflow_core::Event::ModelProgress {
            name,
            stage,
            done,
            total,
            message,
        } = event
        {
            self.show(&name, &stage, done, total, &message);
        }
    }

    fn show(&mut self, name: &str, stage: &str, done: u64, total: Option<u64>, msg: &str) {
        let name = safe_line(name);
        if stage == "downloading" {
            if let Some(bar) = &self.bar {
                bar.set_message(format!("downloading {name}"));
                bar.set_length(total.unwrap_or(0));
                bar.set_position(done);
            } else if let Some(total) = total.filter(|t| *t > 0) {
                let tenth = done * 10 / total;
                if tenth > self.tenth || done == 0 {
                    self.tenth = tenth;
                    eprintln!(
                        "maskflow models: downloading {name}: {}% ({} of {})",
                        tenth * 10,
                        size(done),
                        size(total)
                    );
                }
            }
            return;
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        eprintln!("maskflow models: {name} {stage}: {}", safe_line(msg));
        let _ = std::io::stderr().flush();
    }
}

fn print_list(view: &ModelsView) {
    let memory = view
        .total_memory_bytes
        .map_or_else(|| "unknown".to_owned(), size);
    println!(
        "models in {} (this machine's memory: {memory})",
        safe_line(&view.folder)
    );
    if !view.local_backend {
        println!("note: this build has no embedded back end; `use` needs one");
    }
    println!("\ninstalled:");
    if view.installed.is_empty() {
        println!("  (none)");
    }
    for m in &view.installed {
        let used = if view.in_use.as_deref() == Some(m.name.as_str()) {
            " [in use]"
        } else {
            ""
        };
        let speed = m.speed.as_ref().map_or_else(
            || "speed not measured yet".to_owned(),
            |s| format!("{:.1} tokens/s", s.tokens_per_second),
        );
        println!(
            "  {}{used}  {}  needs {}  {speed}",
            safe_line(&m.name),
            size(m.bytes),
            size(m.memory_bytes)
        );
    }
    for d in &view.downloads {
        println!(
            "  {}  downloading {} of {}",
            safe_line(&d.name),
            size(d.done),
            d.total.map_or_else(|| "?".to_owned(), size)
        );
    }
    println!("\nrecommended (maskflow models pull NAME):");
    for c in &view.catalog {
        let mark = match (
            c.installed,
            view.recommended.as_deref() == Some(c.name.as_str()),
        ) {
            (true, _) => " [installed]",
            (false, true) => " [recommended here]",
            _ if !c.fits => " [needs more memory]",
            _ => "",
        };
        let speed = c.expected_tokens_per_second.map_or_else(
            || c.speed_note.clone(),
            |t| format!("~{t:.0} tokens/s ({})", c.speed_note),
        );
        println!(
            "  {:<14}{mark}  {}  needs {}  {speed}\n      {}",
            c.name,
            size(c.bytes),
            size(c.memory_bytes),
            c.title
        );
    }
}

/// Bytes for people: `98.4 MB`, `2.1 GB`.
fn size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.0} kB", b / 1e3)
    }
}
