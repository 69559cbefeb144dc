//! Runs flow `script` steps in the sandboxed runner (time, memory, CPU,
//! process and output limits; no network), keeping the flow's own contract
//! for such a script: its arguments in `sys.argv`, the run's working folder
//! as its current directory, a JSON object on stdout as its output.
//!
//! A step's source is a type ([`ScriptSource`]): a Python file, or an
//! approved workflow, which is resolved here exactly as `maskflow run`
//! resolves it ([`Service::active_version`], [`Service::version_python`]):
//! its active version's script, run on that version's locked, sealed
//! Python environment in the same sandbox. The flows crate never reads the
//! app's tables; it names the workflow and this runner does the rest.
//!
//! Before a script starts, every file of the working folder it may read is
//! indexed by the privacy guard ([`super::folder_guard`]), so a value it
//! reads cannot reach a later agent step unmasked even if it deletes the
//! file afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use serde_json::Value;

use super::{Inner, Service};
use crate::error::CoreError;
use maskflow_clock::IdGen;
use maskflow_flows::script::{
    ScriptError, ScriptOutput, ScriptRequest, ScriptRunner, ScriptSource,
};
use maskflow_llm::BoxFuture;
use maskflow_runner::{InputValue, Limits, Python, RunRequest, RunResult, RunStatus, Runner};

/// Starts the step's script the way `python3 FILE ARGS…` would, inside the
/// sandbox: the runner's contract hands it `inputs.json`, from which this
/// shim restores `sys.argv` and the working folder, then runs the source
/// (a workflow's, given as text, or the file's) under its own name so
/// tracebacks point at the user's lines.
const SHIM: &str = r#"import json, os, sys
fields = json.load(open(sys.argv[1]))["fields"]
source = fields.get("source")
if source is None:
    with open(fields["script"]) as f:
        source = f.read()
sys.argv = [fields["name"]] + [str(a) for a in fields["args"]]
if fields["working_folder"]:
    os.chdir(fields["working_folder"])
exec(compile(source, fields["name"], "exec"), {"__name__": "__main__", "__file__": fields["name"]})
"#;

/// The limits of the next run (read per run, so a settings change applies).
pub type LimitsSource = Box<dyn Fn() -> Limits + Send + Sync>;

/// Gives the runner of the moment (the Python setting may change between steps).
pub type RunnerSource = Arc<dyn Fn() -> Arc<Runner> + Send + Sync>;

/// Indexes a working folder in the privacy guard (blocking: it reads files).
pub type FolderIndexer = Arc<dyn Fn(&Path) + Send + Sync>;

/// Resolves a workflow id to what its approved version runs (blocking: it
/// may make the version's environment with `uv`).
pub type WorkflowResolver = Arc<dyn Fn(&str) -> Result<WorkflowScript, CoreError> + Send + Sync>;

/// An approved version, ready to run: its script, its requirements and the
/// Python of its environment.
#[derive(Debug, Clone)]
pub struct WorkflowScript {
    /// The version's script.
    pub script: String,
    /// Its requirements (the runner checks the Python has them).
    pub requirements: Vec<String>,
    /// The interpreter of its environment (the base Python when it needs none).
    pub python: Python,
}

/// The sandboxed runner behind the flow engine's `script` steps.
pub struct SandboxedScripts {
    runner: RunnerSource,
    workdirs: PathBuf,
    ids: Arc<dyn IdGen>,
    limits: LimitsSource,
    index_folder: Option<FolderIndexer>,
    workflows: Option<WorkflowResolver>,
}

impl std::fmt::Debug for SandboxedScripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxedScripts")
            .field("workdirs", &self.workdirs)
            .finish_non_exhaustive()
    }
}

impl SandboxedScripts {
    /// Scripts run in fresh folders under `workdirs`, with `runner()`
    /// under `limits()`.
    pub fn new(
        runner: RunnerSource,
        workdirs: PathBuf,
        ids: Arc<dyn IdGen>,
        limits: LimitsSource,
    ) -> Self {
        Self {
            runner,
            workdirs,
            ids,
            limits,
            index_folder: None,
            workflows: None,
        }
    }

