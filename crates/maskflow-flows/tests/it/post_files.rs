//! Contracts that read the run's working folder: a postcondition naming a
//! file the step should have written fails (and is retried with its error
//! as feedback) while the file is missing and passes once it is there; a
//! path that would leave the folder is refused when the flow is read.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::{START_MS, engine_at, write_flows};
use maskflow_flows::error::Error;
use maskflow_flows::*;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};

/// An agent that "writes" `report.json` into `folder` from its `write_on`th
/// call on (0: never), counting its calls.
#[derive(Debug)]
struct Writer {
    folder: PathBuf,
    write_on: usize,
    calls: AtomicUsize,
}

impl Provider for Writer {
    fn name(&self) -> &str {
        "writer"
    }
    fn complete<'a>(
        &'a self,
        _request: &'a LlmRequest,
        _d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        Box::pin(async move {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            if self.write_on != 0 && n >= self.write_on {
                std::fs::write(self.folder.join("report.json"), r#"{"total": 3}"#)
                    .expect("write report");
            }
            Ok(LlmReply {
                text: r#"{"done": true}"#.into(),
            })
        })
    }
}

fn flow(check: &str) -> Value {
    json!({"steps": [{"type": "llm", "label": "Write report", "agentType": "a", "identifier": "x",
        "messages": [{"role": "user", "content": ["Write report.json"]}],
        "postconditions": [{"check": check, "error": "report.json is missing or not JSON"}]}]})
}

/// Runs flow `check` in a fresh working folder with an agent that writes
/// the report from its `write_on`th call; the view and the agent's calls.
async fn run_with(check: &str, write_on: usize) -> (RunView, usize) {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    write_flows(home.path(), &[("p", flow(check))]);
    let writer = Arc::new(Writer {
        folder: work.path().to_owned(),
        write_on,
        calls: AtomicUsize::new(0),
    });
    let engine = engine_at(home.path(), writer.clone(), START_MS);
    let view = crate::support::run(&engine, "p", Some(work.path())).await;
    (view, writer.calls.load(Ordering::SeqCst))
}

const CHECK: &str =
    "exists('report.json') && isJson('./report.json') && contains('report.json', 'total')";

#[tokio::test]
async fn a_missing_file_fails_the_postcondition_twice_then_asks() {
    let (view, calls) = run_with(CHECK, 0).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    assert_eq!(calls, 2, "one retry with the error as feedback");
    let pending = view.pending.as_ref().expect("pending");
    assert_eq!(pending["reason"], "postcondition", "{pending}");
    assert!(
        pending["error"]
            .as_str()
            .is_some_and(|e| e.contains("report.json is missing or not JSON")),
        "{pending}"
    );
}

#[tokio::test]
async fn a_file_written_on_the_retry_passes() {
    let (view, calls) = run_with(CHECK, 2).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(calls, 2);
}

#[tokio::test]
async fn a_file_written_at_once_passes_and_a_regex_reads_it() {
    // A backslash escapes in the condition's strings, so a regex's `\d` is `\\d`.
    let check = r#"nonEmpty('report.json') && matches('report.json', '"total":\\s*\\d+')"#;
    let (view, calls) = run_with(check, 1).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert_eq!(calls, 1);
    // The same regex against text the file lacks fails.
    let (view, _) = run_with("matches('report.json', 'grand_total')", 1).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
}

#[test]
fn a_path_that_leaves_the_run_folder_is_refused_when_the_flow_is_read() {
    for (check, why) in [
        ("exists('../secret.txt')", "'..'"),
        ("nonEmpty('/etc/passwd')", "not absolute"),
        ("contains('out/../../x', 'a')", "'..'"),
    ] {
        let home = tempfile::tempdir().expect("home");
        write_flows(home.path(), &[("p", flow(check))]);
        let engine = engine_at(
            home.path(),
            Arc::new(Writer {
                folder: home.path().to_owned(),
                write_on: 0,
                calls: AtomicUsize::new(0),
            }),
            START_MS,
        );
        let e = engine
            .prepare("p", StartFlow::default())
            .map(|_| ())
            .expect_err(check);
        let text = e.to_string();
        assert!(matches!(e, Error::InvalidRequest(_)), "{e:?}");
        assert!(
            text.contains("postconditions[0].check") && text.contains(why),
            "{check}: {text}"
        );
        let listed = engine.list().expect("list");
        let summary = format!("{listed:?}");
        assert!(summary.contains("disabled: true"), "{summary}");
    }
}

