//! `maskflow mcp`: Maskflow as a Model Context Protocol server (the official
//! SDK, `rmcp`), over stdio (the default: an AI client starts it) or over
//! streamable HTTP on 127.0.0.1 at `/api/mcp` (`--http`), behind the same
//! host, origin and token checks as `maskflow serve` ([`crate::api::auth`]).
//!
//! Thin glue: each tool ([`tools`]) calls one core `client_*` method, which
//! guards and ledgers whatever the client receives. Files may be named only
//! inside the `--root` folders (none by default).

pub mod sessions;
pub mod tools;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

use crate::api::{AppState, auth};
use crate::serve::{data_home, open_service, resolve_token};
use tools::MaskflowTools;

/// Where the HTTP transport answers.
pub const MCP_PATH: &str = "/api/mcp";

/// Flags of `maskflow mcp`.
#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// A folder whose files clients may name (repeat for more). Without
    /// one, no file may be named; Maskflow's data folder never may.
    #[arg(long = "root", value_name = "FOLDER")]
    pub roots: Vec<PathBuf>,
    /// Serve streamable HTTP on 127.0.0.1 instead of stdio.
    #[arg(long)]
    pub http: bool,
    /// Port on 127.0.0.1 for --http (0 picks a free one).
    #[arg(long, default_value_t = 8422, requires = "http")]
    pub port: u16,
    /// The token for --http (else `--token-file`, `MASKFLOW_TOKEN`, or a
    /// random one, printed).
    #[arg(long, requires = "http")]
    pub token: Option<String>,
    /// Read the --http token from this file (its first line).
    #[arg(long, value_name = "FILE", conflicts_with = "token", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Answer every LLM role from this replay file (tests and demos).
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
}

/// Runs the server until the client goes (stdio) or Ctrl-C (HTTP).
pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let mut roots = Vec::new();
    for r in &args.roots {
        let canonical = std::fs::canonicalize(r)
            .with_context(|| format!("--root {}: no such folder", r.display()))?;
        anyhow::ensure!(canonical.is_dir(), "--root {} is not a folder", r.display());
        roots.push(canonical);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        if args.http {
            http(args, roots).await
        } else {
            stdio(args, roots).await
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

async fn stdio(args: McpArgs, roots: Vec<PathBuf>) -> anyhow::Result<()> {
    let home = data_home()?;
    let service = open_service(&home, args.replay.as_deref())?;
    eprintln!("maskflow mcp: data folder {}, on stdio", home.display());
    let tools = MaskflowTools::new(service.clone(), roots, "stdio".into());
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session on stdio")?;
    let _ = running.waiting().await;
    // Work cut off by the end keeps its manual prompts for the next start.
    service.stopping();
    Ok(())
}

async fn http(args: McpArgs, roots: Vec<PathBuf>) -> anyhow::Result<()> {
    let token = resolve_token(args.token.as_deref(), args.token_file.as_deref())?;
    let home = data_home()?;
    let service = open_service(&home, args.replay.as_deref())?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .with_context(|| format!("listening on 127.0.0.1:{}", args.port))?;
    let port = listener
        .local_addr()
        .context("reading the bound address")?
        .port();
    let url = format!("http://127.0.0.1:{port}{MCP_PATH}");
    let tools = MaskflowTools::new(service.clone(), roots, url.clone());
    let config =
        StreamableHttpServerConfig::default().with_allowed_hosts(["127.0.0.1", "localhost", "::1"]);
    let mcp = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(sessions::BoundedSessions::new(sessions::MAX_SESSIONS)),
        config,
    );
    let state = AppState::new(service.clone(), token.clone(), port);
    // The same host, origin and token checks as `maskflow serve`.
    let app = axum::Router::new()
        .nest_service(MCP_PATH, mcp)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::guard,
        ))
        .with_state(state);
    println!("{url}");
    println!("Authorization: Bearer {token}");
    let _ = std::io::stdout().flush();
    eprintln!("maskflow mcp: data folder {}, on {url}", home.display());
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            service.stopping();
        })
        .await
        .context("serving MCP over HTTP")?;
    Ok(())
}
