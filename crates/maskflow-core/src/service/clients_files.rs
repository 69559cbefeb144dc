//! The file tools of outside clients: the masked extract of a file the
//! client names (only once the user approved it in Maskflow: until then the
//! request waits in the app's list), and a run of an approved workflow on
//! files, answered with its outputs' paths, sizes and masked previews (the
//! raw outputs stay on disk).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use maskflow_privacy::GuardIndex;
use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use super::clients::{Answer, ClientContext, ClientReply};
use super::{Service, UploadedFile};
use crate::conversation::spec::FieldType;
use crate::error::{CoreError, Result};
use crate::store::{self, client_requests::RequestRow};

/// A client's request to see a file's masked extract, as the app lists it.
#[derive(Serialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct ClientRequestView {
    /// `creq_…`
    pub id: String,
    /// The client that asked.
    pub client: String,
    /// The file, where it lies on this machine.
    pub path: String,
    /// `pending`, `approved` or `declined`.
    pub status: String,
    /// RFC 3339.
    pub created_at: String,
    /// The file's id and masked extract: what the client gets if approved.
    pub file: UploadedFile,
}

/// What a client is told while the user has not approved a file's extract.
/// Said of an output whose name holds a value of the run's files (the run's id follows).
const WITHHELD_NAME: &str = "Its name holds a value of your files, so it is masked here and \
    its path is not given: open the outputs in Maskflow, run";

/// Said instead of a run's message that holds a value of the user's files (the run's id follows).
const WITHHELD_MESSAGE: &str = "The run's message holds values of your files, so it is not \
    shown here: open it in Maskflow, run";

const APPROVE_RUN_IN_MASKFLOW: &str = "Approve in Maskflow: the user has not approved these \
    files for clients yet, so the workflow did not run. The requests are listed in Maskflow \
    (Settings, Client requests); run it again once they are approved.";

const APPROVE_IN_MASKFLOW: &str = "Approve in Maskflow: the user has not approved this file's \
    masked extract yet. The request is listed in Maskflow (Settings, Client requests); ask \
    again once it is approved.";

/// Size and modification time: a file changed since it was approved is
/// asked about again.
fn fingerprint(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| CoreError::io(format!("reading {}", path.display()), e))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("{}:{modified}", meta.len()))
}

impl Service {
    /// The masked extract of the file at `raw_path` once the user approved
    /// it; until then an "approve in Maskflow" answer, the request listed in
    /// the app.
    pub async fn client_extract(&self, ctx: &ClientContext, raw_path: &str) -> ClientReply {
        let answer = self.extract_answer(ctx, raw_path).await;
        self.deliver(ctx, "get_masked_extract", answer)
    }

    async fn extract_answer(&self, ctx: &ClientContext, raw_path: &str) -> Result<Answer> {
        let path = self.client_path(ctx, raw_path, true)?;
        // A hard link, or a name swapped after the check, is refused here.
        drop(super::client_open::open_checked(&path, raw_path)?);
        let shown = path.display().to_string();
        let own = vec![raw_path.to_owned(), shown.clone()];
        let request = self.client_request_for(ctx, &path).await?;
        let own = own.into_iter().chain([request.id.clone()]);
        match request.status.as_str() {
            "approved" => {
                let row = store::get_file(&self.db(), &request.file_id)?
                    .ok_or_else(|| CoreError::not_found("file", &request.file_id))?;
                let file = UploadedFile::from(row);
                Ok(Answer::new(json!({
                    "status": "approved", "file": shown, "extract": file.extract,
                }))
                .own(own))
            }
            "declined" => Err(CoreError::InvalidRequest(format!(
                "the user declined to share the extract of {shown} (request {})",
                request.id
            ))),
            _ => Ok(Answer::new(json!({
                "status": "approval_required", "request_id": request.id, "file": shown,
                "message": APPROVE_IN_MASKFLOW,
            }))
            .own(own.chain([APPROVE_IN_MASKFLOW.to_owned()]))),
        }
    }

