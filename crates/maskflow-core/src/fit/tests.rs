use serde_json::json;

use super::*;
use crate::conversation::prompts;

/// A workbook extract: `sheets` sheets of `cols` columns and 5 masked rows.
fn workbook(sheets: usize, cols: usize) -> Value {
    let sheet = |i: usize| {
        let columns: Vec<String> = (0..cols)
            .map(|c| format!("Column {c} of sheet {i}"))
            .collect();
        let row: Vec<&str> = (0..cols)
            .map(|c| match c % 3 {
                0 => "####-##-##",
                1 => "#,###.##",
                _ => "Aaaaa aaaa aa Aaaaaaa",
            })
            .collect();
        json!({"name": format!("Sheet{i}"), "columns": columns, "sample_rows": vec![row; 5], "row_count": 120})
    };
    let all: Vec<Value> = (0..sheets).map(sheet).collect();
    json!([{"filename": "book.xlsx", "kind": "excel", "columns": all[0]["columns"], "sample_rows": all[0]["sample_rows"],
            "row_count": 120, "sheets": all}])
}

fn tokens(r: &LlmRequest) -> u32 {
    context::estimate_tokens(&r.messages, r.schema.as_ref())
}

fn validator(e: &Value) -> LlmRequest {
    prompts::validator_request(e, &[])
}

#[test]
fn the_ladder_drops_rows_then_samples_then_names_then_sheets() {
    let l = ladder(&workbook(3, 40));
    assert_eq!(l[0], ALL);
    let rows: Vec<_> = l.iter().take(4).map(|r| r.rows).collect();
    assert_eq!(rows, [None, Some(3), Some(2), Some(1)]);
    assert_eq!(l[3].sampled_columns, None);
    let mut samples: Vec<_> = l.iter().filter_map(|r| r.sampled_columns).collect();
    samples.dedup();
    assert_eq!(samples, [30, 22, 16, 12, 9, 6, 4, 3, 2, 1, 0]);
    // Every rung differs from the one before.
    assert!(l.windows(2).all(|w| w[0] != w[1]));
    // Names go only once every sample has gone, sheets once every name has.
    assert!(
        l.iter()
            .all(|r| r.named_columns.is_none() || r.sampled_columns == Some(0))
    );
    assert!(
        l.iter()
            .all(|r| r.sheets.is_none() || r.named_columns == Some(0))
    );
    assert_eq!(l.last().and_then(|r| r.sheets), Some(0));
    assert_eq!(steps(1, true), [0]);
    assert_eq!(steps(5, false), [3, 2, 1]);
    assert!(steps(0, true).is_empty());
}

#[test]
fn column_types_come_from_masked_samples() {
    let t = |v: Value| column_type(v.as_array().expect("list").iter());
    assert_eq!(t(json!(["####-##-##", "####-##-##"])), "date");
    assert_eq!(t(json!(["####-##-## ##:##:##"])), "datetime");
    assert_eq!(t(json!(["$#,###.##", "-##.#", ""])), "number");
    assert_eq!(t(json!(["Aaaa Aaaaa"])), "text");
    assert_eq!(t(json!(["####-##-##", "Aaa"])), "text");
    assert_eq!(t(json!(["", null])), "empty");
}

