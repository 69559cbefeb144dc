//! The guard's behaviour, and one regression test per leak and per false
//! block of issue #13.

use std::path::{Path, PathBuf};

use super::*;
use maskflow_llm::{ChatMessage, Role};

fn index_files(files: &[(&str, &[u8])]) -> GuardIndex {
    let dir = tempfile::tempdir().expect("tmp");
    let mut g = GuardIndex::new();
    for (name, bytes) in files {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write");
        g.add_file(&p, name, DEFAULT_MAX_BYTES);
    }
    g
}

fn csv_index(text: &str) -> GuardIndex {
    index_files(&[("people.csv", text.as_bytes())])
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/docs")
        .join(name)
}

fn req(role: ChatRole, text: &str) -> LlmRequest {
    LlmRequest {
        role: Role::Clarifier,
        messages: vec![ChatMessage::new(role, text)],
        schema: None,
    }
}

fn blocks(g: &GuardIndex, text: &str) -> bool {
    !g.check_request(&req(ChatRole::System, text), &[])
        .is_empty()
}

#[test]
fn raw_values_are_found_masked_with_their_column() {
    let g = csv_index("name,amount,sku\nAda Lovelace,\"$1,234.56\",PROD-194211\n");
    let m = g.check_request(
        &req(ChatRole::User, "please find lovelace and prod-194211"),
        &[],
    );
    let masked: Vec<&str> = m.iter().map(|m| m.masked.as_str()).collect();
    assert!(masked.contains(&"aaaaaaaa"), "{m:?}");
    assert!(masked.contains(&"######"), "{m:?}");
    assert!(m.iter().any(|x| x.source == "people.csv, column \"name\""));
    assert!(m.iter().all(|x| x.in_user_text));
    let m = g.check_request(&req(ChatRole::System, "total was $1,234.56 ok"), &[]);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].masked, "#,###.##");
    assert!(!m[0].in_user_text);
    assert!(blocked_message(&m).contains("column \"amount\""));
}

#[test]
fn names_allowed_text_and_assistant_text_pass() {
    let mut g = csv_index("customer_name,city\nJohn Smith,Zebulonville\n");
    let user = |t: &str| req(ChatRole::User, t);
    assert!(
        g.check_request(&user("group by customer_name and city in people.csv"), &[])
            .is_empty()
    );
    assert!(!g.check_request(&user("only Zebulonville"), &[]).is_empty());
    assert!(!g.check_request(&user("only john SMITH"), &[]).is_empty());
    assert!(
        g.check_request(&user("only Zebulonville"), &["only Zebulonville".into()])
            .is_empty()
    );
    // The LLM's replies are checked like the user's words (issue #38): a
    // value that identifies is refused unless the user confirmed it.
    assert!(
        !g.check_request(&req(ChatRole::Assistant, "Zebulonville?"), &[])
            .is_empty()
    );
    assert!(
        g.check_request(
            &req(ChatRole::Assistant, "Zebulonville?"),
            &["only Zebulonville".into()]
        )
        .is_empty()
    );
    g.allow("zebulonville");
    assert!(g.check_request(&user("only Zebulonville"), &[]).is_empty());
    // short tokens are never matched alone
    let g = csv_index("code\nAB\n");
    assert!(g.check_request(&user("AB"), &[]).is_empty());
}

#[test]
fn the_index_keeps_no_raw_text() {
    let g = csv_index("secret\nZebulonQuux\n");
    assert!(!format!("{g:?}").to_lowercase().contains("zebulonquux"));
}

#[test]
fn unreadable_files_are_noted_and_an_empty_index_blocks_nothing() {
    let g = index_files(&[("scan.pdf", b"%PDF-1.4")]);
    assert_eq!(g.skipped.len(), 1, "{:?}", g.skipped);
    assert!(!blocks(&g, "anything at all"));
}

// --- #13: reformatted values leaked ---

#[test]
fn reformatted_numbers_phones_and_dates_are_blocked() {
    let g = csv_index(
        "name,salary,phone,born,id\nAda Lovelace,85000,5558675309,1990-07-04,AB-0042-7781\n",
    );
    for leak in [
        "salary 85,000",
        "salary 85000.00",
        "call 555-867-5309",
        "call (555) 867-5309",
        "call +1 555 867 5309",
        "born 04/07/1990",
        "born 07/04/1990",
        "born 4 July 1990",
        "born July 4, 1990",
        "id 0042-7781",
        "id ab 0042 7781",
    ] {
        assert!(blocks(&g, leak), "{leak} passed");
    }
}

