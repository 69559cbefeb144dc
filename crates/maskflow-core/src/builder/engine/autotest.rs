//! The review phase's auto-test: resolve and install the script's packages,
//! run it on the real input files in the sandboxed runner, and judge the
//! report (the error output masked before the profile sees it).

use serde_json::Value;

use super::job::{BuildJob, BuildState, TestReport};
use super::session::render_report;
use super::{Engine, MAX_TEST_FAILURES, fail};
use crate::builder::inputs::bind_test_inputs;
use crate::builder::mask::{Grammar, Machine, repair_feedback, without_paths};
use crate::builder::output_shape;
use crate::builder::profile::TestOutcome;
use crate::builder::review::Verdict;
use crate::builder::table::Command;
use crate::conversation::spec::WorkflowSpec;
use crate::needs::PreflightItem;
use maskflow_pyenv::{Lock, PackageRequest, dist_name, outside_curated};
use maskflow_runner::RunRequest;

/// What the auto-test step came to.
enum Tested {
    /// It ran (or was skipped): the report.
    Report(Box<TestReport>),
    /// Packages outside the curated set wait for the user's approval, or
    /// the user must say which file feeds which input.
    NeedsApproval,
}

impl Engine {
    /// The auto-test: `None` when packages wait for the user's approval.
    pub(super) async fn test_step(
        &self,
        job: &BuildJob,
        state: &mut BuildState,
    ) -> Option<Command> {
        match self.run_test(job, state).await {
            Ok(Tested::Report(report)) => {
                state.report = Some(*report);
                Some(Command::Approve)
            }
            Ok(Tested::NeedsApproval) => None,
            Err(reason) => {
                // Not the script's fault: the build can be retried as it is.
                state.environment_failed = true;
                Some(fail(state, reason))
            }
        }
    }

    /// Resolves the script's requirements into a lock (kept in the state)
    /// and, when packages outside the curated set are not approved yet,
    /// lists them for approval. `Ok(None)`: nothing to install.
    async fn lock_requirements(
        &self,
        spec: &WorkflowSpec,
        state: &mut BuildState,
    ) -> Result<Option<Lock>, String> {
        let requirements: Vec<String> = spec
            .execution
            .requirements
            .iter()
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect();
        if requirements.is_empty() {
            state.lock = None;
            return Ok(None);
        }
        let lock = match state.lock.clone() {
            Some(lock) if lock.requirements == requirements => lock,
            _ => {
                let (runner, envs, sink) = (
                    self.runner.clone(),
                    self.environments.clone(),
                    self.env_progress.clone(),
                );
                let reqs = requirements.clone();
                tokio::task::spawn_blocking(move || {
                    let base = runner.python().map_err(|e| e.to_string())?;
                    envs.resolve(&base, &reqs, &*sink.0)
                        .map_err(|e| e.to_string())
                })
                .await
                .map_err(|e| format!("resolving the packages stopped: {e}"))??
            }
        };
        state.lock = Some(lock.clone());
        let approved: Vec<String> = state
            .approved_packages
            .iter()
            .map(|a| dist_name(a))
            .collect();
        let base = self.runner.python().ok();
        let mut pending: Vec<PackageRequest> = Vec::new();
        for name in outside_curated(&requirements)
            .into_iter()
            .filter(|r| !approved.contains(&dist_name(r)))
        {
            let version = lock.version_of(&name);
            let size = match (&version, &base) {
                (Some(v), Some(base)) => {
                    let index = self.environments.index();
                    maskflow_pyenv::sizes::download_size(&dist_name(&name), v, base, index).await
                }
                _ => None,
            };
            pending.push(PackageRequest {
                name,
                version,
                size,
                index: self.environments.shown_index(),
            });
        }
        if !pending.is_empty() {
            state.pending_packages = Some(pending);
        }
        Ok(Some(lock))
    }

    /// What this machine lacks for testing `spec`: a Python, or `uv` when
    /// the script needs packages (a standard-library script needs no uv).
    async fn missing_environment(&self, spec: &WorkflowSpec) -> Option<PreflightItem> {
        let needs_packages = spec
            .execution
            .requirements
            .iter()
            .any(|r| !r.trim().is_empty());
        let (runner, envs) = (self.runner.clone(), self.environments.clone());
        tokio::task::spawn_blocking(move || match runner.python() {
            Err(e) => Some(crate::needs::python_item(Err(e.to_string()))),
            Ok(base) if needs_packages => {
                Some(crate::needs::uv_item(&envs, Some(&base))).filter(|item| !item.ok)
            }
            Ok(_) => None,
        })
        .await
        .ok()
        .flatten()
    }

