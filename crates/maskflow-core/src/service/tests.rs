//! Service tests with the replay provider and a deterministic clock.

use super::uploads::safe_filename;
use super::*;
use crate::testing::Gate;
use maskflow_clock::StepClock;
use maskflow_llm::{
    BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError, ReplayProvider,
};
use serde_json::json;
use std::sync::Arc;

pub(crate) fn extract() -> serde_json::Value {
    json!({"filename": "sales.csv", "columns": ["date", "product_id", "revenue"],
           "sample_rows": [["####-##-##", "AAAA-####", "$#,###.##"]], "row_count": 1542})
}

pub(crate) fn good_build() -> serde_json::Value {
    json!({
        "name": "Sales Data Merger",
        "description": "Merges CSV files by date column",
        "script": "import json, sys\nprint(json.load(open(sys.argv[1])))\n",
        "fields": [{"name": "sales", "label": "Sales file", "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [], "outputs": [{"name": "merged.csv", "description": "merged rows"}]}
    })
}

pub(crate) fn service_with(home: &Path, provider: Arc<dyn Provider>) -> Service {
    let clock: Arc<dyn Clock> = Arc::new(StepClock::new(1_700_000_000_000));
    Service::open(ServiceConfig {
        ids: Arc::new(UlidGen::new(clock.clone())),
        clock,
        ..ServiceConfig::from_settings(home).overriding(Roles::all(provider))
    })
    .expect("open service")
}

pub(crate) fn create(s: &Service) -> CreatedVersion {
    let req: CreateWorkflow =
        serde_json::from_value(json!({"file_extracts": [extract()]})).expect("request");
    s.create_workflow(req).expect("create")
}

/// Waits for the background build by following the event stream (no sleeps).
async fn wait_built(rx: &mut broadcast::Receiver<Event>, version_id: &str) -> Status {
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

#[tokio::test]
async fn the_seed_flow_with_an_edit() {
    let home = tempfile::tempdir().expect("tmp");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [
                {"needs_clarification": true, "question": "Keep all columns?"},
                {"needs_clarification": true, "question": "Inner or outer join?"},
                {"needs_clarification": false},
                {"needs_clarification": false}
            ],
            "builder": [good_build(), good_build()]
        }))
        .expect("replay"),
    );
    let s = service_with(home.path(), replay.clone());
    let mut rx = s.subscribe();
    let created = create(&s);
    assert_eq!(created.status, Status::Validating);

    let r = s
        .send_message(&created.workflow_id, "merge these files by the date column")
        .await
        .expect("m1");
    assert_eq!(
        (r.status, r.message.as_str()),
        (Status::Clarifying, "Keep all columns?")
    );
    let r = s
        .send_message(&created.workflow_id, "all of them")
        .await
        .expect("m2");
    assert_eq!(
        (r.status, r.message.as_str()),
        (Status::Clarifying, "Inner or outer join?")
    );
    let r = s
        .send_message(&created.workflow_id, "outer")
        .await
        .expect("m3");
    assert_eq!(
        (r.status, r.message.as_str()),
        (Status::Building, BUILDING_MESSAGE)
    );
    let err = s
        .send_message(&created.workflow_id, "hurry")
        .await
        .expect_err("building");
    assert_eq!(err.code(), crate::ErrorCode::Conflict);

    assert_eq!(
        wait_built(&mut rx, &created.version_id).await,
        Status::PendingUserApproval
    );
    let w = s.get_workflow(&created.workflow_id).expect("get");
    assert_eq!(w.name.as_deref(), Some("Sales Data Merger"));
    assert_eq!(w.current_version.status, Status::PendingUserApproval);
    assert!(w.current_version.script.is_some());
    assert_eq!(w.current_version.fields.as_ref().map(Vec::len), Some(1));

    // The clarifier saw the whole history and the masked extract.
    let reqs = replay.requests();
    let last_clarifier = reqs
        .iter()
        .rfind(|r| r.role == Role::Clarifier)
        .expect("clarifier");
    assert!(last_clarifier.messages[0].content.contains("$#,###.##"));
    assert_eq!(last_clarifier.messages.len(), 1 + 5);

    let w = s
        .approve(&created.workflow_id, &created.version_id)
        .expect("approve");
    assert_eq!(w.current_version.status, Status::Approved);
    assert_eq!(
        w.active_version_id.as_deref(),
        Some(created.version_id.as_str())
    );

    // Edit the approved version: v2 is drafted while v1 stays active.
    let v2 = s
        .edit(&created.workflow_id, &created.version_id)
        .expect("edit");
    assert_eq!(v2.status, Status::Validated);
    let r = s
        .send_message(&created.workflow_id, "also drop null revenue")
        .await
        .expect("m4");
    assert_eq!(r.status, Status::Building);
    assert_eq!(
        wait_built(&mut rx, &v2.version_id).await,
        Status::PendingUserApproval
    );
    let w = s
        .approve(&created.workflow_id, &v2.version_id)
        .expect("approve v2");
    assert_eq!(w.active_version_id.as_deref(), Some(v2.version_id.as_str()));
    let statuses: Vec<Status> = w.versions.iter().map(|v| v.status).collect();
    assert_eq!(statuses, vec![Status::Archived, Status::Approved]);
    assert_eq!(
        s.approve(&created.workflow_id, &created.version_id)
            .expect_err("archived")
            .code(),
        crate::ErrorCode::Archived
    );
    // user, question, user, question, user, building, built, user, building, built
    assert_eq!(w.messages.len(), 10);
}

