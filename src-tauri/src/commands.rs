//! The Tauri commands: one per [`Service`] call, each a one-line delegation.
//! Arguments keep the service's snake_case names. Errors cross IPC as
//! `{code, message}` ([`IpcError`]), with the same codes as the HTTP API.

use std::path::PathBuf;

use maskflow_core::service::{
    CreateWorkflow, CreatedVersion, MessageReply, UploadedFile, VersionView, WorkflowPatch,
    WorkflowSummary, WorkflowView,
};
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
}

impl From<CoreError> for IpcError {
    fn from(e: CoreError) -> Self {
        let code = e.code();
        let message = if code == ErrorCode::Internal {
            eprintln!("maskflow: internal error: {e}");
            "something went wrong inside Maskflow; see the app's log".to_owned()
        } else {
            e.to_string()
        };
        Self {
            code: code.as_str(),
            message,
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

/// Sends a chat message (validator → clarifier → build).
#[tauri::command(rename_all = "snake_case")]
pub async fn send_message(
    s: State<'_, Service>,
    workflow_id: String,
    content: String,
) -> Reply<MessageReply> {
    Ok(s.send_message(&workflow_id, &content).await?)
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

/// Renames, re-describes or relabels a workflow.
#[tauri::command(rename_all = "snake_case")]
pub fn update_workflow(
    s: State<'_, Service>,
    workflow_id: String,
    patch: WorkflowPatch,
) -> Reply<WorkflowView> {
    Ok(s.update_workflow(&workflow_id, patch)?)
}

/// Deletes a workflow.
#[tauri::command(rename_all = "snake_case")]
pub fn delete_workflow(s: State<'_, Service>, workflow_id: String) -> Reply<()> {
    Ok(s.delete_workflow(&workflow_id)?)
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
        });
    };
    let name = percent_decode(name.to_str().unwrap_or("upload"));
    Ok(s.add_upload_bytes(&name, bytes).await?)
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

/// Deletes a run.
#[tauri::command(rename_all = "snake_case")]
pub fn flow_run_delete(s: State<'_, Service>, id: String) -> Reply<()> {
    Ok(s.flows().delete(&id)?)
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
