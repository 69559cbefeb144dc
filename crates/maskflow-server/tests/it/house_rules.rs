//! Issue 18 point 3: house rules set through the API reach the builder's
//! prompt — the "always" sections and the ones whose scope matches the
//! request, not the others — and the prompt as written in the session
//! folder and as recorded in the privacy ledger shows them. A missing
//! include or a cycle is refused with the include chain, and a rule that
//! holds a value from the user's file is stopped by the privacy guard.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::{TOKEN, app, call, send, upload};
use maskflow_core::{Event, Service, ServiceConfig, Status};
use maskflow_llm::Roles;
use maskflow_llm::{ReplayProvider, Role};
use serde_json::{Value, json};
use tower::ServiceExt;

const RULES: &str = "# Always\nALWAYS-RULE: comment every step.\n{{include:_shared}}\n\n# Python\nPYTHON-RULE: use pathlib.\n\n# Excel outputs\nEXCEL-RULE: freeze the header row.\n\n# PDF reports\nPDF-RULE: A4 pages.\n";

fn build() -> Value {
    json!({
        "name": "Order totals",
        "description": "Totals per order",
        "script": "import json, sys\nfields = json.load(open(sys.argv[1]))['fields']\n",
        "fields": [{"name": "orders", "label": "Orders", "type": "file", "required": true, "accept": [".csv"]}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [],
                      "outputs": [{"name": "totals.xlsx", "description": "the totals"}]}
    })
}

