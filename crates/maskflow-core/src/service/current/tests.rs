//! Issue 28, point 3: an edit's builder prompt starts from the approved
//! workflow, and approving a version that renames an input says so with
//! both `maskflow run` lines.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::broadcast;

use super::*;
use crate::events::Event;
use crate::service::tests::{create, good_build, service_with};
use maskflow_llm::{ReplayProvider, Role};

fn field(name: &str, t: FieldType, required: bool) -> Field {
    Field {
        name: name.into(),
        label: name.into(),
        field_type: t,
        required,
        options: None,
        accept: None,
    }
}

#[test]
fn the_run_command_has_one_flag_per_input_in_maskflow_runs_syntax() {
    let mut mode = field("mode", FieldType::Choice, false);
    mode.options = Some(vec!["fast".into(), "slow".into()]);
    let fields = vec![
        field("bakers", FieldType::File, true),
        field("months", FieldType::Files, true),
        field("year", FieldType::Number, false),
        mode,
    ];
    assert_eq!(
        run_command("Bake Off", &fields),
        "maskflow run 'Bake Off' --input bakers=FILE --input months=FILE [--input months=FILE …] \
[--input year=NUMBER] [--input mode=fast|slow]"
    );
    assert_eq!(run_command("wf_1", &[]), "maskflow run wf_1");
    assert_eq!(run_command("it's", &[]), "maskflow run 'it'\\''s'");
}

fn spec(fields: Vec<Field>, outputs: &[&str]) -> WorkflowSpec {
    let mut s: WorkflowSpec = serde_json::from_value(good_build()).expect("spec");
    s.fields = fields;
    s.execution.outputs = outputs
        .iter()
        .map(|n| crate::conversation::spec::Output {
            name: (*n).into(),
            description: "d".into(),
        })
        .collect();
    s
}

#[test]
fn changes_of_inputs_and_outputs_are_named() {
    let old = spec(
        vec![
            field("bakers", FieldType::File, true),
            field("note", FieldType::Text, false),
        ],
        &["a.csv", "b.csv"],
    );
    let new = spec(
        vec![
            field("contestants", FieldType::File, true),
            field("note", FieldType::Files, false),
        ],
        &["a.csv", "c.csv"],
    );
    assert_eq!(
        interface_changes(&old, &new),
        vec![
            "input `bakers` (file) is removed",
            "input `note` was text, is now files",
            "input `contestants` (file) is new",
            "output `b.csv` is no longer written",
            "output `c.csv` is new",
        ]
    );
    assert!(interface_changes(&old, &old).is_empty());
}

async fn wait_built(rx: &mut broadcast::Receiver<Event>, version_id: &str) -> Status {
    loop {
        if let Event::StatusChanged {
            version_id: v,
            status,
            ..
        } = rx.recv().await.expect("event")
            && v == version_id
            && matches!(status, Status::PendingUserApproval | Status::Failed)
        {
            return status;
        }
    }
}

#[tokio::test]
async fn an_edit_starts_from_the_approved_workflow_and_a_rename_is_shown_at_approval() {
    let home = tempfile::tempdir().expect("tmp");
    let mut renamed = good_build();
    renamed["fields"][0]["name"] = json!("contestants");
    renamed["script"] =
        json!("import json, sys\nprint(json.load(open(sys.argv[1]))['fields']['contestants'])\n");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}, {"needs_clarification": false}],
            "builder": [good_build(), renamed]
        }))
        .expect("replay"),
    );
    let s = service_with(home.path(), replay.clone());
    let mut rx = s.subscribe();
    let c = create(&s);
    s.send_message(&c.workflow_id, "merge by date")
        .await
        .expect("m1");
    assert_eq!(
        wait_built(&mut rx, &c.version_id).await,
        Status::PendingUserApproval
    );
    // The first build has nothing to start from.
    let first = replay.requests();
    let first = first
        .iter()
        .rfind(|r| r.role == Role::Builder)
        .expect("builder");
    assert!(
        !first.messages[0]
            .content
            .contains("The workflow as it stands")
    );
    let w = s.get_workflow(&c.workflow_id).expect("get");
    assert!(
        w.current_version.interface_change.is_none(),
        "nothing approved yet"
    );
    s.approve(&c.workflow_id, &c.version_id).expect("approve");

    let v2 = s.edit(&c.workflow_id, &c.version_id).expect("edit");
    s.send_message(&c.workflow_id, "call the input contestants")
        .await
        .expect("m2");
    assert_eq!(
        wait_built(&mut rx, &v2.version_id).await,
        Status::PendingUserApproval
    );

    // The edit's builder prompt carries the approved script, inputs and outputs.
    let reqs = replay.requests();
    let edit = reqs
        .iter()
        .rfind(|r| r.role == Role::Builder)
        .expect("builder");
    let system = &edit.messages[0].content;
    let approved = good_build();
    assert!(system.contains("The workflow as it stands"), "{system}");
    assert!(
        system.contains(approved["script"].as_str().expect("script").trim_end()),
        "{system}"
    );
    assert!(system.contains("\"name\":\"sales\""), "{system}");
    assert!(system.contains("merged.csv"), "{system}");

    // Approving v2 would rename the input: the view says so, with both lines.
    let w = s.get_workflow(&c.workflow_id).expect("get");
    let change = w.current_version.interface_change.expect("a change");
    assert_eq!(change.approved_version, 1);
    assert_eq!(
        change.changes,
        vec![
            "input `sales` (file) is removed",
            "input `contestants` (file) is new"
        ]
    );
    assert_eq!(
        change.old_command,
        "maskflow run 'Sales Data Merger' --input sales=FILE"
    );
    assert_eq!(
        change.new_command,
        "maskflow run 'Sales Data Merger' --input contestants=FILE"
    );
    // Once approved, it is the approved version: nothing to compare.
    let w = s
        .approve(&c.workflow_id, &v2.version_id)
        .expect("approve v2");
    assert!(w.current_version.interface_change.is_none());
}
