//! Issue 17: a prompt that does not fit the model's context window. A real
//! 40-column, 3-sheet workbook goes to a recording OpenAI-compatible server
//! on loopback that reports a 2,048-token window (`/v1/models`, as
//! llama.cpp does): the extract is reduced, every recorded request fits the
//! window with the role's budget left for the reply and holds no raw cell
//! value, and the HTTP reply says what was left out. With a 512-token window
//! (reported by the server, or set in Settings over a larger one) the call is
//! refused before any chat request reaches the server, with the numbers.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::StatusCode;
use common::{TOKEN, call};
use maskflow_core::{Service, ServiceConfig};
use maskflow_llm::keys::KeyringCredentials;
use maskflow_llm::{ChatMessage, context};
use maskflow_server::api::{AppState, router};
use rust_xlsxwriter::{ExcelDateTime, Workbook};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const COLUMNS: usize = 40;
const ROWS: u32 = 30;

fn open(home: &Path) -> (Router, Service) {
    let service = Service::open(ServiceConfig {
        keys: Arc::new(KeyringCredentials::with_store(
            keyring_core::mock::Store::new().expect("mock"),
        )),
        ..ServiceConfig::from_settings(home)
    })
    .expect("service");
    (
        router(AppState::new(service.clone(), TOKEN.into(), 4242)),
        service,
    )
}

const FIRST: [&str; 8] = [
    "Philippa",
    "Ezekiel",
    "Marguerite",
    "Octavius",
    "Rosalind",
    "Thaddeus",
    "Wilhelmina",
    "Barnaby",
];
const LAST: [&str; 6] = [
    "Okonkwo",
    "Vasquez-Lindqvist",
    "Abernathy",
    "Nakagawa",
    "Fitzwilliam",
    "Oyelaran",
];
const PROSE: [&str; 5] = [
    "Delivered late because the warehouse in Rotterdam flooded",
    "Customer disputes the second invoice line",
    "Paid by cheque, cleared after nine days",
    "Discount agreed with the regional manager on the phone",
    "Replacement parts shipped from the Lyon depot",
];

/// The column names of sheet `s` (real names, allowed to be sent) and the
/// raw values written, which must never reach the server.
fn workbook() -> (Vec<u8>, Vec<String>) {
    let mut book = Workbook::new();
    let mut raw = Vec::new();
    for (s, sheet_name) in ["Invoices", "Payments", "Notes"].iter().enumerate() {
        let sheet = book.add_worksheet();
        sheet.set_name(*sheet_name).expect("name");
        let date_format = rust_xlsxwriter::Format::new().set_num_format("yyyy-mm-dd");
        for c in 0..COLUMNS {
            let kind = c % 4;
            let title = match kind {
                0 => format!("Contact name {s}-{c}"),
                1 => format!("Booking date {s}-{c}"),
                2 => format!("Amount EUR {s}-{c}"),
                _ => format!("Remarks {s}-{c}"),
            };
            sheet.write(0, c as u16, title).expect("header");
            for r in 1..=ROWS {
                let i = (r as usize) * 7 + c * 3 + s * 11;
                let (row, col) = (r, c as u16);
                match kind {
                    0 => {
                        let v = format!("{} {}", FIRST[i % 8], LAST[i % 6]);
                        sheet.write(row, col, v.as_str()).expect("name");
                        raw.push(v);
                    }
                    1 => {
                        let d =
                            ExcelDateTime::from_ymd(2023, 1 + (i % 12) as u8, 1 + (i % 28) as u8)
                                .expect("date");
                        sheet
                            .write_datetime_with_format(row, col, &d, &date_format)
                            .expect("date");
                    }
                    2 => {
                        let v = 1000.0 + (i as f64) * 137.31;
                        sheet.write_number(row, col, v).expect("amount");
                        raw.push(format!("{v:.2}"));
                    }
                    _ => {
                        let v = format!("{} (ref {})", PROSE[i % 5], 40_000 + i);
                        sheet.write(row, col, v.as_str()).expect("prose");
                        raw.push(v);
                    }
                }
            }
        }
    }
    raw.sort();
    raw.dedup();
    (book.save_to_buffer().expect("xlsx"), raw)
}