async fn text(app: &axum::Router, uri: &str) -> (StatusCode, String) {
    let request = Request::builder()
        .uri(uri)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .expect("request");
    let response = app.clone().oneshot(request).await.expect("response");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn built(rx: &mut tokio::sync::broadcast::Receiver<Event>, version_id: &str) -> Status {
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

fn assert_rules(prompt: &str, what: &str) {
    for rule in ["ALWAYS-RULE", "SHARED-RULE", "PYTHON-RULE", "EXCEL-RULE"] {
        assert!(prompt.contains(rule), "{what} lacks {rule}: {prompt}");
    }
    for rule in ["PDF-RULE", "CHART-RULE"] {
        assert!(!prompt.contains(rule), "{what} has {rule}: {prompt}");
    }
}

#[tokio::test]
async fn the_builder_prompt_carries_the_matching_house_rules() {
    let home = tempfile::tempdir().expect("tmp");
    let rules_dir = home.path().join("house-rules");
    std::fs::create_dir_all(&rules_dir).expect("mkdir");
    std::fs::write(rules_dir.join("_shared.md"), "SHARED-RULE: no network.").expect("write");
    std::fs::write(
        rules_dir.join("charts.md"),
        "# Charts\nCHART-RULE: label the axes.",
    )
    .expect("write");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": [build()]
        }))
        .expect("replay"),
    );
    let service = Service::open(
        ServiceConfig::from_settings(home.path()).overriding(Roles::all(replay.clone())),
    )
    .expect("service");
    let app = app(service.clone());

    // Refused: a missing include and a cycle, each naming the chain.
    let (s, e) = call(
        &app,
        "PUT",
        "/api/settings/house-rules",
        Some(json!({"text": "# Python\n{{include:style}}"})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["message"].as_str().is_some_and(|m| m
            .contains("{{include:style}} in the Settings text names no file house-rules/style.md")),
        "{e}"
    );
    std::fs::write(rules_dir.join("_a.md"), "{{include:_b}}").expect("write");
    std::fs::write(rules_dir.join("_b.md"), "{{include:_a}}").expect("write");
    let (s, e) = call(
        &app,
        "PUT",
        "/api/settings/house-rules",
        Some(json!({"text": "{{include:_a}}"})),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("the Settings text → _a → _b → _a")),
        "{e}"
    );
    std::fs::remove_file(rules_dir.join("_a.md")).expect("rm");
    std::fs::remove_file(rules_dir.join("_b.md")).expect("rm");

    let (s, view) = call(
        &app,
        "PUT",
        "/api/settings/house-rules",
        Some(json!({"text": RULES})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{view}");
    assert_eq!(
        view["scopes"],
        json!(["Always", "Python", "Excel outputs", "PDF reports"])
    );
    let (_, view) = call(&app, "GET", "/api/settings/house-rules", None).await;
    assert_eq!(view["text"], RULES);
    assert_eq!(view["files"][0]["name"], "_shared");
    assert_eq!(view["files"][0]["include_only"], true);
    assert_eq!(view["files"][1]["scopes"], json!(["Charts"]));

    let mut events = service.subscribe();
    let extract = json!({"filename": "orders.csv", "columns": ["order", "qty"],
                         "sample_rows": [["A-#", "#"]], "row_count": 2});
    let (s, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_extracts": [extract]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let (_, reply) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "total per order, written to an Excel workbook"})),
    )
    .await;
    assert_eq!(reply["status"], "building", "{reply}");
    let status = tokio::time::timeout(std::time::Duration::from_secs(30), built(&mut events, &vid))
        .await
        .expect("the build ends");
    assert_eq!(status, Status::PendingUserApproval);

    // What the back end was sent.
    let sent = replay.requests();
    let builder = sent
        .iter()
        .find(|r| r.role == Role::Builder)
        .expect("a builder request");
    assert_rules(&builder.messages[0].content, "the builder's system prompt");
    for other in sent.iter().filter(|r| r.role != Role::Builder) {
        assert!(!other.messages[0].content.contains("ALWAYS-RULE"));
    }
    // The prompt as the user sees it in the session folder.
    let (s, prompt) = text(
        &app,
        &format!("/api/workflows/{wf}/versions/{vid}/sessions/1/generation-prompt.md"),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{prompt}");
    assert_rules(&prompt, "generation-prompt.md");
    // The privacy ledger has them: they were part of the request.
    let (s, entries) = call(&app, "GET", "/api/ledger?q=EXCEL-RULE", None).await;
    assert_eq!(s, StatusCode::OK, "{entries}");
    let entries = entries.as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["role"], "builder");
    assert_rules(
        entries[0]["request_body"].as_str().expect("body"),
        "the ledger entry",
    );
}

#[tokio::test]
async fn a_house_rule_holding_a_file_value_is_stopped_by_the_privacy_guard() {
    let home = tempfile::tempdir().expect("tmp");
    let replay = Arc::new(
        ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}],
            "clarifier": [{"needs_clarification": false}],
            "builder": [build()]
        }))
        .expect("replay"),
    );
    let service = Service::open(
        ServiceConfig::from_settings(home.path()).overriding(Roles::all(replay.clone())),
    )
    .expect("service");
    let app = app(service.clone());
    let (s, _) = call(
        &app,
        "PUT",
        "/api/settings/house-rules",
        Some(json!({"text": "# Always\nList the customer Okonkwo-Vasquez first."})),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let csv: &[u8] = b"order,customer,qty\nA-1,Okonkwo-Vasquez,2\nA-2,Abernathy,1\n";
    let (s, up) = send(&app, upload(&[("orders.csv", csv)])).await;
    assert_eq!(s, StatusCode::OK, "{up}");
    let (s, created) = call(
        &app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [up[0]["file_id"]]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let wf = created["workflow_id"].as_str().expect("wf").to_owned();
    let vid = created["version_id"].as_str().expect("vid").to_owned();
    let mut events = service.subscribe();
    let (_, reply) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "total quantity per order"})),
    )
    .await;
    assert_eq!(reply["status"], "building", "{reply}");
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), built(&mut events, &vid))
        .await
        .expect("the build ends");
    assert_eq!(status, Status::Failed);
    // The builder was never sent the prompt; the ledger shows it blocked.
    assert!(replay.requests().iter().all(|r| r.role != Role::Builder));
    let (_, entries) = call(&app, "GET", "/api/ledger", None).await;
    let builder = entries
        .as_array()
        .expect("entries")
        .iter()
        .find(|e| e["role"] == "builder")
        .cloned()
        .expect("a builder entry");
    assert_eq!(builder["blocked"], true, "{builder}");
    assert_eq!(builder["request_body"], "", "{builder}");
    let why = builder["error"].as_str().expect("why");
    assert!(
        why.contains("Aaaaaaa-Aaaaaaa (from orders.csv, column \"customer\""),
        "{why}"
    );
}
