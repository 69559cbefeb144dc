//! Issue #38, egress by provenance: Maskflow's own prompts — built from the
//! real extracts and profiles of generated files — are never refused, for
//! an empty or an ordinary message, whatever the files hold; the regression
//! tests of findings 1–4 and a seeded property loop over generated files.
//! The requests go through the guarded provider to a recording back end,
//! and the recording holds no raw value.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::prompts::{builder_request_for, clarifier_request, validator_request};
use crate::builder::{plan, review};
use maskflow_clock::{StepClock, UlidGen};
use maskflow_extractors::{ExtractOptions, Registry, ValueOptions, profile};
use maskflow_llm::{
    BoxFuture, ChatMessage, ChatRole, DeltaSink, LlmReply, LlmRequest, PartKind, Provider,
    ProviderError,
};
use maskflow_privacy::guard::{self, GuardIndex};
use maskflow_privacy::{CallSink, GuardedProvider, LedgerEntry};

/// Each file written, extracted (10 samples) and profiled as an upload is,
/// then made outbound as approval does.
fn approved(dir: &Path, files: &[(String, Vec<u8>)]) -> Vec<Value> {
    let registry = Registry::with_defaults();
    files
        .iter()
        .map(|(name, body)| {
            let p = dir.join(name);
            std::fs::write(&p, body).expect("write");
            let mut e = registry
                .extract(&p, &ExtractOptions::with_samples(10), &mut |_| {})
                .expect("extract");
            let tables =
                profile::profile_path(&registry, &p, &ValueOptions::default()).expect("profile");
            profile::attach(&mut e, tables);
            let v = serde_json::to_value(&e).expect("json");
            crate::names::outbound(&v, &[]).extract
        })
        .collect()
}

/// The guard as a version's (`Service::guard_for`): its files indexed and
/// its approved extracts allowed — without their profiles, so that no
/// figure of a profile passes for being on an allow-list.
fn version_guard(dir: &Path, files: &[(String, Vec<u8>)], extracts: &[Value]) -> GuardIndex {
    let mut index = GuardIndex::new();
    for ((name, _), e) in files.iter().zip(extracts) {
        index.add_file(&dir.join(name), name, u64::MAX);
        let mut bare = e.clone();
        bare.as_object_mut().map(|o| o.remove("profile"));
        guard::allow_json(&mut index, &bare);
    }
    index
}

/// Conversations: none yet, one ordinary message, a short exchange.
fn conversations() -> Vec<Vec<ChatMessage>> {
    vec![
        vec![],
        vec![ChatMessage::user_words("")],
        vec![ChatMessage::user_words(
            "total the amount per month and write it to a new sheet",
        )],
        vec![
            ChatMessage::user_words("keep the rows of last year, drop the empty ones"),
            ChatMessage::new(ChatRole::Assistant, "Which column holds the date?"),
            ChatMessage::user_words("the first one, as the report says"),
        ],
    ]
}

/// Every request Maskflow builds from the extracts and a conversation.
fn requests(extracts: &Value, said: &[ChatMessage]) -> Vec<LlmRequest> {
    vec![
        validator_request(extracts, said),
        clarifier_request(extracts, said),
        builder_request_for(extracts, said, "", None, Some(&sizes_of(extracts)), None),
        plan::planning_request(extracts, said, None),
        review::plan_request(extracts, said, "1. Read the file.\n2. Total per month."),
    ]
}

/// Sizes as the engine measures them: every file's bytes (a figure of the
/// file's order, as a cell could hold) and the default limits.
fn sizes_of(extracts: &Value) -> super::sizes::RunSizes {
    super::sizes::RunSizes {
        bytes: super::current::extract_filenames(extracts)
            .into_iter()
            .enumerate()
            .map(|(i, f)| (f, 1000 + i as u64 * 7919))
            .collect(),
        limits: maskflow_runner::Limits::default(),
    }
}

/// Asserts no request of any conversation is refused.
fn never_refused(index: &GuardIndex, extracts: &Value, what: &str) {
    for said in conversations() {
        for r in requests(extracts, &said) {
            let v = index.judge_request(&r, &[]);
            assert!(
                v.refused.is_empty(),
                "{what}: the {} request with {} messages was refused: {}",
                r.role.key(),
                said.len(),
                guard::blocked_message(&v.refused)
            );
        }
    }
}

