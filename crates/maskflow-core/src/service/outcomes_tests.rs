//! Issue 28, points 4 and 9: after every failure the workflow is where the
//! user can act (send again, edit), and the chat tells every outcome of a
//! message or a build in a stored notice — one test per failure path.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio::sync::broadcast;

use super::outcomes::NOTICE;
use super::tests::{create, good_build, service_with};
use super::*;
use crate::ErrorCode;
use maskflow_llm::{
    BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, ReplayProvider,
};

/// Fails the next calls as scripted, then answers from a replay; a
/// builder's call waits forever when `hang_builder` (for a cancel).
#[derive(Debug)]
struct Scripted {
    failures: Mutex<VecDeque<ProviderError>>,
    replay: Arc<ReplayProvider>,
    hang_builder: bool,
    entered: tokio::sync::Notify,
}

impl Scripted {
    fn new(failures: Vec<ProviderError>, replies: serde_json::Value) -> Arc<Self> {
        Arc::new(Self {
            failures: Mutex::new(failures.into()),
            replay: Arc::new(ReplayProvider::from_value(&replies).expect("replay")),
            hang_builder: false,
            entered: Default::default(),
        })
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        let failure = self.failures.lock().expect("lock").pop_front();
        Box::pin(async move {
            if self.hang_builder && request.role == Role::Builder {
                self.entered.notify_one();
                std::future::pending::<()>().await;
            }
            match failure {
                Some(e) => Err(e),
                None => self.replay.complete(request, d).await,
            }
        })
    }
}

fn down() -> ProviderError {
    ProviderError::Failed {
        provider: "OpenAI".into(),
        message: "no server is listening at http://127.0.0.1:9".into(),
    }
}

fn late() -> ProviderError {
    ProviderError::TimedOut {
        provider: "OpenAI".into(),
        message: "http://127.0.0.1:9 did not answer within 180 s".into(),
    }
}

fn blocked() -> ProviderError {
    ProviderError::PrivacyBlocked(vec![maskflow_privacy::GuardMatch {
        masked: "Aaaa Aaaaa".into(),
        source: "sales.csv, column \"customer\"".into(),
        in_user_text: true,
        at: Some([0, 10]),
        part: None,
        identifying: true,
    }])
}

fn dismissed() -> ProviderError {
    ProviderError::Cancelled {
        provider: "manual".into(),
        reason: "dismissed by the user".into(),
    }
}

fn notices(s: &Service, workflow_id: &str) -> Vec<MessageView> {
    s.get_workflow(workflow_id)
        .expect("get")
        .messages
        .into_iter()
        .filter(|m| m.role == NOTICE)
        .collect()
}

