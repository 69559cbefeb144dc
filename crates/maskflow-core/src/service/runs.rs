//! Running an approved workflow: binds files and values to the active
//! version's `fields`, runs its script in the sandboxed runner in
//! `<home>/runs/<run_id>/`, and records a `workflow_runs` row (status,
//! inputs, outputs, timings, logs). Everything here stays local.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::ToSchema;

use super::Service;
use crate::conversation::spec::{Execution, Field, FieldType};
use crate::error::{CoreError, Result};
use crate::events::Event;
use crate::store::{self, builds::RunRow};
use maskflow_runner::{InputValue, LimitState, OutputFile, Python, RunRequest};

/// `POST /api/workflows/{id}/runs`'s body: each field's value; for `file`
/// fields a file id from `POST /api/extracts`, for `files` fields a list.
#[derive(Deserialize, Clone, Debug, Default, ToSchema, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct RunInputs {
    /// Field name → value, file id, or list of file ids.
    #[schema(value_type = Object)]
    #[ts(type = "Record<string, unknown>")]
    pub inputs: Map<String, Value>,
    /// Run even when a file differs in shape from the one the workflow was
    /// approved with (the user chose "run anyway").
    #[serde(default)]
    #[ts(optional)]
    pub force: Option<bool>,
}

/// A run, as shown.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, ToSchema, ts_rs::TS)]
pub struct RunView {
    /// `run_…`
    pub id: String,
    /// The workflow.
    pub workflow_id: String,
    /// The version that ran.
    pub version_id: String,
    /// `running`, `succeeded`, `needs_look` (it succeeded, but its output
    /// jumped from the approved run's), `failed`, `timed_out`, `memory_limit`, …
    pub status: String,
    /// What happened, in one sentence.
    pub message: String,
    /// The inputs: values, or the names of the files given.
    #[schema(value_type = Object)]
    #[ts(type = "unknown")]
    pub inputs: Value,
    /// The files the run wrote.
    pub outputs: Vec<OutputFile>,
    /// What the script left in `outputs/` that was not copied out (a link,
    /// a device, an unsafe name…), and why.
    pub refused_outputs: Vec<maskflow_runner::RefusedOutput>,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Wall-clock duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// Standard output (bounded).
    pub stdout: String,
    /// Standard error (bounded).
    pub stderr: String,
    /// Every limit and how it was enforced.
    pub limits: Vec<LimitState>,
    /// What started it: by hand, or a schedule (cron, or a watched folder's file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub trigger: Option<super::RunTrigger>,
    /// How its files differ from the approved ones in what the script does
    /// not read (issue 41): reported, the run went on. One sentence each.
    #[serde(default)]
    pub input_notes: Vec<String>,
    /// Its outputs against the approved run's, value free (issue 41): rows,
    /// columns, empty cells, numeric columns' magnitude and sign.
    #[serde(default)]
    pub output_comparison: Vec<String>,
    /// The jumps among them (rows halved, a column ten times larger…),
    /// for which the run is held as `needs_look`.
    #[serde(default)]
    pub output_jumps: Vec<String>,
}

impl From<RunRow> for RunView {
    fn from(r: RunRow) -> Self {
        let result = r.result.unwrap_or(Value::Null);
        let text = |k: &str| result[k].as_str().unwrap_or_default().to_owned();
        Self {
            message: text("message"),
            stdout: text("stdout"),
            stderr: text("stderr"),
            limits: serde_json::from_value(result["limits"].clone()).unwrap_or_default(),
            refused_outputs: serde_json::from_value(result["refused_outputs"].clone())
                .unwrap_or_default(),
            input_notes: serde_json::from_value(result["input_notes"].clone()).unwrap_or_default(),
            output_comparison: serde_json::from_value(result["output_comparison"].clone())
                .unwrap_or_default(),
            output_jumps: serde_json::from_value(result["output_jumps"].clone())
                .unwrap_or_default(),
            outputs: serde_json::from_value(r.outputs).unwrap_or_default(),
            id: r.id,
            workflow_id: r.workflow_id,
            version_id: r.version_id,
            status: r.status,
            inputs: r.inputs,
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration_ms: r.duration_ms,
            trigger: None,
        }
    }
}

fn bad(message: String) -> CoreError {
    CoreError::InvalidRequest(message)
}

/// A workflow's active (approved) version, as every run of it starts: from
/// the UI, `maskflow run`, or a flow's `script` step.
#[derive(Debug, Clone)]
pub(super) struct ActiveVersion {
    /// `wv_…`
    pub(super) id: String,
    /// Its script.
    pub(super) script: String,
    /// Its inputs.
    pub(super) fields: Vec<Field>,
    /// Its execution spec (the requirements of its environment).
    pub(super) execution: Execution,
}