/// The text of the parts of `kind` of every message of `r`.
fn parts_of(r: &LlmRequest, kind: PartKind) -> String {
    r.messages
        .iter()
        .flat_map(|m| {
            m.parts()
                .into_iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, t)| t.to_owned())
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Finding 1: with hundreds of thousands of six-digit ids nearly every
/// six-digit number is a raw value, the profile's own row counts too.
#[test]
fn six_digit_ids_never_refuse_maskflow_s_own_counts() {
    let dir = tempfile::tempdir().expect("tmp");
    let rows = 150_000u32;
    let mut csv = String::from("id,qty\n");
    for i in 0..rows {
        // A fifth in another shape: the profile counts each shape's rows.
        let prefix = if i % 5 == 0 { "prod" } else { "PROD" };
        csv.push_str(&format!("{prefix}-{},{}\n", 100_000 + i, i % 7));
    }
    let files = vec![("big.csv".to_owned(), csv.into_bytes())];
    let extracts = approved(dir.path(), &files);
    let index = version_guard(dir.path(), &files, &extracts);
    let extracts = Value::Array(extracts);
    // The collision is real: the prompt says the rows of each shape (and
    // in all), each an id's digits.
    let validator = validator_request(&extracts, &[]);
    let shape_rows = rows / 5 * 4;
    assert!(
        validator.messages[0]
            .content
            .contains(&shape_rows.to_string())
    );
    let typed = [ChatMessage::user_words(shape_rows.to_string())];
    assert!(
        !index
            .check_request(&clarifier_request(&Value::Null, &typed), &[])
            .is_empty(),
        "{shape_rows} is an id's digits"
    );
    never_refused(&index, &extracts, "six-digit ids");
    // The user typing an id is still refused, and shown where.
    let said = [ChatMessage::user_words("only PROD-100042 please")];
    let m = index.check_request(&validator_request(&extracts, &said), &[]);
    assert!(
        !m.is_empty() && m.iter().all(|m| m.in_user_text && m.at.is_some()),
        "{m:?}"
    );
}

/// Finding 2: a computed count equal to another column's value.
#[test]
fn a_count_equal_to_a_value_of_another_column_is_not_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let rows = 1134u32;
    let mut csv = String::from("organisation,affected,method\n");
    for i in 0..rows {
        csv.push_str(&format!(
            "Org{} Ltd,{},{}\n",
            i * 13 % 9973,
            1000 + i,
            ["hacked", "lost laptop", "insider"][(i % 3) as usize]
        ));
    }
    let files = vec![("breaches.csv".to_owned(), csv.into_bytes())];
    let extracts = approved(dir.path(), &files);
    let index = version_guard(dir.path(), &files, &extracts);
    let extracts = Value::Array(extracts);
    assert!(
        validator_request(&extracts, &[]).messages[0]
            .content
            .contains("1134")
    );
    // 1134 is a value; a small number in the user's words identifies no
    // one: sent, and noted.
    let said = [ChatMessage::user_words("the 1134 affected")];
    let v = index.judge_request(&clarifier_request(&Value::Null, &said), &[]);
    assert!(v.refused.is_empty(), "{v:?}");
    assert!(v.note().is_some(), "1134 is a value: {v:?}");
    never_refused(&index, &extracts, "a count equal to a value");
}

/// Finding 3: a workbook whose cells hold `n/a` against the prompt's own
/// "(N/A, -, null…)".
#[test]
fn n_a_cells_do_not_refuse_the_prompt_s_own_placeholders() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    for (c, h) in ["name", "phone", "notes"].iter().enumerate() {
        sheet.write_string(0, c as u16, *h).expect("header");
    }
    for r in 1..=60u32 {
        let notes = match r % 4 {
            0 => "N/A".to_owned(),
            1 => "n/a".to_owned(),
            2 => "-".to_owned(),
            _ => format!("called back on day {r}"),
        };
        let row = [
            format!("Ottoline Okonkwo{r}"),
            format!("+44 20 7946 {:04}", r * 17),
            notes,
        ];
        for (c, v) in row.iter().enumerate() {
            sheet.write_string(r, c as u16, v).expect("cell");
        }
    }
    let bytes = book.save_to_buffer().expect("xlsx");
    let files = vec![("contacts.xlsx".to_owned(), bytes)];
    let extracts = approved(dir.path(), &files);
    let index = version_guard(dir.path(), &files, &extracts);
    let extracts = Value::Array(extracts);
    // Maskflow's own words for the placeholders it found.
    let own = "rows `n/a`";
    assert!(
        validator_request(&extracts, &[]).messages[0]
            .content
            .contains(own)
    );
    never_refused(&index, &extracts, "n/a cells");
}

