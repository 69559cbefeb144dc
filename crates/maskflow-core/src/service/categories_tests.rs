//! Issue #28 on a realistic file (species and island codes, people's
//! names, years, body masses, blanks), against a back end that records
//! every request it is sent:
//! - point 1: a category column switched off sends none of its values (and
//!   refuses nothing); switched on, exactly its values are sent, and a
//!   value of a column left off is still stopped;
//! - point 7: a value the user typed is located in their words (not
//!   echoed) with its source, one
//!   confirmation covers it in that workflow only, a year passes, and a
//!   person's name is still stopped until confirmed;
//! - issue #38 point 4: a category word the user typed identifies no one:
//!   it is sent as written, and its ledger row notes it.

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
        let clarifier: Vec<Value> = (0..20)
            .map(|i| json!({"needs_clarification": true, "question": format!("Question {i}?")}))
            .collect();
        let replay = ReplayProvider::from_value(&json!({
            "validator": [{"feasible": true}, {"feasible": true}, {"feasible": true}],
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

/// A penguin survey: species and island codes, each in 12 or 18 rows; the
/// observer's name; a year; a body mass; a sex with blanks.
fn penguins() -> String {
    let mut t = String::from("species,island,observer,year,body_mass_g,sex\n");
    let people = ["Ada Lovelace", "Alan Turing", "Grace Hopper"];
    for i in 0..36 {
        let sex = if i % 4 == 0 { "" } else { "female" };
        t.push_str(&format!(
            "{},{},{},{},{},{sex}\n",
            ["Adelie", "Gentoo"][i % 2],
            ["Biscoe", "Dream", "Torgersen"][i % 3],
            people[i % 3],
            2007 + i % 3,
            3150 + i * 25,
        ));
    }
    t
}

const ISLANDS: [&str; 2] = ["Biscoe", "Torgersen"];
const SPECIES: [&str; 2] = ["Adelie", "Gentoo"];

/// The words of `content` a match points at (ASCII here: UTF-16 offsets are bytes).
fn typed<'a>(content: &'a str, m: &maskflow_privacy::GuardMatch) -> Option<&'a str> {
    let [a, b] = m.at?;
    content.get(a as usize..b as usize)
}

/// The notes of the ledger's rows.
fn noted(s: &Service) -> Vec<String> {
    crate::store::llm_calls::list(&s.db(), None, 200, 0)
        .expect("ledger")
        .into_iter()
        .filter_map(|e| e.note)
        .collect()
}

fn blocked(r: Result<MessageReply>) -> Vec<maskflow_privacy::GuardMatch> {
    match r {
        Err(CoreError::Provider(ProviderError::PrivacyBlocked(m))) => m,
        other => panic!("expected a privacy block, got {other:?}"),
    }
}

#[tokio::test]
async fn a_category_switched_off_sends_nothing_switched_on_exactly_its_values() {
    let home = tempfile::tempdir().expect("tmp");
    let rec = Recording::new();
    let s = service_with(home.path(), rec.clone());
    let file = s
        .add_upload_bytes("penguins.csv", penguins().as_bytes())
        .await
        .expect("upload");
    let offered: Vec<&str> = file.categories.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(
        offered,
        ["species", "island", "year", "sex"],
        "{:?}",
        file.categories
    );
    let extract = file.extract.to_string();
    for v in ISLANDS.iter().chain(&SPECIES) {
        assert!(
            !extract.contains(v),
            "{v} is in the extract before approval"
        );
    }

    // Off: the builder's prompt has none of the values, and nothing is refused.
    let off = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("approve");
    s.send_message(&off.workflow_id, "average body mass per island and species")
        .await
        .expect("sent");
    let sent = rec.received();
    assert!(sent.contains("island"), "the column is named: {sent}");
    for v in ISLANDS.iter().chain(&SPECIES) {
        assert!(!sent.contains(v), "{v} reached the back end: {sent}");
    }

    // On (island only): exactly its values are sent, with their counts.
    let on = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![file.file_id.clone()],
            show_categories: vec![CategoryChoice {
                file_id: file.file_id.clone(),
                sheet: None,
                column: "island".into(),
            }],
            ..Default::default()
        })
        .expect("approve with island");
    // The same approval with the extract sent as uploaded (what the
    // refusal said to send) is taken: it was refused as differing.
    let as_uploaded: super::ExtractInput =
        serde_json::from_value(file.extract.clone()).expect("extract");
    s.create_workflow(CreateWorkflow {
        file_ids: vec![file.file_id.clone()],
        file_extracts: vec![as_uploaded],
        show_categories: vec![CategoryChoice {
            file_id: file.file_id.clone(),
            sheet: None,
            column: "island".into(),
        }],
        ..Default::default()
    })
    .expect("approve with island, the extract as uploaded");
    let v = s
        .get_version(&on.workflow_id, &on.version_id)
        .expect("version");
    assert_eq!(
        v.file_extracts[0]["categories"],
        json!([{"column": "island", "values": [
            {"value": "Biscoe", "count": 12}, {"value": "Dream", "count": 12},
            {"value": "Torgersen", "count": 12}]}])
    );
    let before = super::lock(&rec.seen).len();
    s.send_message(&on.workflow_id, "average body mass per island")
        .await
        .expect("sent");
    let sent = super::lock(&rec.seen)[before..].join("\n");
    for v in ISLANDS {
        assert!(sent.contains(v), "{v} was switched on: {sent}");
    }
    for v in SPECIES {
        assert!(!sent.contains(v), "{v} was not switched on: {sent}");
    }
    // The user may name a switched-on value; one left off is a category
    // word of theirs (#38): sent as they wrote it, and noted in the ledger.
    s.send_message(&on.workflow_id, "only Torgersen")
        .await
        .expect("a switched-on value passes");
    s.send_message(&on.workflow_id, "only Gentoo")
        .await
        .expect("a category word identifies no one");
    assert!(rec.received().contains("only Gentoo"));
    assert!(
        noted(&s).iter().any(|n| n.contains("column \"species\"")),
        "{:?}",
        noted(&s)
    );
    // A value of a column left off never reaches the back end in Maskflow's
    // own text, only in the user's words.
    let version = s
        .get_version(&on.workflow_id, &on.version_id)
        .expect("version");
    let extracts = serde_json::to_string(&version.file_extracts).expect("json");
    assert!(!extracts.contains("Gentoo"), "{extracts}");

    // A choice that is no candidate (a column of names) is refused.
    let err = s
        .create_workflow(CreateWorkflow {
            file_ids: vec![file.file_id.clone()],
            show_categories: vec![CategoryChoice {
                file_id: file.file_id.clone(),
                sheet: None,
                column: "observer".into(),
            }],
            ..Default::default()
        })
        .expect_err("not a category");
    assert!(err.to_string().contains("observer"), "{err}");
}

