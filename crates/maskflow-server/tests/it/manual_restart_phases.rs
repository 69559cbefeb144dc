//! Restart-safe waiting at every phase of a build (issue 19, point 3), as a
//! user meets it: a real `maskflow serve` on the manual back end is killed
//! while the request check (validator) or the clarifier waits for a pasted
//! answer; the next `serve` lists the prompt again, takes the answer, and
//! the message goes on from that phase — the clarifier's question, the
//! build — until the version waits for the user's approval, its script
//! tested on the real CSV.

use serde_json::{Value, json};

use crate::common::spawned::{Serve as Server, http, upload};

/// A realistic payments file: names, dates, amounts and a prose column.
const PAYMENTS: &str = "client,date,amount,notes\n\
Alice Martin,2024-01-15,120.50,\"Paid by card, asked for an invoice\"\n\
Bruno Keller,2024-01-17,75.00,\"Regular customer; wants delivery on Friday\"\n\
Alice Martin,2024-02-02,-42.10,\"Returned one lamp, partial refund\"\n\
Chloé Dubois,2024-02-09,310.00,\"Large order for the new office, paid late\"\n";

const SCRIPT: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
totals = {}
for r in csv.DictReader(open(f["payments"], encoding="utf-8")):
    totals[r["client"]] = totals.get(r["client"], 0.0) + float(r["amount"])
with open("outputs/totals.csv", "w", newline="", encoding="utf-8") as out:
    w = csv.writer(out)
    w.writerow(["client", "total"])
    for client in sorted(totals):
        w.writerow([client, "%.2f" % totals[client]])
"#;

