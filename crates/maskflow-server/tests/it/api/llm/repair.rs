//! Issue #13's end-to-end check: a CSV with a prose column (notes holding
//! `line`, `file`, `error`, `order`, `city`) whose first script fails with a
//! traceback is repaired and reaches `pending_user_approval`, through a
//! recording OpenAI-compatible server on loopback configured with
//! `PUT /api/settings`; no recorded request holds a raw value of the file.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use maskflow_core::{ServiceConfig, Status};
use maskflow_llm::keys::KeyringCredentials;
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::{open_with, wait_status};
use crate::api::support::*;

const NOTES_CSV: &str = "customer,email,amount,notes\n\
Zebulon Quagmire,zebulon@quagmire-corp.com,\"$12,345.67\",\"Called about the order: line 3 of the file had an error in the city field\"\n\
Ottoline Fairweather,ottoline@fairweather.example,\"$9,876.54\",\"Order shipped late, the file upload failed with an error\"\n\
Marguerite Thistlewood,m.thistlewood@example.org,\"$1,204.00\",\"Moved to another city; wants line items for every order\"\n";

const REVISION_MARK: &str = "Fix the workflow and reply with the complete corrected workflow JSON";

fn spec(script: &str) -> Value {
    json!({
        "name": "Notes lengths",
        "description": "Measures the notes of each customer",
        "script": script,
        "fields": [{"name": "customers", "label": "Customers", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "lengths.csv", "description": "note length per customer"}]}
    })
}

const FAILING: &str = "import csv, json, sys\nfields = json.load(open(sys.argv[1]))['fields']\nrows = list(csv.DictReader(open(fields['customers'], newline='')))\ntotal = sum(float(r['notes']) for r in rows)\n";
const FIXED: &str = "import csv, json, sys\nfields = json.load(open(sys.argv[1]))['fields']\nrows = list(csv.DictReader(open(fields['customers'], newline='')))\nwith open('lengths.csv', 'w', newline='') as out:\n    w = csv.writer(out)\n    w.writerow(['row', 'length'])\n    for i, r in enumerate(rows):\n        w.writerow([i, len(r['notes'])])\n";

/// Answers as each role and keeps every request body it was sent.
struct Recorder {
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Respond for Recorder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        let text = if body.contains("needs_clarification") {
            json!({"needs_clarification": false}).to_string()
        } else if body.contains("feasible") {
            json!({"feasible": true}).to_string()
        } else if body.contains(REVISION_MARK) {
            spec(FIXED).to_string()
        } else {
            spec(FAILING).to_string()
        };
        self.bodies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(body);
        // Streamed, as the OpenAI-compatible client asks.
        let mut out = format!(
            "data: {}\n\n",
            json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]})
        );
        out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}\n\ndata: [DONE]\n\n");
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(out)
    }
}

#[tokio::test]
async fn a_failing_script_on_a_prose_column_is_repaired_without_a_raw_value_leaving() {
    let server = MockServer::start().await;
    let bodies = Arc::new(Mutex::new(Vec::new()));
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/v1/chat/completions"))
        .respond_with(Recorder {
            bodies: bodies.clone(),
        })
        .mount(&server)
        .await;
    let home = tempfile::tempdir().expect("tmp");
    let config = ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home.path())
    };
    let (app, service) = open_with(home.path(), config);
    let (s, v) = call(&app, "PUT", "/api/settings", Some(json!({
        "providers": [{"id": "llm", "kind": "openai", "base_url": format!("{}/v1", server.uri()), "model": "m"},
                      {"id": "manual", "kind": "manual"}],
        "roles": {"validator": "llm", "clarifier": "llm", "builder": "llm"}
    })))
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");

    let mut events = service.subscribe();
    let (id, path) = service.new_upload("customers.csv").expect("slot");
    std::fs::write(&path, NOTES_CSV).expect("write");
    let file_id = service
        .add_upload(&id, "customers.csv", path)
        .await
        .expect("extract")
        .file_id;
    let (s, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let (s, r) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "Measure how long the notes are for each order line in the file"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["status"], "building", "{r}");
    wait_status(&mut events, Status::PendingUserApproval).await;

    let bodies = bodies.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let revision = bodies
        .iter()
        .find(|b| b.contains(REVISION_MARK))
        .expect("a repair request was sent");
    assert!(revision.contains("ValueError"), "{revision}");
    assert!(
        revision.contains("line 4"),
        "the traceback's line number stays: {revision}"
    );
    // Every cell of the file, as it is stored.
    let cells = NOTES_CSV.lines().skip(1).flat_map(|line| {
        let mut out = Vec::new();
        let mut rest = line;
        while !rest.is_empty() {
            let (cell, tail) = if let Some(q) = rest.strip_prefix('"') {
                let end = q.find('"').unwrap_or(q.len());
                (
                    &q[..end],
                    q[end..].trim_start_matches('"').trim_start_matches(','),
                )
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                (&rest[..end], rest[end..].trim_start_matches(','))
            };
            out.push(cell.to_owned());
            rest = tail;
        }
        out
    });
    for cell in cells {
        let raw = cell.to_lowercase();
        for body in &bodies {
            assert!(
                !body.to_lowercase().contains(&raw),
                "{cell:?} left in {body}"
            );
        }
    }
    for raw in [
        "Zebulon",
        "Quagmire",
        "Thistlewood",
        "12345.67",
        "12,345.67",
    ] {
        assert!(
            bodies
                .iter()
                .all(|b| !b.to_lowercase().contains(&raw.to_lowercase())),
            "{raw} left"
        );
    }
    let (_, ledger) = call(&app, "GET", "/api/ledger", None).await;
    let entries = ledger.as_array().expect("ledger");
    assert!(entries.iter().all(|e| e["blocked"] == false), "{ledger}");
    assert!(entries.iter().all(|e| e["outcome"] == "ok"), "{ledger}");
    assert_eq!(entries.len(), bodies.len());
}

#[tokio::test]
async fn a_clients_extract_is_never_trusted() {
    let home = tempfile::tempdir().expect("tmp");
    let (app, service) = open_with(home.path(), ServiceConfig::from_settings(home.path()));
    let (id, path) = service.new_upload("customers.csv").expect("slot");
    std::fs::write(&path, NOTES_CSV).expect("write");
    let uploaded = service
        .add_upload(&id, "customers.csv", path)
        .await
        .expect("extract");
    let file_id = uploaded.file_id.clone();
    // Regression (#13): with file_ids, a different (unmasked) extract was used.
    let unmasked = json!({"filename": "customers.csv", "columns": ["customer"],
                          "sample_rows": [["Zebulon Quagmire"]], "row_count": 3});
    let (s, v) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id], "file_extracts": [unmasked.clone()]})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("differs from the stored extracts")),
        "{v}"
    );
    // Without file_ids, an extract must hold only masked samples.
    let (s, v) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_extracts": [unmasked]})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"]
            .as_str()
            .is_some_and(|m| m.contains("unmasked")),
        "{v}"
    );
    // The stored extract, sent back as the upload gave it, is accepted.
    let (s, v) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file_id], "file_extracts": [uploaded.extract]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
}