impl Service {
    /// The active version of `workflow_id` (a conflict when none is approved).
    pub(super) fn active_version(&self, workflow_id: &str) -> Result<ActiveVersion> {
        let db = self.db();
        let all = self.versions_or_404(&db, workflow_id)?;
        let v = all.into_iter().find(|v| v.is_active).ok_or_else(|| {
            CoreError::Conflict(format!(
                "workflow {workflow_id} has no approved version to run yet"
            ))
        })?;
        let corrupt = |what: &str| CoreError::Corrupt(format!("{what} of version {}", v.id));
        let fields: Vec<Field> = serde_json::from_value(v.fields.clone().unwrap_or(json!([])))
            .map_err(|_| corrupt("fields"))?;
        let execution: Execution =
            serde_json::from_value(v.execution.clone().ok_or_else(|| corrupt("execution"))?)
                .map_err(|_| corrupt("execution"))?;
        let script = v.script.clone().ok_or_else(|| corrupt("script"))?;
        Ok(ActiveVersion {
            id: v.id,
            script,
            fields,
            execution,
        })
    }

    /// The Python `version` runs on: its locked environment, made from the
    /// stored lock (or locked now, once) and verified sealed; the base
    /// Python when it needs no package. Blocking: it may run `uv`. Every
    /// run of a workflow goes through here, a flow's `script` step too.
    pub(super) fn version_python(
        &self,
        workflow_id: &str,
        version: &ActiveVersion,
    ) -> Result<Python> {
        let (python, _env) =
            self.python_for_run(workflow_id, &version.id, &version.execution.requirements)?;
        Ok(python)
    }