/// Finding 4: a free-text English column against Maskflow's own inputs
/// paragraph (`to the`, `by the`, `a single`).
#[test]
fn an_english_free_text_column_does_not_refuse_the_inputs_paragraph() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut csv = String::from("ref,remarks\n");
    let phrases = [
        "to the",
        "by the",
        "a single",
        "as the",
        "sent to the depot",
        "left by the back door",
        "the bird was seen this time",
    ];
    for i in 0..500u32 {
        csv.push_str(&format!("R{:05},{}\n", i * 31, phrases[(i % 7) as usize]));
    }
    let files = vec![("remarks.csv".to_owned(), csv.into_bytes())];
    let extracts = approved(dir.path(), &files);
    let index = version_guard(dir.path(), &files, &extracts);
    let extracts = Value::Array(extracts);
    let builder = builder_request_for(&extracts, &[], "", None, None, None);
    assert!(
        builder.messages[0]
            .content
            .contains("to the input of its name")
    );
    never_refused(&index, &extracts, "free text");
    let said = [ChatMessage::user_words(
        "as the remarks say, the bird came by the depot this time",
    )];
    let v = index.judge_request(&clarifier_request(&extracts, &said), &[]);
    assert!(v.refused.is_empty(), "{v:?}");
}

/// A tiny seeded generator (xorshift), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const FIRST: [&str; 8] = [
    "Ottoline",
    "Zebulon",
    "Marguerite",
    "Ada",
    "John",
    "Mary",
    "Kwame",
    "Siobhan",
];
const LAST: [&str; 8] = [
    "Okonkwo",
    "Marchetti",
    "Lovelace",
    "Smith",
    "Brown",
    "Nakamura",
    "Dubois",
    "Fenwick",
];
const WORDS: [&str; 16] = [
    "the", "to", "a", "single", "by", "of", "order", "was", "sent", "late", "as", "input", "name",
    "field", "file", "this",
];
const PLACEHOLDERS: [&str; 6] = ["n/a", "N/A", "-", "null", "NULL", ""];

