//! Issue #26, break 9, on realistic files: a workbook whose headers and
//! sheet names are values (a pivot with a column per employee, sheets named
//! after customers, an e-mail and a date as headers) goes through upload,
//! approval and a validator call; what the back end is sent (the ledger's
//! request) holds none of those names, while an ordinary workbook's
//! headers are sent as they are.

use super::tests::service_with;
use super::*;
use maskflow_llm::ReplayProvider;
use serde_json::json;
use std::sync::Arc;

fn workbook(path: &Path, sheets: &[(&str, &[&str])]) {
    let mut wb = rust_xlsxwriter::Workbook::new();
    for (name, headers) in sheets {
        let s = wb.add_worksheet().set_name(*name).expect("sheet name");
        for (c, h) in headers.iter().enumerate() {
            s.write(0, c as u16, *h).expect("header");
            s.write(1, c as u16, 7.5 + c as f64).expect("cell");
        }
    }
    wb.save(path).expect("save");
}

/// Uploads `path`, approves it as shown, sends one message; gives what
/// was uploaded and the validator's request as the ledger recorded it.
async fn approve_and_ask(home: &Path, path: &Path) -> (UploadedFile, String) {
    let replay =
        ReplayProvider::from_value(&json!({"validator": [{"feasible": false, "reason": "no"}]}))
            .expect("replay");
    let s = service_with(home, Arc::new(replay));
    let file = s.add_local_file(path.to_path_buf()).await.expect("extract");
    let created = s
        .create_workflow(CreateWorkflow {
            file_extracts: vec![serde_json::from_value(file.extract.clone()).expect("input")],
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("approve");
    s.send_message(&created.workflow_id, "total the hours per week")
        .await
        .expect("message");
    let sent = s.ledger(None, 10, 0).expect("ledger");
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0].outcome,
        maskflow_privacy::CallOutcome::Ok,
        "{sent:?}"
    );
    (file, sent[0].request_body.clone())
}

#[tokio::test]
async fn a_pivot_of_people_and_customers_is_sent_without_their_names() {
    let home = tempfile::tempdir().expect("tmp");
    let data = tempfile::tempdir().expect("tmp");
    let path = data.path().join("hours.xlsx");
    let people: &[&str] = &[
        "Week",
        "John Smith",
        "Maria Garcia",
        "Zebulon Okonkwo",
        "Total",
    ];
    let contact: &[&str] = &["Date", "jane.doe@acme.com", "2024-03-01", "INV-00123"];
    workbook(
        &path,
        &[
            ("Acme Corp", people),
            ("Smith, J.", contact),
            (
                "Summary",
                &["order_id", "Amount", "Customer Name", "2023 Sales"],
            ),
        ],
    );
    let (file, request) = approve_and_ask(home.path(), &path).await;
    for raw in [
        "John Smith",
        "Maria Garcia",
        "Zebulon",
        "Okonkwo",
        "Acme Corp",
        "Smith, J.",
        "jane.doe",
        "2024-03-01",
        "INV-00123",
    ] {
        assert!(!request.contains(raw), "{raw} was sent: {request}");
    }
    for kept in [
        "Week",
        "Total",
        "order_id",
        "Amount",
        "Customer Name",
        "2023 Sales",
        "Summary",
    ] {
        assert!(request.contains(kept), "{kept} should be sent as it is");
    }
    assert!(
        request.contains("by its position"),
        "the builder is told how to use a masked column"
    );
    let reasons: Vec<&str> = file
        .flagged_names
        .iter()
        .map(|f| f.reason.as_str())
        .collect();
    // The contact sheet's first row (an e-mail, a date, an ID) is no header
    // to the extractor: it is a masked sample row, sent masked either way.
    for why in ["person's name", "company's name", "not common language"] {
        assert!(
            reasons.iter().any(|r| r.contains(why)),
            "{why} in {reasons:?}"
        );
    }
}

#[tokio::test]
async fn an_ordinary_workbook_keeps_every_name() {
    let home = tempfile::tempdir().expect("tmp");
    let data = tempfile::tempdir().expect("tmp");
    let path = data.path().join("orders.xlsx");
    let headers: &[&str] = &[
        "order_id",
        "Order Date",
        "Customer Name",
        "Amount",
        "Unit Price (EUR)",
        "2023 Sales",
        "Region",
    ];
    workbook(
        &path,
        &[
            ("Orders", headers),
            ("Q1 2024", &["SKU", "Qty", "Subtotal"]),
        ],
    );
    let (file, request) = approve_and_ask(home.path(), &path).await;
    assert!(file.flagged_names.is_empty(), "{:?}", file.flagged_names);
    for kept in headers.iter().chain(&["Orders", "Q1 2024", "Subtotal"]) {
        assert!(request.contains(kept), "{kept} should be sent as it is");
    }
}
