//! The MCP tools: each parses its arguments and calls one core `client_*`
//! method, whose reply text (already guarded and ledgered) becomes the
//! tool's result. Blocking core calls run on tokio's blocking threads.

use std::collections::BTreeMap;
use std::path::PathBuf;

use maskflow_core::Service;
use maskflow_core::service::{ClientContext, ClientReply};
use maskflow_flows::GateAnswer;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{Peer, RoleServer};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// Maskflow's tools, over one service.
#[derive(Clone, Debug)]
pub struct MaskflowTools {
    service: Service,
    roots: Vec<PathBuf>,
    transport: String,
    tool_router: ToolRouter<Self>,
}

/// `get_masked_extract`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct ExtractArgs {
    /// The file's absolute path on this machine (inside a `--root` folder).
    pub path: String,
}

/// `run_workflow`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct RunArgs {
    /// The workflow's id (`wf_…`) or exact name, from `list_workflows`.
    pub workflow: String,
    /// Input name → absolute file paths (a list; one for a `file` input),
    /// or the value for an input that is not a file.
    #[serde(default)]
    pub inputs: BTreeMap<String, Vec<String>>,
    /// Run even when a file differs in shape from the approved one.
    #[serde(default)]
    pub force: bool,
}

/// `start_flow`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct StartArgs {
    /// The flow's name, from `list_flows`.
    pub name: String,
    /// The folder its scripts run in (absolute, inside a `--root` folder).
    #[serde(default)]
    pub working_folder: Option<String>,
    /// Resume this run of the flow (its `conversationId`) instead of
    /// starting a new one: where it stopped, failed or waits, or from
    /// `resume_step_path`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Seed 004's step path to resume the run from (e.g. `[1]`, or `[2, 0]`
    /// inside a loop); needs `run_id`. `watch_flow`'s `resume_steps` lists them.
    #[serde(default)]
    pub resume_step_path: Option<Vec<i64>>,
}

/// The arguments naming one flow run.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct RunIdArgs {
    /// The run's id (`conversationId` from `start_flow`).
    pub run_id: String,
}

/// `answer_flow`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct AnswerArgs {
    /// The run's id.
    pub run_id: String,
    /// The chosen option's label (or `retry`, `skip`, `stop` when the run needs attention).
    #[serde(default)]
    pub option: Option<String>,
    /// The decision at a manual task: one of its options (`approve`, `request changes`,
    /// `reject`, or the flow's own); give it or `option`, not both.
    #[serde(default)]
    pub decision: Option<String>,
    /// Text, for an option that asks for it.
    #[serde(default)]
    pub input: Option<String>,
    /// The result of a manual task, text or a JSON object: later steps read it as
    /// `output.result` (text) or by its keys (an object), like an agent's output.
    #[serde(default)]
    pub result: Option<serde_json::Value>,
}

impl AnswerArgs {
    /// The engine's answer: the option or the decision (exactly one of them).
    fn gate_answer(self) -> Result<GateAnswer, String> {
        let option = match (self.option, self.decision) {
            (Some(_), Some(_)) => {
                return Err("answer_flow takes option or decision, not both".into());
            }
            (Some(o), None) | (None, Some(o)) => o,
            (None, None) => return Err("answer_flow needs option or decision".into()),
        };
        Ok(GateAnswer {
            option,
            input: self.input,
            result: self.result,
        })
    }
}

/// `answer_prompt`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct PromptArgs {
    /// The prompt's id (`prompt_id` in `watch_flow`'s `manual_prompts`).
    pub prompt_id: String,
    /// The answer, as an AI tool would reply (JSON when the prompt has a schema).
    pub text: String,
}

/// `read_ledger`'s arguments.
#[derive(Deserialize, schemars::JsonSchema, Debug, Default)]
pub struct LedgerArgs {
    /// Words to search the bodies and names for.
    #[serde(default)]
    pub query: Option<String>,
    /// How many rows (at most 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// How many of the newest rows to skip.
    #[serde(default)]
    pub offset: Option<u32>,
}

fn result(reply: ClientReply) -> CallToolResult {
    let content = vec![ContentBlock::text(reply.text)];
    if reply.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

fn failed(what: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "Maskflow stopped while answering {what}"
    ))])
}

impl MaskflowTools {
    /// The tools over `service`, for clients reading files under `roots`.
    pub fn new(service: Service, roots: Vec<PathBuf>, transport: String) -> Self {
        Self {
            service,
            roots,
            transport,
            tool_router: Self::tool_router(),
        }
    }

    fn context(&self, peer: &Peer<RoleServer>) -> ClientContext {
        let name = peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| "unnamed client".into());
        ClientContext {
            name: name.chars().take(100).collect(),
            transport: self.transport.clone(),
            roots: self.roots.clone(),
        }
    }

    /// Runs a blocking core call off the async workers.
    async fn blocking(
        &self,
        what: &str,
        call: impl FnOnce(&Service) -> ClientReply + Send + 'static,
    ) -> CallToolResult {
        let service = self.service.clone();
        match tokio::task::spawn_blocking(move || call(&service)).await {
            Ok(reply) => result(reply),
            Err(_) => failed(what),
        }
    }
}

