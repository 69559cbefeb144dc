//! Issue #40, what the builder is told: each fact a correct script needs,
//! shown in the prompts a recording back end receives after an ordinary
//! upload, approval and first message — and no value of the files with it.

use super::tests::service_with;
use super::*;
use maskflow_llm::ReplayProvider;
use maskflow_llm::{BoxFuture, DeltaSink, LlmReply, LlmRequest, Provider, ProviderError};
use serde_json::json;
use std::sync::{Arc, Mutex};

/// Answers from a replay and keeps the text of every request it receives.
#[derive(Debug)]
struct Recording {
    replay: ReplayProvider,
    seen: Mutex<Vec<String>>,
}

impl Recording {
    fn new() -> Arc<Self> {
        let clarifier: Vec<Value> = (0..10)
            .map(|i| json!({"needs_clarification": true, "question": format!("Question {i}?")}))
            .collect();
        let replay = ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}, {"feasible": true}],
            "clarifier": clarifier,
        }))
        .expect("replay");
        Arc::new(Self {
            replay,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn received(&self) -> String {
        super::lock(&self.seen).join("\n")
    }
}

impl Provider for Recording {
    fn name(&self) -> &str {
        "recording"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        d: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        let text: Vec<&str> = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect();
        super::lock(&self.seen).push(text.join("\n"));
        self.replay.complete(request, d)
    }
}

/// Uploads `files`, approves them as they are, sends `message`, and
/// returns what the back end received.
async fn told(files: &[(&str, Vec<u8>)], message: &str) -> String {
    let home = tempfile::tempdir().expect("tmp");
    let rec = Recording::new();
    let s = service_with(home.path(), rec.clone());
    let mut ids = Vec::new();
    for (name, body) in files {
        let f = s.add_upload_bytes(name, body).await.expect("upload");
        ids.push(f.file_id);
    }
    let w = s
        .create_workflow(CreateWorkflow {
            file_ids: ids,
            ..Default::default()
        })
        .expect("approve");
    s.send_message(&w.workflow_id, message).await.expect("sent");
    rec.received()
}

/// No cell of `body` (a CSV, four characters or more) is in `sent`.
fn holds_no_cell(sent: &str, body: &str) {
    for line in body.lines().skip(1) {
        for cell in line.split(',').map(|c| c.trim_matches('"')) {
            if cell.chars().count() >= 4 {
                assert!(!sent.contains(cell), "{cell:?} was sent");
            }
        }
    }
}

/// Hotel stays: a nightly rate in dot-decimal dollars with one in ten in
/// decimal-comma euros, and a night written year first with one in ten
/// month first.
fn stays() -> String {
    let mut s = String::from("stay_id,night,rate\n");
    for i in 0..300u32 {
        let night = if i % 10 == 4 {
            format!("{:02}/{:02}/2024", i % 12 + 1, 13 + i % 15)
        } else {
            format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1)
        };
        let rate = if i % 10 == 7 {
            format!("\"{},{:02} €\"", 100 + i, i % 97)
        } else {
            format!("\"${},{:03}.{:02}\"", 1 + i % 3, i * 7 % 1000, i % 89)
        };
        s.push_str(&format!("ST{:06},{night},{rate}\n", 500_000 + i * 7));
    }
    s
}

#[tokio::test]
async fn a_minority_number_format_and_a_minority_date_format_reach_the_prompt() {
    let body = stays();
    let sent = told(
        &[("stays.csv", body.clone().into_bytes())],
        "total revenue per month",
    )
    .await;
    assert!(
        sent.contains("30 rows [decimal comma, € after]"),
        "the euro minority is named: {sent}"
    );
    assert!(
        sent.contains("270 rows [decimal point, thousands comma, $ before]"),
        "{sent}"
    );
    assert!(
        sent.contains("30 rows [%m/%d/%Y]"),
        "month-first dates: {sent}"
    );
    assert!(sent.contains("270 rows [%Y-%m-%d]"), "{sent}");
    holds_no_cell(&sent, &body);
}