fn spec() -> Value {
    json!({
        "name": "Totals per client",
        "description": "Sums the payments of each client, refunds subtracted",
        "script": SCRIPT,
        "fields": [{"name": "payments", "label": "Payments", "type": "file", "required": true,
                    "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "totals.csv", "description": "total per client"}]}
    })
}

/// The listed manual prompt of `role` other than `not`.
fn prompt(server: &Server, role: &str, not: Option<&Value>) -> Value {
    let other = |p: &Value| p["role"] == role && not.is_none_or(|n| p["id"] != n["id"]);
    let list = server.wait_for("/api/manual", &format!("a {role} prompt"), |v| {
        v.as_array().is_some_and(|l| l.iter().any(other))
    });
    list.as_array()
        .and_then(|l| l.iter().find(|p| other(p)))
        .cloned()
        .expect("prompt")
}

fn answer(server: &Server, prompt: &Value, text: &str) {
    let id = prompt["id"].as_str().expect("id");
    let (status, body) = server.call(
        "POST",
        &format!("/api/manual/{id}/answer"),
        Some(json!({ "text": text })),
    );
    assert_eq!(status, 204, "answering {id}: {body}");
}

/// A new workflow on the payments file: `(workflow id, version id)`.
fn new_workflow(server: &Server) -> (String, String) {
    let file = upload(
        server.port,
        &[("payments.csv", "text/csv", PAYMENTS.as_bytes())],
    )
    .remove(0);
    let (status, created) = server.call(
        "POST",
        "/api/workflows",
        Some(json!({ "file_ids": [file] })),
    );
    assert_eq!(status, 201, "{created}");
    (
        created["workflow_id"].as_str().expect("wf").to_owned(),
        created["version_id"].as_str().expect("vid").to_owned(),
    )
}

/// Sends a message in the background (it waits on pasted answers).
fn send(server: &Server, wf: &str, content: &str) -> std::thread::JoinHandle<(u16, String)> {
    let port = server.port;
    let path = format!("/api/workflows/{wf}/messages");
    let body = json!({ "content": content }).to_string();
    std::thread::spawn(move || {
        let (status, out) = http(port, "POST", &path, "application/json", body.as_bytes());
        (status, String::from_utf8_lossy(&out).into_owned())
    })
}

fn workflow(server: &Server, wf: &str) -> Value {
    server.call("GET", &format!("/api/workflows/{wf}"), None).1
}

/// A prompt listed again after a restart: the same one, resumable.
fn restored(server: &Server, role: &str, before: &Value) -> Value {
    let again = prompt(server, role, None);
    assert_eq!(again["id"], before["id"], "{again}");
    assert_eq!(
        again["messages"], before["messages"],
        "the same prompt to copy"
    );
    assert_eq!(again["interrupted"]["resumes"], true, "{again}");
    let reason = again["interrupted"]["reason"].as_str().expect("reason");
    assert!(reason.contains("Maskflow stopped"), "{reason}");
    assert!(reason.contains("goes on"), "{reason}");
    again
}

/// The rest of the build: the builder's reply pasted, its gate approved
/// (by a restarted process when `restart_at_gate` gives the data folder),
/// the script tested on the real file; the version waits for approval.
fn build_to_approval(server: &Server, wf: &str, vid: &str) {
    let builder = prompt(server, "builder", None);
    assert_eq!(builder["waiter"]["version_id"], vid, "{builder}");
    let sent = builder["messages"].to_string();
    for raw in ["Alice Martin", "Bruno Keller", "120.50", "Paid by card"] {
        assert!(!sent.contains(raw), "{raw:?} reached the prompt unmasked");
    }
    answer(server, &builder, &spec().to_string());
    let path = format!("/api/workflows/{wf}");
    // No gate on the reply the user pasted (#28): the build goes on to its
    // test and ends waiting for the user's approval of the version.
    let view = server.wait_for(&path, "the end of the build", |v| {
        v["current_version"]["status"] != "building"
    });
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let report = &current["test_report"];
    assert_eq!(report["status"], "passed", "{report}");
    assert_eq!(
        report["run"]["outputs"][0]["preview_rows"],
        json!([
            ["client", "total"],
            ["Alice Martin", "78.40"],
            ["Bruno Keller", "75.00"],
            ["Chloé Dubois", "310.00"]
        ]),
        "{report}"
    );
    assert_eq!(server.call("GET", "/api/manual", None).1, json!([]));
}

/// The user's messages and the assistant's replies, in order.
fn said(view: &Value) -> Vec<(String, String)> {
    view["messages"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap_or_default().to_owned(),
                        m["content"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

const ASK: &str = "Total the amounts per client";
const QUESTION: &str =
    r#"{"needs_clarification": true, "question": "Should refunds be subtracted?"}"#;

#[test]
fn killed_while_the_request_check_waits_the_message_goes_on_after_a_restart() {
    let home = tempfile::tempdir().expect("home");
    let server = Server::start(home.path(), None, &[]);
    let (wf, vid) = new_workflow(&server);
    let message = send(&server, &wf, ASK);
    let validator = prompt(&server, "validator", None);
    assert_eq!(validator["interrupted"], Value::Null, "{validator}");
    assert_eq!(
        validator["waiter"]["version_id"],
        vid.as_str(),
        "{validator}"
    );
    server.kill();
    let _ = message.join();

    let server = Server::start(home.path(), None, &[]);
    let view = workflow(&server, &wf);
    assert_eq!(view["current_version"]["status"], "validating", "{view}");
    assert_eq!(said(&view), vec![], "nothing was stored yet");
    let listed = restored(&server, "validator", &validator);
    let sent = listed["messages"].to_string();
    for raw in ["Alice Martin", "Chloé Dubois", "310.00", "partial refund"] {
        assert!(!sent.contains(raw), "{raw:?} reached the prompt unmasked");
    }
    answer(&server, &listed, r#"{"feasible": true}"#);

    // The message went on: checked, then the clarifier asks (this process).
    let clarifier = prompt(&server, "clarifier", None);
    assert_eq!(clarifier["interrupted"], Value::Null, "{clarifier}");
    answer(&server, &clarifier, QUESTION);
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the question", |v| {
        v["current_version"]["status"] == "clarifying"
    });
    assert_eq!(
        said(&view),
        vec![
            ("user".into(), ASK.into()),
            ("assistant".into(), "Should refunds be subtracted?".into())
        ]
    );

    // The conversation goes on as usual, to the build and its approval.
    let reply = send(&server, &wf, "Yes, subtract them");
    let clarifier = prompt(&server, "clarifier", Some(&clarifier));
    answer(&server, &clarifier, r#"{"needs_clarification": false}"#);
    let (status, body) = reply.join().expect("reply");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("building"), "{body}");
    build_to_approval(&server, &wf, &vid);
}

#[test]
fn killed_while_the_clarifier_waits_the_build_starts_after_a_restart() {
    let home = tempfile::tempdir().expect("home");
    let server = Server::start(home.path(), None, &[]);
    let (wf, vid) = new_workflow(&server);
    let message = send(&server, &wf, ASK);
    answer(
        &server,
        &prompt(&server, "validator", None),
        r#"{"feasible": true}"#,
    );
    let clarifier = prompt(&server, "clarifier", None);
    server.kill();
    let _ = message.join();

    let server = Server::start(home.path(), None, &[]);
    let view = workflow(&server, &wf);
    assert_eq!(view["current_version"]["status"], "validated", "{view}");
    let listed = restored(&server, "clarifier", &clarifier);
    // Nothing else may take it: the request check is not asked again.
    answer(&server, &listed, r#"{"needs_clarification": false}"#);

    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build", |v| {
        v["current_version"]["status"] == "building"
    });
    assert_eq!(
        said(&view),
        vec![
            ("user".into(), ASK.into()),
            (
                "assistant".into(),
                "Got it! Building your workflow now...".into()
            )
        ],
        "the message is stored once"
    );
    // Killed again, now while the builder waits: that phase goes on too.
    let builder = prompt(&server, "builder", None);
    server.kill();
    let server = Server::start(home.path(), None, &[]);
    let again = prompt(&server, "builder", None);
    assert_eq!(again["id"], builder["id"]);
    assert_eq!(again["interrupted"]["resumes"], true, "{again}");
    build_to_approval(&server, &wf, &vid);
}

#[test]
fn a_message_waiting_in_another_live_process_is_answered_there_only() {
    let home = tempfile::tempdir().expect("home");
    let first = Server::start(home.path(), None, &[]);
    let (wf, _) = new_workflow(&first);
    let message = send(&first, &wf, ASK);
    let validator = prompt(&first, "validator", None);

    // A second process on the same data folder (the desktop app beside
    // `serve`) shows the prompt but cannot take its answer.
    let second = Server::start(home.path(), None, &[]);
    let seen = prompt(&second, "validator", None);
    assert_eq!(seen["id"], validator["id"]);
    assert_eq!(seen["interrupted"]["resumes"], false, "{seen}");
    let why = seen["interrupted"]["reason"].as_str().expect("reason");
    assert!(why.contains("another Maskflow process"), "{why}");
    let id = seen["id"].as_str().expect("id");
    let (status, body) = second.call(
        "POST",
        &format!("/api/manual/{id}/answer"),
        Some(json!({"text": r#"{"feasible": true}"#})),
    );
    assert_eq!(status, 409, "{body}");

    // The process that waits takes it, and the message goes on there.
    answer(&first, &validator, r#"{"feasible": true}"#);
    let clarifier = prompt(&first, "clarifier", None);
    answer(&first, &clarifier, r#"{"needs_clarification": false}"#);
    let (status, body) = message.join().expect("reply");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("building"), "{body}");
    let (_, left) = second.call("GET", "/api/manual", None);
    assert!(
        !left.to_string().contains(id),
        "the answered prompt is gone everywhere: {left}"
    );
}