#[test]
fn a_decision_may_not_read_files() {
    let parsed = maskflow_flows::definition::parse(
        &json!({"steps": [{"type": "decision", "branches": [
            {"condition": "exists('x.txt')", "next": null}]}]})
        .to_string(),
    );
    let e = parsed.expect_err("refused");
    assert!(e.to_string().contains("pre- and postconditions"), "{e}");
}

/// Seed 002's transaction per step: what a step wrote into the run's folder
/// is rolled back when its postcondition fails (before the retry, and
/// before the person is asked), and kept when it passes.
#[tokio::test]
async fn a_failed_postcondition_rolls_the_steps_writes_back() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    std::fs::write(work.path().join("notes.txt"), "the person's notes").expect("notes");
    write_flows(
        home.path(),
        &[("p", flow("contains('report.json', 'grand_total')"))],
    );
    #[derive(Debug)]
    struct Scribbler(PathBuf, AtomicUsize);
    impl Provider for Scribbler {
        fn name(&self) -> &str {
            "scribbler"
        }
        fn complete<'a>(
            &'a self,
            _request: &'a LlmRequest,
            _d: DeltaSink<'a>,
        ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
            Box::pin(async move {
                let n = self.1.fetch_add(1, Ordering::SeqCst);
                // Each attempt finds the folder as it was before the step.
                let notes = std::fs::read_to_string(self.0.join("notes.txt")).unwrap_or_default();
                assert_eq!(notes, "the person's notes", "attempt {n}");
                assert!(!self.0.join("report.json").exists(), "attempt {n}");
                std::fs::write(self.0.join("report.json"), r#"{"total": 3}"#).expect("report");
                std::fs::write(self.0.join("notes.txt"), "overwritten").expect("notes");
                std::fs::create_dir_all(self.0.join("out/tmp")).expect("dirs");
                std::fs::write(self.0.join("out/tmp/scratch"), "x").expect("scratch");
                Ok(LlmReply {
                    text: r#"{"done": true}"#.into(),
                })
            })
        }
    }
    let writer = Arc::new(Scribbler(work.path().to_owned(), AtomicUsize::new(0)));
    let engine = engine_at(home.path(), writer.clone(), START_MS);
    let view = crate::support::run(&engine, "p", Some(work.path())).await;
    assert_eq!(view.status, RunStatus::NeedsAttention, "{view:?}");
    assert_eq!(writer.1.load(Ordering::SeqCst), 2, "a try and its retry");
    assert!(!work.path().join("report.json").exists());
    assert!(!work.path().join("out").exists());
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes.txt")).expect("notes"),
        "the person's notes"
    );
    let notes: Vec<&str> = view
        .turns
        .iter()
        .filter(|t| t.content.starts_with("The step's writes were rolled back"))
        .map(|t| t.content.as_str())
        .collect();
    assert_eq!(notes.len(), 2, "{:?}", view.turns);
    assert!(
        notes[0].contains("removed out/")
            && notes[0].contains("removed report.json")
            && notes[0].contains("restored notes.txt"),
        "{notes:?}"
    );
    // Nothing of the copy is left in the data folder.
    assert!(
        std::fs::read_dir(home.path().join("staging"))
            .map(|d| d.count() == 0)
            .unwrap_or(true)
    );
}

#[tokio::test]
async fn a_passing_postcondition_keeps_the_steps_writes() {
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("work");
    write_flows(home.path(), &[("p", flow(CHECK))]);
    let writer = Arc::new(Writer {
        folder: work.path().to_owned(),
        write_on: 1,
        calls: AtomicUsize::new(0),
    });
    let engine = engine_at(home.path(), writer, START_MS);
    let view = crate::support::run(&engine, "p", Some(work.path())).await;
    assert_eq!(view.status, RunStatus::Completed, "{view:?}");
    assert!(work.path().join("report.json").is_file());
}
