//! A message's turn cut off by a restart, in one process: the first service
//! stops (its calls dropped, as at Ctrl-C or a kill), a second opens the
//! same data folder, lists the stored prompt and takes the answer.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::service::tests::extract;
use crate::service::{CreateWorkflow, Service, ServiceConfig};
use crate::store::manual_prompts as rows;
use crate::versions::Status;
use maskflow_llm::manual::ManualPrompt;

pub(super) fn open(home: &Path) -> Service {
    // The real clock: two services on one folder must not make the same ids.
    Service::open(ServiceConfig::from_settings(home)).expect("open service")
}

pub(super) fn create(s: &Service) -> (String, String) {
    let req: CreateWorkflow =
        serde_json::from_value(json!({"file_extracts": [extract()]})).expect("request");
    let created = s.create_workflow(req).expect("create");
    (created.workflow_id, created.version_id)
}

/// The first listed prompt of `role` not in `seen` (bounded wait).
pub(super) async fn prompt(s: &Service, role: &str, seen: &[&str]) -> ManualPrompt {
    for _ in 0..500 {
        let found = s
            .manual_prompts()
            .into_iter()
            .find(|p| p.role == role && !seen.contains(&p.id.as_str()));
        if let Some(p) = found {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no {role} prompt came: {:?}", s.manual_prompts());
}

async fn status_becomes(s: &Service, wf: &str, status: Status) {
    for _ in 0..500 {
        if s.get_workflow(wf).expect("view").current_version.status == status {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{wf} never became {status:?}: {:?}", s.get_workflow(wf));
}

/// Sends `content` in the background (it waits on pasted answers).
pub(super) fn send(s: &Service, wf: &str, content: &str) -> tokio::task::JoinHandle<()> {
    let (s, wf, content) = (s.clone(), wf.to_owned(), content.to_owned());
    tokio::spawn(async move {
        let _ = s.send_message(&wf, &content).await;
    })
}

/// Stops a service as Maskflow stopping does: its waiting calls are dropped.
async fn stop(s: Service, message: tokio::task::JoinHandle<()>) {
    s.stopping();
    message.abort();
    let _ = message.await;
    drop(s);
}

fn messages(s: &Service, wf: &str) -> Vec<(String, String)> {
    s.get_workflow(wf)
        .expect("view")
        .messages
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_prompt_left_by_a_restart_is_answered_and_the_message_goes_on() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, vid) = create(&s);
    let message = send(&s, &wf, "Sum the amounts per client");
    let asked = prompt(&s, "validator", &[]).await;
    stop(s, message).await;

    let s = open(home.path());
    let listed = prompt(&s, "validator", &[]).await;
    assert_eq!(listed.id, asked.id);
    assert_eq!(listed.messages, asked.messages, "the same prompt to copy");
    let note = listed.interrupted.clone().expect("interrupted");
    assert!(note.resumes, "{note:?}");
    assert!(note.reason.contains("goes on"), "{note:?}");
    assert_eq!(
        s.get_workflow(&wf).expect("view").current_version.status,
        Status::Validating
    );

    s.answer_manual(&asked.id, r#"{"feasible": true}"#)
        .expect("answer");
    // The turn went on: the validator took the answer, the clarifier asks.
    let clarifier = prompt(&s, "clarifier", &[]).await;
    assert_eq!(clarifier.interrupted, None, "asked by this process");
    assert!(
        !s.manual_prompts().iter().any(|p| p.id == asked.id),
        "the answered prompt is gone"
    );
    status_becomes(&s, &wf, Status::Validated).await;
    assert_eq!(
        messages(&s, &wf),
        vec![("user".into(), "Sum the amounts per client".into())],
        "the message is stored once"
    );
    let question = r#"{"needs_clarification": true, "question": "Which currency?"}"#;
    s.answer_manual(&clarifier.id, question).expect("answer");
    status_becomes(&s, &wf, Status::Clarifying).await;
    assert_eq!(
        messages(&s, &wf).last(),
        Some(&("assistant".into(), "Which currency?".into()))
    );
    assert!(s.manual_prompts().is_empty());
    let _ = vid;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clarifier_prompt_left_by_a_restart_goes_on_to_the_build() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, vid) = create(&s);
    let first = send(&s, &wf, "Sum the amounts per client");
    let v = prompt(&s, "validator", &[]).await;
    s.answer_manual(&v.id, r#"{"feasible": true}"#)
        .expect("answer");
    let c = prompt(&s, "clarifier", &[]).await;
    let question = r#"{"needs_clarification": true, "question": "Which currency?"}"#;
    s.answer_manual(&c.id, question).expect("answer");
    let _ = first.await;
    // The user answers the question; the clarifier's prompt waits; stop.
    let second = send(&s, &wf, "EUR");
    let asked = prompt(&s, "clarifier", &[&c.id]).await;
    stop(s, second).await;

    let s = open(home.path());
    let listed = prompt(&s, "clarifier", &[]).await;
    assert_eq!(listed.id, asked.id);
    assert!(listed.interrupted.as_ref().is_some_and(|n| n.resumes));
    s.answer_manual(&asked.id, r#"{"needs_clarification": false}"#)
        .expect("answer");
    // The build starts and its builder asks, naming the build.
    let builder = prompt(&s, "builder", &[]).await;
    assert_eq!(
        builder.waiter,
        Some(crate::service::builds::build_waiter(&wf, &vid)),
        "{builder:?}"
    );
    status_becomes(&s, &wf, Status::Building).await;
    let said = messages(&s, &wf);
    assert_eq!(
        said.iter().filter(|(_, m)| m == "EUR").count(),
        1,
        "the answer to the question is stored once: {said:?}"
    );
    assert_eq!(
        said.last().map(|(_, m)| m.as_str()),
        Some(crate::service::BUILDING_MESSAGE)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_answer_never_goes_to_another_message() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, _) = create(&s);
    let message = send(&s, &wf, "Sum the amounts per client");
    let old = prompt(&s, "validator", &[]).await;
    stop(s, message).await;

    let s = open(home.path());
    // An answer kept for the old message whose turn did not take it.
    assert!(
        rows::set_answer(
            &s.db(),
            &old.id,
            r#"{"feasible": false, "reason": "no"}"#,
            "now"
        )
        .expect("answer")
    );
    // Another message: its validator asks anew instead of taking it.
    let other = send(&s, &wf, "Count the rows per date");
    let fresh = prompt(&s, "validator", &[&old.id]).await;
    assert_eq!(fresh.interrupted, None);
    assert!(
        fresh
            .messages
            .iter()
            .any(|m| m.content.contains("Count the rows")),
        "{fresh:?}"
    );
    let stale = rows::get(&s.db(), &old.id).expect("get").expect("kept");
    assert!(stale.answer.is_some(), "not taken");
    s.answer_manual(&fresh.id, r#"{"feasible": true}"#)
        .expect("answer");
    let clarifier = prompt(&s, "clarifier", &[]).await;
    status_becomes(&s, &wf, Status::Validated).await;
    s.dismiss_manual(&clarifier.id).expect("dismiss");
    let _ = other.await;

    // The old prompt is listed as ended and cannot be answered.
    let listed = s
        .manual_prompts()
        .into_iter()
        .find(|p| p.id == old.id)
        .expect("listed");
    let note = listed.interrupted.expect("note");
    assert!(!note.resumes, "{note:?}");
    assert!(note.reason.contains("did not take it"), "{note:?}");
    assert!(s.answer_manual(&old.id, "{}").is_err());
    s.dismiss_manual(&old.id).expect("dismiss");
    // The dismissed prompt's message is told as stopped (#28).
    assert_eq!(
        messages(&s, &wf),
        vec![
            ("user".into(), "Count the rows per date".into()),
            (
                "notice".into(),
                crate::service::outcomes::STOPPED_REPLY.into()
            )
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_prompt_of_a_conversation_that_went_on_can_only_be_dismissed() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, _) = create(&s);
    let message = send(&s, &wf, "Sum the amounts per client");
    let old = prompt(&s, "validator", &[]).await;
    stop(s, message).await;

    let s = open(home.path());
    // The user sends another message instead of answering: another
    // question, answered in this process; the old prompt stays behind.
    // (The same message would replace it: see the test below.)
    let again = send(&s, &wf, "Sum the amounts per client in EUR");
    let fresh = prompt(&s, "validator", &[&old.id]).await;
    // While that message is handled, the old prompt's answer is refused
    // and not kept (two turns never run at once).
    let busy = s
        .answer_manual(&old.id, r#"{"feasible": true}"#)
        .expect_err("busy");
    assert!(
        matches!(busy, crate::error::CoreError::Conflict(_)),
        "{busy}"
    );
    let row = rows::get(&s.db(), &old.id).expect("get").expect("kept");
    assert_eq!(row.answer, None);
    s.answer_manual(&fresh.id, r#"{"feasible": true}"#)
        .expect("answer");
    let clarifier = prompt(&s, "clarifier", &[]).await;
    s.dismiss_manual(&clarifier.id).expect("dismiss");
    let _ = again.await;
    let listed = s
        .manual_prompts()
        .into_iter()
        .find(|p| p.id == old.id)
        .expect("listed");
    let note = listed.interrupted.expect("note");
    assert!(!note.resumes, "{note:?}");
    assert!(note.reason.contains("the version is validated"), "{note:?}");
    let refused = s
        .answer_manual(&old.id, r#"{"feasible": true}"#)
        .expect_err("refused");
    assert!(refused.to_string().contains("dismiss"), "{refused}");
    s.dismiss_manual(&old.id).expect("dismiss");
    // The dismissed prompt's message is told as stopped (#28).
    assert_eq!(
        messages(&s, &wf),
        vec![
            ("user".into(), "Sum the amounts per client in EUR".into()),
            (
                "notice".into(),
                crate::service::outcomes::STOPPED_REPLY.into()
            )
        ]
    );
}

/// Each service is its own owner of prompts (as each process is): the same
/// message sent again after a restart asks the same question, and its
/// prompt replaces the one left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_message_sent_again_after_a_restart_replaces_the_prompt_left_behind() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, _) = create(&s);
    let message = send(&s, &wf, "Sum the amounts per client");
    let old = prompt(&s, "validator", &[]).await;
    stop(s, message).await;

    let s = open(home.path());
    let again = send(&s, &wf, "Sum the amounts per client");
    let fresh = prompt(&s, "validator", &[&old.id]).await;
    assert_eq!(fresh.interrupted, None, "asked by this service");
    assert_eq!(fresh.messages, old.messages, "the same question");
    assert!(
        rows::get(&s.db(), &old.id).expect("get").is_none(),
        "replaced"
    );
    assert!(!s.manual_prompts().iter().any(|p| p.id == old.id));
    let gone = s
        .answer_manual(&old.id, r#"{"feasible": true}"#)
        .expect_err("gone");
    assert_eq!(gone.code(), crate::ErrorCode::NotFound, "{gone}");
    s.answer_manual(&fresh.id, r#"{"feasible": true}"#)
        .expect("answer");
    let clarifier = prompt(&s, "clarifier", &[]).await;
    s.dismiss_manual(&clarifier.id).expect("dismiss");
    let _ = again.await;
    // The dismissed prompt's message is told as stopped (#28).
    assert_eq!(
        messages(&s, &wf),
        vec![
            ("user".into(), "Sum the amounts per client".into()),
            (
                "notice".into(),
                crate::service::outcomes::STOPPED_REPLY.into()
            )
        ]
    );
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The builder's reply was asked for, and the process ended (its runtime
/// dropped with every task, as at exit): the build, its prompt and ids.
fn build_waiting_on_the_builder(home: &Path) -> (String, String, ManualPrompt) {
    let first = runtime();
    let out = first.block_on(async {
        let s = open(home);
        let (wf, vid) = create(&s);
        let message = send(&s, &wf, "Sum the amounts per client");
        let v = prompt(&s, "validator", &[]).await;
        s.answer_manual(&v.id, r#"{"feasible": true}"#)
            .expect("answer");
        let c = prompt(&s, "clarifier", &[]).await;
        s.answer_manual(&c.id, r#"{"needs_clarification": false}"#)
            .expect("answer");
        let _ = message.await;
        let asked = prompt(&s, "builder", &[]).await;
        s.stopping();
        (wf, vid, asked)
    });
    drop(first);
    out
}

#[test]
fn a_builders_prompt_reworded_after_a_restart_still_takes_its_answer() {
    let home = tempfile::tempdir().expect("tmp");
    let (wf, _, asked) = build_waiting_on_the_builder(home.path());
    runtime().block_on(async {
        let s = open(home.path());
        // The house rules change meanwhile: the builder's prompt, made
        // again, now carries them; the stored one does not.
        s.set_house_rules(crate::service::HouseRulesInput {
            text: "# Always\nName the output columns in English (rule R-7).\n".into(),
        })
        .expect("rules");
        let listed = prompt(&s, "builder", &[]).await;
        assert_eq!(listed.id, asked.id);
        assert!(listed.interrupted.as_ref().is_some_and(|n| n.resumes));
        assert!(
            !serde_json::to_string(&listed.messages)
                .expect("json")
                .contains("R-7")
        );
        let reply = crate::service::tests::good_build().to_string();
        s.answer_manual(&asked.id, &reply).expect("answer");

        // The build took the answer (the same call, reworded) and went on;
        // nothing was asked again.
        let mut taken = None;
        for _ in 0..500 {
            let calls = s.ledger(None, 50, 0).expect("ledger");
            taken = calls
                .into_iter()
                .find(|e| e.role == "builder" && e.reply.as_deref() == Some(reply.as_str()));
            if taken.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let taken = taken.expect("the builder's call took the answer");
        assert!(s.manual_prompts().is_empty(), "{:?}", s.manual_prompts());
        assert!(
            taken.request_body.contains("R-7"),
            "asked with the new rules"
        );
        assert_eq!(taken.workflow_id.as_deref(), Some(wf.as_str()));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_message_that_cannot_go_on_says_why_and_frees_the_workflow() {
    let home = tempfile::tempdir().expect("tmp");
    let s = open(home.path());
    let (wf, vid) = create(&s);
    let message = send(&s, &wf, "Sum the amounts per client");
    let asked = prompt(&s, "validator", &[]).await;
    stop(s, message).await;

    let s = open(home.path());
    let mut events = s.subscribe();
    // An unusable answer is checked like any reply: the repair is asked.
    s.answer_manual(&asked.id, "I think so").expect("answer");
    let repair = prompt(&s, "validator", &[&asked.id]).await;
    assert_eq!(repair.interrupted, None);
    assert!(repair.messages.len() > asked.messages.len(), "{repair:?}");
    s.dismiss_manual(&repair.id).expect("dismiss");
    let reason = loop {
        match events.recv().await.expect("event") {
            crate::events::Event::StatusChanged {
                version_id,
                status,
                reason: Some(reason),
                ..
            } if version_id == vid => {
                assert_eq!(status, Status::Validating);
                break reason;
            }
            _ => {}
        }
    };
    assert!(reason.contains("send it again"), "{reason}");
    // The workflow is free: the message can be sent again.
    let again = send(&s, &wf, "Sum the amounts per client");
    let fresh = prompt(&s, "validator", &[&asked.id, &repair.id]).await;
    s.dismiss_manual(&fresh.id).expect("dismiss");
    let _ = again.await;
}
