//! What outside clients (an AI client over MCP) may ask Maskflow, one
//! method per tool. Whatever a client receives is LLM-bound by definition,
//! so every answer — a success or an error — is built here, checked by the
//! privacy guard against the raw values of every file the user gave
//! Maskflow, and written to the ledger (provider `mcp`) before it is handed
//! to the shell. A guard hit hands out only an error naming the values
//! masked. The shells (`maskflow mcp`) only parse arguments and carry text.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Role};
use maskflow_privacy::ledger::{CallOutcome, LedgerEntry};
use maskflow_privacy::{GuardIndex, GuardMatch};
use serde_json::{Value, json};

use super::Service;
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::store;

/// The most ledger rows one answer lists.
pub const CLIENT_LEDGER_PAGE: u32 = 50;
/// How much of one ledger row's body a client is shown: the ledger lists
/// earlier answers, whose bodies would otherwise nest and grow each read.
const LEDGER_BODY_CHARS: usize = 2_000;
/// The last transcript turns a flow run's view shows.
const TURNS_SHOWN: usize = 20;

/// Maskflow's own words in the answers (keys and status words): never a
/// value, so a file that holds one of them as a value does not block them.
/// Sentences Maskflow writes into an answer are added where they are made.
const OWN_WORDS: &str = "id name description label approved inputs type required options \
    workflows flows disabled error status request_id message file path extract \
    approval_required declined run_id workflow_id outputs size preview none reason \
    conversationId flowName inflightId modelId title pending turns role content step \
    created_at provider model outcome blocked request_body truncated_body entries \
    succeeded failed running started stopped waiting completed gate attention kind prompt \
    context option input assistant user system manual_prompts prompt_id messages schema \
    answered withheld requests";

/// Shown instead of a script step's output that holds values of the user's files.
const WITHHELD_OUTPUT: &str = "This step's output holds values of your files, so it is not \
    shown here: open the run in Maskflow to read it";

/// Who is asking, and which folders it may name files in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientContext {
    /// The client's name, as it introduced itself (the ledger's `model`).
    pub name: String,
    /// How it is connected: `stdio`, or the URL it calls (the ledger's `url`).
    pub transport: String,
    /// The folders whose files it may name (canonical paths); the data
    /// folder is never one of them.
    pub roots: Vec<PathBuf>,
}

/// What a client's `start_flow` asks: the run's folder, and a run of the
/// flow to resume (from a step path, seed 004's `resumeStepPath`).
#[derive(Debug, Clone, Default)]
pub struct ClientStart<'a> {
    /// The folder its scripts run in.
    pub working_folder: Option<&'a str>,
    /// The run to resume instead of starting one.
    pub run_id: Option<&'a str>,
    /// Where to resume it.
    pub resume_step_path: Option<Vec<i64>>,
}

/// What a client is handed: the exact text, already guarded and ledgered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientReply {
    /// The text (JSON for a success, a sentence for an error).
    pub text: String,
    /// Whether the call failed (the text says why).
    pub is_error: bool,
}

/// An answer before the guard: the value, Maskflow's own texts in it (ids,
/// paths the client named, sizes) and the indexes of files it concerns
/// beside every file the user gave Maskflow.
pub(super) struct Answer {
    pub(super) value: Value,
    pub(super) own: Vec<String>,
    pub(super) also: Vec<Arc<GuardIndex>>,
    pub(super) workflow_id: Option<String>,
    pub(super) flow_run_id: Option<String>,
}

impl Answer {
    /// An answer with no own texts or extra indexes.
    pub(super) fn new(value: Value) -> Self {
        Self {
            value,
            own: Vec::new(),
            also: Vec::new(),
            workflow_id: None,
            flow_run_id: None,
        }
    }

    /// `self` with `texts` counted as Maskflow's own.
    pub(super) fn own(mut self, texts: impl IntoIterator<Item = String>) -> Self {
        self.own.extend(texts);
        self
    }
}

