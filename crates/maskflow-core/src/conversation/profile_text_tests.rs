//! The profiles in the builder's prompt, over realistic files: what the
//! model reads (a snapshot), that the egress guard lets it through without
//! the profile being allowed beforehand, that no raw cell value is in it,
//! and that the context fit cuts it with its columns.

use std::path::Path;

use serde_json::{Value, json};

use super::profile_text::{column_line, join_keys};
use super::prompts::builder_request;
use maskflow_extractors::{ExtractOptions, Registry, ValueOptions, profile};
use maskflow_llm::{ChatMessage, ChatRole};
use maskflow_privacy::guard::{self, GuardIndex};

const FIRST: [&str; 8] = [
    "Ottoline",
    "Bartholomew",
    "Ximena",
    "Leopold",
    "Marguerite",
    "Zebulon",
    "Henrietta",
    "Cuthbert",
];
const LAST: [&str; 5] = [
    "Okonkwo",
    "Van der Berg",
    "Fairweather",
    "Lindqvist",
    "Moreau",
];

fn customers() -> String {
    let mut s = String::from("customer_id,name,tier,joined,notes\n");
    for i in 0..180u32 {
        let name = format!("{} {}", FIRST[(i % 8) as usize], LAST[(i % 5) as usize]);
        let (d, m) = (i % 28 + 1, i % 12 + 1);
        let joined = if i % 12 == 5 {
            format!("{d:02}/{m:02}/2022")
        } else {
            format!("2022-{m:02}-{d:02}")
        };
        let tier = ["Gold", "Silver", "Bronze", "N/A", "Silver"][(i % 5) as usize];
        let notes = if i % 4 == 0 {
            String::new()
        } else {
            format!(
                "\"Prefers delivery before {}pm, gate code {}\"",
                i % 5 + 1,
                4000 + i * 13
            )
        };
        s.push_str(&format!(
            "C-{:05},{name},{tier},{joined},{notes}\n",
            20_000 + i * 41
        ));
    }
    s
}

fn orders() -> String {
    let mut s = String::from("order_id,customer_id,amount,placed\n");
    for i in 0..300u32 {
        // One order in ten names its customer in lower case.
        let c = 20_000 + (i % 180) * 41;
        let customer = if i % 10 == 7 {
            format!("c{c:05}")
        } else {
            format!("C-{c:05}")
        };
        let amount = if i % 8 == 3 {
            format!("€{},{:02}", 30 + i % 400, i % 100)
        } else {
            format!("${},{:03}.{:02}", 1 + i % 4, i * 7 % 1000, i % 100)
        };
        s.push_str(&format!(
            "{},{customer},\"{amount}\",2023-{:02}-{:02}\n",
            880_000 + i * 3,
            i % 12 + 1,
            i % 28 + 1
        ));
    }
    // An order entered twice.
    s.push_str("880003,C-20041,\"$2,007.01\",2023-02-02\n");
    s
}

/// Small decimals, as a data set of ratings and percentages holds them:
/// a range or a length written `4–5` or `~4..~5`, or a rounded `4.5`,
/// would read to the guard as one of these values.
fn scores() -> String {
    let mut s = String::from("median,viewers,percent\n");
    for i in 0..120u32 {
        s.push_str(&format!(
            "{}.{},{}.{:02},{}\n",
            i / 10,
            i % 10,
            i % 14 + 2,
            (i * 7) % 100,
            ["0.0", "100.0", "33.333333333333336", "50.0"][(i % 4) as usize]
        ));
    }
    s
}

