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
    told_with_notes(files, &[], &[message]).await
}

/// As [`told`], with the user's notes (`(file index, sheet, column,
/// text)`) given at approval, and every message of `messages` sent.
async fn told_with_notes(
    files: &[(&str, Vec<u8>)],
    notes: &[(usize, Option<&str>, Option<&str>, &str)],
    messages: &[&str],
) -> String {
    let home = tempfile::tempdir().expect("tmp");
    let rec = Recording::new();
    let s = service_with(home.path(), rec.clone());
    let mut ids = Vec::new();
    for (name, body) in files {
        let f = s.add_upload_bytes(name, body).await.expect("upload");
        ids.push(f.file_id);
    }
    let notes = notes
        .iter()
        .map(|(i, sheet, column, text)| DataNote {
            file_id: ids[*i].clone(),
            sheet: sheet.map(str::to_owned),
            column: column.map(str::to_owned),
            text: (*text).to_owned(),
        })
        .collect();
    let w = s
        .create_workflow(CreateWorkflow {
            file_ids: ids,
            notes,
            ..Default::default()
        })
        .expect("approve");
    for message in messages {
        s.send_message(&w.workflow_id, message).await.expect("sent");
    }
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

/// A sheet with a title, a note naming the scale, an empty row, then the
/// header and the table (#40 point 2).
fn titled_book() -> Vec<u8> {
    let mut wb = rust_xlsxwriter::Workbook::new();
    let s = wb.add_worksheet().set_name("Exports").expect("name");
    s.write(0, 0, "Coffee exports by port, 2023").expect("w");
    s.write(1, 0, "Values in USD per tonne; volumes ($'000)")
        .expect("w");
    for (c, h) in ["port", "month", "volume ($'000)", "price"]
        .iter()
        .enumerate()
    {
        s.write(3, c as u16, *h).expect("w");
    }
    for r in 0..40u32 {
        s.write(
            4 + r,
            0,
            ["Santos", "Veracruz", "Mombasa"][(r % 3) as usize],
        )
        .expect("w");
        s.write(4 + r, 1, format!("2023-{:02}", r % 12 + 1))
            .expect("w");
        s.write(4 + r, 2, f64::from(100 + r * 7)).expect("w");
        s.write(4 + r, 3, 2000.5 + f64::from(r)).expect("w");
    }
    wb.save_to_buffer().expect("xlsx")
}

#[tokio::test]
async fn a_title_block_above_the_header_and_its_units_reach_the_prompt() {
    let sent = told(&[("exports.xlsx", titled_book())], "average price per port").await;
    assert!(sent.contains("\"header_row\":4"), "{sent}");
    assert!(
        sent.contains("\"columns\":[\"port\",\"month\",\"volume ($'000)\",\"price\"]"),
        "the real header: {sent}"
    );
    assert!(
        sent.contains("\"units\":[\"in thousands\",\"USD\",\"per tonne\",\"$\"]"),
        "{sent}"
    );
    assert!(sent.contains("its header is that row"), "{sent}");
    for v in ["Coffee", "Santos", "Veracruz"] {
        assert!(!sent.contains(v), "{v} was sent");
    }
}

#[tokio::test]
async fn the_clarifier_checks_minority_formats_when_the_profile_shows_them() {
    let sent = told(
        &[("stays.csv", stays().into_bytes())],
        "total revenue per month",
    )
    .await;
    assert!(
        sent.contains("a column is written in more than one date or number format"),
        "{sent}"
    );
}

/// A penguin survey: species and island codes in many rows each, and the
/// observer's name.
fn penguins() -> String {
    let mut t = String::from("species,island,observer,body_mass_g\n");
    let people = ["Ada Lovelace", "Alan Turing", "Grace Hopper"];
    for i in 0..36 {
        t.push_str(&format!(
            "{},{},{},{}\n",
            ["Adelie", "Gentoo"][i % 2],
            ["Biscoe", "Dream", "Torgersen"][i % 3],
            people[i % 3],
            3150 + i * 25,
        ));
    }
    t
}

#[tokio::test]
async fn a_category_behind_its_switch_is_named_with_its_number_of_values() {
    let sent = told(
        &[("penguins.csv", penguins().into_bytes())],
        "average body mass per island",
    )
    .await;
    assert!(
        sent.contains("{\"column\":\"island\",\"values\":3}"),
        "the switch is named: {sent}"
    );
    assert!(
        sent.contains("{\"column\":\"species\",\"values\":2}"),
        "{sent}"
    );
    assert!(sent.contains("approval view"), "{sent}");
    for v in ["Biscoe", "Torgersen", "Adelie", "Gentoo"] {
        assert!(!sent.contains(v), "{v} was sent");
    }
}

#[tokio::test]
async fn repeated_ids_differing_in_one_column_are_explained_in_the_prompt() {
    // 80 orders, 6 ids again with another amount, 2 rows twice exactly.
    let mut body = String::from("order_id,region,amount\n");
    for i in 0..80u32 {
        body.push_str(&format!("{},North,{}.25\n", 610_000 + i * 3, 300 + i));
    }
    for i in 0..6u32 {
        body.push_str(&format!("{},North,{}.75\n", 610_000 + i * 3, 900 + i));
    }
    for i in 40..42u32 {
        body.push_str(&format!("{},North,{}.25\n", 610_000 + i * 3, 300 + i));
    }
    let sent = told(
        &[("orders.csv", body.clone().into_bytes())],
        "total per region",
    )
    .await;
    assert!(
        sent.contains(
            "`order_id`: 8 rows repeat an earlier row's value — 2 exactly, 0 the same once case, \
spaces and number format are normalised, 6 differ in content; the columns that differ: `amount` (6 rows)"
        ),
        "{sent}"
    );
    assert!(sent.contains("the profile shows duplicate rows"), "{sent}");
    holds_no_cell(&sent, &body);
}

#[tokio::test]
async fn join_keys_of_different_shapes_get_the_share_of_values_found() {
    // Orders by a six-digit id; shipments by `ORD-` and seven digits, 40
    // of the 50 orders among them.
    let mut orders = String::from("order_id,amount\n");
    for i in 0..50u32 {
        orders.push_str(&format!("{},{}.25\n", 430_000 + i * 7, 20 + i));
    }
    let mut shipments = String::from("order_ref,carrier\n");
    for i in 0..40u32 {
        shipments.push_str(&format!(
            "ORD-{:07},{}\n",
            430_000 + i * 7,
            ["Ups", "Dhl"][(i % 2) as usize]
        ));
    }
    for i in 0..5u32 {
        shipments.push_str(&format!("ORD-{:07},Ups\n", 990_000 + i));
    }
    let sent = told(
        &[
            ("orders.csv", orders.clone().into_bytes()),
            ("shipments.csv", shipments.clone().into_bytes()),
        ],
        "carrier of each order",
    )
    .await;
    assert!(
        sent.contains(
            "- orders.csv column \"order_id\": 40 of its 50 distinct values are found in \
shipments.csv column \"order_ref\" (`######` vs `AAA-#######`)"
        ),
        "{sent}"
    );
    assert!(
        sent.contains("- shipments.csv column \"order_ref\": 40 of its 45 distinct values are found in orders.csv column \"order_id\""),
        "{sent}"
    );
    holds_no_cell(&sent, &orders);
    holds_no_cell(&sent, &shipments);
}

#[tokio::test]
async fn the_users_notes_reach_every_prompt_in_their_words_and_stay_with_the_workflow() {
    let body = stays();
    let sent = told_with_notes(
        &[("stays.csv", body.clone().into_bytes())],
        &[
            (
                0,
                None,
                None,
                "Stays of staff are free and should be left out.",
            ),
            (0, None, Some("rate"), "Rates are per night, before tax."),
        ],
        &["total revenue per month", "calendar months"],
    )
    .await;
    let file_note = "- stays.csv: Stays of staff are free and should be left out.";
    let column_note = "- stays.csv, column \"rate\": Rates are per night, before tax.";
    // The validator's prompt and each clarifier's: three requests or more.
    assert!(sent.matches(file_note).count() >= 3, "{sent}");
    assert!(sent.matches(column_note).count() >= 3, "{sent}");
    assert!(
        sent.contains("The user's notes on their data, in their own words"),
        "{sent}"
    );
    assert!(
        !sent.contains("\"notes\""),
        "the notes are not in the extract's JSON: {sent}"
    );
    holds_no_cell(&sent, &body);
}

#[tokio::test]
async fn a_note_on_a_column_the_file_does_not_have_is_refused_naming_it() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Recording::new());
    let f = s
        .add_upload_bytes("stays.csv", stays().as_bytes())
        .await
        .expect("upload");
    let note = |column: &str| DataNote {
        file_id: f.file_id.clone(),
        sheet: None,
        column: Some(column.to_owned()),
        text: "in euros".into(),
    };
    let e = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![f.file_id.clone()],
            notes: vec![note("price")],
            ..Default::default()
        })
        .expect_err("no such column");
    assert!(e.to_string().contains("no column \"price\""), "{e}");
    let w = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![f.file_id.clone()],
            notes: vec![note("rate")],
            ..Default::default()
        })
        .expect("a column it has");
    let v = s
        .get_version(&w.workflow_id, &w.version_id)
        .expect("version");
    assert_eq!(
        v.file_extracts[0]["notes"],
        json!([{"column": "rate", "note": "in euros"}]),
        "kept in the approved extract"
    );
}