#[tokio::test]
async fn an_infeasible_task_is_rejected_with_its_reason() {
    let home = tempfile::tempdir().expect("tmp");
    let replay = ReplayProvider::from_value(&json!({
        "validator": [{"feasible": false, "reason": "Recognising faces in photos needs image recognition."}]
    }))
    .expect("replay");
    let s = service_with(home.path(), Arc::new(replay));
    let c = create(&s);
    let r = s
        .send_message(&c.workflow_id, "find faces")
        .await
        .expect("send");
    assert_eq!(r.status, Status::Rejected);
    assert!(r.message.contains("image recognition"));
    let w = s.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(
        w.current_version.rejection_reason.as_deref(),
        Some(r.message.as_str())
    );
    assert_eq!(
        s.send_message(&c.workflow_id, "please")
            .await
            .expect_err("terminal")
            .code(),
        crate::ErrorCode::Conflict
    );
}

#[tokio::test]
async fn a_bad_reply_is_repaired_once_then_fails_clearly() {
    let home = tempfile::tempdir().expect("tmp");
    let mut bad = good_build();
    bad["execution"]["runtime"] = json!("node");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": ["I think so!", {"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": ["not json", bad]
        }))
        .expect("replay"),
    );
    let s = service_with(home.path(), replay.clone());
    let mut rx = s.subscribe();
    let c = create(&s);
    let r = s
        .send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect("repaired");
    assert_eq!(r.status, Status::Building);
    let repair = &replay.requests()[1];
    assert!(
        repair
            .messages
            .last()
            .expect("last")
            .content
            .contains("could not be used")
    );
    assert_eq!(wait_built(&mut rx, &c.version_id).await, Status::Failed);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    let reason = w.current_version.failure_reason.expect("reason");
    assert!(
        reason.contains("builder gave an unusable reply twice") && reason.contains("runtime"),
        "{reason}"
    );
    // A failed build can be rebuilt: the next message starts version 2.
    let err = s
        .send_message(&c.workflow_id, "try again")
        .await
        .expect_err("replay is exhausted");
    assert_eq!(err.code(), crate::ErrorCode::ProviderError);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(w.current_version.version, 2);
    assert_eq!(w.current_version.status, Status::Validated);
}

/// Answers from a replay, except that the builder's automatic repair is
/// blocked by the guard, as when its feedback still held a file's value.
#[derive(Debug)]
struct BlocksRepairs(Arc<ReplayProvider>);

impl Provider for BlocksRepairs {
    fn name(&self) -> &str {
        "blocks-repairs"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        let last = request.messages.last().map(|m| m.content.as_str());
        if last.is_some_and(|c| c.contains("could not be used")) {
            let m = maskflow_privacy::GuardMatch {
                masked: "Aaaaaaa".into(),
                source: "sales.csv, column \"customer\"".into(),
                in_user_text: true,
                at: None,
                part: None,
                identifying: true,
            };
            return Box::pin(async move { Err(ProviderError::PrivacyBlocked(vec![m])) });
        }
        self.0.complete(request, d)
    }
}