/// Each file extracted (10 samples) and profiled as an upload is, then
/// made outbound as approval does.
fn approved(dir: &Path, files: &[(&str, String)]) -> Vec<Value> {
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

fn history() -> Vec<ChatMessage> {
    vec![ChatMessage::new(
        ChatRole::User,
        "total the amount per tier of the customer who placed each order",
    )]
}

/// The part of the system prompt that shows the files.
fn files_part(system: &str) -> &str {
    let start = system.find("The user's files").expect("files block");
    let end = system[start..]
        .find("Reply with only one JSON object")
        .map_or(system.len(), |e| start + e);
    &system[start..end]
}

#[test]
fn the_builder_reads_each_column_s_profile_and_the_join_keys() {
    let dir = tempfile::tempdir().expect("tmp");
    let extracts = Value::Array(approved(
        dir.path(),
        &[("customers.csv", customers()), ("orders.csv", orders())],
    ));
    let req = builder_request(&extracts, &history());
    let part = files_part(&req.messages[0].content);
    insta::assert_snapshot!(part);
    // What correctness needs, in words the model reads.
    assert!(part.contains("\"duplicate_rows\":1"), "{part}");
    assert!(part.contains("15 rows `##/##/####`"), "{part}");
    assert!(part.contains("29 rows `€###,##`"), "{part}");
    assert!(part.contains("placeholder"), "{part}");
    assert!(
        part.contains("customers.csv column \"customer_id\" (unique key) ↔ orders.csv column \"customer_id\": shapes overlap only in part"),
        "{part}"
    );
}

#[test]
fn the_prompt_with_profiles_passes_the_guard_and_holds_no_raw_value() {
    let dir = tempfile::tempdir().expect("tmp");
    let files = [
        ("customers.csv", customers()),
        ("orders.csv", orders()),
        ("scores.csv", scores()),
    ];
    let extracts = approved(dir.path(), &files);
    let req = builder_request(&Value::Array(extracts.clone()), &history());
    // The guard as a version's: its files indexed, its extracts allowed —
    // here without their profiles, so the profile must pass on its own.
    let mut index = GuardIndex::new();
    for ((name, _), e) in files.iter().zip(&extracts) {
        index.add_file(&dir.path().join(name), name, u64::MAX);
        let mut bare = e.clone();
        bare.as_object_mut().map(|o| o.remove("profile"));
        guard::allow_json(&mut index, &bare);
    }
    let matches = index.check_request(&req, &[]);
    assert!(matches.is_empty(), "blocked: {matches:?}");
    // The same guard still blocks a value of the files (the check can fail).
    let mut leaked = req.clone();
    leaked.messages[0].content.push_str(" Ottoline Okonkwo");
    assert!(!index.check_request(&leaked, &[]).is_empty());

    let system = &req.messages[0].content;
    for (_, body) in &files {
        for line in body.lines().skip(1) {
            for cell in line.split(',').map(|c| c.trim_matches('"')) {
                if cell.chars().count() >= 4 {
                    assert!(!system.contains(cell), "{cell:?} was sent");
                }
            }
        }
    }
}

#[test]
fn the_context_fit_cuts_a_profile_with_its_columns() {
    let dir = tempfile::tempdir().expect("tmp");
    let extracts = Value::Array(approved(dir.path(), &[("orders.csv", orders())]));
    let rung = crate::fit::Rung {
        rows: Some(1),
        sampled_columns: Some(0),
        named_columns: Some(2),
        profiles: true,
        sheets: None,
    };
    let (reduced, left_out) = crate::fit::reduce(&extracts, &rung);
    let p = &reduced[0]["profile"];
    assert_eq!(p["columns"].as_array().map(Vec::len), Some(2));
    assert_eq!(p["columns_left_out"], 2);
    assert!(
        left_out.iter().any(|l| l.contains("names and types")),
        "{left_out:?}"
    );
    let shown = super::profile_text::compact(&reduced);
    assert_eq!(shown[0]["profile"]["columns_left_out"], 2);
    // On the ladder, profiles go before any column name does.
    let ladder = crate::fit::ladder(&extracts);
    let dropped = ladder
        .iter()
        .position(|r| !r.profiles)
        .expect("a rung drops profiles");
    assert!(ladder[..dropped].iter().all(|r| r.named_columns.is_none()));
    let (bare, left_out) = crate::fit::reduce(&extracts, &ladder[dropped]);
    assert!(bare[0].get("profile").is_none());
    assert!(
        left_out
            .iter()
            .any(|l| l.contains("the profile of 1 table ")),
        "{left_out:?}"
    );
}

#[test]
fn a_column_line_says_what_matters_in_one_line() {
    let c = json!({"name": "amount", "inferred_type": "decimal", "nulls": 3, "placeholders": 2,
        "distinct": 180, "distinct_capped": false, "min_length": 5, "max_length": 9,
        "min": "15", "max": "9.9e3",
        "shapes": [{"shape": "$#,###.##", "count": 200}, {"shape": "€###,##", "count": 40}],
        "other_shapes": 2});
    assert_eq!(
        column_line(&c),
        "amount: decimal, 3 null, 2 placeholder (N/A, -, null…), 180 distinct, length 5 to 9, \
range ~15 to ~9.9e3, shapes 200 rows `$#,###.##`, 40 rows `€###,##`, other shapes in 2 rows"
    );
    assert_eq!(
        join_keys(&json!([{"filename": "a.csv", "profile": {"columns": []}}])),
        ""
    );
}

/// Issue #40: the profile's new facts (formats, placeholder words, ranges'
/// coverage, repeated ids) cost under a tenth of the builder's prompt on
/// the customers and orders files (the figures are in bench/README.md).
#[test]
fn the_new_profile_facts_cost_under_a_tenth_of_the_prompt() {
    let dir = tempfile::tempdir().expect("tmp");
    let extracts = Value::Array(approved(
        dir.path(),
        &[("customers.csv", customers()), ("orders.csv", orders())],
    ));
    let mut bare = extracts.clone();
    for f in bare.as_array_mut().into_iter().flatten() {
        let p = &mut f["profile"];
        if let Some(o) = p.as_object_mut() {
            o.remove("repeated_keys");
        }
        for c in p["columns"].as_array_mut().into_iter().flatten() {
            if let Some(o) = c.as_object_mut() {
                for k in [
                    "formats",
                    "other_formats",
                    "placeholder_words",
                    "category_words",
                    "range_values",
                ] {
                    o.remove(k);
                }
            }
        }
    }
    let with = builder_request(&extracts, &history()).messages[0]
        .content
        .len();
    let without = builder_request(&bare, &history()).messages[0].content.len();
    eprintln!("builder prompt: {with} characters, {without} without the #40 facts");
    assert!(with > without, "the facts are in the prompt");
    assert!((with - without) * 10 < with, "{with} against {without}");
}
