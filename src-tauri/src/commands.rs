//! The Tauri commands: one per [`Service`] call, each a one-line delegation.
//! Arguments keep the service's snake_case names. Errors cross IPC as
//! `{code, message}` ([`IpcError`]), with the same codes as the HTTP API.

use std::path::PathBuf;

use maskflow_core::privacy::LedgerEntry;
use maskflow_core::providers::budget::{BudgetsView, RoleBudgets};
use maskflow_core::providers::manual::ManualPrompt;
use maskflow_core::service::{BackupsView, RestoreReply};
use maskflow_core::service::{
    CancelReply, Cleared, CreateWorkflow, CreatedVersion, DeleteReply, GateRequest, IsolationInput,
    IsolationView, MessageReply, PythonInput, PythonView, RunInputs, RunView, SessionIteration,
    StorageInput, StorageKind, StorageView, UploadedFile, VersionView, WorkflowPatch,
    WorkflowSummary, WorkflowView,
};
use maskflow_core::settings::{ConnectionTest, Detected, LlmSettings, SettingsView};
use maskflow_core::store::backups::{Backup, Retention};
use maskflow_core::{CoreError, ErrorCode, Service};
use serde::Serialize;
use tauri::State;
use tauri::ipc::{InvokeBody, Request};

/// An error as the UI receives it.
#[derive(Serialize, Debug)]
pub struct IpcError {
    /// `invalid_request`, `not_found`, `conflict`, `archived`,
    /// `provider_error` or `internal`.
    code: &'static str,
    /// What went wrong, for people.
    message: String,
    /// For `privacy_blocked`: each value found, masked, and where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<Vec<maskflow_core::privacy::GuardMatch>>,
}

impl From<CoreError> for IpcError {
    fn from(e: CoreError) -> Self {
        let code = e.code();
        let matches = match &e {
            CoreError::Provider(maskflow_core::ProviderError::PrivacyBlocked(m)) => Some(m.clone()),
            _ => None,
        };
        let message = if code == ErrorCode::Internal {
            eprintln!("maskflow: internal error: {e}");
            "something went wrong inside Maskflow; see the app's log".to_owned()
        } else {
            e.to_string()
        };
        Self {
            code: code.as_str(),
            message,
            matches,
        }
    }
}

type Reply<T> = Result<T, IpcError>;

/// Every workflow, newest first.
#[tauri::command(rename_all = "snake_case")]
pub fn list_workflows(s: State<'_, Service>) -> Reply<Vec<WorkflowSummary>> {
    Ok(s.list_workflows()?)
}

/// One workflow with its current version, versions and conversation.
#[tauri::command(rename_all = "snake_case")]
pub fn get_workflow(s: State<'_, Service>, workflow_id: String) -> Reply<WorkflowView> {
    Ok(s.get_workflow(&workflow_id)?)
}

/// One version in full.
#[tauri::command(rename_all = "snake_case")]
pub fn get_version(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
) -> Reply<VersionView> {
    Ok(s.get_version(&workflow_id, &version_id)?)
}

/// Creates a workflow from approved extracts.
#[tauri::command(rename_all = "snake_case")]
pub fn create_workflow(s: State<'_, Service>, request: CreateWorkflow) -> Reply<CreatedVersion> {
    Ok(s.create_workflow(request)?)
}

/// Sends a chat message (validator → clarifier → build); `confirm_privacy`
/// after the user confirmed what the privacy guard found.
#[tauri::command(rename_all = "snake_case")]
pub async fn send_message(
    s: State<'_, Service>,
    workflow_id: String,
    content: String,
    confirm_privacy: Option<bool>,
) -> Reply<MessageReply> {
    Ok(
        s.send_message_cancellable(&workflow_id, &content, confirm_privacy.unwrap_or(false))
            .await?,
    )
}

/// Stops the LLM call of the message in flight on a workflow.
#[tauri::command(rename_all = "snake_case")]
pub fn cancel_message(s: State<'_, Service>, workflow_id: String) -> Reply<CancelReply> {
    Ok(s.cancel_message(&workflow_id)?)
}