async fn settled(rx: &mut broadcast::Receiver<Event>, version_id: &str) -> Status {
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

/// A validator failure of each kind: the code says whose side it was, the
/// version stays `validating` (where the user sends the message again),
/// a back end's failure is told in a stored notice, and sending again
/// works — the notice never reaching the LLM.
#[tokio::test]
async fn a_failed_validator_call_leaves_a_version_the_user_can_send_to_again() {
    let unusable = ProviderError::InvalidReply {
        role: "validator".into(),
        reason: "expected a JSON object".into(),
    };
    let cases: Vec<(ProviderError, ErrorCode, Option<&str>)> = vec![
        (unusable, ErrorCode::ProviderError, Some("unusable reply")),
        (
            down(),
            ErrorCode::ProviderError,
            Some("no server is listening"),
        ),
        (
            late(),
            ErrorCode::ProviderTimeout,
            Some("did not answer within"),
        ),
        (blocked(), ErrorCode::PrivacyBlocked, None),
        (
            dismissed(),
            ErrorCode::Cancelled,
            Some("You stopped the reply"),
        ),
    ];
    for (failure, code, told) in cases {
        let home = tempfile::tempdir().expect("tmp");
        let provider = Scripted::new(
            vec![failure],
            json!({"validator": [{"feasible": true}],
                   "clarifier": [{"needs_clarification": true, "question": "Which column?"}]}),
        );
        let s = service_with(home.path(), provider.clone());
        let c = create(&s);
        let err = s
            .send_message(&c.workflow_id, "sum revenue per day")
            .await
            .expect_err("fails");
        assert_eq!(err.code(), code, "{err}");
        let w = s.get_workflow(&c.workflow_id).expect("get");
        assert_eq!(w.current_version.status, Status::Validating, "{code:?}");
        let said = notices(&s, &c.workflow_id);
        match told {
            Some(words) => {
                assert_eq!(said.len(), 1, "{code:?}: {said:?}");
                assert!(said[0].content.contains(words), "{}", said[0].content);
                assert!(
                    said[0].content.to_lowercase().contains("send it again"),
                    "{}",
                    said[0].content
                );
                assert_eq!(said[0].version_id.as_deref(), Some(c.version_id.as_str()));
            }
            None => assert!(said.is_empty(), "{code:?}: {said:?}"),
        }
        // The notice survives a reload: it is stored, not only published.
        drop(s);
        let s = service_with(home.path(), provider.clone());
        assert_eq!(notices(&s, &c.workflow_id).len(), said.len());
        let r = s
            .send_message(&c.workflow_id, "sum revenue per day")
            .await
            .expect("sent again");
        assert_eq!(r.status, Status::Clarifying);
        for request in provider.replay.requests() {
            for m in &request.messages {
                assert!(!m.content.contains("was not answered"), "{}", m.content);
                assert!(!m.content.contains("You stopped"), "{}", m.content);
            }
        }
    }
}

/// Two unusable validator replies through the real repair path (#28: the
/// workflow stayed `validating` "for good" with a 502 and nothing said).
#[tokio::test]
async fn two_unusable_validator_replies_are_told_and_the_message_can_be_resent() {
    let home = tempfile::tempdir().expect("tmp");
    let provider = Scripted::new(
        vec![],
        json!({"validator": ["I think so!", "Yes it is feasible.", {"feasible": true}],
               "clarifier": [{"needs_clarification": false}],
               "builder": [good_build()]}),
    );
    let s = service_with(home.path(), provider);
    let mut rx = s.subscribe();
    let c = create(&s);
    let err = s
        .send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect_err("unusable twice");
    assert_eq!(err.code(), ErrorCode::ProviderError);
    let said = notices(&s, &c.workflow_id);
    assert!(
        said.len() == 1
            && said[0]
                .content
                .contains("validator gave an unusable reply twice"),
        "{said:?}"
    );
    let r = s
        .send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect("resent");
    assert_eq!(r.status, Status::Building);
    assert_eq!(
        settled(&mut rx, &c.version_id).await,
        Status::PendingUserApproval
    );
}

/// A clarifier failure after a feasible verdict: the user's message is
/// kept, the version is `validated` (the user sends again), the chat says
/// what failed.
#[tokio::test]
async fn a_failed_clarifier_call_leaves_the_version_validated_and_says_so() {
    let home = tempfile::tempdir().expect("tmp");
    let provider = Scripted::new(
        vec![],
        json!({"validator": [{"feasible": true}],
               "clarifier": ["what?", "still not json",
                             {"needs_clarification": true, "question": "Which column?"}]}),
    );
    let s = service_with(home.path(), provider);
    let c = create(&s);
    let err = s
        .send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect_err("clarifier unusable");
    assert_eq!(err.code(), ErrorCode::ProviderError);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(w.current_version.status, Status::Validated);
    let roles: Vec<&str> = w.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", NOTICE]);
    assert!(
        w.messages[1].content.contains("clarifier"),
        "{}",
        w.messages[1].content
    );
    let r = s
        .send_message(&c.workflow_id, "per day, all columns")
        .await
        .expect("again");
    assert_eq!(
        (r.status, r.message.as_str()),
        (Status::Clarifying, "Which column?")
    );
}

/// Issue 28 point 4: with an approved version, a failed rebuild was silent
/// (the chat ended at "building…" and the view showed the approved one).
/// Now the failure is a stored notice with its reason and the way on.
#[tokio::test]
async fn a_failed_build_beside_an_approved_version_is_told_in_the_chat() {
    let home = tempfile::tempdir().expect("tmp");
    let provider = Scripted::new(
        vec![],
        json!({"validator": [{"feasible": true}],
               "clarifier": [{"needs_clarification": false}, {"needs_clarification": false}],
               "builder": [good_build(), "not json", "not json either"]}),
    );
    let s = service_with(home.path(), provider);
    let mut rx = s.subscribe();
    let c = create(&s);
    s.send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect("m1");
    assert_eq!(
        settled(&mut rx, &c.version_id).await,
        Status::PendingUserApproval
    );
    s.approve(&c.workflow_id, &c.version_id).expect("approve");
    let r = s
        .send_message(&c.workflow_id, "also drop null revenue")
        .await
        .expect("m2");
    assert_eq!(r.status, Status::Building);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    let v2 = w.current_version.id.clone();
    assert_ne!(v2, c.version_id);
    assert_eq!(settled(&mut rx, &v2).await, Status::Failed);

    let w = s.get_workflow(&c.workflow_id).expect("get");
    // The view shows the approved version again…
    assert_eq!(w.current_version.id, c.version_id);
    assert_eq!(w.current_version.status, Status::Approved);
    // …and the chat says the rebuild failed, why, and what to do.
    let last = w.messages.last().expect("a last message");
    assert_eq!(last.role, NOTICE);
    assert_eq!(last.version_id.as_deref(), Some(v2.as_str()));
    assert!(
        last.content.contains("version 2 failed")
            && last.content.contains("unusable reply twice")
            && last.content.contains("Edit"),
        "{}",
        last.content
    );
    // Stored: a reopened service tells it too.
    drop(s);
    let provider = Scripted::new(vec![], json!({}));
    let s = service_with(home.path(), provider);
    let again = s.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(
        again.messages.last().map(|m| &m.content),
        Some(&last.content)
    );
}

/// A build the user stops is told as stopped, not as a failure, and the
/// version is `failed` (Edit builds again), never left `building`.
#[tokio::test]
async fn a_cancelled_build_is_told_as_stopped_and_leaves_no_transient_state() {
    let home = tempfile::tempdir().expect("tmp");
    let provider = Arc::new(Scripted {
        failures: Mutex::new(VecDeque::new()),
        replay: Arc::new(
            ReplayProvider::from_value(&json!({"validator": [{"feasible": true}],
                "clarifier": [{"needs_clarification": false}]}))
            .expect("replay"),
        ),
        hang_builder: true,
        entered: Default::default(),
    });
    let s = service_with(home.path(), provider.clone());
    let mut rx = s.subscribe();
    let c = create(&s);
    let entered = provider.entered.notified();
    s.send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect("building");
    entered.await;
    assert!(s.cancel_message(&c.workflow_id).expect("cancel").cancelled);
    assert_eq!(settled(&mut rx, &c.version_id).await, Status::Failed);
    let said = notices(&s, &c.workflow_id);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0]
            .content
            .contains("You stopped the build of version 1")
            && !said[0].content.contains("failed"),
        "{}",
        said[0].content
    );
    // The way on works: a message drafts version 2.
    let err = s
        .send_message(&c.workflow_id, "try again")
        .await
        .expect_err("replay is exhausted");
    assert_eq!(err.code(), ErrorCode::ProviderError);
    assert_eq!(
        s.get_workflow(&c.workflow_id)
            .expect("get")
            .current_version
            .version,
        2
    );
}

/// The notices' words for each way a build ends or waits.
#[test]
fn each_build_outcome_has_its_words() {
    let stopped = super::outcomes::build_ended(3, super::cancel::CANCELLED_BY_USER);
    assert!(
        stopped.starts_with("You stopped the build of version 3"),
        "{stopped}"
    );
    let failed =
        super::outcomes::build_ended(3, "the script failed its test on your files 2 times.");
    assert!(
        failed.contains("version 3 failed: the script failed its test on your files 2 times. To")
            && failed.contains("Edit"),
        "{failed}"
    );
    let mut state = crate::builder::BuildState::default();
    assert_eq!(super::outcomes::build_waiting(1, &state), None);
    state.pending_gate = true;
    let gate = super::outcomes::build_waiting(1, &state).expect("gate");
    assert!(
        gate.contains("waiting for you") && gate.contains("approve"),
        "{gate}"
    );
    state.pending_packages = Some(vec![
        serde_json::from_value(json!({"name": "tabulate", "index": "https://pypi.org/simple"}))
            .expect("package"),
    ]);
    let packages = super::outcomes::build_waiting(1, &state).expect("packages");
    assert!(packages.contains("package tabulate"), "{packages}");
}