#[tokio::test]
async fn a_blocked_automatic_repair_says_what_happened_and_what_to_do() {
    let home = tempfile::tempdir().expect("tmp");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": ["not json"]
        }))
        .expect("replay"),
    );
    let s = service_with(home.path(), Arc::new(BlocksRepairs(replay)));
    let mut rx = s.subscribe();
    let c = create(&s);
    s.send_message(&c.workflow_id, "sum revenue per day")
        .await
        .expect("building");
    assert_eq!(wait_built(&mut rx, &c.version_id).await, Status::Failed);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    let reason = w.current_version.failure_reason.expect("reason");
    // Regression (#13): it asked to "send the message again with
    // confirmation", which nobody can do for a step Maskflow takes itself.
    assert!(!reason.contains("confirmation"), "{reason}");
    assert!(
        reason.contains("automatic repair was not sent")
            && reason.contains("Aaaaaaa (from sales.csv, column \"customer\")")
            && reason.contains("send a message"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_second_message_in_flight_is_a_conflict_at_once() {
    let home = tempfile::tempdir().expect("tmp");
    let gate = Arc::new(Gate::default());
    let s = service_with(home.path(), gate.clone());
    let c = create(&s);
    let first = {
        let s = s.clone();
        let id = c.workflow_id.clone();
        tokio::spawn(async move { s.send_message(&id, "first").await })
    };
    gate.entered.notified().await;
    let err = s
        .send_message(&c.workflow_id, "second")
        .await
        .expect_err("busy");
    assert_eq!(err.code(), crate::ErrorCode::Conflict);
    gate.release.notify_one();
    gate.entered.notified().await; // the clarifier call
    gate.release.notify_one();
    let r = first.await.expect("join").expect("first");
    assert_eq!(r.status, Status::Clarifying);
    let w = s.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(w.messages.len(), 2, "the refused message was not stored");
}

#[tokio::test]
async fn a_call_waiting_for_its_reply_is_listed_in_flight_then_with_its_outcome() {
    let home = tempfile::tempdir().expect("tmp");
    let gate = Arc::new(Gate::default());
    let s = service_with(home.path(), gate.clone());
    let c = create(&s);
    let message = {
        let s = s.clone();
        let id = c.workflow_id.clone();
        tokio::spawn(async move { s.send_message(&id, "total per customer").await })
    };
    gate.entered.notified().await;
    let listed = s.ledger(None, 10, 0).expect("ledger");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].outcome, maskflow_privacy::CallOutcome::InFlight);
    assert_eq!(listed[0].error, None);
    gate.release.notify_one();
    gate.entered.notified().await; // the clarifier call
    gate.release.notify_one();
    message.await.expect("join").expect("message");
    let listed = s.ledger(None, 10, 0).expect("ledger");
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(
        listed
            .iter()
            .all(|e| e.outcome == maskflow_privacy::CallOutcome::Ok),
        "{listed:?}"
    );
}

#[tokio::test]
async fn a_build_cut_off_by_a_restart_becomes_failed_interrupted() {
    let home = tempfile::tempdir().expect("tmp");
    let gate = Arc::new(Gate::default());
    let replay = ReplayProvider::from_value(&json!({
        "validator": [{"feasible": true}],
        "clarifier": [{"needs_clarification": false}]
    }))
    .expect("replay");
    let c;
    {
        let clock: Arc<dyn Clock> = Arc::new(StepClock::new(1));
        let s = Service::open(ServiceConfig {
            home: home.path().to_path_buf(),
            providers: crate::service::ProviderSource::Override(Roles {
                validator: Arc::new(replay) as Arc<dyn Provider>,
                clarifier: Arc::new(
                    ReplayProvider::from_value(
                        &json!({"clarifier": [{"needs_clarification": false}]}),
                    )
                    .expect("r"),
                ),
                builder: gate.clone(),
            }),
            ids: Arc::new(UlidGen::new(clock.clone())),
            clock,
            keys: Arc::new(maskflow_llm::keys::KeyringCredentials::default()),
        })
        .expect("open");
        c = create(&s);
        let r = s.send_message(&c.workflow_id, "go").await.expect("send");
        assert_eq!(r.status, Status::Building);
        gate.entered.notified().await; // the builder is mid-call and never returns
    }
    let s2 = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
    let w = s2.get_workflow(&c.workflow_id).expect("get");
    assert_eq!(w.current_version.status, Status::Failed);
    assert_eq!(
        w.current_version.failure_reason.as_deref(),
        Some(INTERRUPTED)
    );
}

