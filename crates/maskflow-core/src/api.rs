//! The API both shells serve, declared once: [`api_calls!`] hands the list
//! of calls to a macro of the caller's, which turns each entry into a Tauri
//! command (the desktop), an axum handler with its OpenAPI entry (`maskflow
//! serve`) or a line of the UI's typed client (`ui/src/generated/api.ts`).
//! Core names no shell: the list carries only names, paths and types.
//!
//! Also here: the one error body of both shells ([`ErrorBody`]) and the
//! small argument types that exist only on the wire (written in `api/wire.rs`).

use ts_rs::TS;

mod error_body;
pub use error_body::{ErrorBody, NextStep, next_steps};

mod wire;
pub use wire::{Confirm, ConversationQuery, KeyInput, LedgerQuery, ManualAnswer};

/// Any JSON (a flow's definition is passed through as written).
pub use serde_json::Value as JsonValue;

/// One call of the list as data: what the UI's generated client and the
/// shells' tests read (the shells' handlers come from [`api_calls!`]).
#[derive(Clone, Debug)]
pub struct Call {
    /// The call's name: the Tauri command, the OpenAPI operation id.
    pub name: &'static str,
    /// Its doc comment, line by line.
    pub doc: Vec<&'static str>,
    /// The HTTP method, lower case (`get`, `post`, …).
    pub method: &'static str,
    /// The HTTP path, with `{param}` placeholders.
    pub path: &'static str,
    /// The OpenAPI tag.
    pub tag: &'static str,
    /// `json`, `empty`, `text` or `delete` (see [`api_calls!`]).
    pub reply: &'static str,
    /// The HTTP status of success.
    pub status: u16,
    /// The path parameters, in order.
    pub path_params: Vec<Param>,
    /// The query struct, if any (its `url` is its argument name).
    pub query: Option<Param>,
    /// The JSON body, if any (its `url` is its argument name).
    pub body: Option<Param>,
    /// The TypeScript name of the result (`null` for none).
    pub returns: String,
    /// The documented failures: HTTP status and what it means.
    pub errors: Vec<(u16, &'static str)>,
}

/// One argument of a [`Call`].
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name in the URL (for the query and the body: the argument's name).
    pub url: &'static str,
    /// The argument's name (the Tauri argument).
    pub arg: &'static str,
    /// Its TypeScript type's name, as ts-rs writes it.
    pub ts: String,
}

/// Turns the normalised list into [`Call`]s.
macro_rules! call_table {
    ($( $name:ident {
        doc [$($doc:literal)*]
        http [$method:ident $path:literal $tag:literal]
        reply [$reply:ident $status:literal]
        path [$( ($pname:literal $parg:ident : $pty:ty) )*]
        query [$( $qarg:ident : $qty:ty )?]
        body [$( $barg:ident : $bty:ty )?]
        returns [$ret:ty]
        errors [$( ($ecode:literal $edesc:literal) )*]
        run $run:tt
    } )*) => {
        vec![$(Call {
            name: stringify!($name),
            doc: vec![$($doc),*],
            method: stringify!($method),
            path: $path,
            tag: $tag,
            reply: stringify!($reply),
            status: $status,
            path_params: vec![$(Param { url: $pname, arg: stringify!($parg), ts: <$pty as TS>::name() }),*],
            query: None $(.or(Some(Param { url: stringify!($qarg), arg: stringify!($qarg), ts: <$qty as TS>::name() })))?,
            body: None $(.or(Some(Param { url: stringify!($barg), arg: stringify!($barg), ts: <$bty as TS>::name() })))?,
            returns: <$ret as TS>::name(),
            errors: vec![$(($ecode, $edesc)),*],
        }),*]
    };
}

/// Every call of the list, in its order.
pub fn calls() -> Vec<Call> {
    crate::api_calls!(call_table)
}

/// Hands the list of API calls to `$callback!`, in one normalised form.
///
/// The list is written in this grammar, read by this macro only:
///
/// ```text
/// /// doc
/// name: method "/api/path/{param}", tag "tag", reply status,
///     path("param" arg: Type, …), query(arg: Type)?, body(arg: Type)?,
///     returns Type, errors(404 "No such thing", …),
///     blocking|async |s| call;
/// ```
///
/// * `path`: the path parameters in order, each with its name in the URL and
///   its argument name (the Tauri argument);
/// * `query`: at most one struct read from the query string (over IPC its
///   fields are top-level arguments);
/// * `body`: at most one JSON body;
/// * `reply`: `json` (the result as JSON), `empty` (no body), `text`
///   (`text/plain`) or `delete` (a two-step delete: 409 until confirmed);
/// * `errors`: the failures worth documenting (HTTP status and what it means);
/// * `blocking` calls run on a blocking thread, `async` ones are awaited;
/// * the call is an expression over `s: &Service` and the arguments,
///   returning `Result<returns, CoreError>` (or a future of it).
///
/// The callback gets each call as its name and one bracketed group of
/// fields, always all of them and always in this order (so a callback
/// matches `$($name:ident $call:tt)*` for the whole list, and one call's
/// group with a single pattern, taking a field it ignores as `$x:tt`):
///
/// ```text
/// name {
///     doc ["line" …]
///     http [method "/api/path/{param}" "tag"]
///     reply [json 200]
///     path [("param" arg: Type) …]
///     query [arg: Type]      // or []
///     body [arg: Type]       // or []
///     returns [Type]
///     errors [(404 "No such thing") …]
///     run [blocking |s| call]
/// }
/// ```
///
/// What is needed as data rather than code (names, paths, TypeScript types)
/// is in [`calls`], read from the same list.
///
/// Calls that are not plain JSON in and out (uploads, the event stream,
/// session files, output downloads, a native drop) are written by hand in
/// each shell.
#[macro_export]
macro_rules! api_calls {
    // The one reader of the list's grammar: each entry becomes `name { … }`.
    (@normalise $callback:ident $(
        $(#[doc = $doc:literal])*
        $name:ident : $method:ident $path:literal , tag $tag:literal , $reply:ident $status:literal ,
        path ( $( $pname:literal $parg:ident : $pty:ty ),* ) ,
        query ( $( $qarg:ident : $qty:ty )? ) ,
        body ( $( $barg:ident : $bty:ty )? ) ,
        returns $ret:ty ,
        errors ( $( $ecode:literal $edesc:literal ),* ) ,
        $mode:tt | $s:ident | $call:expr ;
    )*) => {
        $callback! {
            $(
                $name {
                    doc [$($doc)*]
                    http [$method $path $tag]
                    reply [$reply $status]
                    path [$( ($pname $parg : $pty) )*]
                    query [$( $qarg : $qty )?]
                    body [$( $barg : $bty )?]
                    returns [$ret]
                    errors [$( ($ecode $edesc) )*]
                    run [$mode |$s| $call]
                }
            )*
        }
    };
    ($callback:ident) => {
        // The list goes on in `api_more.rs` (this file is at its size limit).
        $crate::api_calls_more! { $callback [
            // ---- Workflows, versions and the conversation.

            /// Every workflow, newest first.
            list_workflows: get "/api/workflows", tag "workflows", json 200,
                path(), query(), body(),
                returns Vec<maskflow_core::service::WorkflowSummary>,
                errors(),
                blocking |s| s.list_workflows();

            /// Creates a workflow and its first version from approved extracts.
            create_workflow: post "/api/workflows", tag "workflows", json 201,
                path(), query(), body(request: maskflow_core::service::CreateWorkflow),
                returns maskflow_core::service::CreatedVersion,
                errors(400 "Bad request"),
                blocking |s| s.create_workflow(request);

            /// A workflow with its current version, versions and conversation (poll this while building).
            get_workflow: get "/api/workflows/{id}", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(),
                returns maskflow_core::service::WorkflowView,
                errors(404 "No such workflow"),
                blocking |s| s.get_workflow(&workflow_id);

            /// Renames, re-describes or relabels a workflow.
            update_workflow: patch "/api/workflows/{id}", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(patch: maskflow_core::service::WorkflowPatch),
                returns maskflow_core::service::WorkflowView,
                errors(400 "Bad request", 404 "No such workflow"),
                blocking |s| s.update_workflow(&workflow_id, patch);

            /// Deletes a workflow with its versions, conversation and runs, in two
            /// steps: without `confirm` nothing is deleted and the answer (HTTP 409
            /// `confirmation_required`) holds `would_delete`, `confirm_token` and
            /// `expires_at`; with the token it is deleted. Ledger entries stay.
            delete_workflow: delete "/api/workflows/{id}", tag "workflows", delete 200,
                path("id" workflow_id: String), query(confirm: maskflow_core::api::Confirm), body(),
                returns maskflow_core::service::DeleteReply,
                errors(404 "No such workflow"),
                blocking |s| s.delete_workflow(&workflow_id, confirm.token());

            /// Sends a message; routed by the draft's status (validator, clarifier,
            /// build). A `privacy_blocked` answer lists the `matches`; resend with
            /// `confirm_privacy: true` to send the user's own text anyway.
            send_message: post "/api/workflows/{id}/messages", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(message: maskflow_core::service::SendMessage),
                returns maskflow_core::service::MessageReply,
                errors(400 "Bad request, no back end set for the role, or a prompt that does not fit the model (nothing was sent)", 404 "No such workflow", 409 "A message is in progress, the workflow is building or rejected, the user stopped the reply (`cancelled`)", 422 "The privacy guard found values from the user's files (`privacy_blocked`, with `matches`); resend with `confirm_privacy: true` to send the user's own text anyway", 502 "The LLM back end failed", 504 "The LLM back end did not answer in time (`provider_timeout`)"),
                async |s| s.send_user_message(&workflow_id, message);

            /// What a build will need on this machine (Python, uv, isolation,
            /// free disk), each with whether it is there and its fix.
            preflight: get "/api/preflight", tag "workflows", json 200,
                path(), query(), body(),
                returns maskflow_core::service::PreflightView,
                errors(),
                blocking |s| s.preflight();

            /// Retries a build that failed on its Python environment or test run
            /// (uv missing, the index unreachable) with the script the builder
            /// already wrote: only the environment and the test run again.
            retry_build: post "/api/workflows/{id}/versions/{version_id}/retry", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns maskflow_core::service::WorkflowView,
                errors(404 "No such workflow or version", 409 "The version did not fail, or not on its environment, or a message is in progress"),
                blocking |s| s.retry_build(&workflow_id, &version_id);

            /// Stops the LLM call of the message in flight on a workflow.
            cancel_message: post "/api/workflows/{id}/cancel", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(),
                returns maskflow_core::service::CancelReply,
                errors(404 "No such workflow"),
                blocking |s| s.cancel_message(&workflow_id);

            /// Approves a built version: it becomes active; the others are archived.
            approve: post "/api/workflows/{id}/versions/{version_id}/approve", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns maskflow_core::service::WorkflowView,
                errors(404 "No such workflow or version", 409 "The version is not pending approval", 410 "The version is archived"),
                blocking |s| s.approve(&workflow_id, &version_id);

            /// Edits a version: creates version N+1 (`validated`) with the same extracts.
            edit: post "/api/workflows/{id}/versions/{version_id}/edit", tag "workflows", json 201,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns maskflow_core::service::CreatedVersion,
                errors(404 "No such workflow or version", 409 "The version cannot be edited now", 410 "The version is archived"),
                blocking |s| s.edit(&workflow_id, &version_id);

            /// Restores an earlier (archived) version as a new version, tested on
            /// the real files before approval.
            restore_version: post "/api/workflows/{id}/versions/{version_id}/restore", tag "workflows", json 201,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns maskflow_core::service::CreatedVersion,
                errors(404 "No such workflow or version", 409 "The version is not archived or was never built, or a build is running"),
                blocking |s| s.restore(&workflow_id, &version_id);

            /// One version in full (its script, fields and extracts), archived ones too.
            get_version: get "/api/workflows/{id}/versions/{version_id}", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns maskflow_core::service::VersionView,
                errors(404 "No such workflow or version"),
                blocking |s| s.get_version(&workflow_id, &version_id);

            /// Resolves a build gate waiting for the user; the build continues in the background.
            resolve_gate: post "/api/workflows/{id}/versions/{version_id}/gate", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String), query(),
                body(request: maskflow_core::service::GateRequest),
                returns maskflow_core::service::WorkflowView,
                errors(404 "No such workflow or version", 409 "No gate is waiting"),
                blocking |s| s.resolve_gate(&workflow_id, &version_id, request);

            /// A version's build session folder: the iterations and their files.
            sessions: get "/api/workflows/{id}/versions/{version_id}/sessions", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String), query(), body(),
                returns Vec<maskflow_core::service::SessionIteration>,
                errors(404 "No such workflow or version"),
                blocking |s| s.sessions(&workflow_id, &version_id);

            /// A workflow's build choices: plan first, AI review of the script,
            /// and whether the AI reviewer approves the gates (all off by default).
            get_build_options: get "/api/workflows/{id}/build-options", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(),
                returns maskflow_core::builder::options::BuildOptions,
                errors(404 "No such workflow"),
                blocking |s| s.build_options(&workflow_id);

            /// Sets a workflow's build choices; the next build uses them.
            set_build_options: put "/api/workflows/{id}/build-options", tag "workflows", json 200,
                path("id" workflow_id: String), query(), body(options: maskflow_core::builder::options::BuildOptions),
                returns maskflow_core::builder::options::BuildOptions,
                errors(400 "A malformed body", 404 "No such workflow"),
                blocking |s| s.set_build_options(&workflow_id, options);

            /// A preview of an output of a version's latest test run.
            test_output_preview: get "/api/workflows/{id}/versions/{version_id}/previews/{name}", tag "workflows", json 200,
                path("id" workflow_id: String, "version_id" version_id: String, "name" name: String), query(), body(),
                returns maskflow_extractors::preview::OutputPreview,
                errors(404 "No such workflow, version or output"),
                blocking |s| s.test_output_preview(&workflow_id, &version_id, &name);

            /// Builder conversations and flow runs together, most recent activity first
            /// (seed 004); `flowName=NAME` keeps one flow's runs, `flowName=__none__`
            /// the conversations without a flow name.
            list_conversations: get "/api/conversations", tag "workflows", json 200,
                path(), query(query: maskflow_core::api::ConversationQuery), body(),
                returns maskflow_core::service::ConversationList,
                errors(),
                blocking |s| s.list_conversations(query.flow_name.as_deref());

            // ---- Runs.

            /// Runs a workflow's approved version; the answer is the finished run
            /// (it may have failed: see `status`).
            run_workflow: post "/api/workflows/{id}/runs", tag "runs", json 201,
                path("id" workflow_id: String), query(), body(request: maskflow_core::service::RunInputs),
                returns maskflow_core::service::RunView,
                errors(400 "Bad inputs, or (detail `INPUTS_DIFFER`) a file that differs in shape from the approved one, one line per difference; resend with `force: true` to run anyway", 404 "No such workflow", 409 "No approved version"),
                async |s| s.run_workflow(&workflow_id, request);

            /// A workflow's runs, newest first.
            list_runs: get "/api/workflows/{id}/runs", tag "runs", json 200,
                path("id" workflow_id: String), query(), body(),
                returns Vec<maskflow_core::service::RunView>,
                errors(404 "No such workflow"),
                blocking |s| s.list_runs(&workflow_id);

            /// A preview of a run's output: an image, a table per sheet, or text.
            run_output_preview: get "/api/runs/{run_id}/previews/{name}", tag "runs", json 200,
                path("run_id" run_id: String, "name" name: String), query(), body(),
                returns maskflow_extractors::preview::OutputPreview,
                errors(404 "No such run or output"),
                blocking |s| s.run_output_preview(&run_id, &name);

            // ---- Settings: back ends, keys, Python, isolation, budgets, storage.

            /// The LLM settings (never a key, only where it comes from).
            settings: get "/api/settings", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_llm::config::SettingsView,
                errors(),
                blocking |s| s.settings();

            /// Replaces the LLM settings.
            update_settings: put "/api/settings", tag "settings", json 200,
                path(), query(), body(settings: maskflow_llm::config::LlmSettings),
                returns maskflow_llm::config::SettingsView,
                errors(400 "The settings are not valid"),
                blocking |s| s.update_settings(settings);

            /// Stores a provider's API key in the system keyring (503
            /// `keyring_unavailable` names the environment variable to use instead).
            set_key: put "/api/providers/{id}/key", tag "settings", empty 204,
                path("id" id: String), query(), body(input: maskflow_core::api::KeyInput),
                returns (),
                errors(400 "The key is unusable", 404 "No such provider", 503 "No system keyring here; the message names the environment variable to use"),
                blocking |s| s.set_key(&id, &input.key);

            /// Removes a provider's API key from the system keyring.
            delete_key: delete "/api/providers/{id}/key", tag "settings", empty 204,
                path("id" id: String), query(), body(),
                returns (),
                errors(404 "No such provider", 503 "No system keyring here"),
                blocking |s| s.delete_key(&id);

            /// Tries a provider's connection and key.
            test_provider: post "/api/providers/{id}/test", tag "settings", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_llm::config::ConnectionTest,
                errors(404 "No such provider"),
                async |s| s.test_provider(&id);

            /// Local LLM servers answering now.
            detect_providers: get "/api/providers/detected", tag "settings", json 200,
                path(), query(), body(),
                returns Vec<maskflow_llm::config::Detected>,
                errors(),
                async |s| async { Ok(s.detect_providers().await) };

            /// The Python interpreter setting.
            python: get "/api/settings/python", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::PythonView,
                errors(),
                blocking |s| s.python();

            /// Sets the Python interpreter (checked first; used from the next start).
            set_python: put "/api/settings/python", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::PythonInput),
                returns maskflow_core::service::PythonView,
                errors(400 "The interpreter does not start or is too old"),
                blocking |s| s.set_python(input);

            /// The "run scripts without isolation" setting and this machine's isolation.
            isolation: get "/api/settings/isolation", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::IsolationView,
                errors(),
                blocking |s| s.isolation();

            /// Allows or forbids running scripts without isolation on this machine.
            set_isolation: put "/api/settings/isolation", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::IsolationInput),
                returns maskflow_core::service::IsolationView,
                errors(400 "A malformed body"),
                blocking |s| s.set_isolation(input);

            /// The memory and time a script run gets: in force, the defaults from this machine, and what is stored.
            run_limits: get "/api/settings/run-limits", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::RunLimitsView,
                errors(),
                blocking |s| s.run_limits_view();

            /// Sets the memory and time a script run gets (`null`: this machine's default); used from the next run and build.
            set_run_limits: put "/api/settings/run-limits", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::RunLimitsInput),
                returns maskflow_core::service::RunLimitsView,
                errors(400 "A limit out of its bounds (the message says them), or a malformed body"),
                blocking |s| s.set_run_limits(input);

