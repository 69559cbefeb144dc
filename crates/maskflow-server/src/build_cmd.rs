//! `maskflow build FILE… --message TEXT`, `maskflow approve WORKFLOW` and
//! `maskflow reject WORKFLOW --feedback TEXT`: the builder's conversation
//! on the command line (seed 001's interface layer, issue 31 point 4),
//! over the same service calls as the HTTP API and the app.
//!
//! `build` reads the files locally, shows their masked extracts and sends
//! nothing until the user says yes (as the app's approval panel); then the
//! validator, the clarifier (its questions answered on the terminal), the
//! builder, the local test on the real files and its one repair run on the
//! configured back end. With the manual back end each prompt is printed and
//! the reply pasted back. The session folder `sessions/<version>/` holds
//! `state.json`, rewritten as the build goes. `approve` makes the built
//! version the active one (recording the SHA-256 of its input files);
//! `reject` asks for changes: a new version continues the conversation
//! with the feedback and is built again.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use maskflow_core::api::ErrorBody;
use maskflow_core::builder::options::BuildOptions;
use maskflow_core::builder::review::Verdict;
use maskflow_core::needs::PreflightAction;
use maskflow_core::service::{
    CreateWorkflow, DataNote, GateChoice, GateRequest, SendMessage, WorkflowView,
};
use maskflow_core::versions::Status;
use maskflow_core::{ErrorCode, Service};
use maskflow_server::terminal::{safe, safe_json, safe_line};
use serde_json::Value;

use crate::build_io::{ManualDesk, Terminal};

/// How often the build's state is looked at while it runs in the background.
const POLL: Duration = Duration::from_millis(150);

/// The back end flags `build` and `reject` share.
#[derive(clap::Args, Debug)]
pub struct BackendArgs {
    /// Use this back end for every role (stored in the settings, as with
    /// `serve`); the key comes from the keyring or MASKFLOW_<PROVIDER>_API_KEY.
    #[arg(long, value_parser = ["openai", "anthropic", "ollama", "manual"])]
    pub provider: Option<String>,
    /// The back end's base URL (with --provider).
    #[arg(long, value_name = "URL", requires = "provider")]
    pub base_url: Option<String>,
    /// The model to ask (with --provider).
    #[arg(long, value_name = "NAME", requires = "provider")]
    pub model: Option<String>,
    /// Answer every LLM role from this replay file (tests and demos).
    #[arg(long, value_name = "FILE", conflicts_with = "provider")]
    pub replay: Option<PathBuf>,
}

/// Flags of `maskflow build`.
#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// The files to build the workflow on (read here; only their masked
    /// extracts are sent, after you approve them).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// What the workflow should do.
    #[arg(long, short = 'm', value_name = "TEXT")]
    pub message: String,
    /// A note on your data, sent in your words beside the masked extracts
    /// and kept with the workflow: what the files cannot show ("amounts
    /// are in thousands"). TEXT is on the only file; FILE=TEXT,
    /// COLUMN=TEXT, FILE:COLUMN=TEXT or FILE:SHEET:COLUMN=TEXT place it.
    /// Repeat for more.
    #[arg(long = "note", value_name = "[PLACE=]TEXT")]
    pub notes: Vec<String>,
    /// Send the masked extracts without asking (you reviewed them with
    /// `maskflow extract`).
    #[arg(long)]
    pub yes: bool,
    /// Have the builder propose a plan (steps, inputs, outputs) for you to
    /// approve or change before any code.
    #[arg(long)]
    pub plan: bool,
    /// Have an LLM review each script before it runs on your files.
    #[arg(long)]
    pub review: bool,
    /// Let the AI reviewer approve the plan and decide whether a script goes
    /// to its test or back for one revision (its reasons are recorded).
    #[arg(long)]
    pub ai_approver: bool,
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Flags of `maskflow approve`.
#[derive(clap::Args, Debug)]
pub struct ApproveArgs {
    /// The workflow's id or exact name.
    pub workflow: String,
}

