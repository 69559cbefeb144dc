//! Issue 27: a flow's `script` step naming an approved workflow runs that
//! version's script on that version's Python environment (made with the
//! real `uv`), in the same sandbox, exactly as `maskflow run` does — and a
//! step naming a workflow that cannot run fails with the workflow named.
//!
//! uv is found as the service finds it (`MASKFLOW_UV`, `PATH`, …); its cache
//! is `UV_CACHE_DIR` when set (`scripts/test.sh` sets
//! `~/.cache/maskflow-test/uv`). Without uv the environment test skips
//! loudly, unless `MASKFLOW_REQUIRE_LLM_SERVERS=1`, where it fails.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::events::Event;
use crate::service::Service;
use crate::service::tests::{create, service_with};
use crate::versions::Status;
use maskflow_flows::{RunStatus, RunView as FlowRunView, StartFlow};
use maskflow_llm::ReplayProvider;

/// Uses a package outside the standard library, says which Python ran it,
/// and writes a workbook into its current folder (the flow's working folder).
const SCRIPT: &str = "import json, sys\n\
import xlsxwriter\n\
book = xlsxwriter.Workbook('report.xlsx')\n\
book.add_worksheet().write(0, 0, 'total')\n\
book.close()\n\
print(json.dumps({'xlsxwriter': xlsxwriter.__version__, 'prefix': sys.prefix, 'args': sys.argv[1:]}))\n";

fn build(requirements: &[&str]) -> Value {
    json!({
        "name": "Workbook Writer",
        "description": "Writes a workbook",
        "script": SCRIPT,
        "fields": [],
        "execution": {"runtime": "python3", "entrypoint": "script.py",
                      "requirements": requirements, "outputs": []}
    })
}

/// Whether the service finds `uv`; without it the test skips loudly, or
/// fails where uv is required.
fn have_uv(s: &Service) -> bool {
    let view = s.list_environments().expect("environments");
    if view.uv.is_some() {
        return true;
    }
    let why = view.uv_error.unwrap_or_default();
    if std::env::var("MASKFLOW_REQUIRE_LLM_SERVERS").is_ok_and(|v| v == "1") {
        panic!("uv is needed (python3 -m pip install uv, or set MASKFLOW_UV): {why}");
    }
    eprintln!("SKIPPED: uv was not found (python3 -m pip install uv, or set MASKFLOW_UV): {why}");
    false
}

/// Builds (the review runs the script on its environment) and approves a workflow.
async fn approved(s: &Service) -> String {
    let mut rx = s.subscribe();
    let created = create(s);
    s.send_message(&created.workflow_id, "write the totals to a workbook")
        .await
        .expect("message");
    assert_eq!(
        built(&mut rx, &created.version_id).await,
        Status::PendingUserApproval,
        "the build (which runs the script on its environment) passed: {:?}",
        s.get_workflow(&created.workflow_id)
            .map(|w| w.current_version.failure_reason)
    );
    s.approve(&created.workflow_id, &created.version_id)
        .expect("approve");
    created.workflow_id
}

async fn built(rx: &mut broadcast::Receiver<Event>, version_id: &str) -> Status {
    loop {
        match rx.recv().await.expect("event") {
            Event::StatusChanged {
                version_id: v,
                status,
                ..
            } if v == version_id
                && matches!(status, Status::PendingUserApproval | Status::Failed) =>
            {
                return status;
            }
            _ => {}
        }
    }
}

fn replay(builds: Value) -> Arc<ReplayProvider> {
    Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": builds
        }))
        .expect("replay"),
    )
}

async fn run_flow(s: &Service, home: &Path, step: Value, work: &Path) -> FlowRunView {
    std::fs::create_dir_all(home.join("flows")).expect("mkdir flows");
    std::fs::write(
        home.join("flows/report.json"),
        json!({"input": {"month": "2026-11"}, "steps": [step]}).to_string(),
    )
    .expect("flow");
    let request = StartFlow {
        working_folder: Some(work.display().to_string()),
        ..StartFlow::default()
    };
    let (started, handle) = s.flow_prepare("report", request).expect("prepare");
    handle.run().await;
    s.flow_run(&started.conversation_id).expect("view")
}

#[tokio::test]
async fn a_flow_script_step_runs_an_approved_workflow_on_its_versions_environment() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    let s = service_with(home.path(), replay(json!([build(&["xlsxwriter"])])));
    if !have_uv(&s) {
        return;
    }
    let workflow_id = approved(&s).await;

    let step = json!({"type": "script", "id": "report", "label": "write the workbook",
                      "workflow": workflow_id, "args": ["{{input.month}}", "x y"]});
    let view = run_flow(&s, home.path(), step.clone(), work.path()).await;
    // Before issue 27 the step ran on the base Python, where this was
    // `ModuleNotFoundError: No module named 'xlsxwriter'`.
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    let out: Value = serde_json::from_str(&view.turns[0].content).expect("the script's JSON");
    assert!(
        out["xlsxwriter"].as_str().is_some_and(|v| !v.is_empty()),
        "{out}"
    );
    assert_eq!(
        out["args"],
        json!(["2026-11", "x y"]),
        "the step's arguments"
    );
    // It ran in the working folder, with the user's file written there.
    let book = std::fs::read(work.path().join("report.xlsx")).expect("the workbook");
    assert!(book.starts_with(b"PK"), "an xlsx is a zip");

    // `maskflow run` of the same workflow runs on the same environment: one
    // environment exists, in use, and both runs' Python is its interpreter.
    let run = s
        .run_workflow_local(&workflow_id, Default::default())
        .await
        .expect("run");
    assert_eq!(run.status, "succeeded", "{run:?}");
    let by_run: Value = serde_json::from_str(run.stdout.trim()).expect("the run's JSON");
    assert_eq!(by_run["prefix"], out["prefix"], "one environment for both");
    let envs = s.list_environments().expect("environments");
    assert_eq!(envs.environments.len(), 1, "{envs:?}");
    assert!(envs.environments[0].in_use);
    let prefix = out["prefix"].as_str().unwrap_or_default();
    assert!(
        prefix.starts_with(&envs.folder),
        "the step's Python is the version's environment ({prefix}), under {}",
        envs.folder
    );
}

#[tokio::test]
async fn a_step_naming_a_workflow_that_cannot_run_fails_naming_it() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    let s = service_with(home.path(), replay(json!([])));

    // Unknown: nothing runs, and the step says which workflow.
    let step = json!({"type": "script", "workflow": "wf_nope"});
    let view = run_flow(&s, home.path(), step, work.path()).await;
    let text = format!("{:?} {:?}", view.error, view.pending);
    assert_ne!(view.status, RunStatus::Completed, "{view:?}");
    assert!(text.contains("cannot run workflow wf_nope"), "{text}");

    // Known, but with no approved version yet (a draft is not run).
    let draft = create(&s);
    let step = json!({"type": "script", "workflow": draft.workflow_id});
    let view = run_flow(&s, home.path(), step, work.path()).await;
    let text = format!("{:?} {:?}", view.error, view.pending);
    assert_ne!(view.status, RunStatus::Completed, "{view:?}");
    assert!(text.contains("no approved version"), "{text}");
    assert!(text.contains(&draft.workflow_id), "{text}");
    assert!(
        std::fs::read_dir(work.path())
            .expect("work")
            .next()
            .is_none(),
        "nothing ran in the working folder"
    );
}
