//! Before a run (issue 28, point 6): each file given to an approved
//! workflow is compared with the file its input was tested with when the
//! version was approved ([`crate::shape::differences`]), so a file of
//! another shape is refused with one sentence per difference before any
//! script runs, unless the caller forces the run. Local only: the stored
//! extracts with their real names, never sent anywhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Service;
use super::runs::ActiveVersion;
use crate::builder::InputFile;
use crate::builder::inputs::bind_test_inputs;
use crate::conversation::spec::{FieldType, WorkflowSpec};
use crate::error::{CoreError, Result};
use crate::store::{self, builds as rows};

impl Service {
    /// The extracts each file input of `version` was tested with: the
    /// files its test report says fed it, else the files bound as the
    /// build's test binds them. Real (stored) extracts, local only.
    fn approved_inputs(&self, version: &ActiveVersion) -> Result<BTreeMap<String, Vec<Value>>> {
        let db = self.db();
        let mut files: Vec<(String, String, Value)> = Vec::new();
        for id in store::file_ids_of(&db, &version.id)? {
            if let Some(f) = store::get_file(&db, &id)? {
                files.push((id, f.filename, f.extract));
            }
        }
        let tested: BTreeMap<String, Vec<String>> = rows::get_build(&db, &version.id)?
            .and_then(|b| b.test_report)
            .and_then(|r| serde_json::from_value(r["inputs"].clone()).ok())
            .unwrap_or_default();
        drop(db);
        let spec = WorkflowSpec {
            name: String::new(),
            description: String::new(),
            script: version.script.clone(),
            fields: version.fields.clone(),
            execution: version.execution.clone(),
        };
        // The build's own binding, by file id, for inputs the report does not name.
        let as_inputs: Vec<InputFile> = files
            .iter()
            .map(|(id, name, extract)| InputFile {
                filename: name.clone(),
                path: PathBuf::from(id),
                columns: serde_json::from_value(extract["columns"].clone()).unwrap_or_default(),
            })
            .collect();
        // Unsettled inputs compare with nothing rather than with a guess.
        let bound_names = bind_test_inputs(&spec, &as_inputs, &BTreeMap::new())
            .map(|(_, names)| names)
            .unwrap_or_default();
        let mut out = BTreeMap::new();
        for field in &version.fields {
            if !matches!(field.field_type, FieldType::File | FieldType::Files) {
                continue;
            }
            let names = tested
                .get(&field.name)
                .filter(|n| !n.is_empty())
                .or_else(|| bound_names.get(&field.name))
                .cloned()
                .unwrap_or_default();
            let extracts: Vec<Value> = names
                .iter()
                .filter_map(|n| files.iter().find(|(_, f, _)| f == n))
                .map(|(_, _, e)| e.clone())
                .collect();
            if !extracts.is_empty() {
                out.insert(field.name.clone(), extracts);
            }
        }
        Ok(out)
    }

    /// Every way the `given` files (extracts by input name) differ from the
    /// files the active version was approved with. A list input's file is
    /// compared with the approved file it is closest to.
    pub(super) fn input_differences(
        &self,
        workflow_id: &str,
        given: &BTreeMap<String, Vec<Value>>,
    ) -> Result<Vec<String>> {
        let version = self.active_version(workflow_id)?;
        let approved = self.approved_inputs(&version)?;
        let mut out = Vec::new();
        for (name, extracts) in given {
            let Some(before) = approved.get(name) else {
                continue;
            };
            for new in extracts {
                let closest = before
                    .iter()
                    .map(|a| crate::shape::differences(name, a, new))
                    .min_by_key(Vec::len)
                    .unwrap_or_default();
                out.extend(closest);
            }
        }
        Ok(out)
    }

    /// Refuses the `given` files when they differ from the approved ones
    /// ([`CoreError::InputsDiffer`], one sentence per difference).
    pub(super) fn check_input_shapes(
        &self,
        workflow_id: &str,
        given: &BTreeMap<String, Vec<Value>>,
    ) -> Result<()> {
        let differences = self.input_differences(workflow_id, given)?;
        if differences.is_empty() {
            Ok(())
        } else {
            Err(CoreError::InputsDiffer(differences))
        }
    }

    /// For `maskflow run`: extracts each local file given to a file input
    /// and lists how it differs from the approved one (empty: the same
    /// shape). Blocking: it reads the files. Inputs that are not files, or
    /// that the workflow does not have, are left to the run to refuse.
    pub fn check_local_inputs(
        &self,
        workflow_id: &str,
        inputs: &BTreeMap<String, Vec<String>>,
    ) -> Result<Vec<String>> {
        let fields = self.active_version(workflow_id)?.fields;
        let mut given = BTreeMap::new();
        for (name, paths) in inputs {
            let is_file = fields.iter().any(|f| {
                f.name == *name && matches!(f.field_type, FieldType::File | FieldType::Files)
            });
            if !is_file {
                continue;
            }
            let mut extracts = Vec::new();
            for p in paths {
                extracts.push(local_extract(name, Path::new(p))?);
            }
            given.insert(name.clone(), extracts);
        }
        self.input_differences(workflow_id, &given)
    }

    /// The stored extracts of uploaded files given to a run, by input.
    pub(super) fn uploaded_extracts(
        &self,
        files: &BTreeMap<String, Vec<String>>,
    ) -> Result<BTreeMap<String, Vec<Value>>> {
        let db = self.db();
        let mut out = BTreeMap::new();
        for (name, ids) in files {
            let mut extracts = Vec::new();
            for id in ids {
                if let Some(row) = store::get_file(&db, id)? {
                    extracts.push(row.extract);
                }
            }
            out.insert(name.clone(), extracts);
        }
        Ok(out)
    }
}

/// The extract of a local file given to input `name`.
fn local_extract(name: &str, path: &Path) -> Result<Value> {
    let extract = maskflow_extractors::extract_path(
        path,
        &maskflow_extractors::ExtractOptions::default(),
        &mut |_| {},
    )
    .map_err(|e| CoreError::InvalidRequest(format!("{name}: {e}")))?;
    serde_json::to_value(extract).map_err(|e| CoreError::Corrupt(e.to_string()))
}