    /// The user's decision on `path` as it is now (its size and time): the
    /// latest request for it, or a new pending one, its extract made for the
    /// user to review in the app.
    async fn client_request_for(&self, ctx: &ClientContext, path: &Path) -> Result<RequestRow> {
        let shown = path.display().to_string();
        let print = fingerprint(path)?;
        if let Some(r) = store::client_requests::latest_for(&self.db(), &shown, &print)? {
            return Ok(r);
        }
        let file = self.add_local_file(path.to_path_buf()).await?;
        let row = RequestRow {
            id: self.id("creq"),
            file_id: file.file_id,
            path: shown,
            fingerprint: print,
            client: ctx.name.clone(),
            status: "pending".into(),
            created_at: self.now(),
            decided_at: None,
        };
        store::client_requests::insert(&self.db(), &row)?;
        Ok(row)
    }

    /// Runs workflow `workflow` (id or exact name) on `inputs` (field name →
    /// paths, or values for fields that are not files); the outputs stay on
    /// disk, the answer holds their paths, sizes and masked previews.
    pub async fn client_run(
        &self,
        ctx: &ClientContext,
        workflow: &str,
        inputs: BTreeMap<String, Vec<String>>,
        force: bool,
    ) -> ClientReply {
        let answer = self.run_answer_for(ctx, workflow, inputs, force).await;
        self.deliver(ctx, "run_workflow", answer)
    }

    async fn run_answer_for(
        &self,
        ctx: &ClientContext,
        workflow: &str,
        mut inputs: BTreeMap<String, Vec<String>>,
        force: bool,
    ) -> Result<Answer> {
        let workflow_id = self.find_workflow(workflow)?;
        let fields = self.active_version(&workflow_id)?.fields;
        let mut own = vec![workflow_id.clone()];
        // The files this run reads are guarded too, though no workflow holds them yet.
        let mut index = GuardIndex::new();
        // Each file is read once through its checked descriptor into a
        // private copy, which the shape check and the run read (issue 39).
        let mut staged = Vec::new();
        let mut waiting = Vec::new();
        for (name, values) in inputs.iter_mut() {
            let is_file = fields.iter().any(|f| {
                &f.name == name && matches!(f.field_type, FieldType::File | FieldType::Files)
            });
            if !is_file {
                continue;
            }
            for v in values.iter_mut() {
                let f = self.client_file(ctx, v)?;
                // A file the user never approved for clients is asked about
                // first, as `get_masked_extract` asks (issue 39, point 4).
                let request = self.client_request_for(ctx, &f.canonical).await?;
                match request.status.as_str() {
                    "approved" => {}
                    "declined" => {
                        return Err(CoreError::InvalidRequest(format!(
                            "the user declined to share {} with clients (request {})",
                            f.canonical.display(),
                            request.id
                        )));
                    }
                    _ => {
                        own.push(request.id.clone());
                        waiting.push(json!({
                            "request_id": request.id, "file": f.canonical.display().to_string(),
                        }));
                    }
                }
                own.push(v.clone());
                own.push(f.canonical.display().to_string());
                *v = f.staged.display().to_string();
                own.push(v.clone());
                let file_name = f
                    .staged
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                index.add_file(
                    &f.staged,
                    &file_name.unwrap_or_default(),
                    self.max_file_bytes(),
                );
                staged.push(f);
            }
        }
        if !waiting.is_empty() {
            let answer = Answer::new(json!({
                "status": "approval_required", "workflow_id": workflow_id,
                "requests": waiting, "message": APPROVE_RUN_IN_MASKFLOW,
            }))
            .own(own.into_iter().chain([APPROVE_RUN_IN_MASKFLOW.to_owned()]));
            return Ok(answer);
        }
        let differences = self.check_local_inputs(&workflow_id, &inputs)?;
        if !differences.is_empty() && !force {
            return Err(CoreError::InputsDiffer(differences));
        }
        let run = self.run_workflow_local(&workflow_id, inputs).await?;
        drop(staged);
        let index = Arc::new(index);
        let mut outputs = Vec::new();
        for o in &run.outputs {
            outputs.push(self.client_output(&run.id, &o.name, o.size, &index, &mut own)?);
        }
        own.extend([run.id.clone(), run.status.clone(), WITHHELD_NAME.to_owned()]);
        // The run's message is runtime text too: it may name outputs of the
        // approved run (the output comparison) or quote the script.
        let held =
            self.client_guard_hits(&run.message, Vec::new(), std::slice::from_ref(&index))?;
        let message = if held.is_empty() {
            run.message.clone()
        } else {
            own.push(WITHHELD_MESSAGE.to_owned());
            format!("{WITHHELD_MESSAGE} {}", run.id)
        };
        let mut answer = Answer::new(json!({
            "run_id": run.id, "workflow_id": workflow_id, "status": run.status,
            "message": message, "outputs": outputs,
        }))
        .own(own);
        answer.also.push(index);
        answer.workflow_id = Some(workflow_id);
        Ok(answer)
    }