            /// The embedded model's settings (idle unload time) and what this machine runs it with.
            embedded: get "/api/settings/embedded", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::EmbeddedView,
                errors(),
                blocking |s| s.embedded();

            /// Sets how many idle minutes the embedded model stays loaded.
            set_embedded: put "/api/settings/embedded", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::EmbeddedInput),
                returns maskflow_core::service::EmbeddedView,
                errors(400 "The idle time is out of bounds"),
                blocking |s| s.set_embedded(input);

            /// The output budget of each LLM role.
            role_budgets: get "/api/settings/budgets", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_llm::budget::BudgetsView,
                errors(),
                blocking |s| s.role_budgets();

            /// Sets the output budgets of the LLM roles.
            set_role_budgets: put "/api/settings/budgets", tag "settings", json 200,
                path(), query(), body(budgets: maskflow_llm::budget::RoleBudgets),
                returns maskflow_llm::budget::BudgetsView,
                errors(400 "A budget is out of bounds"),
                blocking |s| s.set_role_budgets(budgets);

            /// The house rules: the Settings text, its scopes and the files of `house-rules/`.
            house_rules: get "/api/settings/house-rules", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::HouseRulesView,
                errors(),
                blocking |s| s.house_rules();

            /// Replaces the house rules' Settings text (the builder's prompt carries the sections that apply).
            set_house_rules: put "/api/settings/house-rules", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::HouseRulesInput),
                returns maskflow_core::service::HouseRulesView,
                errors(400 "Too long, or an include that names no file or makes a cycle"),
                blocking |s| s.set_house_rules(input);

            /// The data folder's disk use by kind, free space and the upload expiry.
            storage: get "/api/settings/storage", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::StorageView,
                errors(),
                blocking |s| s.storage();

            /// Sets how long uploads that joined no workflow are kept.
            set_storage: put "/api/settings/storage", tag "settings", json 200,
                path(), query(), body(input: maskflow_core::service::StorageInput),
                returns maskflow_core::service::StorageView,
                errors(400 "An expiry out of range or a malformed body"),
                blocking |s| s.set_storage(input);

            /// Clears one kind: unattached uploads, finished runs' outputs or closed
            /// versions' session folders (what each keeps is in the storage view).
            clear_storage: post "/api/settings/storage/{kind}/clear", tag "settings", json 200,
                path("kind" kind: maskflow_core::service::StorageKind), query(), body(),
                returns maskflow_core::service::Cleared,
                errors(400 "A kind that cannot be cleared here"),
                blocking |s| s.clear_storage(kind);

            /// The managed Python environments, their sizes, whether a version uses each, and `uv`.
            environments: get "/api/environments", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::EnvironmentsView,
                errors(),
                blocking |s| s.list_environments();

            /// Removes an environment no version uses any more.
            remove_environment: delete "/api/environments/{id}", tag "settings", json 200,
                path("id" id: String), query(), body(),
                returns maskflow_core::service::EnvironmentsView,
                errors(404 "No such environment", 409 "A version still uses it"),
                blocking |s| s.remove_environment(&id);

            /// Installs `uv` into the data folder (the user asked for it); progress comes as events.
            install_uv: post "/api/environments/uv", tag "settings", json 200,
                path(), query(), body(),
                returns maskflow_core::service::EnvironmentsView,
                errors(409 "The install failed"),
                blocking |s| s.install_uv();

            // ---- The privacy ledger and the manual back end.

            /// Token totals from the ledger: in all, per role and per workflow.
            usage: get "/api/ledger/usage", tag "privacy", json 200,
                path(), query(), body(),
                returns maskflow_privacy::ledger::Usage,
                errors(),
                blocking |s| s.usage();

            /// What left the machine: every outbound LLM request, newest first, searched and paged.
            ledger: get "/api/ledger", tag "privacy", json 200,
                path(), query(query: maskflow_core::api::LedgerQuery), body(),
                returns Vec<maskflow_privacy::LedgerEntry>,
                errors(400 "Bad query"),
                blocking |s| s.ledger(query.q.as_deref(), query.limit.unwrap_or(50), query.offset.unwrap_or(0));

            /// Prompts waiting for the user to paste an answer (manual back end).
            manual_prompts: get "/api/manual", tag "manual", json 200,
                path(), query(), body(),
                returns Vec<maskflow_llm::manual::ManualPrompt>,
                errors(),
                blocking |s| Ok(s.manual_prompts());

            /// Answers a pending manual prompt; the work waiting on it continues, even after a restart.
            answer_manual: post "/api/manual/{id}/answer", tag "manual", empty 204,
                path("id" id: String), query(), body(answer: maskflow_core::api::ManualAnswer),
                returns (),
                errors(400 "The answer is empty", 404 "No such prompt waiting", 409 "The work that waited on it cannot continue (the prompt says why)"),
                blocking |s| s.answer_manual(&id, &answer.text);

            /// Dismisses a pending manual prompt (its call fails as cancelled).
            dismiss_manual: delete "/api/manual/{id}", tag "manual", empty 204,
                path("id" id: String), query(), body(),
                returns (),
                errors(404 "No such prompt waiting", 409 "Its work is running and holds it"),
                blocking |s| s.dismiss_manual(&id);

            /// Everything waiting for a person (flow runs at a gate or needing
            /// attention, manual prompts), oldest first: the sidebar's badge.
            waiting_items: get "/api/waiting", tag "manual", json 200,
                path(), query(), body(),
                returns maskflow_core::service::WaitingList,
                errors(),
                blocking |s| s.waiting_items();

            // ---- Database backups.

            /// Every backup and the retention counts.
            list_backups: get "/api/backups", tag "backups", json 200,
                path(), query(), body(),
                returns maskflow_core::service::BackupsView,
                errors(),
                blocking |s| s.backups();

            /// Takes a backup now.
            create_backup: post "/api/backups", tag "backups", json 201,
                path(), query(), body(),
                returns maskflow_core::store::backups::Backup,
                errors(),
                blocking |s| s.create_backup();

            /// Sets the retention counts; the backups are pruned to them.
            set_backup_retention: put "/api/backups/retention", tag "backups", json 200,
                path(), query(), body(retention: maskflow_core::store::backups::Retention),
                returns maskflow_core::service::BackupsView,
                errors(400 "A count out of range"),
                blocking |s| s.set_backup_retention(retention);

            /// Restores a backup over the database; `previous` is the backup of the database as it was.
            restore_backup: post "/api/backups/{id}/restore", tag "backups", json 200,
                path("id" backup_id: String), query(), body(),
                returns maskflow_core::service::RestoreReply,
                errors(400 "The backup file is missing, damaged or from a newer Maskflow", 404 "No such backup", 409 "Something is in progress"),
                blocking |s| s.restore_backup(&backup_id);

            /// Deletes a backup in two steps (see `delete_workflow`).
            delete_backup: delete "/api/backups/{id}", tag "backups", delete 200,
                path("id" backup_id: String), query(confirm: maskflow_core::api::Confirm), body(),
                returns maskflow_core::service::DeleteReply,
                errors(404 "No such backup"),
                blocking |s| s.delete_backup(&backup_id, confirm.token());

            // ---- Agents (seed 003's personas): the files `agents/<name>.json`.

            /// Every agent in `agents/` (re-read now) with the flows that use it;
            /// invalid files and refused file names are `disabled` with their `error`.
            agents_list: get "/api/agents", tag "agents", json 200,
                path(), query(), body(),
                returns maskflow_core::service::AgentList,
                errors(),
                blocking |s| s.agent_list();

            /// One agent by name (seed 003's "fetch agent by id").
            agents_get: get "/api/agents/{name}", tag "agents", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::service::AgentView,
                errors(400 "The name cannot name an agent file", 404 "No such agent"),
                blocking |s| s.agent_get(&name);

            /// Creates an agent (`{name, prompt?, provider?, model?}`); a 400 names
            /// every problem of the request at once.
            agents_create: post "/api/agents", tag "agents", json 201,
                path(), query(), body(input: maskflow_core::service::AgentInput),
                returns maskflow_core::service::AgentView,
                errors(400 "Unknown, mistyped or missing fields, a refused name or a back end that is not configured (each one named)", 409 "An agent of that name exists"),
                blocking |s| s.agent_create(input);

            /// Replaces an agent's prompt, back end and model (absent fields are unset).
            agents_update: put "/api/agents/{name}", tag "agents", json 200,
                path("name" name: String), query(), body(input: maskflow_core::service::AgentInput),
                returns maskflow_core::service::AgentView,
                errors(400 "Unknown or mistyped fields, a rename or a back end that is not configured (each one named)", 404 "No such agent"),
                blocking |s| s.agent_update(&name, input);

            /// Deletes an agent in two steps (see `delete_workflow`); refused while a
            /// flow names it (the message names the flows).
            agents_delete: delete "/api/agents/{name}", tag "agents", delete 200,
                path("name" name: String), query(confirm: maskflow_core::api::Confirm), body(),
                returns maskflow_core::service::DeleteReply,
                errors(400 "The name cannot name an agent file", 404 "No such agent"),
                blocking |s| s.agent_delete(&name, confirm.token());

            // ---- Flows (seed 004).

            /// Every flow in `flows/` (re-read now); invalid ones are `disabled` with their `error`.
            flows_list: get "/api/flows", tag "flows", json 200,
                path(), query(), body(),
                returns maskflow_flows::FlowList,
                errors(),
                blocking |s| s.flow_list();

            /// A flow's definition.
            flows_definition: get "/api/flows/{name}", tag "flows", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_core::api::JsonValue,
                errors(400 "The flow is invalid", 404 "No such flow"),
                blocking |s| s.flow_definition(&name);

            /// One step of a flow by its id (seed 003's stage id), nested steps included.
            flows_step: get "/api/flows/{name}/steps/{stageId}", tag "flows", json 200,
                path("name" name: String, "stageId" stage_id: String), query(), body(),
                returns maskflow_core::api::JsonValue,
                errors(400 "The flow is invalid", 404 "No such flow or step"),
                blocking |s| s.flow_step(&name, &stage_id);

            /// Starts a run, or resumes one (`conversationId`, optional `resumeStepPath`).
            flows_run: post "/api/flows/{name}/run", tag "flows", json 202,
                path("name" name: String), query(), body(request: maskflow_flows::StartFlow),
                returns maskflow_flows::Started,
                errors(400 "Invalid flow, command, path or folder (`invalid_request`), or `agent_mismatch`", 404 "No such flow or run", 409 "`RUN_IN_PROGRESS`, or the run waits for an answer", 410 "The run is archived"),
                blocking |s| s.flow_start(&name, request);

            /// A flow's runs, newest first.
            flows_runs: get "/api/flows/{name}/runs", tag "flows", json 200,
                path("name" name: String), query(), body(),
                returns maskflow_flows::RunList,
                errors(),
                blocking |s| s.flow_runs(&name);

            /// A flow as a Mermaid `graph TD` with its `WORKFLOW_CONFIG` block (seed 003).
            flows_mermaid: get "/api/flows/{name}/mermaid", tag "flows", text 200,
                path("name" name: String), query(), body(),
                returns String,
                errors(400 "The flow is invalid", 404 "No such flow"),
                blocking |s| s.flow_mermaid(&name);

            /// A flow with its agents as one JSON bundle; `?format=seed003` gives seed 003's own shape (`workflow.steps`, `agents[{id, displayName, agentPrompt}]`).
            flows_export: get "/api/flows/{name}/export", tag "flows", json 200,
                path("name" name: String), query(format: maskflow_core::service::ExportQuery), body(),
                returns maskflow_flows::bundle::FlowBundle,
                errors(400 "The flow is invalid, or an unknown format", 404 "No such flow"),
                blocking |s| s.flow_export_as(&name, &format);

            /// Imports a bundle or a Mermaid diagram (`{bundle?, mermaid?, name?, overwrite?}`).
            flows_import: post "/api/flows/import", tag "flows", json 200,
                path(), query(), body(request: maskflow_flows::bundle::ImportRequest),
                returns maskflow_flows::FlowSummary,
                errors(400 "Invalid bundle, diagram or name", 409 "A flow or agent of that name exists (set overwrite)"),
                blocking |s| s.flow_import(request);

            /// A run: status, `flags.flow` (resume state), transcript, pending question.
            flow_run_get: get "/api/flow-runs/{conversationId}", tag "flows", json 200,
                path("conversationId" id: String), query(), body(),
                returns maskflow_flows::RunView,
                errors(404 "No such run"),
                blocking |s| s.flow_run(&id);

            /// Renames or (un)archives a run.
            flow_run_patch: patch "/api/flow-runs/{conversationId}", tag "flows", json 200,
                path("conversationId" id: String), query(), body(patch: maskflow_flows::RunPatch),
                returns maskflow_flows::RunView,
                errors(400 "Bad request", 404 "No such run", 409 "`RUN_IN_PROGRESS`"),
                blocking |s| s.flow_patch(&id, patch);

            /// Deletes a run with its subflow runs, transcript and checkpoints, in
            /// two steps (see `delete_workflow`).
            flow_run_delete: delete "/api/flow-runs/{conversationId}", tag "flows", delete 200,
                path("conversationId" id: String), query(confirm: maskflow_core::api::Confirm), body(),
                returns maskflow_core::service::DeleteReply,
                errors(404 "No such run"),
                blocking |s| s.delete_flow_run(&id, confirm.token());

            /// Stops a run: the step in flight is cancelled and `stopped` recorded.
            flow_run_stop: post "/api/flow-runs/{conversationId}/stop", tag "flows", json 200,
                path("conversationId" id: String), query(), body(),
                returns maskflow_flows::RunView,
                errors(404 "No such run", 409 "The run is not running or waiting"),
                async |s| s.flow_stop(&id);

            /// Answers the gate or manual task the run waits at (`{option | decision,
            /// input?, result?}`: the person's result is text or JSON), or a run
            /// that needs attention (`retry`, `skip`, `stop`).
            flow_run_answer: post "/api/flow-runs/{conversationId}/gate", tag "flows", json 202,
                path("conversationId" id: String), query(), body(answer: maskflow_flows::GateAnswer),
                returns maskflow_flows::Started,
                errors(400 "Unknown option or missing input", 404 "No such run", 409 "The run is not waiting for an answer", 410 "The run is archived"),
                blocking |s| s.flow_answer(&id, answer);
        ] }
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The UI's HTTP client fills a path from `path_params` and the server
    /// routes by name, so a placeholder without a parameter (or the
    /// reverse), or a name used twice, breaks a call on one side only.
    #[test]
    fn every_call_names_its_path_parameters_and_has_its_own_name() {
        let calls = super::calls();
        let mut names = BTreeSet::new();
        for call in &calls {
            assert!(names.insert(call.name), "{} is listed twice", call.name);
            let placeholders: Vec<&str> = call
                .path
                .split('{')
                .skip(1)
                .filter_map(|rest| rest.split_once('}').map(|(p, _)| p))
                .collect();
            let declared: Vec<&str> = call.path_params.iter().map(|p| p.url).collect();
            assert_eq!(placeholders, declared, "{}: {}", call.name, call.path);
            assert!(
                ["json", "empty", "text", "delete"].contains(&call.reply),
                "{}: reply {}",
                call.name,
                call.reply
            );
            assert!(!call.doc.is_empty(), "{} has no doc", call.name);
        }
    }
}