#[test]
fn workbook_values_are_blocked_as_stored_and_as_displayed() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("staff.xlsx");
    let mut wb = rust_xlsxwriter::Workbook::new();
    let s = wb
        .add_worksheet()
        .set_name("Payroll Zebulon")
        .expect("name");
    let date = rust_xlsxwriter::Format::new().set_num_format("dd/mm/yyyy");
    let money = rust_xlsxwriter::Format::new().set_num_format("#,##0.00");
    for (c, h) in ["name", "salary", "hired"].iter().enumerate() {
        s.write(0, c as u16, *h).expect("w");
    }
    s.write(1, 0, "Grace Okonkwo").expect("w");
    s.write_with_format(1, 1, 92000.5, &money).expect("w");
    let d = rust_xlsxwriter::ExcelDateTime::from_ymd(2021, 3, 14).expect("date");
    s.write_datetime_with_format(1, 2, &d, &date).expect("w");
    let s2 = wb.add_worksheet().set_name("Second").expect("name");
    s2.write(0, 0, "code").expect("w");
    s2.write(1, 0, "QX-77812").expect("w");
    wb.save(&path).expect("save");
    let mut g = GuardIndex::new();
    g.add_file(&path, "staff.xlsx", DEFAULT_MAX_BYTES);
    for leak in [
        "92,000.50",
        "92000.5",
        "2021-03-14",
        "14/03/2021",
        "okonkwo",
        "QX 77812",
    ] {
        assert!(blocks(&g, leak), "{leak} passed");
    }
    // A sheet name with a rare word (a name?) is a value since #26: it is
    // masked in the extract, and passes only once the approved extract
    // holds it as it is (the user's choice).
    assert!(blocks(&g, "the sheet Payroll Zebulon"));
    allow_json(
        &mut g,
        &serde_json::json!({"sheets": [{"name": "Payroll Zebulon"}]}),
    );
    assert!(!blocks(&g, "the sheet Payroll Zebulon"));
    assert!(!blocks(&g, "the sheet Second"));
}

