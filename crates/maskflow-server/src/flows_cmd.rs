//! `maskflow flows list|run|resume|answer|stop|export|import`: flow runs from
//! the command line, over the same data folder (`MASKFLOW_HOME`), database
//! and LLM settings as `serve` and the desktop app. `run`, `resume` and
//! `answer` print each transcript turn as it is committed, one line per
//! turn: `turn <stepPath> <label> [<agent>:<identifier>] <content>`. When an
//! agent uses the manual back end, its prompt is printed and the pasted
//! answer is read from the terminal (or `--answers FILE`), ending at a line
//! holding only `.` or at the end of input. While a model answers, a
//! progress line on the terminal shows the role and the time so far;
//! Ctrl-C stops the run (resumable) and exits with 130.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use maskflow_core::service::FlowTask;
use maskflow_core::{Event, Service};
use maskflow_flows::bundle::ImportRequest;
use maskflow_flows::{GateAnswer, RunStatus, StartFlow, Started};
use maskflow_llm::manual::ManualPrompt;
use maskflow_server::spinner::{self as crate_spinner, Spinner};
use maskflow_server::terminal::{safe, safe_json, safe_line};
use std::time::Instant;

/// Flags of `maskflow flows`.
#[derive(clap::Args, Debug)]
pub struct FlowsArgs {
    #[command(subcommand)]
    command: FlowsCommand,
}