/// Answers the validator (feasible) and the clarifier (one question),
/// streaming like a real server, and records every chat request body.
#[derive(Clone, Default)]
struct Recording {
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Recording {
    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().expect("lock").clone()
    }
}

impl Respond for Recording {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let text = if body.to_string().contains("Maskflow's validator") {
            r#"{"feasible": true}"#
        } else {
            r#"{"needs_clarification": true, "question": "Which sheet holds the totals?"}"#
        };
        self.bodies.lock().expect("lock").push(body);
        let out = format!(
            "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
            json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],
                   "usage": {"prompt_tokens": 1200, "completion_tokens": 9}})
        );
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/event-stream")
            .set_body_string(out)
    }
}

/// A loopback server whose `/v1/models` reports an `n_ctx` window.
async fn server(n_ctx: u32) -> (MockServer, Recording) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"object": "list",
            "data": [{"id": "small-model", "meta": {"n_ctx": n_ctx, "n_ctx_train": 8192}}]})),
        )
        .mount(&server)
        .await;
    let rec = Recording::default();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(rec.clone())
        .mount(&server)
        .await;
    (server, rec)
}

fn settings(base: &str, window: Option<u32>) -> Value {
    let mut p = json!({"id": "small", "kind": "openai", "base_url": base, "model": "small-model"});
    if let Some(w) = window {
        p["context_window"] = json!(w);
    }
    json!({"providers": [p], "roles": {"validator": "small", "clarifier": "small", "builder": "small"}})
}