#[test]
fn pdf_word_and_ocr_text_are_indexed() {
    let mut g = GuardIndex::new();
    g.add_file(&fixture("report.pdf"), "report.pdf", DEFAULT_MAX_BYTES);
    g.add_file(&fixture("report.docx"), "report.docx", DEFAULT_MAX_BYTES);
    assert!(g.skipped.is_empty(), "{:?}", g.skipped);
    for leak in [
        "Hartmann",
        "Quixote",
        "wilhelmina@example.com",
        "Marrakesh",
        "PROD 194211",
    ] {
        assert!(blocks(&g, leak), "{leak} passed");
    }
    let mut g = GuardIndex::new();
    g.add_file(&fixture("text.png"), "text.png", DEFAULT_MAX_BYTES);
    if which("tesseract") {
        assert!(blocks(&g, "Hartmann"), "the OCR text is indexed");
    }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

#[test]
fn csv_content_named_pdf_is_indexed_by_its_content() {
    let g = index_files(&[("export.pdf", b"name,phone\nAda Lovelace,5558675309\n")]);
    assert!(blocks(&g, "Lovelace"));
    assert!(blocks(&g, "555-867-5309"));
}

#[test]
fn a_headerless_file_allows_none_of_its_first_record() {
    let g = index_files(&[
        ("h.csv", b"John Smith,Zebulonville\nAda Lovelace,Quuxton\n"),
        ("other.csv", b"name\nSomeone Else\n"),
    ]);
    assert!(blocks(&g, "John Smith"));
    assert!(blocks(&g, "Zebulonville"));
}

#[test]
fn file_names_do_not_allow_their_words_as_values() {
    let g = index_files(&[("lovelace_accounts.csv", b"name,city\nAda Lovelace,Paris\n")]);
    assert!(!blocks(&g, "read lovelace_accounts.csv"));
    assert!(blocks(&g, "the customer is Lovelace"));
}

#[test]
fn names_in_prose_are_blocked() {
    let g = index_files(&[(
        "notes.txt",
        b"Patient John Smith was diagnosed with hypertension in the spring of that year, see file.\n" as &[u8],
    )]);
    assert!(blocks(&g, "unconverted data remains: John Smith"));
}

// --- #13: ordinary words were blocked ---

#[test]
fn prose_columns_do_not_block_language() {
    let g = csv_index(
        "id,customer,notes\n\
         1,Ada Lovelace,Called about the order: line 3 of the file had an error in the city field\n\
         2,Grace Hopper,Order shipped; customer says the file is fine\n",
    );
    let traceback = "Traceback (most recent call last):\n  File \"./script.py\", line 5, in <module>\n    df = pd.read_csv(path)\nValueError: could not convert string to float: 'Aaa'";
    assert!(!blocks(&g, traceback));
    let user = "Please group the orders by city and flag any line with an error in the file";
    assert!(g.check_request(&req(ChatRole::User, user), &[]).is_empty());
    assert!(blocks(&g, "Lovelace"));
}

#[test]
fn a_repeated_category_of_common_words_is_not_a_value() {
    let mut text = String::from("name,status\n");
    for i in 0..30 {
        text.push_str(&format!("Person{i:03},Order shipped\n"));
    }
    let g = csv_index(&text);
    assert!(!blocks(&g, "count rows where status is order shipped"));
    assert!(blocks(&g, "Person007"));
}

// --- #13: names, and the common words that are also names ---

fn people_index() -> GuardIndex {
    csv_index(
        "name,notes\n\
         John Smith,Called twice\n\
         Mary Brown,Will call back in May\n\
         Will May,Prefers e-mail\n\
         Grace Okonkwo,Asked for the invoice\n",
    )
}

#[test]
fn a_full_name_is_blocked_in_any_order_and_a_rare_name_alone() {
    let g = people_index();
    for leak in [
        "John Smith",
        "customer SMITH, John asked",
        "smith john",
        "Mary Brown",
        "Brown, Mary",
        "Okonkwo",
        "Mr Okonkwo called",
    ] {
        assert!(blocks(&g, leak), "{leak} passed");
    }
}

#[test]
fn a_common_word_alone_passes_even_where_the_file_has_it_in_a_name() {
    // Decided in the module's doc: a common surname or first name alone
    // names no one, and blocking it would block ordinary language.
    let g = people_index();
    for ordinary in [
        "Smith",
        "ask Smith about it",
        "Add the Brown sugar column",
        "Will this work?",
        "group the orders of May by day",
        "John asked for a total",
    ] {
        assert!(!blocks(&g, ordinary), "{ordinary} was blocked");
    }
}

#[test]
fn every_value_is_found_after_the_buffered_inserts_are_applied() {
    // Enough distinct values to fill every buffered part of the key table
    // many times over: each one is still found after the file ends.
    let mut text = String::from("code,amount\n");
    for i in 0..20_000 {
        text.push_str(&format!("QX{i:06}Z,{}\n", 100_000 + i * 7));
    }
    let g = csv_index(&text);
    for i in [0, 1, 9_999, 19_999] {
        assert!(blocks(&g, &format!("qx{i:06}z")), "code {i}");
        assert!(blocks(&g, &format!("{}", 100_000 + i * 7)), "amount {i}");
    }
    assert!(!blocks(&g, "qx020000z"));
}

/// #26: a header that is a value (a pivot with a column per employee) is
/// indexed as a value, not allowed as a name; an ordinary header still is
/// a name; a value header passes once the approved extract holds it (the
/// user chose to send it as it is).
#[test]
fn value_headers_are_values_until_sent_as_they_are() {
    let g = csv_index("Region,Jane Okafor,Zebulon Price,Customer Name\nNorth,12,3,Aaaa\n");
    assert!(blocks(&g, "sum the column Jane Okafor"));
    assert!(blocks(&g, "and Zebulon"));
    assert!(!blocks(&g, "group by Region and Customer Name"));
    let mut sent = g.clone();
    allow_json(
        &mut sent,
        &serde_json::json!({"columns": ["Region", "Jane Okafor", "Aaaaaaa Aaaaa", "Customer Name"]}),
    );
    assert!(!blocks(&sent, "sum the column Jane Okafor"));
    assert!(blocks(&sent, "and Zebulon Price"));
}

/// #28 point 7: a year on its own in the user's words identifies no one;
/// the same number from anywhere else, or beside other digits, is guarded
/// as before.
#[test]
fn a_year_alone_in_the_users_words_passes() {
    let g = csv_index(
        "name,year,amount,day\nAda Lovelace,2013,$2013,2013-05-01\nAlan Turing,1954,12,2014-06-02\n",
    );
    let user = |t: &str| g.check_request(&req(ChatRole::User, t), &[]);
    assert!(user("only the rows of 2013, please").is_empty());
    assert!(user("from 1954 to 2013").is_empty());
    assert!(
        blocks(&g, "only the rows of 2013"),
        "file-derived text is guarded"
    );
    assert!(!user("on 2013-05-01").is_empty(), "a day is not a year");
    assert!(
        !user("amounts of $2013").is_empty(),
        "an amount is not a year"
    );
    assert!(
        !user("only Ada Lovelace in 2013").is_empty(),
        "a name still is"
    );
}

/// #28 point 7: a value in the user's words is reported with where it is
/// in them (UTF-16 offsets, to show in place without echoing it);
/// elsewhere only masked.
#[test]
fn a_match_in_the_users_words_says_where_it_is() {
    let g = csv_index("name,island\nAda Lovelace,Torgersen\n");
    let m = g.check_request(&req(ChatRole::User, "only Torgersen please"), &[]);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].at, Some([5, 14]));
    assert_eq!(m[0].source, "people.csv, column \"island\"");
    assert!(
        !blocked_message(&m).contains("Torgersen"),
        "the sentence stays masked"
    );
    // Offsets count UTF-16 units, as the UI's strings do.
    let m = g.check_request(&req(ChatRole::User, "né 🐧 Torgersen"), &[]);
    assert_eq!(m[0].at, Some([6, 15]));
    let m = g.check_request(&req(ChatRole::System, "only Torgersen please"), &[]);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0].at, None);
}