    /// Finds a workflow by id, or else by its exact name.
    pub fn find_workflow(&self, id_or_name: &str) -> Result<String> {
        let db = self.db();
        if store::get_workflow(&db, id_or_name)?.is_some() {
            return Ok(id_or_name.to_owned());
        }
        let matches: Vec<String> = store::list_workflows(&db)?
            .into_iter()
            .filter(|w| w.name.as_deref() == Some(id_or_name))
            .map(|w| w.id)
            .collect();
        match matches.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(CoreError::not_found("workflow", id_or_name)),
            _ => Err(bad(format!(
                "{} workflows are named {id_or_name:?}; give the id ({})",
                matches.len(),
                matches.join(", ")
            ))),
        }
    }

    /// Runs the workflow's active version with file ids (from uploads) and values.
    pub async fn run_workflow(&self, workflow_id: &str, request: RunInputs) -> Result<RunView> {
        let fields = self.active_version(workflow_id)?.fields;
        let mut bound = BTreeMap::new();
        let mut shown = Map::new();
        let mut file_ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in request.inputs {
            let field = fields
                .iter()
                .find(|f| f.name == name)
                .ok_or_else(|| bad(format!("the workflow has no input named {name:?}")))?;
            let mut file = |id: &Value| -> Result<(PathBuf, String)> {
                let id = id
                    .as_str()
                    .ok_or_else(|| bad(format!("{name}: give a file id from an upload")))?;
                let row = store::get_file(&self.db(), id)?
                    .ok_or_else(|| bad(format!("{name}: file {id} was not uploaded")))?;
                file_ids
                    .entry(name.clone())
                    .or_default()
                    .push(id.to_owned());
                Ok((PathBuf::from(row.path), row.filename))
            };
            match field.field_type {
                FieldType::File => {
                    let (p, n) = file(&value)?;
                    bound.insert(name.clone(), InputValue::File(p));
                    shown.insert(name, json!(n));
                }
                FieldType::Files => {
                    let items = match &value {
                        Value::Array(items) => items.clone(),
                        one => vec![one.clone()],
                    };
                    let mut paths = Vec::new();
                    let mut names = Vec::new();
                    for item in &items {
                        let (p, n) = file(item)?;
                        paths.push(p);
                        names.push(n);
                    }
                    bound.insert(name.clone(), InputValue::Files(paths));
                    shown.insert(name, json!(names));
                }
                _ => {
                    bound.insert(name.clone(), InputValue::Value(value.clone()));
                    shown.insert(name, value);
                }
            }
        }
        let given = self.uploaded_extracts(&file_ids)?;
        let notes = if request.force == Some(true) {
            let check = self.input_check(workflow_id, &given)?;
            check.refusals.into_iter().chain(check.notes).collect()
        } else {
            self.check_input_shapes(workflow_id, &given)?
        };
        self.run_bound(workflow_id, bound, Value::Object(shown), notes)
            .await
    }

    /// Runs the workflow's active version with local paths for file fields
    /// and text for the others (the `maskflow run` command line).
    pub async fn run_workflow_local(
        &self,
        workflow_id: &str,
        inputs: BTreeMap<String, Vec<String>>,
    ) -> Result<RunView> {
        self.run_workflow_local_noted(workflow_id, inputs, Vec::new())
            .await
    }

    /// [`Service::run_workflow_local`], with the notes the caller's check of
    /// the files made ([`Service::local_input_check`]) kept with the run.
    pub async fn run_workflow_local_noted(
        &self,
        workflow_id: &str,
        inputs: BTreeMap<String, Vec<String>>,
        notes: Vec<String>,
    ) -> Result<RunView> {
        let fields = self.active_version(workflow_id)?.fields;
        let inputs = crate::conversation::current::by_role(&fields, inputs);
        let mut bound = BTreeMap::new();
        let mut shown = Map::new();
        for (name, values) in inputs {
            let field = fields.iter().find(|f| f.name == name).ok_or_else(|| {
                let known: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                bad(format!(
                    "the workflow has no input named {name:?} (its inputs: {})",
                    known.join(", ")
                ))
            })?;
            let path = |p: &String| -> Result<PathBuf> {
                let path = PathBuf::from(p);
                if !path.is_file() {
                    return Err(bad(format!("{name}: {p} is not a file")));
                }
                Ok(path)
            };
            let file_name = |p: &PathBuf| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            match field.field_type {
                FieldType::File => {
                    let [one] = values.as_slice() else {
                        return Err(bad(format!("{name} takes exactly one file")));
                    };
                    let p = path(one)?;
                    shown.insert(name.clone(), json!(file_name(&p)));
                    bound.insert(name, InputValue::File(p));
                }
                FieldType::Files => {
                    let ps = values.iter().map(path).collect::<Result<Vec<_>>>()?;
                    shown.insert(
                        name.clone(),
                        json!(ps.iter().map(file_name).collect::<Vec<_>>()),
                    );
                    bound.insert(name, InputValue::Files(ps));
                }
                kind => {
                    let text = values.join(",");
                    let v = match kind {
                        FieldType::Number => text
                            .parse::<f64>()
                            .map(|n| json!(n))
                            .map_err(|_| bad(format!("{name} must be a number")))?,
                        FieldType::Boolean => json!(matches!(
                            text.to_ascii_lowercase().as_str(),
                            "true" | "yes" | "1"
                        )),
                        _ => json!(text),
                    };
                    shown.insert(name.clone(), v.clone());
                    bound.insert(name, InputValue::Value(v));
                }
            }
        }
        self.run_bound(workflow_id, bound, Value::Object(shown), notes)
            .await
    }

    async fn run_bound(
        &self,
        workflow_id: &str,
        inputs: BTreeMap<String, InputValue>,
        shown: Value,
        notes: Vec<String>,
    ) -> Result<RunView> {
        let version = self.active_version(workflow_id)?;
        let missing: Vec<&str> = version
            .fields
            .iter()
            .filter(|f| f.required && !inputs.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(bad(format!(
                "missing required input(s): {}",
                missing.join(", ")
            )));
        }
        self.ensure_space(
            super::storage::RUN_FLOOR_BYTES,
            &format!("a run of workflow {workflow_id}"),
        )?;
        let run_id = self.id("run");
        let workdir = self.home().join("runs").join(&run_id);
        let mut row = RunRow {
            id: run_id.clone(),
            workflow_id: workflow_id.to_owned(),
            version_id: version.id.clone(),
            status: "running".into(),
            inputs: shown,
            outputs: json!([]),
            result: None,
            workdir: workdir.display().to_string(),
            started_at: self.now(),
            finished_at: None,
            duration_ms: None,
        };
        let _lease = self.lease(super::leases::run(&run_id))?;
        store::builds::put_run(&self.db(), &row)?;
        self.publish_run(&row);
        let request = RunRequest {
            script: version.script.clone(),
            inputs,
            requirements: version.execution.requirements.clone(),
            workdir,
            limits: self.run_limits(),
            shared_folders: Vec::new(),
        };
        let runner = self.runner();
        let service = self.clone();
        let wf = workflow_id.to_owned();
        let outcome = tokio::task::spawn_blocking(move || {
            let python = service.version_python(&wf, &version)?;
            runner
                .run_with(&python, &request, &AtomicBool::new(false))
                .map_err(|e| CoreError::Conflict(e.to_string()))
        })
        .await
        .map_err(|e| CoreError::Corrupt(format!("the run stopped: {e}")));
        row.finished_at = Some(self.now());
        match outcome {
            Ok(Ok(result)) => {
                row.status = serde_json::to_value(result.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_else(|| "failed".into());
                row.outputs = serde_json::to_value(&result.outputs).unwrap_or(json!([]));
                row.duration_ms = i64::try_from(result.duration_ms).ok();
                row.result = Some(json!({
                    "message": result.message,
                    "exit_code": result.exit_code,
                    "stdout": result.stdout,
                    "stderr": result.stderr,
                    "limits": result.limits,
                    "network_isolated": result.network_isolated,
                }));
            }
            Ok(Err(e)) => {
                row.status = "error".into();
                row.result = Some(json!({"message": e.to_string()}));
            }
            Err(e) => {
                row.status = "error".into();
                row.result = Some(json!({"message": e.to_string()}));
            }
        }
        if !notes.is_empty()
            && let Some(Value::Object(result)) = row.result.as_mut()
        {
            result.insert("input_notes".into(), json!(notes));
        }
        if row.status == "succeeded" {
            self.compare_with_approved(&mut row).await;
        }
        // A run that did not succeed keeps its report and the (capped)
        // copies of its outputs, not its scratch folder: a script that
        // wrote gigabytes before it was stopped would otherwise leave them
        // in the data folder for good (issue 39).
        if !matches!(row.status.as_str(), "succeeded" | "needs_look") {
            let scratch = maskflow_runner::run_folder(Path::new(&row.workdir));
            if let Err(e) = std::fs::remove_dir_all(&scratch)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                eprintln!("maskflow: removing {}: {e}", scratch.display());
            }
        }
        store::builds::put_run(&self.db(), &row)?;
        self.publish_run(&row);
        Ok(row.into())
    }

    /// A succeeded run's outputs compared with the approved run's (issue
    /// 41): a jump past what a new period explains makes it `needs_look`.
    async fn compare_with_approved(&self, row: &mut RunRow) {
        let outputs: Vec<OutputFile> =
            serde_json::from_value(row.outputs.clone()).unwrap_or_default();
        let (service, version_id, workdir) = (
            self.clone(),
            row.version_id.clone(),
            PathBuf::from(&row.workdir),
        );
        let comparison = tokio::task::spawn_blocking(move || {
            service.compare_outputs(&version_id, &workdir, &outputs)
        })
        .await
        .ok()
        .flatten();
        if let (Some(c), Some(Value::Object(result))) = (comparison, row.result.as_mut()) {
            if !c.jumps.is_empty() {
                row.status = "needs_look".into();
                result.insert(
                    "message".into(),
                    json!(format!(
                        "the script succeeded, but its output differs from the approved run's: {}. \
                         Look at it before using it",
                        c.jumps.join("; ")
                    )),
                );
            }
            result.insert("output_comparison".into(), json!(c.lines));
            result.insert("output_jumps".into(), json!(c.jumps));
        }
    }

    fn publish_run(&self, row: &RunRow) {
        self.inner.events.publish(Event::RunChanged {
            workflow_id: row.workflow_id.clone(),
            run_id: row.id.clone(),
            status: row.status.clone(),
        });
    }

    /// A workflow's runs, newest first.
    pub fn list_runs(&self, workflow_id: &str) -> Result<Vec<RunView>> {
        let db = self.db();
        self.versions_or_404(&db, workflow_id)?;
        let runs = store::builds::runs_of(&db, workflow_id)?;
        drop(db);
        Ok(runs
            .into_iter()
            .map(|r| {
                let trigger = Some(self.run_trigger(&r.id));
                RunView {
                    trigger,
                    ..r.into()
                }
            })
            .collect())
    }

    /// The local path of one output of a run.
    pub fn run_output(&self, run_id: &str, name: &str) -> Result<PathBuf> {
        let row = store::builds::get_run(&self.db(), run_id)?
            .ok_or_else(|| CoreError::not_found("run", run_id))?;
        let outputs: Vec<OutputFile> = serde_json::from_value(row.outputs).unwrap_or_default();
        if !outputs.iter().any(|o| o.name == name)
            || name.split('/').any(|p| p.is_empty() || p == "..")
        {
            return Err(CoreError::not_found("output", name));
        }
        // The runner's copies, made once every process of the run had
        // ended; never the script's own folder, and never through a link.
        let path = PathBuf::from(row.workdir).join("outputs").join(name);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return Err(CoreError::not_found("output", name));
        }
        Ok(path)
    }
}