/// Approves a built version.
#[tauri::command(rename_all = "snake_case")]
pub fn approve(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
) -> Reply<WorkflowView> {
    Ok(s.approve(&workflow_id, &version_id)?)
}

/// Starts version N+1 from a version.
#[tauri::command(rename_all = "snake_case")]
pub fn edit(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
) -> Reply<CreatedVersion> {
    Ok(s.edit(&workflow_id, &version_id)?)
}

/// Restores an earlier version as a new version, tested before approval.
#[tauri::command(rename_all = "snake_case")]
pub fn restore_version(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
) -> Reply<CreatedVersion> {
    Ok(s.restore(&workflow_id, &version_id)?)
}

/// Renames, re-describes or relabels a workflow.
#[tauri::command(rename_all = "snake_case")]
pub fn update_workflow(
    s: State<'_, Service>,
    workflow_id: String,
    patch: WorkflowPatch,
) -> Reply<WorkflowView> {
    Ok(s.update_workflow(&workflow_id, patch)?)
}

/// Deletes a workflow in two steps: without `confirm`, what would be
/// deleted and a token; with the token, the delete.
#[tauri::command(rename_all = "snake_case")]
pub fn delete_workflow(
    s: State<'_, Service>,
    workflow_id: String,
    confirm: Option<String>,
) -> Reply<DeleteReply> {
    Ok(s.delete_workflow(&workflow_id, confirm.as_deref())?)
}

/// Every backup and the retention counts.
#[tauri::command(rename_all = "snake_case")]
pub fn list_backups(s: State<'_, Service>) -> Reply<BackupsView> {
    Ok(s.backups()?)
}

/// Takes a backup now.
#[tauri::command(rename_all = "snake_case")]
pub fn create_backup(s: State<'_, Service>) -> Reply<Backup> {
    Ok(s.create_backup()?)
}

/// Sets the retention counts.
#[tauri::command(rename_all = "snake_case")]
pub fn set_backup_retention(s: State<'_, Service>, retention: Retention) -> Reply<BackupsView> {
    Ok(s.set_backup_retention(retention)?)
}

/// Restores a backup over the database (the current one is backed up first).
#[tauri::command(rename_all = "snake_case")]
pub fn restore_backup(s: State<'_, Service>, backup_id: String) -> Reply<RestoreReply> {
    Ok(s.restore_backup(&backup_id)?)
}

/// Deletes a backup in two steps (see `delete_workflow`).
#[tauri::command(rename_all = "snake_case")]
pub fn delete_backup(
    s: State<'_, Service>,
    backup_id: String,
    confirm: Option<String>,
) -> Reply<DeleteReply> {
    Ok(s.delete_backup(&backup_id, confirm.as_deref())?)
}

/// Extracts a file given by its path (a native drop): nothing is copied.
#[tauri::command(rename_all = "snake_case")]
pub async fn extract_path(s: State<'_, Service>, path: PathBuf) -> Reply<UploadedFile> {
    Ok(s.add_local_file(path).await?)
}

/// Extracts a file picked in the window: its bytes are the raw request body
/// and its name the `x-filename` header (percent-encoded).
#[tauri::command(rename_all = "snake_case")]
pub async fn upload_file(s: State<'_, Service>, request: Request<'_>) -> Reply<UploadedFile> {
    let (InvokeBody::Raw(bytes), Some(name)) =
        (request.body(), request.headers().get("x-filename"))
    else {
        return Err(IpcError {
            code: "invalid_request",
            message: "upload_file needs the file's bytes and an x-filename header".into(),
            matches: None,
        });
    };
    let name = percent_decode(name.to_str().unwrap_or("upload"));
    Ok(s.add_upload_bytes(&name, bytes).await?)
}

/// The LLM settings (never a key, only where it comes from).
#[tauri::command(rename_all = "snake_case")]
pub fn settings(s: State<'_, Service>) -> Reply<SettingsView> {
    Ok(s.settings()?)
}

