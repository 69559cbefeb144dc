//! The build loop end to end through the service with the replay provider
//! and the real runner: a script that works, one that fails once and is
//! fixed, one that fails twice, a manual back end pausing at a gate, and a
//! raw input value in an exception message arriving masked in the revision
//! prompt.

use std::sync::Arc;

use maskflow_core::service::{CreateWorkflow, GateChoice, GateRequest};
use maskflow_core::testing::Posing;
use maskflow_core::{Event, Service, ServiceConfig, Status};
use maskflow_llm::Roles;
use maskflow_llm::{Provider, ReplayProvider, Role};
use serde_json::{Value, json};

const PEOPLE: &str = "name,city,amount\nJohn Smith,Paris,120\nAda Lovelace,London,80\n";
const CITIES: &str = "city,country\nParis,France\nLondon,United Kingdom\n";

const GOOD: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
cities = {r["city"]: r["country"] for r in csv.DictReader(open(f["cities"]))}
with open("outputs/joined.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["name", "country", "amount"])
    for r in csv.DictReader(open(f["people"])):
        w.writerow([r["name"], cities[r["city"]], r["amount"]])
"#;

const BAD: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
for r in csv.DictReader(open(f["people"])):
    raise ValueError("cannot read row " + r["name"] + " in " + repr(r["city"]))
"#;

fn spec(script: &str) -> Value {
    json!({
        "name": "People by country",
        "description": "Joins people to their country",
        "script": script,
        "fields": [
            {"name": "people", "label": "People", "type": "file", "required": true},
            {"name": "cities", "label": "Cities", "type": "file", "required": true}
        ],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "joined.csv", "description": "people with countries"}]}
    })
}

fn replay(builds: &[&str]) -> Arc<ReplayProvider> {
    let builder: Vec<Value> = builds.iter().map(|s| spec(s)).collect();
    Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": builder,
        }))
        .expect("replay"),
    )
}

async fn start(
    home: &std::path::Path,
    provider: Arc<dyn Provider>,
) -> (
    Service,
    String,
    String,
    tokio::sync::broadcast::Receiver<Event>,
) {
    start_with(home, provider, PEOPLE).await
}

async fn start_with(
    home: &std::path::Path,
    provider: Arc<dyn Provider>,
    people: &str,
) -> (
    Service,
    String,
    String,
    tokio::sync::broadcast::Receiver<Event>,
) {
    let service =
        Service::open(ServiceConfig::from_settings(home).overriding(Roles::all(provider)))
            .expect("open");
    let mut ids = Vec::new();
    for (name, text) in [("people.csv", people), ("cities.csv", CITIES)] {
        let (id, path) = service.new_upload(name).expect("upload");
        std::fs::write(&path, text).expect("write");
        service.add_upload(&id, name, path).await.expect("extract");
        ids.push(id);
    }
    let created = service
        .create_workflow(CreateWorkflow {
            file_extracts: vec![],
            file_ids: ids,
            ..Default::default()
        })
        .expect("create");
    let rx = service.subscribe();
    let reply = service
        .send_message(&created.workflow_id, "add each person's country")
        .await
        .expect("message");
    assert_eq!(reply.status, Status::Building);
    (service, created.workflow_id, created.version_id, rx)
}

