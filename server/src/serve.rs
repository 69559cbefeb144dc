//! `maskflow serve`: runs the HTTP API on 127.0.0.1 over the data folder
//! (`MASKFLOW_HOME`, else the platform's application-data folder), behind
//! the token it prints.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use maskflow_core::providers::{ReplayProvider, Unconfigured};
use maskflow_core::{Roles, Service, ServiceConfig};

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
    /// Use this token instead of a random one (for scripts).
    #[arg(long)]
    pub token: Option<String>,
    /// Answer every LLM role from this replay file (tests and demos).
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
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

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let token = match args.token {
        Some(t) => {
            if t.len() < 8
                || !t
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                bail!("--token must be at least 8 characters of letters, digits, - or _");
            }
            t
        }
        None => maskflow_core::ids::random_token(),
    };
    let provider: Arc<dyn maskflow_core::Provider> = match &args.replay {
        Some(path) => Arc::new(ReplayProvider::from_file(path)?),
        None => Arc::new(Unconfigured),
    };
    let home = data_home()?;
    let service = Service::open(ServiceConfig::new(&home, Roles::all(provider)))
        .with_context(|| format!("opening the data folder {}", home.display()))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    let port = listener
        .local_addr()
        .context("reading the bound address")?
        .port();
    let url = format!("http://127.0.0.1:{port}/?token={token}");
    println!("{url}");
    let _ = std::io::stdout().flush();
    eprintln!("maskflow serve: data folder {}", home.display());
    if args.replay.is_none() {
        eprintln!("maskflow serve: no LLM back end configured yet; use --replay FILE");
    }
    if args.open {
        open_browser(&url);
    }
    axum::serve(listener, router(AppState::new(service, token, port)))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving HTTP")?;
    Ok(())
}

fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(program).arg(url).spawn() {
        eprintln!("maskflow serve: could not open a browser ({program}: {e}); open the URL above");
    }
}