#[test]
fn each_rung_says_what_it_left_out() {
    let wb = workbook(3, 40);
    let (r, out) = reduce(&wb, &ALL);
    assert!(
        out.is_empty(),
        "dropping the top-level copy loses nothing: {out:?}"
    );
    assert!(
        r[0].get("sample_rows").is_none() && r[0]["sheets"].as_array().map(Vec::len) == Some(3)
    );

    let rung = Rung {
        rows: Some(1),
        sampled_columns: Some(10),
        ..ALL
    };
    let (r, out) = reduce(&wb, &rung);
    let s0 = &r[0]["sheets"][0];
    assert_eq!(
        s0["sample_rows"],
        json!([[
            "####-##-##",
            "#,###.##",
            "Aaaaa aaaa aa Aaaaaaa",
            "####-##-##",
            "#,###.##",
            "Aaaaa aaaa aa Aaaaaaa",
            "####-##-##",
            "#,###.##",
            "Aaaaa aaaa aa Aaaaaaa",
            "####-##-##"
        ]])
    );
    assert_eq!(s0["columns"].as_array().map(Vec::len), Some(40));
    assert_eq!(s0["column_types"][0], "date");
    assert_eq!(s0["column_types"][39], "date");
    assert_eq!(s0["column_types"][38], "text");
    assert_eq!(s0["sampled_columns"], 10);
    assert_eq!(out[0], "12 of 15 sample rows (at most 1 kept per table)");
    assert_eq!(
        out[1],
        "the sample values of columns past the first 10 of each table (90 columns; their names and types are kept)"
    );

    let rung = Rung {
        rows: Some(1),
        sampled_columns: Some(0),
        named_columns: Some(0),
        profiles: false,
        sheets: Some(1),
    };
    let (r, out) = reduce(&wb, &rung);
    assert_eq!(r[0]["sheets_left_out"], json!(["Sheet1", "Sheet2"]));
    assert_eq!(r[0]["sheets"][0]["columns_left_out"], 40);
    assert!(r[0]["sheets"][0].get("sample_rows").is_none());
    assert_eq!(out[0], "every sample value (5 sample rows of 40 columns)");
    assert!(
        out.contains(&"the names and types of every column (40 columns)".to_owned()),
        "{out:?}"
    );
    assert!(
        out.contains(&"the sheets \"Sheet1\", \"Sheet2\" of book.xlsx".to_owned()),
        "{out:?}"
    );
}

#[test]
fn a_prompt_that_fits_is_left_alone() {
    let wb = workbook(1, 3);
    let (req, red) = fit_request(&wb, None, 512, "m", &validator).expect("no window");
    assert_eq!(req, validator(&wb));
    assert!(red.is_none());
    let (req, red) = fit_request(&wb, Some(100_000), 512, "m", &validator).expect("fits");
    assert_eq!(req, validator(&wb));
    assert!(red.is_none());
}

#[test]
fn a_big_workbook_is_reduced_until_the_budget_fits() {
    let wb = workbook(3, 40);
    let full = tokens(&validator(&wb));
    assert!(full > 2048, "the test needs a prompt too big: {full}");
    let (req, red) = fit_request(&wb, Some(2048), 512, "m", &validator).expect("reduced");
    let red = red.expect("a reduction");
    assert!(tokens(&req) <= 2048 - 512, "{}", tokens(&req));
    assert_eq!(red.prompt_tokens, tokens(&req));
    assert_eq!(red.prompt_tokens_before, full);
    assert_eq!((red.role.as_str(), red.window), ("validator", 2048));
    assert!(
        red.left_out[0].contains("sample rows"),
        "{:?}",
        red.left_out
    );
    let summary = &red.summary;
    assert!(
        summary
            .starts_with("To fit the model's 2,048-token context window, the validator's prompt"),
        "{summary}"
    );
    // The builder's large budget reserves half the window, not all of it.
    assert_eq!(reply_reserve(2048, 8192), 1024);
    assert_eq!(reply_reserve(100, 8192), context::MIN_REPLY_TOKENS);
}

#[test]
fn a_prompt_that_cannot_fit_is_refused_with_the_numbers() {
    let wb = workbook(3, 40);
    let e = fit_request(&wb, Some(512), 512, "tiny", &validator).expect_err("refused");
    let ProviderError::ContextOverflow {
        role,
        model,
        prompt_tokens,
        window,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(
        (role.as_str(), model.as_str(), *window),
        ("validator", "tiny", 512)
    );
    assert!(*prompt_tokens > 512 - context::MIN_REPLY_TOKENS);
    let m = e.to_string();
    assert!(
        m.contains("512 tokens") && m.contains("nothing was sent"),
        "{m}"
    );
}

#[test]
fn when_no_rung_frees_the_budget_the_least_reduced_prompt_that_can_be_sent_goes() {
    let wb = workbook(1, 2);
    let full = tokens(&validator(&wb));
    // The window leaves room for a short reply but not the 512-token budget,
    // whatever is dropped: nothing is dropped.
    let window = full + 100;
    let (req, red) = fit_request(&wb, Some(window), 512, "m", &validator).expect("sent");
    assert_eq!(req, validator(&wb));
    assert!(red.is_none());
    // Too small for the full prompt, enough for a reduced one: reduced only
    // as far as needed.
    let (req, _) = fit_request(&wb, Some(full + 30), 512, "m", &validator).expect("sent");
    assert!(tokens(&req) + context::MIN_REPLY_TOKENS <= full + 30);
    let shrunk = validator(&reduce(&wb, &ALL).0);
    assert_eq!(req, shrunk, "only the lossless first rung was needed");
}