impl Service {
    /// Every workflow with whether it has an approved version and its inputs.
    pub fn client_workflows(&self, ctx: &ClientContext) -> ClientReply {
        let answer = self.list_workflows().map(|all| {
            let mut ids = Vec::new();
            let list: Vec<Value> = all
                .into_iter()
                .map(|w| {
                    let fields = self.active_version(&w.id).map(|v| v.fields).ok();
                    ids.push(w.id.clone());
                    json!({
                        "id": w.id,
                        "name": w.name,
                        "description": w.description,
                        "approved": fields.is_some(),
                        "inputs": fields.unwrap_or_default().iter().map(|f| json!({
                            "name": f.name, "label": f.label,
                            "type": f.field_type, "required": f.required,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            Answer::new(json!({ "workflows": list })).own(ids)
        });
        self.deliver(ctx, "list_workflows", answer)
    }

    /// Every flow (invalid ones disabled, with why).
    pub fn client_flows(&self, ctx: &ClientContext) -> ClientReply {
        let answer = self
            .flow_list()
            .and_then(|l| Ok(Answer::new(super::to_json(&l)?)));
        self.deliver(ctx, "list_flows", answer)
    }

    /// Starts a run of flow `name`; `working_folder` must be in the client's folders.
    pub fn client_flow_start(
        &self,
        ctx: &ClientContext,
        name: &str,
        start: ClientStart<'_>,
    ) -> ClientReply {
        let answer = (|| {
            let folder = start
                .working_folder
                .map(|f| self.client_path(ctx, f, false))
                .transpose()?;
            let request = maskflow_flows::StartFlow {
                working_folder: folder.map(|f| f.display().to_string()),
                conversation_id: start.run_id.map(str::to_owned),
                resume_step_path: start.resume_step_path,
            };
            let started = self.flow_start(name, request)?;
            let own = vec![started.conversation_id.clone(), started.inflight_id.clone()];
            let mut a = Answer::new(super::to_json(&started)?).own(own);
            a.flow_run_id = Some(started.conversation_id);
            Ok(a)
        })();
        self.deliver(ctx, "start_flow", answer)
    }

    /// A flow run's status, what it waits for, and its last turns.
    pub fn client_flow_watch(&self, ctx: &ClientContext, id: &str) -> ClientReply {
        let answer = self.flow_run(id).and_then(|v| self.run_answer(v));
        self.deliver(ctx, "watch_flow", answer)
    }

    /// Stops a flow run.
    pub async fn client_flow_stop(&self, ctx: &ClientContext, id: &str) -> ClientReply {
        let answer = match self.flow_stop(id).await {
            Ok(v) => self.run_answer(v),
            Err(e) => Err(e),
        };
        self.deliver(ctx, "stop_flow", answer)
    }

    /// Answers the gate, a manual task (its decision and result) or the
    /// attention question a flow run waits at.
    pub fn client_flow_answer(
        &self,
        ctx: &ClientContext,
        id: &str,
        gate: maskflow_flows::GateAnswer,
    ) -> ClientReply {
        let answer = (|| {
            let started = self.flow_answer(id, gate)?;
            let own = vec![started.conversation_id.clone(), started.inflight_id.clone()];
            let mut a = Answer::new(super::to_json(&started)?).own(own);
            a.flow_run_id = Some(started.conversation_id);
            Ok(a)
        })();
        self.deliver(ctx, "answer_flow", answer)
    }

    /// Refuses a tool call whose arguments do not fit, by name; ledgered
    /// like every answer a client receives.
    pub fn client_refuse(&self, ctx: &ClientContext, tool: &str, message: String) -> ClientReply {
        self.deliver(ctx, tool, Err(CoreError::InvalidRequest(message)))
    }

    /// The ledger, newest first (bodies cut at a few thousand characters).
    /// `q` finds only what the client is shown: a withheld or cut body, a
    /// reply, is never searched (else a guessed name would be answered as
    /// "some row holds it").
    pub fn client_ledger(
        &self,
        ctx: &ClientContext,
        q: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> ClientReply {
        let answer = self
            .ledger(q, limit.clamp(1, CLIENT_LEDGER_PAGE), offset)
            .and_then(|entries| {
                let guard = self.flow_guard()?;
                let mut own = Vec::new();
                let wanted = q.filter(|q| !q.is_empty()).map(str::to_lowercase);
                let rows: Vec<Value> = entries
                    .into_iter()
                    .filter_map(|e| {
                        let cut = e.request_body.chars().count() > LEDGER_BODY_CHARS;
                        let mut body: String =
                            e.request_body.chars().take(LEDGER_BODY_CHARS).collect();
                        // A body sent to an LLM may hold a value the user let
                        // go to that back end; a client is another party, so
                        // each body is checked again and withheld on a hit.
                        let found = guard.check_text(&body);
                        if !found.is_empty() {
                            body = format!(
                                "(withheld from clients: it holds {} value(s) of your files)",
                                found.len()
                            );
                        }
                        if let Some(q) = &wanted {
                            let shown = [
                                Some(&body),
                                Some(&e.id),
                                Some(&e.role),
                                Some(&e.provider),
                                Some(&e.model),
                                e.workflow_id.as_ref(),
                                e.error.as_ref(),
                            ];
                            if !shown
                                .into_iter()
                                .flatten()
                                .any(|f| f.to_lowercase().contains(q))
                            {
                                return None;
                            }
                        }
                        own.extend([e.id.clone(), e.created_at.clone(), body.clone()]);
                        Some(json!({
                            "id": e.id, "created_at": e.created_at, "role": e.role,
                            "provider": e.provider, "model": e.model,
                            "workflow_id": e.workflow_id, "outcome": e.outcome,
                            "blocked": e.blocked, "error": e.error,
                            "request_body": body, "truncated_body": cut,
                        }))
                    })
                    .collect();
                Ok(Answer::new(json!({ "entries": rows })).own(own))
            });
        self.deliver(ctx, "read_ledger", answer)
    }

    /// A flow run as a client sees it: the last turns only. What an agent
    /// (an LLM) wrote counts as its own: it came from outside. Any other
    /// assistant turn — a script step's output — is runtime text, checked
    /// against the run's working folder and every file the user gave
    /// Maskflow, and shown masked when it holds a value (issue 38, finding 8).
    fn run_answer(&self, v: maskflow_flows::RunView) -> Result<Answer> {
        let skip = v.turns.len().saturating_sub(TURNS_SHOWN);
        let mut own = vec![v.conversation_id.clone(), WITHHELD_OUTPUT.to_owned()];
        let also: Vec<Arc<GuardIndex>> = v
            .working_folder
            .as_deref()
            .map(|f| self.flow_folder_guard(Path::new(f)))
            .into_iter()
            .collect();
        let mut turns = Vec::new();
        for t in v.turns.iter().skip(skip) {
            let from_agent = t.command.place().is_some_and(|p| p.agent_type.is_some());
            let mut content = t.content.clone();
            if t.role == "assistant" && from_agent {
                own.push(t.content.clone());
            } else if t.role == "assistant" {
                let held = self.client_guard_hits(&t.content, Vec::new(), &also)?;
                if !held.is_empty() {
                    content = format!("{WITHHELD_OUTPUT} ({} value(s))", held.len());
                }
            }
            own.push(t.created_at.clone());
            turns.push(
                json!({"role": t.role, "content": content, "created_at": t.created_at,
                   "step": t.command.place().map(|p| p.label.clone())}),
            );
        }
        let id = v.conversation_id.clone();
        let (prompts, from_llm) = self.client_run_prompts(&id);
        own.extend(from_llm);
        let mut a = Answer::new(json!({
            "conversationId": v.conversation_id, "flowName": v.flow_name, "title": v.title,
            "status": v.status, "error": v.error, "pending": v.pending, "turns": turns,
            "manual_prompts": prompts,
            // Seed 002's ResumeContext and the step paths start_flow may resume from.
            "resume": v.resume, "resume_steps": v.resume_steps, "retry_due": v.retry_due,
        }))
        .own(own);
        a.also = also;
        a.flow_run_id = Some(id);
        Ok(a)
    }

    /// `raw`, canonical, if it is in one of the client's folders and not in
    /// the data folder; `file` says whether it must be a file (else a folder).
    pub(super) fn client_path(
        &self,
        ctx: &ClientContext,
        raw: &str,
        file: bool,
    ) -> Result<PathBuf> {
        let bad = |m: String| CoreError::InvalidRequest(m);
        let given = Path::new(raw);
        if !given.is_absolute() {
            return Err(bad(format!(
                "{raw:?} is not an absolute path; give the whole path"
            )));
        }
        let path = std::fs::canonicalize(given)
            .map_err(|_| bad(format!("there is no file or folder at {raw}")))?;
        let home = std::fs::canonicalize(self.home()).unwrap_or_else(|_| self.home().into());
        if path.starts_with(&home) {
            return Err(bad(format!(
                "{raw} is in Maskflow's data folder, which clients may never read"
            )));
        }
        if !ctx.roots.iter().any(|r| path.starts_with(r)) {
            let roots: Vec<String> = ctx.roots.iter().map(|r| r.display().to_string()).collect();
            return Err(bad(format!(
                "{raw} is outside the folders this client may read ({}); start `maskflow mcp --root FOLDER` to allow one",
                if roots.is_empty() {
                    "none".into()
                } else {
                    roots.join(", ")
                }
            )));
        }
        let kind_ok = if file { path.is_file() } else { path.is_dir() };
        if !kind_ok {
            let want = if file { "a file" } else { "a folder" };
            return Err(bad(format!("{raw} is not {want}")));
        }
        Ok(path)
    }

    /// Guards, ledgers and renders an answer (or an error) for a client.
    pub(super) fn deliver(
        &self,
        ctx: &ClientContext,
        tool: &str,
        answer: Result<Answer>,
    ) -> ClientReply {
        let (text, is_error, own, also, wf, run) = match answer {
            Ok(a) => {
                let text = serde_json::to_string_pretty(&a.value).unwrap_or_default();
                (text, false, a.own, a.also, a.workflow_id, a.flow_run_id)
            }
            Err(e) => {
                let text = crate::api::ErrorBody::from_core(e, "log of `maskflow mcp`").message;
                (text, true, Vec::new(), Vec::new(), None, None)
            }
        };
        let mut entry = LedgerEntry {
            id: self.id("call"),
            created_at: self.now(),
            role: format!("mcp:{tool}"),
            provider: "mcp".into(),
            model: ctx.name.clone(),
            workflow_id: wf,
            url: Some(ctx.transport.clone()),
            request_body: text.clone(),
            reply: None,
            input_tokens: None,
            output_tokens: None,
            latency_ms: 0,
            outcome: if is_error {
                CallOutcome::Error
            } else {
                CallOutcome::Ok
            },
            blocked: false,
            // An MCP client is an outside party (often a cloud LLM's app).
            local: false,
            note: None,
            error: None,
            deleted_workflow: None,
            flow_run_id: run,
            flow_step: None,
        };
        let found = match self.client_guard_hits(&text, own, &also) {
            Ok(found) => found,
            Err(e) => {
                eprintln!("maskflow: the privacy guard could not be built: {e}");
                return self.blocked(entry, "the privacy guard could not read the files it checks against; nothing was sent".into());
            }
        };
        if !found.is_empty() {
            let shown: Vec<String> = found
                .iter()
                .take(10)
                .map(|m| format!("{} (from {})", m.masked, m.source))
                .collect();
            let message = format!(
                "Maskflow's privacy guard stopped this answer: it held {} value(s) from your files: {}. Nothing was sent.",
                found.len(),
                shown.join(", ")
            );
            return self.blocked(entry, message);
        }
        if is_error {
            entry.error = Some(text.clone());
        }
        // Written ahead: an answer whose row cannot be written is not handed out.
        if let Err(e) = store::llm_calls::insert(&self.db(), &entry) {
            eprintln!("maskflow: could not record an MCP answer in the ledger: {e}");
            return ClientReply {
                text: "Maskflow could not record this answer in its ledger, so it was not sent"
                    .into(),
                is_error: true,
            };
        }
        self.inner.events.publish(Event::LedgerEntry { entry });
        ClientReply { text, is_error }
    }

    /// Records a blocked answer and hands out `message` in its place.
    fn blocked(&self, mut entry: LedgerEntry, message: String) -> ClientReply {
        entry.request_body = String::new();
        entry.outcome = CallOutcome::Blocked;
        entry.blocked = true;
        entry.error = Some(message.clone());
        if let Err(e) = store::llm_calls::insert(&self.db(), &entry) {
            eprintln!("maskflow: could not record a blocked MCP answer in the ledger: {e}");
        }
        self.inner.events.publish(Event::LedgerEntry { entry });
        ClientReply {
            text: message,
            is_error: true,
        }
    }

    /// The values of the user's files that `text` holds (Maskflow's own
    /// texts and words allowed), by the flow guard and `also`.
    pub(super) fn client_guard_hits(
        &self,
        text: &str,
        mut own: Vec<String>,
        also: &[Arc<GuardIndex>],
    ) -> Result<Vec<GuardMatch>> {
        own.push(OWN_WORDS.to_owned());
        let request = LlmRequest {
            role: Role::Agent("mcp".into()),
            messages: vec![ChatMessage::new(ChatRole::System, text)],
            schema: None,
        };
        let mut found = self.flow_guard()?.check_request(&request, &own);
        for index in also {
            found.extend(index.check_request(&request, &own));
        }
        Ok(found)
    }
}
