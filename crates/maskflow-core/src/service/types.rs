//! The service's wire types (DTOs): what shells send in and get back. They
//! convert from store rows here, at the boundary; the OpenAPI schema and
//! (later) the TypeScript types are derived from them.

use maskflow_extractors::{FileExtract, FileKind};
use maskflow_privacy::categories::CategoryCandidate;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use ts_rs::TS;
use utoipa::ToSchema;

use crate::conversation::spec::{Execution, Field};
use crate::error::{CoreError, Result};
use crate::store::{FileRow, Origin, VersionRow, WorkflowRow};
use crate::versions::Status;
use crate::views::{BuildView, MessageView};

/// A [`FileExtract`] as clients send it. The seed's shape has no `kind`;
/// when it is missing it is taken from the file name's extension (CSV when
/// unknown).
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(transparent)]
pub struct ExtractInput(pub FileExtract);

impl<'de> Deserialize<'de> for ExtractInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut value = Value::deserialize(d)?;
        if let Value::Object(map) = &mut value
            && !map.contains_key("kind")
        {
            let kind = map
                .get("filename")
                .and_then(Value::as_str)
                .map(kind_from_name)
                .unwrap_or(FileKind::Csv);
            map.insert(
                "kind".into(),
                serde_json::to_value(kind).map_err(serde::de::Error::custom)?,
            );
        }
        serde_json::from_value(value)
            .map(ExtractInput)
            .map_err(serde::de::Error::custom)
    }
}

fn kind_from_name(name: &str) -> FileKind {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" => FileKind::Excel,
        "pdf" => FileKind::Pdf,
        "docx" => FileKind::Word,
        "png" | "jpg" | "jpeg" | "gif" | "bmp" | "tif" | "tiff" | "webp" => FileKind::Image,
        _ => FileKind::Csv,
    }
}

/// `create_workflow`'s input: the approved extracts and, optionally, the
/// uploaded files behind them.
#[derive(Deserialize, Clone, Debug, Default, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct CreateWorkflow {
    /// The extracts the user approved (seed 000's `FileExtract`s). May be
    /// left out when `file_ids` is given: the stored extracts are used.
    #[serde(default)]
    #[schema(value_type = Vec<FileExtract>)]
    #[ts(as = "Vec<FileExtract>")]
    pub file_extracts: Vec<ExtractInput>,
    /// Ids from `POST /api/extracts` of the local files behind the extracts.
    #[serde(default)]
    pub file_ids: Vec<String>,
    /// Flagged column or sheet names (`UploadedFile::flagged_names`) the
    /// user chose to send as they are; every other flagged name is sent masked.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub send_as_is: Vec<String>,
    /// Category columns (`UploadedFile::categories`) the user switched on:
    /// their values and counts go into the extract's `categories` and so to
    /// the AI, and the guard allows exactly those (#28).
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<CategoryChoice>>")]
    pub show_categories: Vec<CategoryChoice>,
    /// The user's notes on their data (#40 point 7): what they know that
    /// the extracts cannot show, on a file, a sheet or a column. Kept in
    /// the approved extract beside its table and sent as the user's words.
    #[serde(default)]
    #[ts(optional, as = "Option<Vec<DataNote>>")]
    pub notes: Vec<DataNote>,
}

/// A note of the user's on one of `file_ids`, its sheet or its column.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct DataNote {
    /// `file_…`: the uploaded file (one of `file_ids`).
    pub file_id: String,
    /// The workbook sheet, by its name as sent (none for the file).
    #[serde(default)]
    #[ts(optional)]
    pub sheet: Option<String>,
    /// The column, by its name as sent (none for the file or sheet).
    #[serde(default)]
    #[ts(optional)]
    pub column: Option<String>,
    /// The user's words (at most 2,000 characters).
    pub text: String,
}

/// A category column the user switched on at approval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct CategoryChoice {
    /// `file_…`: the uploaded file (one of `file_ids`).
    pub file_id: String,
    /// The workbook sheet, as in the candidate (none for a single table).
    #[serde(default)]
    #[ts(optional)]
    pub sheet: Option<String>,
    /// The column, as in the candidate.
    pub column: String,
}

