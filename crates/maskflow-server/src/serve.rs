//! `maskflow serve`: runs the HTTP API on 127.0.0.1 over the data folder
//! (`MASKFLOW_HOME`, else the platform's application-data folder), behind
//! the token it prints (in the URL's fragment: `/#token=…`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use maskflow_core::{Backends, Service, ServiceConfig};
use maskflow_llm::config::{LlmSettings, ProviderConfig, ProviderKind};

use crate::api::{AppState, router};

/// Flags of `maskflow serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8421)]
    pub port: u16,
    /// Open the printed URL in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Use this token instead of a random one (for scripts). Prefer
    /// `MASKFLOW_TOKEN` or `--token-file`: a command line is visible to
    /// every user of the machine.
    #[arg(long)]
    pub token: Option<String>,
    /// Read the token from this file (its first line).
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<std::path::PathBuf>,
    /// Answer every LLM role from this replay file (tests and demos).
    #[arg(long, value_name = "FILE", conflicts_with = "provider")]
    pub replay: Option<PathBuf>,
    /// Use this back end for every role (stored in the settings); the key
    /// comes from the keyring or MASKFLOW_<PROVIDER>_API_KEY.
    #[arg(long, value_parser = ["openai", "anthropic", "ollama", "manual", "local"])]
    pub provider: Option<String>,
    /// The back end's base URL (with --provider).
    #[arg(long, value_name = "URL", requires = "provider")]
    pub base_url: Option<String>,
    /// The model to ask (with --provider).
    #[arg(long, value_name = "NAME", requires = "provider")]
    pub model: Option<String>,
}

/// The settings `--provider KIND [--base-url URL] [--model NAME]` stands for:
/// a provider with the kind's name, used by every role.
pub fn provider_settings(
    kind: &str,
    base_url: Option<String>,
    model: Option<String>,
) -> anyhow::Result<LlmSettings> {
    let kind = ProviderKind::parse(kind).context("unknown --provider")?;
    let settings = LlmSettings::every_role(ProviderConfig {
        id: kind.as_str().to_owned(),
        kind,
        base_url,
        model,
        temperature: None,
        max_tokens: None,
        context_window: None,
    });
    settings
        .validate()
        .map_err(|e| anyhow::anyhow!("--provider {}: {e} (give --model NAME)", kind.as_str()))?;
    Ok(settings)
}

/// Opens the service the way every command does: each call's back end
/// comes from the stored settings (manual on a fresh data folder), unless
/// `replay` explicitly answers every role from a replay file.
pub fn open_service(home: &Path, replay: Option<&Path>) -> anyhow::Result<Service> {
    let config = ServiceConfig::with_backends(home, &Backends::replay(replay))?;
    Service::open(config).with_context(|| format!("opening the data folder {}", home.display()))
}

/// The data folder: `MASKFLOW_HOME`, else `<platform data dir>/maskflow`.
pub fn data_home() -> anyhow::Result<PathBuf> {
    if let Some(home) = std::env::var_os("MASKFLOW_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    dirs::data_dir()
        .map(|d| d.join("maskflow"))
        .context("no application-data folder is known on this system; set MASKFLOW_HOME")
}

/// Runs the server until Ctrl-C.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

/// The token of a server on loopback (`serve`, `mcp --http`): `token`,
/// else the first line of `token_file`, else `MASKFLOW_TOKEN`, else a
/// random one; a given token must be at least 8 letters, digits, - or _.
pub fn resolve_token(token: Option<&str>, token_file: Option<&Path>) -> anyhow::Result<String> {
    let given = match (token, token_file) {
        (Some(t), _) => Some(t.to_owned()),
        (None, Some(file)) => Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("reading the token file {}", file.display()))?
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned(),
        ),
        (None, None) => maskflow_llm::keys::process_env("MASKFLOW_TOKEN"),
    };
    Ok(match given {
        Some(t) => {
            if t.len() < 8
                || !t
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                bail!(
                    "the token (--token, --token-file or MASKFLOW_TOKEN) must be at least 8 characters of letters, digits, - or _"
                );
            }
            t
        }
        None => maskflow_clock::random_token(),
    })
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let token = resolve_token(args.token.as_deref(), args.token_file.as_deref())?;
    let home = data_home()?;
    let forced = match &args.provider {
        Some(kind) => Some(provider_settings(
            kind,
            args.base_url.clone(),
            args.model.clone(),
        )?),
        None => None,
    };
    let service = open_service(&home, args.replay.as_deref())?;
    service.start_scheduler();
    if let Some(settings) = forced {
        service
            .update_settings(settings)
            .context("setting the --provider back end")?;
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    let port = listener
        .local_addr()
        .context("reading the bound address")?
        .port();
    // The token goes in the fragment, which a browser never sends to any
    // server; the page moves it into its tab's storage (api::auth).
    let url = format!("http://127.0.0.1:{port}/#token={token}");
    println!("{url}");
    let _ = std::io::stdout().flush();
    eprintln!("maskflow serve: data folder {}", home.display());
    if args.replay.is_none() {
        for found in service.detect_providers().await {
            eprintln!(
                "maskflow serve: found a local {} server at {} (models: {}); choose it in Settings",
                found.kind.as_str(),
                found.base_url,
                found.models.join(", ")
            );
        }
        if let Ok(settings) = service.settings() {
            let roles: Vec<String> = settings
                .roles
                .iter()
                .map(|(role, id)| format!("{role}={id}"))
                .collect();
            eprintln!("maskflow serve: LLM back ends: {}", roles.join(", "));
        }
    }
    if args.open {
        open_browser(&url);
    }
    let stopping = service.clone();
    axum::serve(listener, router(AppState::new(service, token, port)))
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            // Work cut off by the stop keeps its manual prompts for the next start.
            stopping.stopping();
        })
        .await
        .context("serving HTTP")?;
    Ok(())
}

/// Opens `url` in the user's browser when there is one. The URL is printed
/// either way, so a machine without a display or a browser (a server) gets
/// no error about it, only the gentle hint below if an opener ran and failed.
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        // Without a display there is no browser to open: say nothing.
        if std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
            return;
        }
        "xdg-open"
    };
    let child = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        std::thread::spawn(move || {
            if child.wait().is_ok_and(|s| !s.success()) {
                eprintln!("maskflow serve: no browser opened; open the URL above in one");
            }
        });
    }
}
