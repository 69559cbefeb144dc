//! Issue 28, point 2, through the real binary: files bind to the script's
//! inputs by name, never by position (inputs declared in the reverse order
//! of the uploads still get the right files), the builder's prompt names
//! each file's input, the repair prompt says which file fed which input,
//! and an ambiguous binding waits at the gate for the user's choice.

use serde_json::{Value, json};

use crate::common::spawned::{Serve, http, upload};

const BAKERS: &[u8] = b"baker,age\nZebulon Quagmire,31\nOttoline Fairweather,45\n";
const RESULTS: &[u8] = b"episode,star_baker\n1,Zebulon Quagmire\n2,Ottoline Fairweather\n";

fn spec(script: &str, fields: Value) -> Value {
    json!({
        "name": "Star bakers",
        "description": "Joins the bakers to their episodes",
        "script": script,
        "fields": fields,
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "out.csv", "description": "joined rows"}]}
    })
}

/// Declared in the reverse order of the uploads (bakers.csv, results.csv).
fn reversed_fields() -> Value {
    json!([
        {"name": "results", "label": "Results", "type": "file", "required": true},
        {"name": "bakers", "label": "Bakers", "type": "file", "required": true}
    ])
}

/// Fails with a KeyError on a column of neither file.
const FAILING: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
rows = list(csv.DictReader(open(f["results"])))
print(rows[0]["winner"])
"#;

/// Right only when each file reached its own input (else a KeyError).
const JOIN: &str = r#"import csv, json, sys
f = json.load(open(sys.argv[1]))["fields"]
ages = {r["baker"]: r["age"] for r in csv.DictReader(open(f["bakers"]))}
with open("outputs/out.csv", "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["episode", "age"])
    for r in csv.DictReader(open(f["results"])):
        w.writerow([r["episode"], ages[r["star_baker"]]])
"#;

fn start(replay_builder: Vec<Value>) -> (tempfile::TempDir, Serve) {
    let home = tempfile::tempdir().expect("home");
    let replay = home.path().join("replay.json");
    std::fs::write(
        &replay,
        json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": replay_builder,
        })
        .to_string(),
    )
    .expect("replay");
    let server = Serve::start(&home.path().join("data"), Some(&replay), &[]);
    (home, server)
}

fn begin(server: &Serve, files: &[(&str, &str, &[u8])]) -> (String, String) {
    let ids = upload(server.port, files);
    let (status, created) = server.call("POST", "/api/workflows", Some(json!({"file_ids": ids})));
    assert_eq!(status, 201, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = server.call(
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "the age of each episode's star baker"})),
    );
    assert_eq!(reply["status"], "building", "{reply}");
    (wf, vid)
}

fn session_file(server: &Serve, wf: &str, vid: &str, iteration: u32, path: &str) -> String {
    let (status, body) = http(
        server.port,
        "GET",
        &format!("/api/workflows/{wf}/versions/{vid}/sessions/{iteration}/{path}"),
        "text/plain",
        b"",
    );
    assert_eq!(status, 200, "{path}");
    String::from_utf8_lossy(&body).into_owned()
}

#[test]
fn inputs_declared_in_reverse_order_get_their_own_files_and_the_repair_names_them() {
    let (_home, server) = start(vec![
        spec(FAILING, reversed_fields()),
        spec(JOIN, reversed_fields()),
    ]);
    let (wf, vid) = begin(
        &server,
        &[
            ("bakers.csv", "text/csv", BAKERS),
            ("results.csv", "text/csv", RESULTS),
        ],
    );
    let view = server.wait_for(&format!("/api/workflows/{wf}"), "the build", |v| {
        v["current_version"]["status"] != "building"
    });
    let current = &view["current_version"];
    assert_eq!(current["status"], "pending_user_approval", "{view}");
    let report = &current["test_report"];
    assert_eq!(report["status"], "passed", "{report}");
    assert_eq!(report["inputs"]["bakers"], json!(["bakers.csv"]));
    assert_eq!(report["inputs"]["results"], json!(["results.csv"]));
    assert_eq!(
        report["run"]["outputs"][0]["preview_rows"],
        json!([["episode", "age"], ["1", "31"], ["2", "45"]])
    );

    // The builder was told each file's input name.
    let generation = session_file(&server, &wf, &vid, 1, "generation-prompt.md");
    assert!(
        generation.contains("- `bakers`: bakers.csv"),
        "{generation}"
    );
    assert!(
        generation.contains("- `results`: results.csv"),
        "{generation}"
    );
    // The test report and the repair prompt say which file fed which input.
    let first = session_file(&server, &wf, &vid, 1, "review-report.md");
    assert!(first.contains("- `bakers`: bakers.csv"), "{first}");
    let revision = session_file(&server, &wf, &vid, 2, "revision-prompt.md");
    assert!(
        revision.contains("- input `bakers` was fed bakers.csv"),
        "{revision}"
    );
    assert!(
        revision.contains("- input `results` was fed results.csv"),
        "{revision}"
    );
    // The key is a literal of the quoted script line: it stays.
    assert!(revision.contains("KeyError: 'winner'"), "{revision}");
    for raw in ["Zebulon", "Quagmire", "Ottoline"] {
        assert!(!revision.contains(raw), "{raw} reached the repair prompt");
    }
}

#[test]
fn an_ambiguous_binding_waits_for_the_users_choice() {
    let fields = json!([
        {"name": "left", "label": "Left table", "type": "file", "required": true},
        {"name": "right", "label": "Right table", "type": "file", "required": true}
    ]);
    let script = r#"import json, shutil, sys
f = json.load(open(sys.argv[1]))["fields"]
shutil.copy(f["left"], "outputs/out.csv")
"#;
    let (_home, server) = start(vec![spec(script, fields)]);
    let (wf, vid) = begin(
        &server,
        &[
            ("export_1.csv", "text/csv", BAKERS),
            ("export_2.csv", "text/csv", RESULTS),
        ],
    );
    let path = format!("/api/workflows/{wf}");
    let view = server.wait_for(&path, "the binding question", |v| {
        v["current_version"]["build"]["pending_gate"] == true
    });
    let questions = &view["current_version"]["build"]["pending_binding"];
    assert_eq!(questions[0]["field"], "left", "{view}");
    assert_eq!(
        questions[0]["candidates"],
        json!(["export_1.csv", "export_2.csv"])
    );
    let gate = format!("/api/workflows/{wf}/versions/{vid}/gate");
    // An incomplete answer is refused, saying what to send; the gate stays.
    let (status, body) = server.call(
        "POST",
        &gate,
        Some(json!({"decision": "approve", "bindings": {"left": "export_2.csv"}})),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap_or("").contains("`right`"),
        "{body}"
    );
    let (status, body) = server.call(
        "POST",
        &gate,
        Some(json!({"decision": "approve", "bindings": {"left": "export_2.csv", "right": "export_1.csv"}})),
    );
    assert_eq!(status, 200, "{body}");
    let view = server.wait_for(&path, "the build", |v| {
        v["current_version"]["status"] != "building"
    });
    let report = &view["current_version"]["test_report"];
    assert_eq!(report["status"], "passed", "{view}");
    assert_eq!(report["inputs"]["left"], json!(["export_2.csv"]));
    assert_eq!(report["inputs"]["right"], json!(["export_1.csv"]));
    assert_eq!(
        report["run"]["outputs"][0]["preview_rows"][0],
        json!(["episode", "star_baker"])
    );
}