/// Replaces the LLM settings.
#[tauri::command(rename_all = "snake_case")]
pub fn update_settings(s: State<'_, Service>, settings: LlmSettings) -> Reply<SettingsView> {
    Ok(s.update_settings(settings)?)
}

/// Stores a provider's API key in the system keyring.
#[tauri::command(rename_all = "snake_case")]
pub fn set_key(s: State<'_, Service>, id: String, key: String) -> Reply<()> {
    Ok(s.set_key(&id, &key)?)
}

/// Removes a provider's API key from the keyring.
#[tauri::command(rename_all = "snake_case")]
pub fn delete_key(s: State<'_, Service>, id: String) -> Reply<()> {
    Ok(s.delete_key(&id)?)
}

/// Tries a provider's connection and key.
#[tauri::command(rename_all = "snake_case")]
pub async fn test_provider(s: State<'_, Service>, id: String) -> Reply<ConnectionTest> {
    Ok(s.test_provider(&id).await?)
}

/// Local LLM servers answering now.
#[tauri::command(rename_all = "snake_case")]
pub async fn detect_providers(s: State<'_, Service>) -> Reply<Vec<Detected>> {
    Ok(s.detect_providers().await)
}

/// The Python interpreter setting.
#[tauri::command(rename_all = "snake_case")]
pub fn python(s: State<'_, Service>) -> Reply<PythonView> {
    Ok(s.python()?)
}

/// Sets the Python interpreter.
#[tauri::command(rename_all = "snake_case")]
pub fn set_python(s: State<'_, Service>, input: PythonInput) -> Reply<PythonView> {
    Ok(s.set_python(input)?)
}

/// The "run scripts without isolation" setting and this machine's isolation.
#[tauri::command(rename_all = "snake_case")]
pub fn isolation(s: State<'_, Service>) -> Reply<IsolationView> {
    Ok(s.isolation()?)
}

/// Allows or forbids running scripts without isolation on this machine.
#[tauri::command(rename_all = "snake_case")]
pub fn set_isolation(s: State<'_, Service>, input: IsolationInput) -> Reply<IsolationView> {
    Ok(s.set_isolation(input)?)
}

/// A preview of a run's output (image, tables, text).
#[tauri::command(rename_all = "snake_case")]
pub async fn run_output_preview(
    s: State<'_, Service>,
    run_id: String,
    name: String,
) -> Reply<maskflow_core::preview::OutputPreview> {
    Ok(s.run_output_preview(&run_id, &name)?)
}

/// A preview of an output of a version's latest test run.
#[tauri::command(rename_all = "snake_case")]
pub async fn test_output_preview(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
    name: String,
) -> Reply<maskflow_core::preview::OutputPreview> {
    Ok(s.test_output_preview(&workflow_id, &version_id, &name)?)
}

/// The local path of an output of a version's latest test run.
#[tauri::command(rename_all = "snake_case")]
pub fn test_output(
    s: State<'_, Service>,
    id: String,
    version_id: String,
    name: String,
) -> Reply<String> {
    Ok(s.test_output(&id, &version_id, &name)?
        .display()
        .to_string())
}

/// The managed Python environments, their sizes and `uv`.
#[tauri::command(rename_all = "snake_case")]
pub async fn environments(
    s: State<'_, Service>,
) -> Reply<maskflow_core::service::EnvironmentsView> {
    Ok(s.list_environments()?)
}

/// Removes a Python environment no version uses.
#[tauri::command(rename_all = "snake_case")]
pub async fn remove_environment(
    s: State<'_, Service>,
    id: String,
) -> Reply<maskflow_core::service::EnvironmentsView> {
    Ok(s.remove_environment(&id)?)
}

/// Installs `uv` into the data folder (the user asked for it).
#[tauri::command(rename_all = "snake_case")]
pub async fn install_uv(s: State<'_, Service>) -> Reply<maskflow_core::service::EnvironmentsView> {
    Ok(s.install_uv()?)
}

