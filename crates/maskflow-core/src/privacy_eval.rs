//! The privacy evaluation (issue #13), rerun by `cargo test`: a generated
//! corpus of realistic files of every kind (CSV, TSV, text, a two-sheet
//! workbook, and the Word, PDF and image fixtures) holding names, e-mail
//! addresses, phone numbers, amounts, dates, IDs and prose; outbound texts
//! that must pass (Maskflow's prompts over the masked extracts, masked
//! tracebacks of common errors, LLM replies, user messages in plain words)
//! and texts that must be blocked (each identifying value class in its
//! reformatted variants). Its figures are printed (`--nocapture`).

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::builder::mask::{Grammar, Machine, repair_feedback};
use crate::conversation::prompts;
use maskflow_llm::{ChatMessage, ChatRole, LlmRequest, Role};
use maskflow_privacy::guard::{DEFAULT_MAX_BYTES, GuardIndex, allow_json};

const FIRST: [&str; 12] = [
    "Ada",
    "Zebulon",
    "Grace",
    "Ottoline",
    "Marcus",
    "Ines",
    "Tobiah",
    "Priya",
    "John",
    "Mary",
    "Oluwaseun",
    "Henrike",
];
const LAST: [&str; 12] = [
    "Lovelace",
    "Quagmire",
    "Okonkwo",
    "Fairweather",
    "Smith",
    "Vanterpool",
    "Garcia",
    "Hargreaves",
    "Nakamura",
    "Brown",
    "Thistlewood",
    "Abernathy",
];
const NOTES: [&str; 6] = [
    "Called about the order, line 3 of the file had an error",
    "Customer moved to another city and wants the invoice again",
    "Order shipped late; the file upload failed with an error",
    "Asked why line items were missing from the order",
    "Support ticket closed after the city field was fixed",
    "Refund approved for the damaged order, see file notes",
];

/// One person of the corpus.
struct Person {
    name: String,
    last: &'static str,
    email: String,
    phone: String,
    amount: f64,
    date: (u32, u32, u32),
    id: String,
}

fn people(n: usize) -> Vec<Person> {
    (0..n)
        .map(|i| {
            let first = FIRST[i % FIRST.len()];
            let last = LAST[(i * 7 + 3) % LAST.len()];
            Person {
                name: format!("{first} {last}"),
                last,
                email: format!(
                    "{}.{}{}@mail-{}.org",
                    first.to_lowercase(),
                    last.to_lowercase(),
                    i,
                    i % 5
                ),
                phone: format!("555{:07}", 1_234_567 + i * 7919),
                amount: 1000.0 + (i * 3137 % 90_000) as f64 + 0.5,
                date: (
                    1970 + (i % 40) as u32,
                    1 + (i % 12) as u32,
                    1 + (i * 5 % 28) as u32,
                ),
                id: format!("AC-{:04}-{:04}", 100 + i, (i * 7717) % 10_000),
            }
        })
        .collect()
}

fn write_corpus(dir: &Path, people: &[Person]) -> Vec<(std::path::PathBuf, String)> {
    let mut csv = String::from("name,email,phone,amount,born,account,notes\n");
    let mut tsv = String::new(); // headerless
    let mut text = String::from("Case notes\n");
    for (i, p) in people.iter().enumerate() {
        let (y, m, d) = p.date;
        let _ = writeln!(
            csv,
            "{},{},{},{:.2},{y:04}-{m:02}-{d:02},{},\"{}\"",
            p.name,
            p.email,
            p.phone,
            p.amount,
            p.id,
            NOTES[i % NOTES.len()]
        );
        let _ = writeln!(tsv, "{}\t{}\t{}", p.name, p.phone, p.id);
        let _ = writeln!(
            text,
            "Patient {} was seen on {d:02}/{m:02}/{y:04}; reach them at {}.",
            p.name, p.email
        );
    }
    let mut files = Vec::new();
    for (name, body) in [
        ("customers.csv", csv),
        ("contacts.tsv", tsv),
        ("notes.txt", text),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write corpus");
        files.push((p, name.to_owned()));
    }
    let xlsx = dir.join("payroll.xlsx");
    let mut wb = rust_xlsxwriter::Workbook::new();
    let money = rust_xlsxwriter::Format::new().set_num_format("#,##0.00");
    let date = rust_xlsxwriter::Format::new().set_num_format("dd/mm/yyyy");
    let s = wb.add_worksheet().set_name("Staff").expect("sheet");
    for (c, h) in ["employee", "salary", "hired"].iter().enumerate() {
        s.write(0, c as u16, *h).expect("cell");
    }
    for (i, p) in people.iter().enumerate() {
        let r = i as u32 + 1;
        let (y, m, d) = p.date;
        s.write(r, 0, p.name.as_str()).expect("cell");
        s.write_with_format(r, 1, p.amount * 2.0, &money)
            .expect("cell");
        let dt = rust_xlsxwriter::ExcelDateTime::from_ymd(y as u16 + 40, m as u8, d as u8)
            .expect("date");
        s.write_datetime_with_format(r, 2, &dt, &date)
            .expect("cell");
    }
    let s2 = wb.add_worksheet().set_name("Contacts").expect("sheet");
    for (i, p) in people.iter().enumerate() {
        s2.write(i as u32, 0, p.email.as_str()).expect("cell");
    }
    wb.save(&xlsx).expect("xlsx");
    files.push((xlsx, "payroll.xlsx".into()));
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/docs");
    for f in ["report.pdf", "report.docx"] {
        files.push((fixtures.join(f), f.to_owned()));
    }
    files
}