/// Issue #38: each part of a request is judged by its kind.
mod by_provenance {
    use super::*;
    use maskflow_llm::Part;

    fn typed(parts: Vec<Part>) -> LlmRequest {
        LlmRequest {
            role: Role::Builder,
            messages: vec![ChatMessage::from_parts(ChatRole::System, parts)],
            schema: None,
        }
    }

    fn said(words: &str) -> LlmRequest {
        LlmRequest {
            role: Role::Clarifier,
            messages: vec![ChatMessage::user_words(words)],
            schema: None,
        }
    }

    /// A file of people, ids, e-mails, a category, a measure and times.
    fn orders() -> GuardIndex {
        let mut csv = String::from("id,customer,email,status,rate,slot,qty\n");
        for i in 0..400u32 {
            let name = ["Ottoline Okonkwo", "Zebulon Marchetti", "Ada Lovelace"][(i % 3) as usize];
            csv.push_str(&format!(
                "PROD-{},{name} {i},c{i}@example.org,{},{}.{:02},{}:00,{}\n",
                100_000 + i * 7,
                ["shipped", "Unleaded", "takings"][(i % 3) as usize],
                10 + i % 5,
                i % 100,
                8 + i % 10,
                3000 + i,
            ));
        }
        csv_index(&csv)
    }

    #[test]
    fn maskflow_s_own_parts_are_never_matched_and_an_edit_undoes_that() {
        let g = orders();
        let values = "PROD-100007 Ottoline Okonkwo 0 c1@example.org";
        assert!(!g.check_text(values).is_empty(), "the values are indexed");
        for part in [
            Part::instructions(values),
            Part::extract(values),
            Part::consented(values),
        ] {
            assert!(g.check_request(&typed(vec![part]), &[]).is_empty());
        }
        // A figure Maskflow computed that equals an id.
        assert!(
            g.check_request(&typed(vec![Part::aggregate(100_007)]), &[])
                .is_empty()
        );
        // Text changed after it was assembled is untyped: checked.
        let mut req = typed(vec![Part::instructions("rows: 12")]);
        req.messages[0].content = "rows: Ottoline Okonkwo".into();
        assert!(!g.check_request(&req, &[]).is_empty());
        // Runtime text is checked as strictly as untyped text.
        let m = g.check_request(&typed(vec![Part::runtime("KeyError: 'takings'")]), &[]);
        assert!(!m.is_empty(), "{m:?}");
        assert!(
            blocked_message(&m).contains("in text Maskflow made while running"),
            "{m:?}"
        );
    }