#[tokio::test]
async fn a_value_in_a_note_is_no_allowance_of_the_guard() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Recording::new());
    let mut csv = String::from("customer,city,amount\n");
    for i in 0..40 {
        let city = ["Trondheim", "Stavanger", "Bergen"][i % 3];
        csv.push_str(&format!("Person{i} Surname{i},{city},{i}.50\n"));
    }
    let f = s
        .add_upload_bytes("sales.csv", csv.as_bytes())
        .await
        .expect("upload");
    let w = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![f.file_id.clone()],
            notes: vec![DataNote {
                file_id: f.file_id.clone(),
                sheet: None,
                column: None,
                text: "Orders from Stavanger are tests.".into(),
            }],
            ..Default::default()
        })
        .expect("approve");
    // Text checked strictly (runtime text, untyped parts) still refuses
    // the note's value: the note's words are not allowed as the extract's.
    let guard = s.guard_for(&w.version_id).expect("guard");
    assert!(
        !guard.check_text("the orders of Stavanger").is_empty(),
        "a note's words are no allowance"
    );
}

#[tokio::test]
async fn a_note_that_names_someone_is_refused_at_approval_and_an_ordinary_one_is_not() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service_with(home.path(), Recording::new());
    let mut csv = String::from("customer,city,amount\n");
    for i in 0..40 {
        csv.push_str(&format!("Person{i} Surname{i},Town{},{i}.50\n", i % 3));
    }
    csv.push_str("Zelda Quimby,Town1,12.50\n");
    let f = s
        .add_upload_bytes("sales.csv", csv.as_bytes())
        .await
        .expect("upload");
    let create = |text: &str| {
        s.create_workflow(CreateWorkflow {
            file_ids: vec![f.file_id.clone()],
            notes: vec![DataNote {
                file_id: f.file_id.clone(),
                sheet: None,
                column: None,
                text: text.into(),
            }],
            ..Default::default()
        })
    };
    let e = create("Zelda Quimby is a test account.").expect_err("a name");
    let e = e.to_string();
    assert!(e.contains("notes: a note names someone"), "{e}");
    assert!(e.contains("from sales.csv, column \"customer\""), "{e}");
    assert!(
        !e.contains("Zelda"),
        "the refusal shows the value masked: {e}"
    );
    // A town is a category of the file, no one's name; amounts in a note
    // are ordinary words.
    let w = create("Town1 is our head office; amounts under 1.00 are refunds.")
        .expect("an ordinary note");
    s.send_message(&w.workflow_id, "total per city")
        .await
        .expect("the note goes with the request");
}