#[derive(clap::Subcommand, Debug)]
enum FlowsCommand {
    /// List the flows in `<MASKFLOW_HOME>/flows`.
    List,
    /// Run a flow, printing its transcript as it goes.
    Run {
        /// The flow's name.
        name: String,
        /// The folder scripts run in.
        #[arg(long, value_name = "DIR")]
        working_folder: Option<PathBuf>,
        /// Answer agents from this replay file instead of the settings' back ends.
        #[arg(long, value_name = "FILE")]
        replay: Option<PathBuf>,
        /// Answers to manual prompts, in order, each ended by a line holding
        /// only `.` (default: read from the terminal).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Resume a stopped, failed or interrupted run.
    Resume {
        /// The run's id (`flow_…`).
        id: String,
        /// Resume at this step path, e.g. `0,1`.
        #[arg(long, value_name = "PATH")]
        step_path: Option<String>,
        /// Answer agents from this replay file instead of the settings' back ends.
        #[arg(long, value_name = "FILE")]
        replay: Option<PathBuf>,
        /// Answers to manual prompts (see `run --answers`).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Answer a run waiting at a gate (or needing attention: retry, skip,
    /// stop) and drive it on.
    Answer {
        /// The run's id (`flow_…`).
        id: String,
        /// The option's label (or give it as `--decision`).
        #[arg(required_unless_present = "decision", conflicts_with = "decision")]
        option: Option<String>,
        /// The person's decision at a manual task: one of its options
        /// (approve, request changes, reject, or the flow's own).
        #[arg(long)]
        decision: Option<String>,
        /// Text, for options that require it.
        #[arg(long)]
        text: Option<String>,
        /// The person's result as text; later steps read it as `output.result`.
        #[arg(long, conflicts_with = "json")]
        result: Option<String>,
        /// The person's result as JSON; later steps read its keys like an agent's output.
        #[arg(long, value_name = "JSON")]
        json: Option<String>,
        /// Answer agents from this replay file instead of the settings' back ends.
        #[arg(long, value_name = "FILE")]
        replay: Option<PathBuf>,
        /// Answers to manual prompts (see `run --answers`).
        #[arg(long, value_name = "FILE")]
        answers: Option<PathBuf>,
    },
    /// Stop a run (in this or another process).
    Stop {
        /// The run's id.
        id: String,
    },
    /// Print a flow as a bundle with its agents (JSON), or as Mermaid.
    Export {
        /// The flow's name.
        name: String,
        /// Print the Mermaid diagram with its config block instead.
        #[arg(long)]
        mermaid: bool,
        /// The bundle's shape: `maskflow` (default) or `seed003`.
        #[arg(long)]
        format: Option<String>,
    },
    /// Import a bundle (`.json`) or a Mermaid diagram (`.mmd`).
    Import {
        /// The file.
        file: PathBuf,
        /// Save the flow under this name (default: the bundle's, or the file stem).
        #[arg(long)]
        name: Option<String>,
        /// Replace a flow or agent of the same name.
        #[arg(long)]
        force: bool,
    },
}

/// Opens the service on the stored LLM settings; `--replay` overrides them.
fn open(replay: Option<&PathBuf>) -> anyhow::Result<Service> {
    crate::serve::open_service(&crate::serve::data_home()?, replay.map(PathBuf::as_path))
}

/// Where pasted answers to manual prompts come from.
type Answers = Arc<Mutex<Box<dyn BufRead + Send>>>;

fn answers(file: Option<&PathBuf>) -> anyhow::Result<Answers> {
    let reader: Box<dyn BufRead + Send> = match file {
        Some(f) => Box::new(std::io::BufReader::new(
            std::fs::File::open(f).with_context(|| format!("opening --answers {}", f.display()))?,
        )),
        None => Box::new(std::io::BufReader::new(std::io::stdin())),
    };
    Ok(Arc::new(Mutex::new(reader)))
}

/// Reads one answer: lines up to one holding only `.`, or the end of input.
fn read_answer(reader: &mut dyn BufRead) -> std::io::Result<String> {
    let mut text = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        if line.trim_end_matches(['\r', '\n']) == "." {
            break;
        }
        text.push_str(&line);
    }
    Ok(text.trim().to_owned())
}

/// Prints a manual prompt, reads the pasted answer and gives it to the agent
/// (no answer dismisses the prompt, and the step fails as cancelled).
async fn answer_prompt(
    service: &Service,
    prompt: &ManualPrompt,
    answers: &Answers,
) -> anyhow::Result<()> {
    println!(
        "prompt {} {}",
        safe_line(&prompt.id),
        safe_line(&prompt.role)
    );
    for m in &prompt.messages {
        let role = serde_json::to_value(m.role)?;
        println!("--- {}", role.as_str().unwrap_or("message"));
        println!("{}", safe(&m.content));
    }
    println!("--- paste the answer, then a line holding only \".\"");
    let reader = answers.clone();
    let text = tokio::task::spawn_blocking(move || {
        let mut r = reader.lock().unwrap_or_else(|e| e.into_inner());
        read_answer(r.as_mut())
    })
    .await
    .context("reading the answer")?
    .context("reading the answer")?;
    if text.is_empty() {
        eprintln!("no answer given: dismissing prompt {}", prompt.id);
        service.dismiss_manual(&prompt.id)?;
    } else {
        service.answer_manual(&prompt.id, &text)?;
    }
    Ok(())
}

/// Runs the subcommand.
pub fn run(args: FlowsArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        match args.command {
            FlowsCommand::List => {
                let service = open(None)?;
                for f in service.flow_list()?.flows {
                    match f.error {
                        Some(e) => println!("{}\tdisabled\t{}", safe_line(&f.name), safe_line(&e)),
                        None => println!("{}\t{}", safe_line(&f.name), safe_line(&f.description)),
                    }
                }
                Ok(ExitCode::SUCCESS)
            }
            FlowsCommand::Run {
                name,
                working_folder,
                replay,
                answers: file,
            } => {
                let service = open(replay.as_ref())?;
                let request = StartFlow {
                    working_folder: working_folder.map(|w| w.display().to_string()),
                    ..StartFlow::default()
                };
                let events = service.subscribe();
                let running = service.flow_run_to_end(&name, request)?;
                drive(&service, events, running, answers(file.as_ref())?).await
            }
            FlowsCommand::Answer {
                id,
                option,
                decision,
                text,
                result,
                json,
                replay,
                answers: file,
            } => {
                let result = match (result, json) {
                    (Some(t), _) => Some(serde_json::Value::String(t)),
                    (None, Some(j)) => Some(
                        serde_json::from_str(&j)
                            .with_context(|| format!("--json is not valid JSON: {j}"))?,
                    ),
                    (None, None) => None,
                };
                let service = open(replay.as_ref())?;
                let events = service.subscribe();
                let answer = GateAnswer {
                    option: option.or(decision).unwrap_or_default(),
                    input: text,
                    result,
                };
                match service.flow_answer_to_end(&id, answer)? {
                    (started, Some(task)) => {
                        drive(&service, events, (started, task), answers(file.as_ref())?).await
                    }
                    (started, None) => {
                        let view = service.flow_run(&started.conversation_id)?;
                        println!("run {}", started.conversation_id);
                        println!("status {}", view.status.as_str());
                        Ok(ExitCode::SUCCESS)
                    }
                }
            }
            FlowsCommand::Resume {
                id,
                step_path,
                replay,
                answers: file,
            } => {
                let service = open(replay.as_ref())?;
                let run = service.flow_run(&id)?;
                let path = step_path.as_deref().map(parse_step_path).transpose()?;
                // What the run goes on from, a due retry first (shown before it runs).
                let due = run.retry_due.as_ref().filter(|_| path.is_none());
                for line in maskflow_server::resume_view::resume_lines(due, &run.resume) {
                    println!("{}", safe_line(&line));
                }
                let request = StartFlow {
                    conversation_id: Some(id),
                    resume_step_path: path,
                    ..StartFlow::default()
                };
                let events = service.subscribe();
                let running = service.flow_run_to_end(&run.flow_name, request)?;
                drive(&service, events, running, answers(file.as_ref())?).await
            }
            FlowsCommand::Export {
                name,
                mermaid,
                format,
            } => {
                let service = open(None)?;
                if mermaid {
                    print!("{}", safe(&service.flow_mermaid(&name)?));
                } else {
                    let query = maskflow_core::service::ExportQuery { format };
                    let bundle = service.flow_export_as(&name, &query)?;
                    println!("{}", safe_json(&serde_json::to_string_pretty(&bundle)?));
                }
                Ok(ExitCode::SUCCESS)
            }
            FlowsCommand::Import { file, name, force } => import(&file, name, force),
            FlowsCommand::Stop { id } => {
                let service = open(None)?;
                let view = service.flow_stop(&id).await?;
                println!("{}\t{}", view.conversation_id, view.status.as_str());
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}

fn print_event(id: &str, event: &Event) {
    if let Event::FlowTurn {
        conversation_id,
        turn,
        ..
    } = event
        && conversation_id == id
    {
        let place = turn.command.place();
        let path: Vec<String> = place
            .map(|p| p.step_path.iter().map(usize::to_string).collect())
            .unwrap_or_default();
        let agent = match place.map(|p| (&p.agent_type, &p.identifier)) {
            Some((Some(a), Some(i))) => format!(" [{a}:{i}]"),
            _ => String::new(),
        };
        println!(
            "turn {} {}{} {}",
            safe_line(&path.join(".")),
            safe_line(place.map_or("", |p| p.label.as_str())),
            safe_line(&agent),
            safe_line(&turn.content.replace('\n', "\\n"))
        );
    }
}

async fn drive(
    service: &Service,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    (started, mut task): (Started, FlowTask),
    answers: Answers,
) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    let id = started.conversation_id.clone();
    println!("run {id}");
    let mut spinner = Spinner::new(std::io::stderr().is_terminal());
    let mut tick = tokio::time::interval(crate_spinner::TICK);
    let mut interrupted = false;
    let status = loop {
        tokio::select! {
            done = &mut task => break done.context("the run stopped unexpectedly")?,
            event = events.recv() => match event {
                Ok(Event::ManualPrompt { prompt }) if prompt.role.starts_with("agent:") => {
                    spinner.clear();
                    answer_prompt(service, &prompt, &answers).await?;
                }
                Ok(e) => {
                    spinner.on_event(&e, Instant::now());
                    if matches!(e, Event::FlowTurn { .. }) {
                        spinner.clear();
                    }
                    print_event(&id, &e);
                }
                Err(_) => {}
            },
            _ = tick.tick() => spinner.draw(Instant::now()),
            // Ctrl-C stops the run as `stop` does: the call in flight is
            // dropped (the ledger records it cancelled) and the run ends
            // `stopped`, resumable. A second Ctrl-C is the default: exit.
            signal = tokio::signal::ctrl_c(), if !interrupted => {
                if signal.is_ok() {
                    interrupted = true;
                    spinner.clear();
                    eprintln!("stopping run {id}…");
                    let (service, id) = (service.clone(), id.clone());
                    tokio::spawn(async move { service.flow_stop(&id).await });
                }
            }
        }
    };
    spinner.clear();
    while let Ok(e) = events.try_recv() {
        print_event(&id, &e);
    }
    let view = service.flow_run(&id)?;
    println!("status {}", status.as_str());
    match status {
        // 130: stopped by Ctrl-C (SIGINT), as shells report it.
        RunStatus::Stopped if interrupted => Ok(ExitCode::from(130)),
        RunStatus::Completed | RunStatus::Stopped => Ok(ExitCode::SUCCESS),
        RunStatus::Waiting | RunStatus::NeedsAttention => {
            if let Some(p) = view.pending {
                println!("pending {}", safe_json(&p.to_string()));
            }
            Ok(ExitCode::SUCCESS)
        }
        RunStatus::Failed => bail!("the run failed: {}", safe(&view.error.unwrap_or_default())),
        RunStatus::Running => Ok(ExitCode::FAILURE),
    }
}

/// `--step-path 0,2,1`: the step path a resumed run starts from.
fn parse_step_path(text: &str) -> anyhow::Result<Vec<i64>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<i64>()
                .with_context(|| format!("--step-path: {s:?} is not a number"))
        })
        .collect()
}

