//! Before a run (issue 28, point 6; issue 41): each file given to an
//! approved workflow is compared with the file its input was tested with
//! when the version was approved, against what the script declared it
//! reads ([`crate::reads::check`]; every difference for a version that
//! declared none, [`crate::shape::differences`]), so a file the script
//! cannot read as it was approved is refused with one sentence per
//! difference before any script runs, unless the caller forces the run. Local only: the stored
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
use crate::reads::Check;

/// A file given to an input: its extract, and where it is (local only).
pub(super) type Given = (Value, PathBuf);
use crate::store::{self, builds as rows};

impl Service {
    /// The extracts each file input of `version` was tested with: the
    /// files its test report says fed it, else the files bound as the
    /// build's test binds them. Real (stored) extracts, local only.
    fn approved_inputs(&self, version: &ActiveVersion) -> Result<BTreeMap<String, Vec<Given>>> {
        let db = self.db();
        let mut files: Vec<(String, String, Value, PathBuf)> = Vec::new();
        for id in store::file_ids_of(&db, &version.id)? {
            if let Some(f) = store::get_file(&db, &id)? {
                files.push((id, f.filename, f.extract, PathBuf::from(f.path)));
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
            .map(|(id, name, extract, _)| InputFile {
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
            let extracts: Vec<Given> = names
                .iter()
                .filter_map(|n| files.iter().find(|(_, f, _, _)| f == n))
                .map(|(_, _, e, p)| (e.clone(), p.clone()))
                .collect();
            if !extracts.is_empty() {
                out.insert(field.name.clone(), extracts);
            }
        }
        Ok(out)
    }

    /// How the `given` files (extracts by input name) compare with the
    /// files the active version was approved with. With declared reads
    /// (issue 41), a difference in what the script reads refuses and any
    /// other is a note; a version without them refuses every difference.
    /// A list input's file is compared with the approved file it is
    /// closest to.
    pub(super) fn input_check(
        &self,
        workflow_id: &str,
        given: &BTreeMap<String, Vec<Given>>,
    ) -> Result<Check> {
        let version = self.active_version(workflow_id)?;
        let approved = self.approved_inputs(&version)?;
        let reads = version.execution.reads.as_ref();
        let mut out = Check::default();
        for (name, extracts) in given {
            let Some(before) = approved.get(name) else {
                continue;
            };
            let of_input: Vec<_> = reads
                .into_iter()
                .flatten()
                .filter(|r| r.input == *name)
                .collect();
            let mapped = of_input.iter().any(|r| r.columns.iter().any(|c| c.mapped));
            let categories = |path: &Path| {
                if mapped {
                    maskflow_privacy::categories::candidates(path, self.max_file_bytes(), 1)
                        .unwrap_or_default()
                } else {
                    Vec::new()
                }
            };
            for (new, new_path) in extracts {
                let new_categories = categories(new_path);
                let closest = before
                    .iter()
                    .map(|(a, a_path)| match reads {
                        None => Check {
                            refusals: crate::shape::differences(name, a, new),
                            notes: Vec::new(),
                        },
                        Some(_) => {
                            let mut c = crate::reads::check(name, &of_input, a, new);
                            let more = crate::reads::check_assumptions(
                                name,
                                &of_input,
                                &version.execution.drift,
                                (a, &categories(a_path)),
                                (new, &new_categories),
                            );
                            c.refusals.extend(more.refusals);
                            c.notes.extend(more.notes);
                            c
                        }
                    })
                    .min_by_key(|c| (c.refusals.len(), c.notes.len()))
                    .unwrap_or_default();
                out.refusals.extend(closest.refusals);
                out.notes.extend(closest.notes);
            }
        }
        Ok(out)
    }

    /// Refuses the `given` files when what the script reads differs from
    /// the approved ones ([`CoreError::InputsDiffer`], one sentence per
    /// difference); otherwise the notes on what it does not read.
    pub(super) fn check_input_shapes(
        &self,
        workflow_id: &str,
        given: &BTreeMap<String, Vec<Given>>,
    ) -> Result<Vec<String>> {
        let check = self.input_check(workflow_id, given)?;
        if check.refusals.is_empty() {
            Ok(check.notes)
        } else {
            Err(CoreError::InputsDiffer(check.refusals))
        }
    }

    /// For `maskflow run`: extracts each local file given to a file input
    /// and lists the differences that refuse the run (empty: it may run).
    /// Blocking: it reads the files.
    pub fn check_local_inputs(
        &self,
        workflow_id: &str,
        inputs: &BTreeMap<String, Vec<String>>,
    ) -> Result<Vec<String>> {
        Ok(self.local_input_check(workflow_id, inputs)?.refusals)
    }

    /// For `maskflow run`: extracts each local file given to a file input
    /// and compares it with the approved one ([`Check`]: what refuses the
    /// run, and notes on what the script does not read). Blocking: it
    /// reads the files. Inputs that are not files, or that the workflow
    /// does not have, are left to the run to refuse.
    pub fn local_input_check(
        &self,
        workflow_id: &str,
        inputs: &BTreeMap<String, Vec<String>>,
    ) -> Result<Check> {
        let fields = self.active_version(workflow_id)?.fields;
        let inputs = crate::conversation::current::by_role(&fields, inputs.clone());
        let mut given = BTreeMap::new();
        for (name, paths) in &inputs {
            let is_file = fields.iter().any(|f| {
                f.name == *name && matches!(f.field_type, FieldType::File | FieldType::Files)
            });
            if !is_file {
                continue;
            }
            let mut extracts = Vec::new();
            for p in paths {
                extracts.push((local_extract(name, Path::new(p))?, PathBuf::from(p)));
            }
            given.insert(name.clone(), extracts);
        }
        self.input_check(workflow_id, &given)
    }

    /// Issue 41, point 3: how a run's `outputs` (copied into `workdir`'s
    /// `outputs/`) compare with those of the test run `version_id` was
    /// approved on; `None` when that run left no table to compare with.
    /// Blocking: it reads both runs' output files. Local only.
    pub(super) fn compare_outputs(
        &self,
        version_id: &str,
        workdir: &Path,
        outputs: &[maskflow_runner::OutputFile],
    ) -> Option<crate::output_compare::Comparison> {
        let report: crate::builder::TestReport = rows::get_build(&self.db(), version_id)
            .ok()
            .flatten()
            .and_then(|b| b.test_report)
            .and_then(|r| serde_json::from_value(r).ok())?;
        let tested = report.run.as_ref()?;
        let dir = crate::builder::test_dir(self.home(), version_id)
            .join(format!("iteration-{}", report.iteration))
            .join("outputs");
        let approved = crate::builder::output_shape::read(&dir, &tested.outputs);
        if approved.is_empty() {
            return None;
        }
        let new = crate::builder::output_shape::read(&workdir.join("outputs"), outputs);
        // The workflow said its output's size varies a lot (`row_count`
        // drift): a halved or doubled table is told, not held.
        let rows_vary = store::get_version(&self.db(), version_id)
            .ok()
            .flatten()
            .and_then(|v| v.execution)
            .and_then(|e| serde_json::from_value::<crate::conversation::spec::Execution>(e).ok())
            .is_some_and(|e| e.drift.iter().any(|d| d == "row_count"));
        Some(crate::output_compare::compare(&approved, &new, rows_vary))
    }

    /// The stored extracts of uploaded files given to a run, by input.
    pub(super) fn uploaded_extracts(
        &self,
        files: &BTreeMap<String, Vec<String>>,
    ) -> Result<BTreeMap<String, Vec<Given>>> {
        let db = self.db();
        let mut out = BTreeMap::new();
        for (name, ids) in files {
            let mut extracts = Vec::new();
            for id in ids {
                if let Some(row) = store::get_file(&db, id)? {
                    extracts.push((row.extract, PathBuf::from(row.path)));
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