    /// The service's runner: its Python setting and limits, its privacy
    /// guard over working folders, and its workflows resolved as
    /// `maskflow run` resolves them. Weak: the flow engine holding this is
    /// owned by the service it asks.
    pub(super) fn for_service(inner: Weak<Inner>, home: &Path, ids: Arc<dyn IdGen>) -> Self {
        let upgrade = move || inner.upgrade().map(|inner| Service { inner });
        let (for_runner, for_limits, for_folders) =
            (upgrade.clone(), upgrade.clone(), upgrade.clone());
        Self::new(
            Arc::new(move || {
                for_runner().map_or_else(|| Arc::new(Runner::new(None)), |s| s.runner())
            }),
            home.join("flow-scripts"),
            ids,
            Box::new(move || for_limits().map_or_else(Limits::default, |s| s.run_limits())),
        )
        .indexing_folders(Arc::new(move |folder: &Path| {
            if let Some(s) = for_folders() {
                s.flow_folder_guard(folder);
            }
        }))
        .resolving_workflows(Arc::new(move |workflow_id: &str| {
            let s = upgrade().ok_or_else(|| {
                CoreError::Conflict("the service running this flow has closed".into())
            })?;
            let version = s.active_version(workflow_id)?;
            let python = s.version_python(workflow_id, &version)?;
            Ok(WorkflowScript {
                script: version.script,
                requirements: version.execution.requirements,
                python,
            })
        }))
    }

    /// Each script's working folder is handed to `indexer` before it starts.
    pub fn indexing_folders(mut self, indexer: FolderIndexer) -> Self {
        self.index_folder = Some(indexer);
        self
    }

    /// A [`ScriptSource::Workflow`] step runs what `resolver` gives for it
    /// (without one, such a step is refused).
    pub fn resolving_workflows(mut self, resolver: WorkflowResolver) -> Self {
        self.workflows = Some(resolver);
        self
    }

    /// The sandboxed run of `request`: the shim with the step's arguments
    /// and its file (a workflow's script is added once resolved).
    fn prepare(&self, request: &ScriptRequest) -> Prepared {
        let mut inputs = BTreeMap::new();
        let (name, workflow) = match &request.source {
            ScriptSource::File(file) => {
                inputs.insert("script".to_owned(), InputValue::File(file.clone()));
                (file.display().to_string(), None)
            }
            ScriptSource::Workflow(id) => (format!("{id}.py"), Some(id.clone())),
        };
        let folder = request
            .working_folder
            .as_ref()
            .map(|w| w.display().to_string());
        inputs.extend([
            ("name".to_owned(), InputValue::Value(Value::String(name))),
            (
                "args".to_owned(),
                InputValue::Value(request.args.clone().into()),
            ),
            (
                "working_folder".to_owned(),
                InputValue::Value(folder.into()),
            ),
        ]);
        let workdir = std::path::absolute(self.workdirs.join(self.ids.next_id("script")))
            .unwrap_or_else(|_| self.workdirs.join(self.ids.next_id("script")));
        Prepared {
            run: RunRequest {
                script: SHIM.to_owned(),
                inputs,
                requirements: Vec::new(),
                workdir,
                limits: Limits {
                    timeout: request.timeout,
                    ..(self.limits)()
                },
                shared_folders: request.working_folder.iter().cloned().collect(),
            },
            workflow: workflow.map(|id| (id, self.workflows.clone())),
            index: self
                .index_folder
                .clone()
                .zip(request.working_folder.clone()),
        }
    }
}

/// A step ready to run in the sandbox, once its folder is indexed and its
/// workflow (if it names one) resolved.
struct Prepared {
    run: RunRequest,
    workflow: Option<(String, Option<WorkflowResolver>)>,
    index: Option<(FolderIndexer, PathBuf)>,
}