    #[test]
    fn the_user_s_words_are_refused_only_when_they_identify() {
        let g = orders();
        for identifying in [
            "find Ottoline Okonkwo 3",
            "only PROD-100007",
            "orders of 100007",
            "mail c7@example.org",
        ] {
            let v = g.judge_request(&said(identifying), &[]);
            assert!(!v.refused.is_empty(), "{identifying:?}: {v:?}");
            assert!(v.refused.iter().all(|m| m.in_user_text && m.at.is_some()));
            assert!(blocked_message(&v.refused).contains("in your words"));
        }
        for ordinary in [
            "keep the Unleaded rows",
            "rates above 14.99",
            "the 14:00 slot",
            "a total of 3,350",
            "group by status and sum the takings",
        ] {
            let v = g.judge_request(&said(ordinary), &[]);
            assert!(v.refused.is_empty(), "{ordinary:?}: {v:?}");
        }
        // Sent, and noted for the ledger.
        let v = g.judge_request(&said("rates above 14.99"), &[]);
        assert!(
            v.note()
                .is_some_and(|n| n.contains("your words included values of your file")),
            "{v:?}"
        );
        // Values of three columns in one message: a pasted row.
        let v = g.judge_request(&said("Unleaded at 14.99 and 3,350"), &[]);
        assert!(!v.refused.is_empty(), "{v:?}");
        // What the user confirmed goes through.
        assert!(
            g.check_request(&said("only PROD-100007"), &["only PROD-100007".into()])
                .is_empty()
        );
    }

    /// The `at` of a match in the user's words is where it stands in the
    /// whole message, past the parts before it.
    #[test]
    fn a_match_is_shown_where_it_stands_in_the_message() {
        let g = orders();
        let req = LlmRequest {
            role: Role::Builder,
            messages: vec![ChatMessage::from_parts(
                ChatRole::User,
                vec![
                    Part::instructions("Propose again, changed: "),
                    Part::user_words("drop PROD-100007"),
                ],
            )],
            schema: None,
        };
        let m = g.check_request(&req, &[]);
        let id = m.iter().find(|m| m.masked == "######").expect("the id");
        let [a, b] = id.at.expect("at");
        let text: Vec<u16> = req.messages[0].content.encode_utf16().collect();
        assert_eq!(
            String::from_utf16_lossy(&text[a as usize..b as usize]),
            "100007"
        );
    }

    /// Finding 4 of #38: short runs of common words of a free-text column
    /// are language, not values; a long verbatim run and a name are values.
    #[test]
    fn common_phrases_of_free_text_are_not_values() {
        let mut csv = String::from("remark\n");
        for (i, r) in [
            "to the",
            "by the",
            "a single",
            "as the",
            "the bird",
            "this time",
            "sent to the depot",
            "left by the back door",
            "Ottoline Okonkwo",
        ]
        .iter()
        .enumerate()
        {
            csv.push_str(&format!("{r}\nremark number {i} of many\n"));
        }
        let g = csv_index(&csv);
        let inputs = "Maskflow gives each file to the input of its name, never by the order \
                      of `fields`; a single `files` field takes the bird this time as the rest";
        assert!(
            g.check_text(inputs).is_empty(),
            "{:?}",
            g.check_text(inputs)
        );
        assert!(!g.check_text("it was left by the back door").is_empty());
        assert!(!g.check_text("Ottoline Okonkwo").is_empty());
    }
}

/// Issue #38 finding 11: identifiers written the usual ways still match —
/// an IBAN in groups of four, a name without its diacritics (and with them
/// when the file has none), a Japanese name run together with the words
/// around it or split by a space — and ordinary sentences in the same
/// languages block nothing.
#[test]
fn identifiers_written_the_usual_ways_are_found() {
    let g = csv_index(
        "name,iban,city\n\
         Jürgen Müller,DE89370400440532013000,München\n\
         Francois Lefevre,FR1420041010050500013M02606,Besancon\n\
         佐藤 陽子,GB29NWBK60161331926819,東京\n\
         山田太郎,NL91ABNA0417164300,大阪\n",
    );
    let found = |text: &str| {
        g.check_request(&req(ChatRole::User, text), &[])
            .iter()
            .map(|m| m.masked.clone())
            .collect::<Vec<_>>()
    };
    for text in [
        "refund DE89 3704 0044 0532 0130 00 please",
        "IBAN: GB29 NWBK 6016 1331 9268 19",
        "pay fr14 2004 1010 0505 0001 3m02 606 today",
        "the total for Jurgen Muller",
        "what did François Lefèvre order?",
        "佐藤陽子さんの売上は？",
        "山田 太郎 の注文",
        "山田太郎様へ",
    ] {
        assert!(!found(text).is_empty(), "nothing found in {text:?}");
    }
    for text in [
        "sum the amounts per city and month, then sort by total",
        "Gesamtsumme pro Monat, bitte nach Stadt sortiert",
        "月ごとの売上を合計してください",
        "group 1 2 3 of 4 in 2026",
    ] {
        assert_eq!(found(text), Vec::<String>::new(), "{text:?}");
    }
}