#[tokio::test]
async fn bad_requests_are_refused_and_store_nothing() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
    let empty = s
        .create_workflow(CreateWorkflow::default())
        .expect_err("no extracts");
    assert_eq!(empty.code(), crate::ErrorCode::InvalidRequest);
    let unknown: CreateWorkflow =
        serde_json::from_value(json!({"file_ids": ["file_nope"]})).expect("req");
    assert_eq!(
        s.create_workflow(unknown).expect_err("unknown").code(),
        crate::ErrorCode::InvalidRequest
    );
    assert!(s.list_workflows().expect("list").is_empty());
    assert_eq!(
        s.send_message("wf_nope", "hi")
            .await
            .expect_err("404")
            .code(),
        crate::ErrorCode::NotFound
    );
    let c = create(&s);
    assert_eq!(
        s.send_message(&c.workflow_id, "  ")
            .await
            .expect_err("empty")
            .code(),
        crate::ErrorCode::InvalidRequest
    );
    assert_eq!(
        s.approve(&c.workflow_id, &c.version_id)
            .expect_err("not built")
            .code(),
        crate::ErrorCode::Conflict
    );
    assert_eq!(
        s.edit(&c.workflow_id, &c.version_id)
            .expect_err("not built")
            .code(),
        crate::ErrorCode::Conflict
    );
    let err = s
        .send_message(&c.workflow_id, "hi")
        .await
        .expect_err("no provider");
    // Nothing was sent and no back end failed: the settings are the
    // user's to fix, a 400, not a 502 (#28).
    assert_eq!(err.code(), crate::ErrorCode::InvalidRequest);
    assert!(
        err.to_string().contains("no LLM back end is configured"),
        "{err}"
    );
    assert!(
        s.get_workflow(&c.workflow_id)
            .expect("get")
            .messages
            .is_empty()
    );
}

#[test]
fn rename_label_and_delete() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Arc::new(maskflow_llm::Unconfigured));
    let c = create(&s);
    let w = s
        .update_workflow(
            &c.workflow_id,
            WorkflowPatch {
                name: Some(" Merger ".into()),
                label: Some("finance".into()),
                ..Default::default()
            },
        )
        .expect("patch");
    assert_eq!(
        (w.name.as_deref(), w.label.as_deref()),
        (Some("Merger"), Some("finance"))
    );
    let w = s
        .update_workflow(
            &c.workflow_id,
            WorkflowPatch {
                label: Some(String::new()),
                ..Default::default()
            },
        )
        .expect("clear");
    assert_eq!(w.label, None);
    assert!(
        s.update_workflow(
            &c.workflow_id,
            WorkflowPatch {
                name: Some(" ".into()),
                ..Default::default()
            }
        )
        .is_err()
    );
    let preview = s.delete_workflow(&c.workflow_id, None).expect("preview");
    assert!(!preview.deleted);
    assert_eq!(preview.would_delete.versions, 1);
    assert!(
        s.get_workflow(&c.workflow_id).is_ok(),
        "nothing deleted yet"
    );
    let done = s
        .delete_workflow(&c.workflow_id, preview.confirm_token.as_deref())
        .expect("delete");
    assert!(done.deleted);
    assert_eq!(
        s.get_workflow(&c.workflow_id).expect_err("gone").code(),
        crate::ErrorCode::NotFound
    );
    assert_eq!(
        s.delete_workflow(&c.workflow_id, None)
            .expect_err("gone")
            .code(),
        crate::ErrorCode::NotFound
    );
}

#[test]
fn seed_shaped_extracts_without_kind_are_accepted() {
    let e: ExtractInput = serde_json::from_value(extract()).expect("seed shape");
    assert_eq!(e.0.kind, maskflow_extractors::FileKind::Csv);
    let x: ExtractInput = serde_json::from_value(
        json!({"filename": "a.xlsx", "columns": [], "sample_rows": [], "row_count": 0}),
    )
    .expect("xlsx");
    assert_eq!(x.0.kind, maskflow_extractors::FileKind::Excel);
    assert!(serde_json::from_value::<ExtractInput>(json!({"filename": 3})).is_err());
}

#[test]
fn upload_names_are_made_safe() {
    assert_eq!(safe_filename("../../etc/passwd"), "passwd");
    assert_eq!(safe_filename("C:\\x\\sales.csv"), "sales.csv");
    assert_eq!(safe_filename(".."), "upload");
    assert_eq!(safe_filename("a\u{0}b?.csv"), "ab_.csv");
}