async fn finished(rx: &mut tokio::sync::broadcast::Receiver<Event>, version_id: &str) -> Status {
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

fn builder_prompts(p: &ReplayProvider) -> Vec<String> {
    p.requests()
        .into_iter()
        .filter(|r| r.role == Role::Builder)
        .map(|r| {
            r.messages
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

#[tokio::test]
async fn a_working_script_is_tested_on_the_real_files() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[GOOD]);
    let (service, wf, vid, mut rx) = start(home.path(), provider.clone()).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let view = service.get_workflow(&wf).expect("view");
    let report = view.current_version.test_report.expect("test report");
    assert_eq!(report.status, "passed");
    assert_eq!(report.inputs["people"], vec!["people.csv".to_owned()]);
    let run = report.run.expect("run");
    assert_eq!(run.outputs[0].name, "joined.csv");
    assert_eq!(run.outputs[0].row_count, Some(2));
    assert_eq!(
        run.outputs[0].preview_rows.as_ref().expect("preview")[1],
        vec!["John Smith", "France", "120"]
    );
    let build = view.current_version.build.expect("build view");
    assert_eq!(build.iteration, 1);
    let sessions = service.sessions(&wf, &vid).expect("sessions");
    let files: Vec<&str> = sessions[0].files.iter().map(|f| f.path.as_str()).collect();
    for f in [
        "code/fields.json",
        "code/script.py",
        "generation-prompt.md",
        "generation-response.md",
        "review-report.md",
        "review-verdict.md",
        "test-report.json",
    ] {
        assert!(files.contains(&f), "{f} missing from {files:?}");
    }
    assert_eq!(
        service
            .session_file(&wf, &vid, 1, "code/script.py")
            .expect("script"),
        GOOD
    );
    assert!(service.session_file(&wf, &vid, 1, "../x").is_err());
    // The prompt sent to the builder holds the contract, never a raw value.
    let prompt = &builder_prompts(&provider)[0];
    assert!(prompt.contains(maskflow_runner::CONTRACT));
    assert!(!prompt.contains("John Smith"));
}

#[tokio::test]
async fn a_failure_is_masked_and_revised_once() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[BAD, GOOD]);
    let (service, wf, vid, mut rx) = start(home.path(), provider.clone()).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let view = service.get_workflow(&wf).expect("view");
    assert_eq!(view.current_version.build.expect("build").iteration, 2);
    assert_eq!(
        view.current_version.test_report.expect("report").status,
        "passed"
    );
    let prompts = builder_prompts(&provider);
    assert_eq!(prompts.len(), 2);
    let revision = &prompts[1];
    // The message is the script's own wording, not Python's: masked whole
    // (issue #26: no word is kept because it occurs in the script).
    assert!(
        revision.contains("ValueError: aaaaaa aaaa aaa Aaaa Aaaaa aa 'Aaaaa'"),
        "{revision}"
    );
    assert!(
        revision.contains("File \"script.py\", line 4, in <module>"),
        "{revision}"
    );
    for raw in ["John", "Smith", "Paris"] {
        assert!(!revision.contains(raw), "{raw} reached the LLM: {revision}");
    }
    // No absolute path of the machine in any prompt of any role (the data
    // folder, the run folder, the interpreter's folders, the home folder).
    let data = home.path().display().to_string();
    let every: Vec<String> = provider
        .requests()
        .into_iter()
        .flat_map(|r| r.messages.into_iter().map(|m| m.content))
        .collect();
    assert!(
        every.len() > prompts.len(),
        "the validator's and clarifier's too"
    );
    for prompt in &every {
        assert!(!prompt.contains(&data), "the data folder is in: {prompt}");
        assert!(
            !prompt.contains("/tmp/"),
            "an absolute path is in: {prompt}"
        );
        if let Ok(user_home) = std::env::var("HOME")
            && user_home.len() > 1
        {
            assert!(
                !prompt.contains(&user_home),
                "the home folder is in: {prompt}"
            );
        }
    }
    let sessions = service.sessions(&wf, &vid).expect("sessions");
    assert_eq!(sessions.len(), 2);
    assert!(
        sessions[1]
            .files
            .iter()
            .any(|f| f.path == "revision-prompt.md")
    );
}

/// Issue #28, point 8: a filter on a misspelt category writes only a
/// header. The run is clean, but the review sees the output's shape and
/// sends it to the repair like a failure, with the shape (counts only).
const EMPTY: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
rows = [r for r in csv.DictReader(open(f["people"])) if r["city"] == "paris"]
with open("outputs/joined.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["name", "country", "amount"])
    for r in rows:
        w.writerow([r["name"], "", r["amount"]])
"#;

#[tokio::test]
async fn an_empty_output_table_is_sent_to_the_repair_with_its_shape() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[EMPTY, GOOD]);
    let (service, wf, vid, mut rx) = start(home.path(), provider.clone()).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let view = service.get_workflow(&wf).expect("view");
    assert_eq!(view.current_version.build.expect("build").iteration, 2);
    let prompts = builder_prompts(&provider);
    assert_eq!(prompts.len(), 2, "the empty table was repaired");
    let revision = &prompts[1];
    assert!(
        revision.contains(
            "it ran without an error, but what it wrote looks wrong: \"joined.csv\" has no rows"
        ),
        "{revision}"
    );
    assert!(
        revision.contains(
            "What the script wrote (counts only, no values):\n- \"joined.csv\": 0 rows, 3 columns"
        ),
        "{revision}"
    );
    for raw in ["John", "Smith", "Paris", "London"] {
        assert!(!revision.contains(raw), "{raw} reached the LLM: {revision}");
    }
    // The good version's outputs have their shape in the review note.
    let note = service
        .session_file(&wf, &vid, 2, "review-verdict.md")
        .expect("note");
    assert!(note.contains("\"joined.csv\": 2 rows, 3 columns"), "{note}");
    assert!(note.contains("\"country\": 0 empty, 2 distinct"), "{note}");
}