/// Every reformatted variant of each identifying value that must be blocked.
fn must_block(people: &[Person]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for p in people.iter().step_by(7) {
        let (y, m, d) = p.date;
        let digits = &p.phone;
        out.push(("name", p.name.clone()));
        out.push(("name", p.name.to_uppercase()));
        out.push(("name", format!("customer {} asked", p.name.to_lowercase())));
        out.push(("name", p.name.replace(' ', "  ")));
        if !maskflow_privacy::words::is_common(maskflow_privacy::keys::token_hash(p.last)) {
            out.push(("rare name", format!("Mr {}", p.last)));
        }
        out.push(("email", p.email.clone()));
        out.push(("email", p.email.to_uppercase()));
        out.push(("phone", digits.clone()));
        out.push((
            "phone",
            format!("{}-{}-{}", &digits[..3], &digits[3..6], &digits[6..]),
        ));
        out.push((
            "phone",
            format!("({}) {}-{}", &digits[..3], &digits[3..6], &digits[6..]),
        ));
        out.push((
            "phone",
            format!("+1 {} {} {}", &digits[..3], &digits[3..6], &digits[6..]),
        ));
        out.push((
            "phone",
            format!("{}.{}.{}", &digits[..3], &digits[3..6], &digits[6..]),
        ));
        let whole = p.amount.trunc() as u64;
        out.push(("amount", format!("{:.2}", p.amount)));
        out.push(("amount", format!("{},{:03}.50", whole / 1000, whole % 1000)));
        out.push(("amount", format!("{}.{:03},50", whole / 1000, whole % 1000)));
        out.push(("amount", format!("{:.1}", p.amount * 2.0)));
        let doubled = (p.amount * 2.0) as u64;
        out.push((
            "amount",
            format!("{},{:03}", doubled / 1000, doubled % 1000),
        ));
        out.push(("date", format!("{y:04}-{m:02}-{d:02}")));
        out.push(("date", format!("{d:02}/{m:02}/{y:04}")));
        out.push(("date", format!("{m}/{d}/{y}")));
        out.push(("date", format!("{y:04}{m:02}{d:02}")));
        out.push(("date", format!("{d} {} {y}", month_name(m))));
        out.push(("date", format!("{} {d}, {y}", month_name(m))));
        out.push(("id", p.id.clone()));
        out.push(("id", p.id.replace('-', " ")));
        out.push(("id", p.id.replace('-', "")));
    }
    for doc in [
        "Hartmann",
        "Quixote",
        "wilhelmina@example.com",
        "PROD-194211",
        "Marrakesh",
    ] {
        out.push(("document text", doc.to_owned()));
    }
    out
}

fn month_name(m: u32) -> &'static str {
    [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ][(m as usize).saturating_sub(1) % 12]
}

