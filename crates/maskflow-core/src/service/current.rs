//! The workflow as it stands, for edits, repairs and approvals (issue 28,
//! point 3): the version an edit starts from (else the approved one) goes
//! into the builder's prompt, and a version whose inputs or outputs differ
//! from the approved one says so, with the `maskflow run` line that changes.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Service, VersionView};
use crate::conversation::spec::{Execution, Field, FieldType, WorkflowSpec};
use crate::store::{self, VersionRow};
use crate::versions::Status;

/// How a version's inputs or outputs differ from the approved version's.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct InterfaceChange {
    /// The approved version it is compared with (1, 2, 3…).
    #[ts(type = "number")]
    pub approved_version: i64,
    /// Each difference in a sentence, e.g. "input `bakers` is removed".
    pub changes: Vec<String>,
    /// The `maskflow run` line of the approved version.
    pub old_command: String,
    /// The `maskflow run` line of this version.
    pub new_command: String,
}

/// A stored version's workflow, when it was built (name and description
/// from the workflow, which holds them).
fn spec_of(v: &VersionRow, name: &str, description: &str) -> Option<WorkflowSpec> {
    let fields: Vec<Field> = serde_json::from_value(v.fields.clone()?).ok()?;
    let execution: Execution = serde_json::from_value(v.execution.clone()?).ok()?;
    Some(WorkflowSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        script: v.script.clone()?,
        fields,
        execution,
    })
}

/// The workflow `version` is drafted from: the version it was edited or
/// restored from when that one was built, else the approved version.
pub(super) fn current_spec(conn: &Connection, version: &VersionRow) -> Option<WorkflowSpec> {
    let wf = store::get_workflow(conn, &version.workflow_id).ok()??;
    let (name, description) = (
        wf.name.unwrap_or_default(),
        wf.description.unwrap_or_default(),
    );
    let origin = version
        .origin_version_id
        .as_deref()
        .and_then(|id| store::get_version(conn, id).ok().flatten())
        .and_then(|v| spec_of(&v, &name, &description));
    origin.or_else(|| {
        store::versions_of(conn, &version.workflow_id)
            .ok()?
            .into_iter()
            .find(|v| v.is_active && v.id != version.id)
            .and_then(|v| spec_of(&v, &name, &description))
    })
}

/// `s` as one shell word (single-quoted unless it is plain).
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':'));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The placeholder a `--input` flag of a field's type takes.
fn placeholder(f: &Field) -> String {
    match f.field_type {
        FieldType::File => "FILE".into(),
        FieldType::Files => "FILE".into(),
        FieldType::Text => "TEXT".into(),
        FieldType::Number => "NUMBER".into(),
        FieldType::Boolean => "true|false".into(),
        FieldType::Date => "YYYY-MM-DD".into(),
        FieldType::Choice => f.options.clone().unwrap_or_default().join("|"),
    }
}

/// The `maskflow run` line of a workflow with `fields` (the flag syntax of
/// `maskflow run`: `--input NAME=PATH`, a name repeated for a list of
/// files; optional inputs in brackets).
pub fn run_command(workflow: &str, fields: &[Field]) -> String {
    let mut out = format!("maskflow run {}", shell_word(workflow));
    for f in fields {
        let flag = format!("--input {}={}", f.name, placeholder(f));
        let flag = match f.field_type {
            FieldType::Files => format!("{flag} [--input {}=FILE …]", f.name),
            _ => flag,
        };
        if f.required {
            out.push_str(&format!(" {flag}"));
        } else {
            out.push_str(&format!(" [{flag}]"));
        }
    }
    out
}

fn type_name(t: FieldType) -> &'static str {
    match t {
        FieldType::File => "file",
        FieldType::Files => "files",
        FieldType::Text => "text",
        FieldType::Number => "number",
        FieldType::Boolean => "boolean",
        FieldType::Date => "date",
        FieldType::Choice => "choice",
    }
}

/// Each difference between the approved workflow's inputs and outputs
/// and a new version's, in words (none: the same interface).
pub fn interface_changes(old: &WorkflowSpec, new: &WorkflowSpec) -> Vec<String> {
    let mut out = Vec::new();
    for f in &old.fields {
        match new.fields.iter().find(|n| n.name == f.name) {
            None => out.push(format!(
                "input `{}` ({}) is removed",
                f.name,
                type_name(f.field_type)
            )),
            Some(n) if n.field_type != f.field_type => out.push(format!(
                "input `{}` was {}, is now {}",
                f.name,
                type_name(f.field_type),
                type_name(n.field_type)
            )),
            Some(n) if n.required && !f.required => {
                out.push(format!("input `{}` is now required", f.name));
            }
            Some(_) => {}
        }
    }
    for n in new
        .fields
        .iter()
        .filter(|n| !old.fields.iter().any(|f| f.name == n.name))
    {
        out.push(format!(
            "input `{}` ({}) is new",
            n.name,
            type_name(n.field_type)
        ));
    }
    let names = |s: &WorkflowSpec| -> Vec<String> {
        s.execution.outputs.iter().map(|o| o.name.clone()).collect()
    };
    let (old_out, new_out) = (names(old), names(new));
    for o in old_out.iter().filter(|o| !new_out.contains(o)) {
        out.push(format!("output `{o}` is no longer written"));
    }
    for o in new_out.iter().filter(|o| !old_out.contains(o)) {
        out.push(format!("output `{o}` is new"));
    }
    out
}

impl Service {
    /// Adds to a version waiting for approval how its inputs and outputs
    /// differ from the approved version's, if they do.
    pub(super) fn attach_interface_change(&self, conn: &Connection, view: &mut VersionView) {
        if view.status != Status::PendingUserApproval || view.is_active {
            return;
        }
        let Ok(Some(row)) = store::get_version(conn, &view.id) else {
            return;
        };
        let Ok(Some(wf)) = store::get_workflow(conn, &row.workflow_id) else {
            return;
        };
        let Some(active) = store::versions_of(conn, &row.workflow_id)
            .ok()
            .and_then(|all| all.into_iter().find(|v| v.is_active && v.id != row.id))
        else {
            return;
        };
        let (Some(old), Some(new)) = (spec_of(&active, "", ""), spec_of(&row, "", "")) else {
            return;
        };
        let changes = interface_changes(&old, &new);
        if changes.is_empty() {
            return;
        }
        let workflow = wf.name.as_deref().unwrap_or(&wf.id);
        view.interface_change = Some(InterfaceChange {
            approved_version: active.version,
            changes,
            old_command: run_command(workflow, &old.fields),
            new_command: run_command(workflow, &new.fields),
        });
    }
}

#[cfg(test)]
mod tests;