/// Flags of `maskflow reject`.
#[derive(clap::Args, Debug)]
pub struct RejectArgs {
    /// The workflow's id or exact name.
    pub workflow: String,
    /// What to change; the builder gets it as your next message.
    #[arg(long, value_name = "TEXT")]
    pub feedback: String,
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// The service, its runtime and the terminal one command works with.
struct Session {
    service: Service,
    runtime: tokio::runtime::Runtime,
    term: Terminal,
}

impl Session {
    fn open(backend: &BackendArgs) -> anyhow::Result<Self> {
        let home = crate::serve::data_home()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let service = {
            let _inside = runtime.enter();
            crate::serve::open_service(&home, backend.replay.as_deref())?
        };
        if let Some(kind) = &backend.provider {
            let settings = crate::serve::provider_settings(
                kind,
                backend.base_url.clone(),
                backend.model.clone(),
            )?;
            service
                .update_settings(settings)
                .context("setting the --provider back end")?;
        }
        Ok(Self {
            service,
            runtime,
            term: Terminal::stdin(),
        })
    }

    /// Which back end answers each role, in one line.
    fn backends(&self) -> String {
        self.service
            .settings()
            .map(|s| {
                s.roles
                    .iter()
                    .map(|(role, id)| format!("{role}={id}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_else(|_| "from the settings".into())
    }
}

/// The `--note`s, each placed on its file, sheet or column and shown
/// where it sits before anything is sent.
fn data_notes(
    args: &BuildArgs,
    file_ids: &[String],
    sent: &[Value],
) -> anyhow::Result<Vec<DataNote>> {
    let given: Vec<String> = args
        .files
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let files: Vec<(&str, &Value)> = given.iter().map(String::as_str).zip(sent).collect();
    let mut notes = Vec::new();
    for spec in &args.notes {
        let placed = maskflow_core::data_notes::place(spec, &files).map_err(anyhow::Error::msg)?;
        let place = [
            Some(given[placed.file].clone()),
            placed.sheet.as_ref().map(|s| format!("sheet {s:?}")),
            placed.column.as_ref().map(|c| format!("column {c:?}")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        eprintln!(
            "your note on {}: {}",
            safe_line(&place),
            safe_line(&placed.text)
        );
        notes.push(DataNote {
            file_id: file_ids[placed.file].clone(),
            sheet: placed.sheet,
            column: placed.column,
            text: placed.text,
        });
    }
    Ok(notes)
}

/// Runs `maskflow build`.
pub fn run(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let mut s = Session::open(&args.backend)?;
    let _inside = s.runtime.enter();
    let mut file_ids = Vec::new();
    let mut sent = Vec::new();
    for path in &args.files {
        let path =
            std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
        let uploaded = s
            .runtime
            .block_on(s.service.add_local_file(path.clone()))
            .with_context(|| format!("reading {}", path.display()))?;
        let json = serde_json::to_string_pretty(&uploaded.extract)
            .context("showing the masked extract")?;
        eprintln!(
            "── masked extract of {} ──\n{}",
            safe_line(&path.display().to_string()),
            safe_json(&json)
        );
        for flagged in &uploaded.flagged_names {
            let text = serde_json::to_string(flagged).unwrap_or_default();
            eprintln!(
                "note: a name that looks like a value is sent masked: {}",
                safe_json(&text)
            );
        }
        file_ids.push(uploaded.file_id);
        sent.push(uploaded.extract);
    }
    let notes = data_notes(&args, &file_ids, &sent)?;
    eprintln!("LLM back ends: {}", safe_line(&s.backends()));
    if !args.yes
        && !s
            .term
            .yes("Send these masked extracts (and your messages) to the LLM?")?
    {
        eprintln!("maskflow build: nothing was sent.");
        return Ok(ExitCode::FAILURE);
    }
    let created = s.service.create_workflow(CreateWorkflow {
        file_ids,
        notes,
        ..CreateWorkflow::default()
    })?;
    let workflow_id = created.workflow_id;
    s.service.set_build_options(
        &workflow_id,
        BuildOptions {
            plan: args.plan,
            review: args.review,
            ai_approver: args.ai_approver,
        },
    )?;
    eprintln!(
        "maskflow build: workflow {} (version {})",
        safe_line(&workflow_id),
        safe_line(&created.version_id)
    );
    converse(&mut s, &workflow_id, args.message)
}

/// Runs `maskflow approve`.
pub fn approve(args: ApproveArgs) -> anyhow::Result<ExitCode> {
    let s = Session::open(&BackendArgs {
        provider: None,
        base_url: None,
        model: None,
        replay: None,
    })?;
    let _inside = s.runtime.enter();
    let workflow_id = s.service.find_workflow(&args.workflow)?;
    let view = s.service.get_workflow(&workflow_id)?;
    let current = &view.current_version;
    if current.status != Status::PendingUserApproval {
        bail!(
            "workflow {} has no version waiting for approval (version {} is {})",
            safe_line(&workflow_id),
            current.version,
            current.status.as_str()
        );
    }
    let view = s.service.approve(&workflow_id, &current.id)?;
    let approved = s
        .service
        .get_version(&workflow_id, &view.current_version.id)?;
    println!(
        "approved version {} of {} ({})",
        approved.version,
        safe_line(view.name.as_deref().unwrap_or("")),
        safe_line(&workflow_id)
    );
    for h in &approved.input_hashes {
        println!(
            "{}  {}",
            h.sha256
                .as_deref()
                .unwrap_or("(the file could not be read)"),
            safe_line(&h.filename)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `maskflow reject`: the built (or failed) version is edited into a
/// new one, and the feedback continues the conversation.
pub fn reject(args: RejectArgs) -> anyhow::Result<ExitCode> {
    let mut s = Session::open(&args.backend)?;
    let _inside = s.runtime.enter();
    let workflow_id = s.service.find_workflow(&args.workflow)?;
    let view = s.service.get_workflow(&workflow_id)?;
    let current = &view.current_version;
    if !matches!(current.status, Status::PendingUserApproval | Status::Failed) {
        bail!(
            "workflow {} has no built or failed version to reject (version {} is {})",
            safe_line(&workflow_id),
            current.version,
            current.status.as_str()
        );
    }
    let next = s.service.edit(&workflow_id, &current.id)?;
    eprintln!(
        "maskflow reject: version {} set aside; {} continues with your feedback",
        current.version,
        safe_line(&next.version_id)
    );
    converse(&mut s, &workflow_id, args.feedback)
}

/// Sends `content` and goes on until the version is built, failed or
/// rejected: clarifier questions are answered on the terminal, manual
/// prompts pasted, and the build followed to its end.
fn converse(s: &mut Session, workflow_id: &str, mut content: String) -> anyhow::Result<ExitCode> {
    let mut desk = ManualDesk::new(workflow_id);
    let mut confirm_privacy = false;
    loop {
        let message = SendMessage {
            content: content.clone(),
            confirm_privacy,
            go_ahead: false,
        };
        let (service, wf) = (s.service.clone(), workflow_id.to_owned());
        let task = s
            .runtime
            .spawn(async move { service.send_user_message(&wf, message).await });
        while !task.is_finished() {
            if !desk.answer_waiting(&s.service, &mut s.term)? {
                std::thread::sleep(POLL);
            }
        }
        let sent = s.runtime.block_on(task).context("the message's task")?;
        match sent {
            Ok(reply) => match reply.status {
                Status::Clarifying => {
                    eprintln!("\n{}", safe(&reply.message));
                    content = s.term.line(">")?;
                    confirm_privacy = false;
                }
                Status::Building => {
                    eprintln!("maskflow build: {}", safe(&reply.message));
                    return follow_build(s, workflow_id, &mut desk);
                }
                Status::Rejected => {
                    eprintln!(
                        "maskflow build: the validator found this not feasible: {}",
                        safe(&reply.message)
                    );
                    return Ok(ExitCode::FAILURE);
                }
                other => {
                    eprintln!("\n{} ({})", safe(&reply.message), other.as_str());
                    content = s.term.line(">")?;
                }
            },
            Err(e) if e.code() == ErrorCode::PrivacyBlocked => {
                // The same body the HTTP API answers: each value masked, and where it is from.
                let body = ErrorBody::from_core(e, "terminal");
                eprintln!("maskflow build: not sent: it holds values from your files:");
                for v in body.matches.iter().flatten() {
                    eprintln!("  {} ({})", safe_line(&v.masked), safe_line(&v.source));
                }
                // Only the user's own text can be confirmed; a second block
                // after confirming means values outside it.
                if confirm_privacy {
                    bail!(
                        "the request holds values from your files outside your own text; nothing was sent"
                    );
                }
                if s.term.yes("If this is your own text: send it anyway?")? {
                    confirm_privacy = true;
                } else {
                    content = s.term.line("Say it another way >")?;
                }
            }
            Err(e) if !maskflow_core::api::next_steps(&e).is_empty() => {
                // A weak model (issue 44): nothing changed; the two ways on.
                eprintln!("maskflow build: not answered: {}", safe(&e.to_string()));
                eprintln!(
                    "maskflow build: nothing changed. Try again (a model's replies vary), or choose another \
                     model: rerun with --provider and --model (or set it in Settings → Models)."
                );
                if !s.term.yes("Try again?")? {
                    return Ok(ExitCode::FAILURE);
                }
                confirm_privacy = false;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Follows the background build until it leaves `building`, answering its
/// manual prompts and the questions a gate waits on, then prints the
/// outcome.
fn follow_build(
    s: &mut Session,
    workflow_id: &str,
    desk: &mut ManualDesk,
) -> anyhow::Result<ExitCode> {
    let mut last = String::new();
    let view = loop {
        let view = s.service.get_workflow(workflow_id)?;
        let current = &view.current_version;
        if current.status != Status::Building {
            break view;
        }
        if let Some(b) = &current.build {
            let now = format!(
                "{} {} (iteration {})",
                serde_json::to_value(b.phase).unwrap_or_default(),
                b.stage
                    .map(|st| serde_json::to_value(st).unwrap_or_default().to_string())
                    .unwrap_or_default(),
                b.iteration
            );
            if now != last {
                eprintln!("maskflow build: {}", now.replace('"', ""));
                last = now;
            }
            if b.pending_gate {
                decide_gate(s, &view)?;
                continue;
            }
        }
        if !desk.answer_waiting(&s.service, &mut s.term)? {
            std::thread::sleep(POLL);
        }
    };
    report(&s.service, &view)
}

/// Answers a gate the build waits on: which file feeds which input, or
/// whether to install packages outside the curated set.
fn decide_gate(s: &mut Session, view: &WorkflowView) -> anyhow::Result<()> {
    let current = &view.current_version;
    let Some(build) = &current.build else {
        return Ok(());
    };
    let mut request = GateRequest {
        decision: GateChoice::Approve,
        feedback: None,
        bindings: None,
        plan: None,
    };
    if let Some(plan) = &build.pending_plan {
        eprintln!("\nThe builder proposes this plan:\n\n{}\n", safe(plan));
        if !s.term.yes("Approve this plan?")? {
            request.decision = GateChoice::Reject;
            request.feedback = Some(s.term.line("What should change? >")?);
        }
    } else if let Some(questions) = &build.pending_binding {
        let mut bindings = std::collections::BTreeMap::new();
        for q in questions {
            eprintln!(
                "Which file is the input {} ({})?",
                safe_line(&q.label),
                safe_line(&q.field)
            );
            for (i, c) in q.candidates.iter().enumerate() {
                eprintln!("  {}. {}", i + 1, safe_line(c));
            }
            let file = loop {
                let answer = s.term.line("Number >")?;
                match answer.trim().parse::<usize>() {
                    Ok(n) if (1..=q.candidates.len()).contains(&n) => {
                        break q.candidates[n - 1].clone();
                    }
                    _ => eprintln!("Give a number from 1 to {}.", q.candidates.len()),
                }
            };
            bindings.insert(q.field.clone(), file);
        }
        request.bindings = Some(bindings);
    } else if let Some(missing) = &build.pending_environment {
        eprintln!(
            "The build waits: this machine is missing what the script's test needs: {}",
            safe_line(&missing.detail)
        );
        if let Some(fix) = &missing.fix {
            eprintln!("Fix: {}", safe_line(fix));
        }
        if missing.action == Some(PreflightAction::InstallUv) && s.term.yes("Install uv now?")? {
            // The install continues every build waiting for uv.
            match s.service.install_uv() {
                Ok(_) => return Ok(()),
                Err(e) => eprintln!("maskflow build: {}", safe(&e.to_string())),
            }
        }
        if !s
            .term
            .yes("Fixed? Check again and continue (no stops the build)?")?
        {
            request.decision = GateChoice::Reject;
        }
    } else if let Some(packages) = &build.pending_packages {
        let names: Vec<String> = packages
            .iter()
            .map(|p| match &p.version {
                Some(v) => format!("{}=={v}", p.name),
                None => p.name.clone(),
            })
            .collect();
        eprintln!(
            "The script needs packages outside the curated set: {}",
            safe_line(&names.join(", "))
        );
        if !s.term.yes("Install them for this build?")? {
            request.decision = GateChoice::Reject;
            request.feedback = Some("The user declined the packages.".into());
        }
    } else if !s.term.yes("Continue with the builder's reply?")? {
        request.decision = GateChoice::Reject;
        request.feedback = Some(s.term.line("What should change? >")?);
    }
    s.service
        .resolve_gate(workflow_id_of(view), &current.id, request)?;
    Ok(())
}

fn workflow_id_of(view: &WorkflowView) -> &str {
    &view.id
}

/// Prints how the build ended; success when it waits for approval.
fn report(service: &Service, view: &WorkflowView) -> anyhow::Result<ExitCode> {
    let current = &view.current_version;
    let session = maskflow_core::builder::session_dir(service.home(), &current.id);
    eprintln!(
        "maskflow build: session folder {}",
        safe_line(&session.display().to_string())
    );
    for r in current.build.iter().flat_map(|b| b.reviews.iter()) {
        let verdict = match r.verdict {
            Some(Verdict::Approve) => "approved",
            Some(Verdict::RequestChanges) => "asked for changes to",
            None => "gave no usable verdict on",
        };
        let role = if r.decided_gate { "decided" } else { "advice" };
        eprintln!(
            "AI review: the reviewer {verdict} the {} (iteration {}, {role}): {}",
            safe_line(&r.subject),
            r.iteration,
            safe(&r.notes)
        );
    }
    if let Some(r) = &current.test_report {
        eprintln!(
            "test on your files: {} — {}",
            safe_line(&r.status),
            safe(&r.message)
        );
        if let Some(run) = &r.run {
            for o in &run.outputs {
                let rows = o
                    .row_count
                    .map(|n| format!(", {n} rows"))
                    .unwrap_or_default();
                eprintln!("  output {} ({} bytes{rows})", safe_line(&o.name), o.size);
            }
        }
    }
    match current.status {
        Status::PendingUserApproval => {
            println!(
                "built {} ({}): approve with `maskflow approve {}`, or `maskflow reject {} --feedback TEXT`",
                safe_line(view.name.as_deref().unwrap_or("")),
                safe_line(&view.id),
                safe_line(&view.id),
                safe_line(&view.id)
            );
            Ok(ExitCode::SUCCESS)
        }
        other => {
            eprintln!(
                "maskflow build: the build ended {}: {}",
                other.as_str(),
                safe(current.failure_reason.as_deref().unwrap_or(""))
            );
            Ok(ExitCode::FAILURE)
        }
    }
}