    async fn run_test(&self, job: &BuildJob, state: &mut BuildState) -> Result<Tested, String> {
        let spec = state.spec.clone().ok_or("there is no script to test")?;
        // By name, never by position; what names cannot settle is asked.
        let (inputs, names) = match bind_test_inputs(&spec, &job.input_files, &state.bindings) {
            Ok(bound) => bound,
            Err(questions) => {
                state.pending_binding = Some(questions);
                return Ok(Tested::NeedsApproval);
            }
        };
        if let Some(missing) = self.missing_environment(&spec).await {
            state.pending_environment = Some(missing);
            return Ok(Tested::NeedsApproval);
        }
        let lock = self.lock_requirements(&spec, state).await?;
        if state.pending_packages.is_some() {
            return Ok(Tested::NeedsApproval);
        }
        let report = if job.input_files.is_empty() {
            TestReport {
                status: "skipped".into(),
                message: "not tested: the version has no stored input files to test on".into(),
                iteration: state.iteration,
                inputs: names,
                run: None,
                environment: None,
            }
        } else {
            let request = RunRequest {
                script: spec.script.clone(),
                inputs,
                requirements: spec.execution.requirements.clone(),
                workdir: job.test_dir.join(format!("iteration-{}", state.iteration)),
                limits: self.limits.clone(),
                shared_folders: Vec::new(),
            };
            let (runner, envs, sink, cancel) = (
                self.runner.clone(),
                self.environments.clone(),
                self.env_progress.clone(),
                job.cancel.clone(),
            );
            let (run, environment) = tokio::task::spawn_blocking(move || {
                let _ = std::fs::remove_dir_all(&request.workdir);
                let base = runner.python().map_err(|e| e.to_string())?;
                let (python, env) = match &lock {
                    Some(lock) => {
                        let (python, mut info) = envs
                            .ensure(&base, lock, &*sink.0)
                            .map_err(|e| e.to_string())?;
                        info.size = maskflow_runner::folder_size(&envs.root().join(&info.id));
                        (python, Some(info))
                    }
                    None => (base, None),
                };
                runner
                    .run_with(&python, &request, &cancel)
                    .map(|run| (run, env))
                    .map_err(|e| format!("the script could not be tested: {e}"))
            })
            .await
            .map_err(|e| format!("the test run stopped: {e}"))??;
            TestReport {
                status: if run.succeeded() { "passed" } else { "failed" }.into(),
                message: format!("ran on the real input files: {}", run.message),
                iteration: state.iteration,
                inputs: names,
                run: Some(run),
                environment,
            }
        };
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        self.write(job, state, "test-report.json", &json)?;
        self.write(job, state, "review-report.md", &render_report(&report))?;
        Ok(Tested::Report(Box::new(report)))
    }

    pub(super) fn judge(&self, job: &BuildJob, state: &mut BuildState) -> Command {
        let Some(report) = state.report.clone() else {
            return fail(state, "no test report");
        };
        // The folder the script saw (its paths appear in its stderr).
        let workdir = maskflow_runner::run_folder(
            &job.test_dir.join(format!("iteration-{}", state.iteration)),
        );
        let (passed, summary, masked) = match &report.run {
            None => (true, report.message.clone(), String::new()),
            Some(run) => {
                let machine = self.test_machine(&workdir, &report);
                let script = state.spec.as_ref().map(|s| s.script.as_str()).unwrap_or("");
                let grammar = Grammar::new(script, &column_names(&job.extracts));
                let mut masked = repair_feedback(&run.stderr, &grammar, &machine);
                if masked.trim().is_empty() {
                    masked = repair_feedback(&run.stdout, &grammar, &machine);
                }
                let summary = without_paths(&run.message, &machine);
                (run.succeeded(), summary, masked)
            }
        };
        let (passed, summary, output_shape) = self.check_outputs(job, state, passed, summary);
        let (passed, summary) = check_reads(job, state, &report, passed, summary);
        let test = TestOutcome {
            passed,
            output_shape,
            summary: summary.clone(),
            masked_error: masked,
            output_names: report
                .run
                .as_ref()
                .map(|r| r.outputs.iter().map(|o| o.name.clone()).collect())
                .unwrap_or_default(),
            inputs: report.inputs.clone(),
        };
        let result = self
            .profile
            .process_review(&self.context(job, state), &test);
        if let Some(note) = result.metadata["note"].as_str()
            && let Err(e) = self.write(job, state, "review-verdict.md", note)
        {
            return fail(state, e);
        }
        if result.metadata["verdict"] == "pass" {
            state.feedback = None;
            state.out_of_memory = false;
            return Command::Pass;
        }
        state.test_failures += 1;
        state.out_of_memory = report
            .run
            .as_ref()
            .is_some_and(|r| r.status == maskflow_runner::RunStatus::MemoryLimit);
        state.feedback = result.metadata["feedback"]
            .as_str()
            .map(|f| with_review_advice(f, state));
        if state.test_failures >= MAX_TEST_FAILURES {
            let reason = format!(
                "the script failed its test on your files {} times; last: {summary}",
                state.test_failures
            );
            return fail(state, reason);
        }
        Command::Fail
    }
}