impl Prepared {
    /// Blocking: indexes the folder, resolves the workflow, runs the script.
    fn execute(mut self, runner: &Runner, cancel: &AtomicBool) -> Result<RunResult, ScriptError> {
        // What the script can read is indexed before it runs.
        if let Some((index, folder)) = &self.index {
            index(folder);
        }
        let python = match self.workflow {
            None => runner.python().map_err(|e| spawn_error(&e))?,
            Some((id, resolver)) => {
                let refuse = |message: String| ScriptError::Workflow {
                    workflow: id.clone(),
                    message,
                };
                let resolve = resolver.ok_or_else(|| {
                    refuse("this runner has no workflows to resolve it from".into())
                })?;
                let workflow = resolve(&id).map_err(|e| refuse(e.to_string()))?;
                self.run.inputs.insert(
                    "source".to_owned(),
                    InputValue::Value(Value::String(workflow.script)),
                );
                self.run.requirements = workflow.requirements;
                workflow.python
            }
        };
        runner
            .run_with(&python, &self.run, cancel)
            .map_err(|e| spawn_error(&e))
    }
}

fn spawn_error(e: &dyn std::fmt::Display) -> ScriptError {
    ScriptError::Spawn {
        program: "python3".into(),
        message: e.to_string(),
    }
}

/// Sets the cancel flag when the step's future is dropped (a stopped run).
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl ScriptRunner for SandboxedScripts {
    fn run<'a>(
        &'a self,
        request: &'a ScriptRequest,
    ) -> BoxFuture<'a, Result<ScriptOutput, ScriptError>> {
        Box::pin(async move {
            let prepared = self.prepare(request);
            let runner = (self.runner)();
            let cancel = Arc::new(AtomicBool::new(false));
            let _guard = CancelOnDrop(cancel.clone());
            let result = tokio::task::spawn_blocking(move || prepared.execute(&runner, &cancel))
                .await
                .map_err(|e| spawn_error(&e))??;
            match result.status {
                RunStatus::TimedOut => Err(ScriptError::TimedOut(request.timeout.as_secs())),
                RunStatus::Succeeded | RunStatus::Failed => Ok(ScriptOutput {
                    exit_code: result.exit_code,
                    stdout: result.stdout,
                    stderr: result.stderr,
                }),
                // A limit or a missing package: no exit code, and the runner's sentence says which.
                _ => Ok(ScriptOutput {
                    exit_code: None,
                    stdout: result.stdout,
                    stderr: format!("{}\n{}", result.stderr, result.message),
                }),
            }
        })
    }
}