/// The output budget of each LLM role.
#[tauri::command(rename_all = "snake_case")]
pub fn role_budgets(s: State<'_, Service>) -> Reply<BudgetsView> {
    Ok(s.role_budgets()?)
}

/// Sets the output budgets of the LLM roles.
#[tauri::command(rename_all = "snake_case")]
pub fn set_role_budgets(s: State<'_, Service>, budgets: RoleBudgets) -> Reply<BudgetsView> {
    Ok(s.set_role_budgets(budgets)?)
}

/// Token totals from the ledger: in all, per role and per workflow.
#[tauri::command(rename_all = "snake_case")]
pub fn usage(s: State<'_, Service>) -> Reply<maskflow_core::privacy::ledger::Usage> {
    Ok(s.usage()?)
}

/// The egress ledger, newest first, searched and paged.
#[tauri::command(rename_all = "snake_case")]
pub fn ledger(
    s: State<'_, Service>,
    q: Option<String>,
    limit: u32,
    offset: u32,
) -> Reply<Vec<LedgerEntry>> {
    Ok(s.ledger(q.as_deref(), limit, offset)?)
}

/// Prompts waiting for a pasted answer (manual back end).
#[tauri::command(rename_all = "snake_case")]
pub fn manual_prompts(s: State<'_, Service>) -> Reply<Vec<ManualPrompt>> {
    Ok(s.manual_prompts())
}

/// Answers a pending manual prompt.
#[tauri::command(rename_all = "snake_case")]
pub fn answer_manual(s: State<'_, Service>, id: String, text: String) -> Reply<()> {
    Ok(s.answer_manual(&id, &text)?)
}

/// Dismisses a pending manual prompt.
#[tauri::command(rename_all = "snake_case")]
pub fn dismiss_manual(s: State<'_, Service>, id: String) -> Reply<()> {
    Ok(s.dismiss_manual(&id)?)
}

/// Resolves a build gate waiting for the user.
#[tauri::command(rename_all = "snake_case")]
pub fn resolve_gate(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
    request: GateRequest,
) -> Reply<WorkflowView> {
    Ok(s.resolve_gate(&workflow_id, &version_id, request)?)
}

/// A version's build session folder.
#[tauri::command(rename_all = "snake_case")]
pub fn sessions(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
) -> Reply<Vec<SessionIteration>> {
    Ok(s.sessions(&workflow_id, &version_id)?)
}

/// One file of a build session folder, as text.
#[tauri::command(rename_all = "snake_case")]
pub fn session_file(
    s: State<'_, Service>,
    workflow_id: String,
    version_id: String,
    iteration: u32,
    path: String,
) -> Reply<String> {
    Ok(s.session_file(&workflow_id, &version_id, iteration, &path)?)
}

/// Runs a workflow's approved version.
#[tauri::command(rename_all = "snake_case")]
pub async fn run_workflow(
    s: State<'_, Service>,
    workflow_id: String,
    request: RunInputs,
) -> Reply<RunView> {
    Ok(s.run_workflow(&workflow_id, request).await?)
}

/// A workflow's runs, newest first.
#[tauri::command(rename_all = "snake_case")]
pub fn list_runs(s: State<'_, Service>, workflow_id: String) -> Reply<Vec<RunView>> {
    Ok(s.list_runs(&workflow_id)?)
}

/// Where one output file of a run lies on this machine.
#[tauri::command(rename_all = "snake_case")]
pub fn run_output(s: State<'_, Service>, run_id: String, name: String) -> Reply<PathBuf> {
    Ok(s.run_output(&run_id, &name)?)
}

/// Decodes `%XX` escapes (what `encodeURIComponent` writes); invalid escapes stay.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn percent_decoding_restores_what_encode_uri_component_wrote() {
        assert_eq!(percent_decode("sales%20q1%C3%A9.csv"), "sales q1é.csv");
        assert_eq!(percent_decode("100%.csv"), "100%.csv");
        assert_eq!(percent_decode("a%zz"), "a%zz");
    }
}