impl Engine {
    /// Point 8 of issue #28: profiles the tables the run wrote; a clean
    /// run whose output is an empty table or has a column with no value
    /// counts as failed, with the problems as its summary. Returns the
    /// verdict, the summary and the outputs' shapes.
    fn check_outputs(
        &self,
        job: &BuildJob,
        state: &BuildState,
        passed: bool,
        summary: String,
    ) -> (bool, String, Option<String>) {
        let Some(run) = state.report.as_ref().and_then(|r| r.run.as_ref()) else {
            return (passed, summary, None);
        };
        let dir = job
            .test_dir
            .join(format!("iteration-{}", state.iteration))
            .join("outputs");
        let tables = output_shape::read(&dir, &run.outputs);
        let spec = state.spec.as_ref();
        let declared: Vec<String> = spec
            .map(|s| s.execution.outputs.iter().map(|o| o.name.clone()).collect())
            .unwrap_or_default();
        let columns = column_names(&job.extracts);
        let names = output_shape::Names {
            declared: &declared,
            columns: &columns,
            script: spec.map(|s| s.script.as_str()).unwrap_or(""),
        };
        let Some((shape, problems)) = output_shape::review(&tables, &names) else {
            return (passed, summary, None);
        };
        if passed && !problems.is_empty() {
            let summary = format!(
                "it ran without an error, but what it wrote looks wrong: {}",
                problems.join("; ")
            );
            return (false, summary, Some(shape));
        }
        (passed, summary, Some(shape))
    }

    /// The paths of a test run in `workdir`: its folder and the folders of
    /// the interpreter it ran on (the base Python's, and the managed
    /// environment's when the report names one).
    fn test_machine(&self, workdir: &std::path::Path, report: &TestReport) -> Machine {
        let mut runtime = self.runner.python().map(|p| p.runtime).unwrap_or_default();
        if let Some(env) = &report.environment {
            runtime.push(self.environments.root().join(&env.id));
        }
        Machine::new(workdir, &runtime)
    }
}

/// Issue 41, point 1: a run that passed must have read what the builder
/// declared it reads (`execution.reads`), and no column it did not declare;
/// otherwise it counts as failed, with the problems as its summary (names
/// from the declaration and the approved extracts, never a value).
fn check_reads(
    job: &BuildJob,
    state: &BuildState,
    report: &TestReport,
    passed: bool,
    summary: String,
) -> (bool, String) {
    let Some(spec) = state.spec.as_ref() else {
        return (passed, summary);
    };
    if !passed || report.run.is_none() {
        return (passed, summary);
    }
    let problems = crate::reads::confirm(spec, &job.extracts, &report.inputs);
    if problems.is_empty() {
        return (passed, summary);
    }
    (
        false,
        format!(
            "it ran, but what it reads does not match its `execution.reads`: {}",
            problems.join("; ")
        ),
    )
}

/// The column names of the approved extracts (every file, sheet and
/// table): the extractors' header decisions, so a file without a header
/// gives none. They may appear in repair feedback as themselves.
pub fn column_names(extracts: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => {
                for (k, x) in o {
                    if k == "columns"
                        && let Value::Array(names) = x
                    {
                        out.extend(names.iter().filter_map(|n| n.as_str()).map(str::to_owned));
                    } else {
                        walk(x, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(extracts, &mut out);
    out.sort();
    out.dedup();
    out
}

/// The repair's feedback, with the notes of a reviewer who asked for changes
/// to this very script as advice (no AI approver): the test has now borne it
/// out, so the revision should hear it too.
fn with_review_advice(feedback: &str, state: &BuildState) -> String {
    let advice = state.reviews.iter().rev().find(|r| {
        r.subject == "script"
            && r.iteration == state.iteration.max(1)
            && r.verdict == Some(Verdict::RequestChanges)
            && !r.decided_gate
    });
    match advice {
        Some(r) => format!(
            "{feedback}\n\nA reviewer read the script before it ran and asked for changes: {}",
            r.notes.trim()
        ),
        None => feedback.to_owned(),
    }
}