const TRACEBACKS: [&str; 6] = [
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 12, in <module>\n    total = df['amount'].sum()\n  File \"/opt/env/lib/python3.12/site-packages/pandas/core/frame.py\", line 4102, in __getitem__\n    indexer = self.columns.get_loc(key)\nKeyError: 'amount'",
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 8, in <module>\n    value = float(row['notes'])\nValueError: could not convert string to float: 'Called about the order, line 3 of the file had an error'",
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 5, in <module>\n    when = datetime.strptime(row['born'], '%d/%m/%Y')\nValueError: time data '1971-02-06' does not match format '%d/%m/%Y'",
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 3, in <module>\n    import openpyxl\nModuleNotFoundError: No module named 'openpyxl'",
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 20, in <module>\n    share = part / total\nZeroDivisionError: division by zero",
    "Traceback (most recent call last):\n  File \"/tmp/run/script.py\", line 9, in <module>\n    name = row['name'] + 1\nTypeError: can only concatenate str (not \"int\") to str",
];

const SCRIPT: &str = "import pandas as pd\nfrom datetime import datetime\ndf = pd.read_csv(INPUTS['customers'])\nimport openpyxl\nwhen = datetime.strptime(row['born'], '%d/%m/%Y')\nvalue = float(row['notes'])\nname = row['name'] + 1\nindexer = self.columns.get_loc(key)\ntotal = df['amount'].sum()\nshare = part / total\n";

const USER_MESSAGES: [&str; 10] = [
    "Please group the orders by city and count them",
    "Flag every line where the file has an error in the notes",
    "Sum the amount per customer and sort by the total",
    "Keep only rows whose order was shipped late",
    "Write the result to a new file with one line per customer",
    "Which column holds the phone number? Use it to dedupe",
    "The notes mention a city sometimes; extract it if present",
    "Ignore the header line and any empty line in the file",
    "Round amounts to two decimals and format dates as day month year",
    "If there is an error, skip the record and keep going",
];

const LLM_REPLY: &str = "I will read customers.csv, parse the born column as a date, and sum the amount column per name. Does the notes column matter?";

fn request(system: &str, user: &str) -> LlmRequest {
    LlmRequest {
        role: Role::Builder,
        messages: vec![
            ChatMessage::new(ChatRole::System, system),
            ChatMessage::new(ChatRole::Assistant, LLM_REPLY),
            ChatMessage::new(ChatRole::User, user),
        ],
        schema: None,
    }
}

#[test]
fn the_privacy_evaluation_leaks_nothing_and_blocks_no_plain_words() {
    let dir = tempfile::tempdir().expect("tmp");
    let people = people(60);
    let files = write_corpus(dir.path(), &people);
    let mut index = GuardIndex::new();
    let mut extracts = Vec::new();
    for (path, name) in &files {
        index.add_file(path, name, DEFAULT_MAX_BYTES);
        let e = maskflow_extractors::extract_path(path, &Default::default(), &mut |_| {})
            .expect("extract");
        extracts.push(serde_json::to_value(&e).expect("json"));
    }
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    let extracts = Value::Array(extracts);
    allow_json(&mut index, &extracts);
    for r in [
        prompts::validator_request(&extracts, &[]),
        prompts::builder_request(&extracts, &[]),
    ] {
        for m in &r.messages {
            index.allow(&m.content);
        }
    }
    let prompt = prompts::builder_request(&extracts, &[]);
    let system = prompt.messages[0].content.clone();

    let blocked = must_block(&people);
    let mut leaked = Vec::new();
    for (class, text) in &blocked {
        if index.check_request(&request(&system, text), &[]).is_empty() {
            leaked.push(format!("{class}: {text}"));
        }
    }
    let grammar = Grammar::new(SCRIPT, &crate::builder::engine::column_names(&extracts));
    let machine = Machine::new(Path::new("/tmp/run"), &[]);
    let mut benign: Vec<String> = TRACEBACKS
        .iter()
        .map(|t| repair_feedback(t, &grammar, &machine))
        .collect();
    benign.extend(USER_MESSAGES.iter().map(|s| (*s).to_owned()));
    benign.extend(prompt.messages.iter().map(|m| m.content.clone()));
    let mut false_blocks = Vec::new();
    for text in &benign {
        let m = index.check_request(&request(&system, text), &[]);
        if !m.is_empty() {
            false_blocks.push(format!("{text:?} → {m:?}"));
        }
    }
    println!(
        "privacy evaluation: {} files, {} indexed keys; {} identifying texts, {} leaked; {} benign texts, {} blocked",
        files.len(),
        index.len(),
        blocked.len(),
        leaked.len(),
        benign.len(),
        false_blocks.len()
    );
    assert!(leaked.is_empty(), "leaked: {leaked:#?}");
    assert!(
        false_blocks.is_empty(),
        "blocked benign texts: {false_blocks:#?}"
    );
}