/// A workflow and its first version, just created (or a version made by an edit).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct CreatedVersion {
    /// `wf_…`
    pub workflow_id: String,
    /// `wv_…`
    pub version_id: String,
    /// `validating` for a new workflow, `validated` after an edit.
    pub status: Status,
    /// For a new workflow: what a build will need on this machine, checked
    /// before its first message (see `GET /api/preflight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub preflight: Option<super::PreflightView>,
}

/// `send_message`'s input.
#[derive(Deserialize, Clone, Debug, ToSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct SendMessage {
    /// What the user typed.
    pub content: String,
    /// Send it even though the privacy guard found values from the user's
    /// files in it (after the user confirmed; only their own text passes).
    #[serde(default)]
    pub confirm_privacy: bool,
    /// Accepted for clients written when the preflight held a first
    /// message; it changes nothing now (a build that needs what is missing
    /// waits at its environment gate instead).
    #[serde(default)]
    pub go_ahead: bool,
}

/// The reply to a message: the draft's new status and what to show.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct MessageReply {
    /// The draft version's status after the message.
    pub status: Status,
    /// The assistant's answer: a question, the rejection reason, or that building started.
    pub message: String,
    /// What each role's prompt left out of the extracts to fit the model's
    /// context window (empty when everything fitted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<crate::fit::ContextReduction>>")]
    pub context_reductions: Vec<crate::fit::ContextReduction>,
}

/// A rename / relabel of a workflow. Absent fields are left alone; an empty
/// `label` removes the label.
#[derive(Deserialize, Clone, Debug, Default, ToSchema, TS)]
#[serde(deny_unknown_fields)]
#[ts(optional_fields)]
pub struct WorkflowPatch {
    /// The new name.
    #[serde(default)]
    pub name: Option<String>,
    /// The new description.
    #[serde(default)]
    pub description: Option<String>,
    /// The new label ("" removes it).
    #[serde(default)]
    pub label: Option<String>,
}

/// A version, in full.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[ts(optional_fields)]
pub struct VersionView {
    /// `wv_…`
    pub id: String,
    /// 1, 2, 3…
    #[ts(type = "number")]
    pub version: i64,
    /// Where it is in its life.
    pub status: Status,
    /// Whether it is the version in use.
    pub is_active: bool,
    /// The approved extracts.
    #[schema(value_type = Vec<FileExtract>)]
    #[ts(as = "Vec<FileExtract>")]
    pub file_extracts: Vec<Value>,
    /// The uploaded files behind the extracts.
    pub file_ids: Vec<String>,
    /// The workflow's inputs (set by the build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<Field>>,
    /// How it runs (set by the build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
    /// The generated Python source (set by the build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Why the validator rejected the task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection_reason: Option<String>,
    /// Why the build failed (e.g. "interrupted").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
    /// Where its build is (once building started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildView>,
    /// The auto-test's report (local only: it shows real output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_report: Option<crate::builder::TestReport>,
    /// For a version waiting for approval: how its inputs or outputs differ
    /// from the approved version's, with the `maskflow run` lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub interface_change: Option<super::current::InterfaceChange>,
    /// For an approved version: the SHA-256 of each input file when it was
    /// approved (issue 31 point 4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<super::input_hashes::InputHash>>")]
    pub input_hashes: Vec<super::input_hashes::InputHash>,
}

impl VersionView {
    pub(crate) fn from_row(v: VersionRow, file_ids: Vec<String>) -> Result<Self> {
        let fields = v
            .fields
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| CoreError::Corrupt(format!("fields of {}: {e}", v.id)))?;
        let execution = v
            .execution
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| CoreError::Corrupt(format!("execution of {}: {e}", v.id)))?;
        let file_extracts = match v.file_extracts {
            Value::Array(items) => items,
            _ => return Err(CoreError::Corrupt(format!("file_extracts of {}", v.id))),
        };
        Ok(Self {
            id: v.id,
            version: v.version,
            status: v.status,
            is_active: v.is_active,
            file_extracts,
            file_ids,
            fields,
            execution,
            script: v.script,
            rejection_reason: v.rejection_reason,
            failure_reason: v.failure_reason,
            created_at: v.created_at,
            updated_at: v.updated_at,
            build: None,
            test_report: None,
            interface_change: None,
            input_hashes: Vec::new(),
        })
    }
}