#[tokio::test]
async fn a_local_file_is_extracted_in_place_and_a_bad_one_is_left_alone() {
    let home = tempfile::tempdir().expect("tmp");
    let data = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Arc::new(ReplayProvider::default()));
    let csv = data.path().join("people.csv");
    std::fs::write(&csv, "name,joined\nJohn Smith,2024-01-15\n").expect("write");
    let mut rx = s.subscribe();
    let file = s.add_local_file(csv.clone()).await.expect("extract");
    assert!(file.file_id.starts_with("file_"));
    assert_eq!(
        file.extract["sample_rows"],
        json!([["Aaaa Aaaaa", "####-##-##"]])
    );
    assert!(csv.is_file(), "the user's file stays where it was");
    assert!(
        !home.path().join("files").join(&file.file_id).exists(),
        "nothing is copied"
    );
    assert!(matches!(
        rx.try_recv(),
        Ok(Event::ExtractProgress { .. }) | Err(_)
    ));
    let created = s
        .create_workflow(CreateWorkflow {
            file_extracts: vec![],
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("create from the local file");
    let v = s
        .get_version(&created.workflow_id, &created.version_id)
        .expect("version");
    assert_eq!(v.file_ids, vec![file.file_id]);
    assert!(s.get_version(&created.workflow_id, "wv_nope").is_err());

    let bad = data.path().join("notes.bin");
    std::fs::write(&bad, [0u8, 1, 2, 0x7f, b'E', b'L', b'F', 0, 0, 0]).expect("write");
    let err = s
        .add_local_file(bad.clone())
        .await
        .expect_err("unsupported");
    assert_eq!(err.code(), crate::ErrorCode::InvalidRequest);
    assert!(err.to_string().contains("notes.bin"), "{err}");
    assert!(
        bad.is_file(),
        "a failed extract must not remove the user's file"
    );
    let missing = s.add_local_file(data.path().join("gone.csv")).await;
    assert!(missing.is_err());
}

#[tokio::test]
async fn picked_bytes_are_stored_and_extracted_like_an_upload() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Arc::new(ReplayProvider::default()));
    let file = s
        .add_upload_bytes("../q1 sales.csv", b"date,revenue\n2024-01-15,$1.50\n")
        .await
        .expect("upload");
    assert_eq!(file.extract["filename"], "q1 sales.csv");
    assert_eq!(file.extract["row_count"], 1);
    let err = s.add_upload_bytes("x.bin", &[0, 1, 2, 0x7f, 0, 0]).await;
    assert!(err.is_err());
}

/// #26: a pivot's headers that are people's names are masked in the
/// extract the user approves and listed with why; approving freezes the
/// names as sent; a name the user chose to send as it is is sent (and
/// passes the guard) while the others stay masked (and are blocked).
#[tokio::test]
async fn value_headers_are_masked_flagged_and_sent_only_by_choice() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Arc::new(ReplayProvider::default()));
    let csv = b"Week,John Smith,Maria Garcia,Total\n2024-01-01,8,7,15\n";
    let file = s.add_upload_bytes("hours.csv", csv).await.expect("upload");
    assert_eq!(
        file.extract["columns"],
        json!(["Week", "Aaaa Aaaaa", "Aaaaa Aaaaaa", "Total"])
    );
    let flagged: Vec<(&str, &str)> = file
        .flagged_names
        .iter()
        .map(|f| (f.at.as_str(), f.name.as_str()))
        .collect();
    assert_eq!(
        flagged,
        [("/columns/1", "John Smith"), ("/columns/2", "Maria Garcia")]
    );
    assert!(
        file.flagged_names
            .iter()
            .all(|f| f.reason.contains("person"))
    );

    // Approving what was shown freezes the masked names.
    let created = s
        .create_workflow(CreateWorkflow {
            file_extracts: vec![serde_json::from_value(file.extract.clone()).expect("input")],
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("approve as shown");
    let v = s
        .get_version(&created.workflow_id, &created.version_id)
        .expect("version");
    assert_eq!(v.file_extracts[0], file.extract);
    let guard = s.guard_for(&created.version_id).expect("guard");
    assert!(!guard.check_text("columns John Smith").is_empty());
    assert!(guard.check_text("the Week and Total columns").is_empty());

    // One name sent as it is: the extract shown must be the one sent.
    let second = s.add_upload_bytes("hours.csv", csv).await.expect("upload");
    let choice = vec!["Maria Garcia".to_owned()];
    let refused = s.create_workflow(CreateWorkflow {
        file_extracts: vec![serde_json::from_value(second.extract.clone()).expect("input")],
        file_ids: vec![second.file_id.clone()],
        send_as_is: choice.clone(),
        ..Default::default()
    });
    assert!(refused.is_err(), "a preview that differs from what is sent");
    let mut shown = second.extract.clone();
    shown["columns"][2] = json!("Maria Garcia");
    let created = s
        .create_workflow(CreateWorkflow {
            file_extracts: vec![serde_json::from_value(shown.clone()).expect("input")],
            file_ids: vec![second.file_id.clone()],
            send_as_is: choice,
            ..Default::default()
        })
        .expect("approve with one name as it is");
    let v = s
        .get_version(&created.workflow_id, &created.version_id)
        .expect("version");
    assert_eq!(v.file_extracts[0], shown);
    let guard = s.guard_for(&created.version_id).expect("guard");
    assert!(guard.check_text("the column Maria Garcia").is_empty());
    assert!(!guard.check_text("the column John Smith").is_empty());
}