// ---- Flows (issue 8): one line per FlowEngine call.

/// Every flow in `flows/`.
#[tauri::command(rename_all = "snake_case")]
pub fn flows_list(s: State<'_, Service>) -> Reply<maskflow_core::flows::FlowList> {
    Ok(s.flows().list()?)
}

/// A flow as Mermaid.
#[tauri::command(rename_all = "snake_case")]
pub fn flows_mermaid(s: State<'_, Service>, name: String) -> Reply<String> {
    Ok(s.flows().mermaid(&name)?)
}

/// A flow bundle.
#[tauri::command(rename_all = "snake_case")]
pub fn flows_export(
    s: State<'_, Service>,
    name: String,
) -> Reply<maskflow_core::flows::bundle::FlowBundle> {
    Ok(s.flows().export_bundle(&name)?)
}

/// Imports a bundle or a Mermaid text.
#[tauri::command(rename_all = "snake_case")]
pub fn flows_import(
    s: State<'_, Service>,
    request: maskflow_core::flows::bundle::ImportRequest,
) -> Reply<maskflow_core::flows::FlowSummary> {
    Ok(s.flows().import_flow(request)?)
}

/// Starts or resumes a run.
#[tauri::command(rename_all = "snake_case")]
pub async fn flows_run(
    s: State<'_, Service>,
    name: String,
    request: maskflow_core::flows::StartFlow,
) -> Reply<maskflow_core::flows::Started> {
    Ok(s.flows().start(&name, request)?)
}

/// A flow's runs.
#[tauri::command(rename_all = "snake_case")]
pub fn flows_runs(s: State<'_, Service>, name: String) -> Reply<maskflow_core::flows::RunList> {
    Ok(s.flows().runs(&name)?)
}

/// One run.
#[tauri::command(rename_all = "snake_case")]
pub fn flow_run_get(s: State<'_, Service>, id: String) -> Reply<maskflow_core::flows::RunView> {
    Ok(s.flows().get_run(&id)?)
}

/// Renames or archives a run.
#[tauri::command(rename_all = "snake_case")]
pub fn flow_run_patch(
    s: State<'_, Service>,
    id: String,
    patch: maskflow_core::flows::RunPatch,
) -> Reply<maskflow_core::flows::RunView> {
    Ok(s.flows().patch(&id, patch)?)
}

/// Deletes a run in two steps (see `delete_workflow`).
#[tauri::command(rename_all = "snake_case")]
pub fn flow_run_delete(
    s: State<'_, Service>,
    id: String,
    confirm: Option<String>,
) -> Reply<DeleteReply> {
    Ok(s.delete_flow_run(&id, confirm.as_deref())?)
}

/// Stops a run.
#[tauri::command(rename_all = "snake_case")]
pub async fn flow_run_stop(
    s: State<'_, Service>,
    id: String,
) -> Reply<maskflow_core::flows::RunView> {
    Ok(s.flows().stop(&id).await?)
}

/// Answers a gate (or a run that needs attention).
#[tauri::command(rename_all = "snake_case")]
pub async fn flow_run_answer(
    s: State<'_, Service>,
    id: String,
    answer: maskflow_core::flows::GateAnswer,
) -> Reply<maskflow_core::flows::Started> {
    Ok(s.flows().answer(&id, answer)?)
}

/// The data folder's disk use by kind, free space and the upload expiry.
#[tauri::command]
pub fn storage(s: State<'_, Service>) -> Reply<StorageView> {
    Ok(s.storage()?)
}

/// Sets how long uploads that joined no workflow are kept.
#[tauri::command]
pub fn set_storage(s: State<'_, Service>, input: StorageInput) -> Reply<StorageView> {
    Ok(s.set_storage(input)?)
}

/// Clears one kind of stored data (what each keeps is in the storage view).
#[tauri::command]
pub fn clear_storage(s: State<'_, Service>, kind: StorageKind) -> Reply<Cleared> {
    Ok(s.clear_storage(kind)?)
}