/// A version in a list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct VersionSummary {
    /// `wv_…`
    pub id: String,
    /// 1, 2, 3…
    #[ts(type = "number")]
    pub version: i64,
    /// Its status.
    pub status: Status,
    /// Whether it is the version in use.
    pub is_active: bool,
    /// How it came to be: `created`, `edited` or `restored`.
    pub origin: Origin,
    /// The number of the version it was edited or restored from.
    #[ts(type = "number | null")]
    pub origin_version: Option<i64>,
}

impl VersionSummary {
    /// `v` summarised, with its origin's number looked up among `all`.
    pub(crate) fn within(v: &VersionRow, all: &[VersionRow]) -> Self {
        let mut summary = Self::from(v);
        summary.origin_version = v
            .origin_version_id
            .as_ref()
            .and_then(|id| all.iter().find(|o| &o.id == id))
            .map(|o| o.version);
        summary
    }
}

impl From<&VersionRow> for VersionSummary {
    fn from(v: &VersionRow) -> Self {
        Self {
            id: v.id.clone(),
            version: v.version,
            status: v.status,
            is_active: v.is_active,
            origin: v.origin,
            origin_version: None,
        }
    }
}

/// A workflow with its current version (seed 000's `GET /api/workflows/:id`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[ts(optional_fields)]
pub struct WorkflowView {
    /// `wf_…`
    pub id: String,
    /// Set by the first build, then by the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Set by the first build, then by the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The user's tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The draft if there is one, else the active version, else the latest.
    pub current_version: VersionView,
    /// The approved version in use, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_version_id: Option<String>,
    /// Every version, oldest first.
    pub versions: Vec<VersionSummary>,
    /// The whole conversation, across versions.
    pub messages: Vec<MessageView>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

/// A workflow in the list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
#[ts(optional_fields)]
pub struct WorkflowSummary {
    /// `wf_…`
    pub id: String,
    /// Its name, once built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its description, once built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The user's tag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The draft, else the active version, else the latest.
    pub current_version: VersionSummary,
    /// The approved version in use, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_version_id: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

impl WorkflowSummary {
    pub(crate) fn new(w: WorkflowRow, current: &VersionRow, active: Option<String>) -> Self {
        Self {
            id: w.id,
            name: w.name,
            description: w.description,
            label: w.label,
            current_version: current.into(),
            active_version_id: active,
            created_at: w.created_at,
            updated_at: w.updated_at,
        }
    }
}

/// An uploaded file and its masked extract (`POST /api/extracts`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, TS)]
pub struct UploadedFile {
    /// `file_…`, to pass as `file_ids` when creating the workflow.
    pub file_id: String,
    /// The masked extract, for the user to approve: exactly what is sent
    /// when no name is chosen to be sent as it is.
    #[schema(value_type = FileExtract)]
    #[ts(as = "FileExtract")]
    pub extract: Value,
    /// Column and sheet names that look like values, masked in `extract`
    /// (each may be sent as it is through `send_as_is`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<crate::names::FlaggedName>>")]
    pub flagged_names: Vec<crate::names::FlaggedName>,
    /// Columns of few values, each in many rows, that the user may switch
    /// on to show the AI (`show_categories`), with their raw values: shown
    /// to the user only, never sent unless switched on (#28).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<CategoryCandidate>>")]
    pub categories: Vec<CategoryCandidate>,
}

impl From<FileRow> for UploadedFile {
    fn from(f: FileRow) -> Self {
        let sent = crate::names::outbound(&f.extract, &[]);
        Self {
            file_id: f.id,
            extract: sent.extract,
            flagged_names: sent.flagged,
            categories: Vec::new(),
        }
    }
}