/// `maskflow flows import FILE`: a Mermaid diagram, a flow bundle or a flow file.
fn import(file: &std::path::Path, name: Option<String>, force: bool) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let is_mermaid = file
        .extension()
        .is_some_and(|e| e == "mmd" || e == "mermaid")
        || !text.trim_start().starts_with('{');
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let json: Option<serde_json::Value> = (!is_mermaid)
        .then(|| serde_json::from_str(&text))
        .transpose()
        .with_context(|| format!("{} is not valid JSON", file.display()))?;
    let request = if is_mermaid {
        ImportRequest {
            mermaid: Some(text),
            name: Some(name.unwrap_or(stem)),
            overwrite: Some(force),
            ..ImportRequest::default()
        }
    } else if let Some(flow) = json.filter(|v| v.get("workflow").is_none()) {
        // A flow file as written in flows/ (seed 004), not a bundle.
        ImportRequest {
            flow: Some(flow),
            name: Some(name.unwrap_or(stem)),
            overwrite: Some(force),
            ..ImportRequest::default()
        }
    } else {
        let bundle = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a flow bundle", file.display()))?;
        ImportRequest {
            bundle: Some(bundle),
            name,
            overwrite: Some(force),
            ..ImportRequest::default()
        }
    };
    let service = open(None)?;
    match service.flow_import(request) {
        Ok(f) => {
            println!("imported {}", safe_line(&f.name));
            Ok(ExitCode::SUCCESS)
        }
        Err(maskflow_core::CoreError::Conflict(m)) => {
            eprintln!("{}\nre-run with --force to overwrite", safe(&m));
            Ok(ExitCode::from(3))
        }
        Err(e) => Err(e.into()),
    }
}