/// Uploads the workbook and approves its extract into a new workflow.
async fn workflow(app: &Router, service: &Service, xlsx: &[u8]) -> String {
    let file = service
        .add_upload_bytes("ledger-2023.xlsx", xlsx)
        .await
        .expect("extract");
    let sheets = file.extract["sheets"].as_array().map(Vec::len);
    assert_eq!(sheets, Some(3), "{}", file.extract);
    let (s, created) = call(
        app,
        "POST",
        "/api/workflows",
        Some(json!({"file_ids": [file.file_id]})),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    created["workflow_id"].as_str().expect("wf").to_owned()
}

/// The estimated prompt tokens of a recorded OpenAI request, measured as
/// the back end measures before sending.
fn prompt_tokens(body: &Value) -> u32 {
    let messages: Vec<ChatMessage> =
        serde_json::from_value(body["messages"].clone()).expect("messages");
    let schema = body.pointer("/response_format/json_schema/schema");
    context::estimate_tokens(&messages, schema)
}

fn chat_posts(requests: &[Request]) -> usize {
    requests
        .iter()
        .filter(|r| r.method.as_str() == "POST")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_workbook_is_reduced_to_fit_and_a_tiny_window_is_refused_before_sending() {
    let (xlsx, raw) = workbook();
    let home = tempfile::tempdir().expect("tmp");
    let (app, service) = open(home.path());

    // 2,048 tokens: reduced, sent, and the reply says what was left out.
    let (big, rec) = server(2048).await;
    let base = format!("{}/v1", big.uri());
    let (s, v) = call(&app, "PUT", "/api/settings", Some(settings(&base, None))).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let wf = workflow(&app, &service, &xlsx).await;
    let (s, reply) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf}/messages"),
        Some(json!({"content": "total the amounts per contact across the three sheets"})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{reply}");
    assert_eq!(reply["status"], "clarifying", "{reply}");
    assert_eq!(reply["message"], "Which sheet holds the totals?");
    let reductions = reply["context_reductions"].as_array().expect("reductions");
    let roles: Vec<&str> = reductions
        .iter()
        .filter_map(|r| r["role"].as_str())
        .collect();
    assert_eq!(roles, ["validator", "clarifier"], "{reply}");
    for r in reductions {
        assert_eq!(r["window"], 2048, "{r}");
        assert!(r["prompt_tokens_before"].as_u64() > Some(2048), "{r}");
        assert!(r["prompt_tokens"].as_u64() <= Some(2048 - 512), "{r}");
        let left_out = r["left_out"].to_string();
        assert!(left_out.contains("sample rows"), "{r}");
        let summary = r["summary"].as_str().expect("summary");
        assert!(
            summary.starts_with("To fit the model's 2,048-token context window"),
            "{summary}"
        );
    }

    let bodies = rec.bodies();
    assert_eq!(bodies.len(), 2, "validator and clarifier: {bodies:?}");
    for b in &bodies {
        let tokens = prompt_tokens(b);
        assert!(tokens <= 2048 - 512, "{tokens} tokens sent");
        let max = b["max_tokens"].as_u64().expect("max_tokens");
        assert!(u64::from(tokens) + max <= 2048, "{tokens} + {max}");
        // Structure went (names of the sheets and columns kept first).
        let text = b.to_string();
        assert!(
            text.contains("ledger-2023.xlsx") && text.contains("Invoices"),
            "{b}"
        );
        for v in &raw {
            assert!(
                !text.contains(v.as_str()),
                "the raw value {v:?} was sent: {b}"
            );
        }
    }

    // The ledger's token totals, per role and per workflow.
    let (s, usage) = call(&app, "GET", "/api/ledger/usage", None).await;
    assert_eq!(s, StatusCode::OK, "{usage}");
    assert_eq!(usage["total"]["calls"], 2, "{usage}");
    assert_eq!(usage["total"]["input_tokens"], 2400, "{usage}");
    assert_eq!(usage["total"]["output_tokens"], 18, "{usage}");
    let roles: Vec<&str> = usage["by_role"]
        .as_array()
        .expect("roles")
        .iter()
        .filter_map(|r| r["key"].as_str())
        .collect();
    assert_eq!(roles, ["clarifier", "validator"], "{usage}");
    assert_eq!(usage["by_workflow"][0]["key"], wf.as_str(), "{usage}");
    assert_eq!(usage["by_workflow"][0]["calls"], 2, "{usage}");

    // 512 tokens reported by the server: refused, nothing sent, the numbers said.
    let (tiny, tiny_rec) = server(512).await;
    let base_tiny = format!("{}/v1", tiny.uri());
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base_tiny, None)),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let wf2 = workflow(&app, &service, &xlsx).await;
    let (s, err) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf2}/messages"),
        Some(json!({"content": "total the amounts per contact"})),
    )
    .await;
    assert!(!s.is_success(), "{s} {err}");
    let msg = err["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("the validator's prompt is about")
            && msg.contains("context window is 512 tokens")
            && msg.contains("nothing was sent"),
        "{err}"
    );
    assert!(tiny_rec.bodies().is_empty());
    let requests = tiny.received_requests().await.unwrap_or_default();
    assert_eq!(
        chat_posts(&requests),
        0,
        "no chat request reached the server"
    );

    // A window set in Settings overrides what the server reports.
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base, Some(100))),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or_default()
            .contains("context window of provider \"small\""),
        "{v}"
    );
    let (s, v) = call(
        &app,
        "PUT",
        "/api/settings",
        Some(settings(&base, Some(512))),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, view) = call(&app, "GET", "/api/settings", None).await;
    assert_eq!(view["providers"][0]["context_window"], 512, "{view}");
    let (s, err) = call(
        &app,
        "POST",
        &format!("/api/workflows/{wf2}/messages"),
        Some(json!({"content": "total the amounts per contact"})),
    )
    .await;
    assert!(!s.is_success(), "{s} {err}");
    assert!(
        err.to_string().contains("context window is 512 tokens"),
        "{err}"
    );
    assert_eq!(
        rec.bodies().len(),
        2,
        "nothing more reached the 2,048 server"
    );
}