#[tokio::test]
async fn a_second_failure_fails_the_build_with_the_reason() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[BAD, BAD]);
    let (service, wf, _vid, mut rx) = start(home.path(), provider.clone()).await;
    let vid = _vid;
    assert_eq!(finished(&mut rx, &vid).await, Status::Failed);
    let view = service.get_workflow(&wf).expect("view");
    let reason = view.current_version.failure_reason.expect("reason");
    assert!(
        reason.contains("failed its test on your files 2 times"),
        "{reason}"
    );
    assert_eq!(provider.remaining(&Role::Builder), 0);
}

#[tokio::test]
async fn a_manual_back_end_s_pasted_reply_is_not_gated_again() {
    let home = tempfile::tempdir().expect("home");
    let replay = replay(&[GOOD]);
    let (service, wf, vid, mut rx) =
        start(home.path(), Arc::new(Posing::manual(replay.clone()))).await;
    // The reply is what the user pasted (#28): the build tests it and ends,
    // never stopping at a gate on it.
    let status = loop {
        match rx.recv().await.expect("event") {
            Event::BuildChanged { build, .. } => {
                assert!(!build.pending_gate, "a gate on a pasted reply: {build:?}");
            }
            Event::StatusChanged {
                version_id: v,
                status,
                ..
            } if v == vid && matches!(status, Status::PendingUserApproval | Status::Failed) => {
                break status;
            }
            _ => {}
        }
    };
    assert_eq!(status, Status::PendingUserApproval);
    let view = service.get_workflow(&wf).expect("view");
    assert!(view.current_version.test_report.is_some(), "tested");
    let err = service
        .resolve_gate(
            &wf,
            &vid,
            GateRequest {
                decision: GateChoice::Approve,
                feedback: None,
                bindings: None,
                plan: None,
            },
        )
        .expect_err("no gate");
    assert!(err.to_string().contains("no build gate"));
}

#[tokio::test]
async fn a_builder_prompt_too_big_for_the_window_is_reduced_and_the_build_says_so() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[GOOD]);
    // People with 60 more columns of notes: too much for a 4,096 window
    // that must keep half of itself for the builder's reply.
    let mut wide = String::from("name,city,amount");
    for c in 0..60 {
        wide.push_str(&format!(",note {c}"));
    }
    for (name, city, amount) in [("John Smith", "Paris", 120), ("Ada Lovelace", "London", 80)] {
        wide.push_str(&format!("\n{name},{city},{amount}"));
        for c in 0..60 {
            wide.push_str(&format!(",Called on {c} March about the invoice"));
        }
    }
    let windowed = Arc::new(Posing::windowed(provider.clone(), 4096));
    let (service, wf, vid, mut rx) = start_with(home.path(), windowed, &wide).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let view = service.get_workflow(&wf).expect("view");
    let build = view.current_version.build.expect("build view");
    let reduction = build.context_reduction.expect("a reduction");
    assert_eq!(
        (reduction.role.as_str(), reduction.window),
        ("builder", 4096)
    );
    assert!(reduction.prompt_tokens_before > 2048, "{reduction:?}");
    assert!(reduction.prompt_tokens <= 2048, "{reduction:?}");
    // The sizes and limits went once the samples had (issue 43).
    assert!(
        reduction
            .left_out
            .iter()
            .any(|l| l == maskflow_core::fit::SIZES_LEFT_OUT),
        "{reduction:?}"
    );
    assert!(!builder_prompts(&provider)[0].contains("Limits of every run"));
    // The schema's written copy went with them: the back end sends it.
    assert!(
        reduction
            .left_out
            .iter()
            .any(|l| l == maskflow_core::fit::SCHEMA_LEFT_OUT),
        "{reduction:?}"
    );
    assert!(!builder_prompts(&provider)[0].contains("matching this JSON schema"));
    assert!(!reduction.left_out.is_empty(), "{reduction:?}");
    // What was sent is what was measured: the reduced prompt, samples gone.
    let prompt = &builder_prompts(&provider)[0];
    assert!(!prompt.contains("John Smith"));
    assert!(prompt.contains("note 0"), "column names stay: {prompt}");
    let last = provider
        .requests()
        .into_iter()
        .rfind(|r| r.role == Role::Builder)
        .expect("builder request");
    assert!(last.schema.is_some(), "the reply's schema is still sent");
    assert_eq!(
        maskflow_llm::context::estimate_tokens(&last.messages, last.schema.as_ref()),
        reduction.prompt_tokens,
        "what was sent is what was measured"
    );
    assert!(
        reduction.left_out[0].contains("sample rows"),
        "{reduction:?}"
    );
    assert!(prompt.contains("\"column_types\""), "{prompt}");
    let written = service
        .session_file(&wf, &vid, 1, "generation-prompt.md")
        .expect("prompt file");
    assert!(written.contains("note 0"));
}