    /// One output of a client's run as the client sees it. Its name is the
    /// script's runtime text: one written from the data ("one file per
    /// customer") holds a value, and is handed out masked, without its path
    /// (issue 38, finding 7).
    fn client_output(
        &self,
        run_id: &str,
        name: &str,
        size: u64,
        index: &Arc<GuardIndex>,
        own: &mut Vec<String>,
    ) -> Result<Value> {
        let path = self.run_output(run_id, name)?;
        if let Some(folder) = path.parent() {
            own.push(folder.display().to_string());
        }
        own.push(size.to_string());
        let held = self.client_guard_hits(name, Vec::new(), std::slice::from_ref(index))?;
        if held.is_empty() {
            return Ok(json!({
                "name": name, "path": path.display().to_string(), "size": size,
                "preview": masked_preview(&path),
            }));
        }
        let masked = maskflow_extractors::mask(name);
        let mut preview = masked_preview(&path);
        if preview.get("filename").is_some() {
            preview["filename"] = json!(masked);
        }
        Ok(json!({
            "name": masked, "path": null, "size": size, "preview": preview,
            "withheld": format!("{WITHHELD_NAME} {run_id}"),
        }))
    }

    /// The clients' requests waiting for the user, oldest first.
    pub fn client_requests(&self) -> Result<Vec<ClientRequestView>> {
        let rows = store::client_requests::pending(&self.db())?;
        rows.into_iter().map(|r| self.request_view(r)).collect()
    }

    /// Approves a client's request: the client may now get the extract.
    pub fn approve_client_request(&self, id: &str) -> Result<ClientRequestView> {
        self.decide_client_request(id, "approved")
    }

    /// Declines a client's request.
    pub fn decline_client_request(&self, id: &str) -> Result<ClientRequestView> {
        self.decide_client_request(id, "declined")
    }

    fn decide_client_request(&self, id: &str, status: &str) -> Result<ClientRequestView> {
        let now = self.now();
        let row = {
            let db = self.db();
            let row = store::client_requests::get(&db, id)?
                .ok_or_else(|| CoreError::not_found("client request", id))?;
            if !store::client_requests::decide(&db, id, status, &now)? {
                return Err(CoreError::Conflict(format!(
                    "client request {id} was already {}",
                    row.status
                )));
            }
            store::client_requests::get(&db, id)?
                .ok_or_else(|| CoreError::not_found("client request", id))?
        };
        self.request_view(row)
    }

    fn request_view(&self, r: RequestRow) -> Result<ClientRequestView> {
        let file = store::get_file(&self.db(), &r.file_id)?
            .ok_or_else(|| CoreError::not_found("file", &r.file_id))?;
        Ok(ClientRequestView {
            id: r.id,
            client: r.client,
            path: r.path,
            status: r.status,
            created_at: r.created_at,
            file: UploadedFile::from(file),
        })
    }
}

/// An output's masked extract as the approval view would show it, or why
/// there is none.
fn masked_preview(path: &Path) -> Value {
    let options = maskflow_extractors::ExtractOptions::default();
    match maskflow_extractors::extract_path(path, &options, &mut |_| {}) {
        Ok(extract) => match serde_json::to_value(&extract) {
            Ok(v) => crate::names::outbound(&v, &[]).extract,
            Err(_) => json!({"none": "the preview could not be written"}),
        },
        Err(_) => json!({"none": "Maskflow cannot read this kind of file"}),
    }
}