#[tool_router]
impl MaskflowTools {
    #[tool(
        description = "List Maskflow's workflows: id, name, description, whether one is approved to run, and its inputs."
    )]
    async fn list_workflows(&self, peer: Peer<RoleServer>) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("list_workflows", move |s| s.client_workflows(&ctx))
            .await
    }

    #[tool(
        description = "List Maskflow's flows (multi-step automations): name, description, and whether each can run."
    )]
    async fn list_flows(&self, peer: Peer<RoleServer>) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("list_flows", move |s| s.client_flows(&ctx))
            .await
    }

    #[tool(
        description = "The masked extract of a local file (columns, row count, masked sample rows: never a raw value), exactly as Maskflow's approval view shows it. The user must approve it in Maskflow first: until then the answer is status approval_required; ask again after they approve."
    )]
    async fn get_masked_extract(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<ExtractArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        result(self.service.client_extract(&ctx, &args.path).await)
    }

    #[tool(
        description = "Run an approved workflow on local files. Returns the run's status and its outputs' paths, sizes and masked previews; the outputs themselves stay on disk. A file the user has not approved for clients is asked about first: the answer is status approval_required with a request per file and nothing runs; run it again after they approve."
    )]
    async fn run_workflow(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<RunArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        result(
            self.service
                .client_run(&ctx, &args.workflow, args.inputs, args.force)
                .await,
        )
    }

    #[tool(
        description = "Start a run of a flow, or resume one (run_id, optionally from resume_step_path); returns its conversationId (the run id) to watch, answer or stop."
    )]
    async fn start_flow(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<StartArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("start_flow", move |s| {
            if args.resume_step_path.is_some() && args.run_id.is_none() {
                let message = "start_flow's resume_step_path needs run_id: the run to resume";
                return s.client_refuse(&ctx, "start_flow", message.into());
            }
            let start = maskflow_core::service::ClientStart {
                working_folder: args.working_folder.as_deref(),
                run_id: args.run_id.as_deref(),
                resume_step_path: args.resume_step_path.clone(),
            };
            s.client_flow_start(&ctx, &args.name, start)
        })
        .await
    }

    #[tool(
        description = "A flow run's status, what it waits for (pending: a gate's prompt and options, or a question needing attention; manual_prompts: prompts of a manual back end to answer with answer_prompt), its last transcript turns, and what a resume starts from (resume: steps completed with their times, the last output, a fan-out's total/completed/failed; resume_steps: the step paths start_flow may resume from; retry_due)."
    )]
    async fn watch_flow(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<RunIdArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("watch_flow", move |s| {
            s.client_flow_watch(&ctx, &args.run_id)
        })
        .await
    }

    #[tool(description = "Stop a flow run (the step in flight is cancelled).")]
    async fn stop_flow(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<RunIdArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        result(self.service.client_flow_stop(&ctx, &args.run_id).await)
    }

    #[tool(
        description = "Answer the gate or manual task a flow run waits at: option (or retry, skip, stop when it needs attention), or a manual task's decision with an optional result (text or JSON) that later steps read."
    )]
    async fn answer_flow(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<AnswerArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        let run_id = args.run_id.clone();
        let answer = args.gate_answer();
        self.blocking("answer_flow", move |s| match answer {
            Ok(answer) => s.client_flow_answer(&ctx, &run_id, answer),
            Err(message) => s.client_refuse(&ctx, "answer_flow", message),
        })
        .await
    }

    #[tool(
        description = "Answer a manual prompt a flow run waits on (watch_flow lists them under manual_prompts): your reply stands for the AI tool's."
    )]
    async fn answer_prompt(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<PromptArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("answer_prompt", move |s| {
            s.client_answer_prompt(&ctx, &args.prompt_id, &args.text)
        })
        .await
    }

    #[tool(
        description = "Read Maskflow's privacy ledger: every request that left this machine (to an LLM or to an MCP client), newest first."
    )]
    async fn read_ledger(
        &self,
        peer: Peer<RoleServer>,
        Parameters(args): Parameters<LedgerArgs>,
    ) -> CallToolResult {
        let ctx = self.context(&peer);
        self.blocking("read_ledger", move |s| {
            s.client_ledger(
                &ctx,
                args.query.as_deref(),
                args.limit.unwrap_or(20),
                args.offset.unwrap_or(0),
            )
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MaskflowTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("maskflow", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Maskflow runs data automations on the user's files without their raw values \
                 leaving the machine. Everything you receive is masked and recorded in the \
                 user's privacy ledger. A file's extract needs the user's approval in Maskflow.",
            )
    }
}