#[cfg(test)]
#[path = "flow_scripts_tests.rs"]
mod workflow_tests;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use maskflow_clock::{SystemClock, UlidGen};

    fn scripts(home: &std::path::Path) -> SandboxedScripts {
        let runner = Arc::new(Runner::new(None));
        SandboxedScripts::new(
            Arc::new(move || runner.clone()),
            home.join("flow-scripts"),
            Arc::new(UlidGen::new(Arc::new(SystemClock))),
            Box::new(Limits::default),
        )
    }

    fn request(work: &std::path::Path, source: &str, args: &[&str]) -> ScriptRequest {
        let file = work.join("step.py");
        std::fs::write(&file, source).expect("write script");
        ScriptRequest {
            source: ScriptSource::File(file),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            working_folder: Some(work.to_path_buf()),
            timeout: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn a_step_keeps_its_arguments_and_working_folder_inside_the_sandbox() {
        let home = tempfile::tempdir().expect("tmp");
        let work = tempfile::tempdir().expect("tmp");
        std::fs::write(work.path().join("data.txt"), "a\nb\nc\n").expect("write");
        let source = "import json, os, sys\nrows = len(open('data.txt').read().split())\nprint(json.dumps({'argv': sys.argv[1:], 'rows': rows, 'file': __file__}))\n";
        let out = scripts(home.path())
            .run(&request(work.path(), source, &["7", "x y"]))
            .await
            .expect("ran");
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        let value: Value = serde_json::from_str(out.stdout.trim()).expect("json");
        assert_eq!(value["argv"], serde_json::json!(["7", "x y"]));
        assert_eq!(value["rows"], 3);
        assert!(
            value["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("step.py"))
        );
    }

    #[tokio::test]
    #[allow(unsafe_code)] // geteuid, to know whether the sandbox must be network-isolated
    async fn a_failing_step_reports_its_own_line_and_limits_hold() {
        let home = tempfile::tempdir().expect("tmp");
        let work = tempfile::tempdir().expect("tmp");
        let out = scripts(home.path())
            .run(&request(
                work.path(),
                "x = 1\nraise ValueError('boom')\n",
                &[],
            ))
            .await
            .expect("ran");
        assert_eq!(out.exit_code, Some(1));
        assert!(out.stderr.contains("step.py\", line 2"), "{}", out.stderr);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let source = format!(
            "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')\n"
        );
        let out = scripts(home.path())
            .run(&request(work.path(), &source, &[]))
            .await
            .expect("ran");
        // As root (CI) the runner always gets a network namespace; elsewhere it may not.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(
                !out.stdout.contains("connected"),
                "the sandbox has no network"
            );
            assert_ne!(out.exit_code, Some(0));
        }
    }

    #[tokio::test]
    async fn a_step_sees_its_working_folder_and_nothing_else() {
        let home = tempfile::tempdir().expect("tmp");
        let work = tempfile::tempdir().expect("tmp");
        let elsewhere = tempfile::tempdir().expect("tmp");
        let secret = elsewhere.path().join("id_rsa");
        std::fs::write(&secret, "canary").expect("write");
        let maskflow_db = home.path().join("maskflow.db");
        std::fs::write(&maskflow_db, "ledger").expect("write");
        let source = format!(
            "import json, os\nreached = {{}}\nfor name, path in [('secret', {secret:?}), ('db', {db:?})]:\n    try:\n        open(path).read(); reached[name] = True\n    except OSError:\n        reached[name] = False\ntry:\n    open({outside:?}, 'w').write('x'); reached['write_outside'] = True\nexcept OSError:\n    reached['write_outside'] = False\nopen('result.txt', 'w').write('done')\nprint(json.dumps(reached))\n",
            secret = secret.display().to_string(),
            db = maskflow_db.display().to_string(),
            outside = elsewhere.path().join("persist.py").display().to_string(),
        );
        let out = scripts(home.path())
            .run(&request(work.path(), &source, &[]))
            .await
            .expect("ran");
        assert_eq!(out.exit_code, Some(0), "{}", out.stderr);
        let reached: Value = serde_json::from_str(out.stdout.trim()).expect("json");
        assert_eq!(
            reached,
            serde_json::json!({"secret": false, "db": false, "write_outside": false})
        );
        // Its own working folder is the user's: it may write there.
        assert_eq!(
            std::fs::read_to_string(work.path().join("result.txt")).expect("written"),
            "done"
        );
        assert!(!elsewhere.path().join("persist.py").exists());
    }

    #[tokio::test]
    async fn a_workflow_step_without_a_resolver_is_refused_and_runs_nothing() {
        let home = tempfile::tempdir().expect("tmp");
        let work = tempfile::tempdir().expect("tmp");
        let request = ScriptRequest {
            source: ScriptSource::Workflow("wf_1".into()),
            args: Vec::new(),
            working_folder: Some(work.path().to_path_buf()),
            timeout: Duration::from_secs(60),
        };
        let err = scripts(home.path())
            .run(&request)
            .await
            .expect_err("no workflows to resolve it from");
        assert!(
            matches!(&err, ScriptError::Workflow { workflow, .. } if workflow == "wf_1"),
            "{err}"
        );
        assert!(!home.path().join("flow-scripts").exists(), "nothing ran");
    }
}