/// A generated CSV: a title row or not, then columns of random kinds.
fn generated(rng: &mut Rng) -> (Vec<u8>, Vec<String>) {
    let rows = 200 + rng.below(1800);
    let kinds: Vec<u64> = (0..2 + rng.below(5)).map(|_| rng.below(8)).collect();
    let digits = 1 + rng.below(9) as u32;
    let headers: Vec<String> = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let h = [
                "id", "customer", "email", "status", "amount", "remarks", "code", "when",
            ];
            format!("{}_{i}", h[*k as usize])
        })
        .collect();
    let mut out = String::new();
    if rng.below(2) == 0 {
        out.push_str("Monthly report, USD per tonne\n");
    }
    out.push_str(&headers.join(","));
    out.push('\n');
    let mut identifying = Vec::new();
    for r in 0..rows {
        let cells: Vec<String> = kinds
            .iter()
            .map(|k| match k {
                0 => (r % 10u64.pow(digits)).to_string(),
                1 => {
                    let initial = char::from(b'A' + rng.below(26) as u8);
                    let n = format!("{} {initial}. {}", rng.pick(&FIRST), rng.pick(&LAST));
                    identifying.push(n.clone());
                    n
                }
                2 => {
                    let e = format!("{}.{}{r}@example.org", rng.pick(&FIRST), rng.pick(&LAST))
                        .to_lowercase();
                    identifying.push(e.clone());
                    e
                }
                3 => rng
                    .pick(&["shipped", "Unleaded", "CD-ROM", "takings"])
                    .to_owned(),
                4 => format!("{}.{:02}", rng.below(5000), rng.below(100)),
                5 => {
                    let n = 1 + rng.below(9);
                    let words: Vec<&str> = (0..n).map(|_| rng.pick(&WORDS)).collect();
                    match rng.below(6) {
                        0 => rng.pick(&PLACEHOLDERS).to_owned(),
                        _ => words.join(" "),
                    }
                }
                6 => {
                    let c = format!("PROD-{:06}", rng.below(1_000_000));
                    identifying.push(c.clone());
                    c
                }
                _ => format!(
                    "2024-{:02}-{:02} 14:00",
                    1 + rng.below(12),
                    1 + rng.below(28)
                ),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    (out.into_bytes(), identifying)
}

/// Property: over generated files (ids of 1 to 9 digits, names, e-mails,
/// categories, measures, free text with placeholders, codes, dates and
/// times, title rows, several files), no request Maskflow builds for an
/// empty or ordinary message is refused, and the masked extracts hold no
/// identifying value of the files.
#[test]
fn generated_files_never_refuse_maskflow_s_own_requests() {
    for seed in 1..=10u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let dir = tempfile::tempdir().expect("tmp");
        let mut files = Vec::new();
        let mut identifying = Vec::new();
        for f in 0..1 + rng.below(3) {
            let (bytes, ids) = generated(&mut rng);
            files.push((format!("export_{f}.csv"), bytes));
            identifying.extend(ids);
        }
        let extracts = approved(dir.path(), &files);
        let index = version_guard(dir.path(), &files, &extracts);
        let extracts = Value::Array(extracts);
        never_refused(&index, &extracts, &format!("seed {seed}"));
        let builder = builder_request_for(&extracts, &[], "", None, None, None);
        let extract = parts_of(&builder, PartKind::Extract);
        assert!(!extract.is_empty());
        for v in &identifying {
            assert!(
                !extract.contains(v.as_str()),
                "seed {seed}: {v:?} is in the extract part"
            );
        }
    }
}

/// What the recording back end was sent.
#[derive(Debug, Default)]
struct Recording(Mutex<Vec<String>>);

impl Provider for Recording {
    fn name(&self) -> &str {
        "recording"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<LlmReply, ProviderError>> {
        let body = serde_json::to_string(&request.messages).unwrap_or_default();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(body);
        Box::pin(async {
            Ok(LlmReply {
                text: r#"{"feasible": true}"#.into(),
            })
        })
    }
}

#[derive(Debug, Default)]
struct Ledger(Mutex<Vec<LedgerEntry>>);

impl CallSink for Ledger {
    fn record(&self, e: LedgerEntry) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(e);
    }
}

/// The requests of the findings' files reach a recording back end through
/// the guarded provider; the recording holds no identifying raw value, and
/// a message naming a customer is refused and not sent.
#[tokio::test]
async fn a_recording_back_end_receives_the_requests_and_no_raw_value() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut rng = Rng(0x5EED);
    let (bytes, identifying) = generated(&mut rng);
    let files = vec![("orders.csv".to_owned(), bytes)];
    let extracts = approved(dir.path(), &files);
    let index = Arc::new(version_guard(dir.path(), &files, &extracts));
    let extracts = Value::Array(extracts);
    let recording = Arc::new(Recording::default());
    let ledger = Arc::new(Ledger::default());
    let clock = Arc::new(StepClock::new(0));
    let provider = GuardedProvider::new(
        recording.clone(),
        index,
        ledger.clone(),
        clock.clone(),
        Arc::new(UlidGen::new(clock)),
    );
    for said in conversations() {
        for r in requests(&extracts, &said) {
            provider
                .complete(&r, &|_| {})
                .await
                .unwrap_or_else(|e| panic!("{} refused: {e}", r.role.key()));
        }
    }
    let sent = recording
        .0
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(sent.len(), conversations().len() * 5);
    for body in &sent {
        for v in &identifying {
            assert!(!body.contains(v.as_str()), "{v:?} was sent");
        }
    }
    if let Some(name) = identifying.iter().find(|v| v.contains(' ')) {
        let said = [ChatMessage::user_words(format!(
            "only the orders of {name}"
        ))];
        let err = provider
            .complete(&clarifier_request(&extracts, &said), &|_| {})
            .await
            .expect_err("a customer's name is refused");
        assert!(matches!(err, ProviderError::PrivacyBlocked(_)), "{err}");
        assert_eq!(recording.0.lock().map(|s| s.len()).unwrap_or(0), sent.len());
    }
}