/// A hostile builder (issue #26, break 2): its script writes the input file
/// to stderr as base64, hex and reversed, inside a forged library frame and
/// as a dynamically made exception class; the back end must receive none of
/// it in the repair prompt.
const HOSTILE: &str = r#"import base64, json, sys
f = json.load(open(sys.argv[1]))["fields"]
row = open(f["people"]).read()
sys.stderr.write(base64.b64encode(row.encode()).decode() + "\n" + row.encode().hex() + "\n" + row[::-1] + "\n")
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode', file=sys.stderr)
print("    " + row.replace("\n", " "), file=sys.stderr)
raise type("RawValue", (Exception,), {})(row.replace("\n", " "))
"#;

#[tokio::test]
async fn a_hostile_script_sends_no_row_back_in_the_repair_prompt() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[HOSTILE, GOOD]);
    let (_service, _wf, vid, mut rx) = start(home.path(), provider.clone()).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let prompts = builder_prompts(&provider);
    assert_eq!(prompts.len(), 2);
    let revision = &prompts[1];
    let feedback = revision
        .split("Its error output")
        .nth(1)
        .expect("the revision carries the feedback");
    let encodings = [
        "bmFtZSxjaXR5LGFtb3VudApKb2huIFNtaXRoLFBhcmlzLDEyMApBZGEgTG92ZWxhY2UsTG9uZG9uLDgwCg==",
        "6e616d652c636974792c616d6f756e740a4a6f686e20536d6974682c50617269732c3132300a416461204c6f76656c6163652c4c6f6e646f6e2c38300a",
        "08,nodnoL,ecalevoL adA 021,siraP,htimS nhoJ",
        "John Smith,Paris,120 Ada Lovelace,London,80",
    ];
    for e in encodings {
        let chars: Vec<char> = e.chars().collect();
        for w in chars.windows(10) {
            let w: String = w.iter().collect();
            assert!(
                !feedback.contains(&w),
                "{w:?} reached the back end: {feedback}"
            );
        }
    }
    for raw in ["John", "Smith", "Paris", "Lovelace", "London", "decoder.py"] {
        assert!(
            !feedback.contains(raw),
            "{raw} reached the back end: {feedback}"
        );
    }
    // `RawValue` is on the quoted script line (the LLM wrote it), never as
    // the class; column names stay whole, values are masked.
    assert!(
        feedback.contains("<exception class not shown>: name,city,amount Aaaa Aaaaa,Aaaaa,###"),
        "{feedback}"
    );
}

/// Issues 40 point 6 and 43 point 2: the builder is told each input's
/// bytes and rows and the run's memory, time, disk and output limits.
#[tokio::test]
async fn the_builder_is_told_each_input_s_size_and_the_run_s_limits() {
    let home = tempfile::tempdir().expect("home");
    let provider = replay(&[GOOD]);
    let (_service, _wf, vid, mut rx) = start(home.path(), provider.clone()).await;
    assert_eq!(finished(&mut rx, &vid).await, Status::PendingUserApproval);
    let prompt = &builder_prompts(&provider)[0];
    assert!(
        prompt.contains(&format!("- people.csv: {} bytes, 2 rows", PEOPLE.len())),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("- cities.csv: {} bytes, 2 rows", CITIES.len())),
        "{prompt}"
    );
    let limits = maskflow_runner::Limits {
        memory_bytes: maskflow_core::service::memory_share(maskflow_core::service::total_memory()),
        ..maskflow_runner::Limits::default()
    };
    let told = maskflow_core::conversation::sizes::binary_bytes;
    for fact in [
        format!("memory {} (all processes", told(limits.memory_bytes)),
        "time 5 min (CPU 5 min)".to_owned(),
        format!("disk {} for all it writes", told(limits.output_bytes)),
        "64 KiB of stdout".to_owned(),
    ] {
        assert!(prompt.contains(&fact), "{fact} in {prompt}");
    }
}