#[tokio::test]
async fn the_users_own_words_are_confirmed_once_per_workflow() {
    let home = tempfile::tempdir().expect("tmp");
    let rec = Recording::new();
    let s = service_with(home.path(), rec.clone());
    let file = s
        .add_upload_bytes("penguins.csv", penguins().as_bytes())
        .await
        .expect("upload");
    let approve = || {
        s.create_workflow(CreateWorkflow {
            file_ids: vec![file.file_id.clone()],
            ..Default::default()
        })
        .expect("approve")
    };
    let (one, two) = (approve(), approve());
    let w = &one.workflow_id;

    // A year on its own is no one's.
    s.send_message(w, "only the rows of 2008 please")
        .await
        .expect("a year passes");

    // A category word identifies no one (#38): sent, with a ledger note
    // that names where the value comes from.
    s.send_message(w, "only Biscoe")
        .await
        .expect("a category word passes");
    assert!(
        noted(&s)
            .iter()
            .any(|n| n.contains("your words included values of your file")
                && n.contains("penguins.csv, column \"island\"")),
        "{:?}",
        noted(&s)
    );

    // A person's full name is stopped until confirmed: located in the
    // user's words, with where it comes from.
    let said = "rows seen by Ada Lovelace";
    let m = blocked(s.send_message(w, said).await);
    assert!(
        m.iter().any(|x| typed(said, x) == Some("Ada Lovelace")
            && x.source == "penguins.csv, column \"observer\""),
        "{m:?}"
    );
    assert!(!rec.received().contains("Ada Lovelace"));
    s.send_message_with(w, said, true).await.expect("confirmed");
    // From then on it passes in this workflow, also in other words…
    s.send_message(w, "and split Ada Lovelace's rows by sex")
        .await
        .expect("confirmed once");
    // …but not in another workflow, and an unconfirmed name is stopped.
    blocked(s.send_message(&two.workflow_id, said).await);
    blocked(s.send_message(w, "rows seen by Alan Turing").await);
    let sent = rec.received();
    assert!(sent.contains("Ada Lovelace") && sent.contains("Biscoe"));
    assert!(!sent.contains("Alan Turing"));
}
