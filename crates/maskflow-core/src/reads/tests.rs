use serde_json::{Value, json};

use super::*;

fn table(cols: &[&str]) -> Value {
    json!({"filename": "s.csv", "kind": "csv", "columns": cols, "sample_rows": [], "row_count": 3})
}

fn book(sheets: &[(&str, &[&str])]) -> Value {
    let sheets: Vec<Value> = sheets
        .iter()
        .map(|(n, c)| json!({"name": n, "columns": c, "sample_rows": [], "row_count": 1}))
        .collect();
    json!({"filename": "b.xlsx", "kind": "excel", "columns": [], "sample_rows": [], "row_count": 0, "sheets": sheets})
}

fn read(v: Value) -> Read {
    serde_json::from_value(v).expect("a read")
}

#[test]
fn a_named_column_gone_or_renamed_refuses_and_a_new_one_is_a_note() {
    let r = read(json!({"input": "s", "columns": [{"name": "Amount"}]}));
    let c = check(
        "s",
        &[&r],
        &table(&["Region", "Amount"]),
        &table(&["Region", "Amt"]),
    );
    assert_eq!(
        c.refusals,
        vec![
            "input s: column \"Amount\" is missing (the approved file had it); column \"Amt\" is new — the script reads it"
        ]
    );
    assert!(c.notes.is_empty());
    let c = check(
        "s",
        &[&r],
        &table(&["Region", "Amount"]),
        &table(&["Amount", "Region", "Note"]),
    );
    assert!(c.refusals.is_empty(), "{c:?}");
    assert_eq!(
        c.notes,
        vec!["input s: column \"Note\" is new — the script does not read it"]
    );
    // A column the script does not read may go.
    let c = check(
        "s",
        &[&r],
        &table(&["Region", "Amount"]),
        &table(&["Amount"]),
    );
    assert!(c.refusals.is_empty(), "{c:?}");
    assert_eq!(c.notes.len(), 1);
}

#[test]
fn a_column_read_by_position_that_moved_refuses_naming_both_places() {
    let r = read(json!({"input": "s", "columns": [{"position": 1}]}));
    let c = check(
        "s",
        &[&r],
        &table(&["Region", "Amount", "Tip"]),
        &table(&["Region", "Tip", "Amount"]),
    );
    assert_eq!(
        c.refusals,
        vec![
            "input s: column 2 was \"Amount\" and is now \"Tip\" (\"Amount\" moved to column 3): the script reads it by its position"
        ]
    );
    // By name, the same reorder is nothing at all.
    let r = read(json!({"input": "s", "columns": [{"name": "Amount"}]}));
    let c = check(
        "s",
        &[&r],
        &table(&["Region", "Amount", "Tip"]),
        &table(&["Region", "Tip", "Amount"]),
    );
    assert_eq!(c, Check::default());
}

#[test]
fn a_sheet_the_script_does_not_read_is_a_note_and_one_it_reads_refuses() {
    let approved = book(&[("Jan", &["Item", "Qty"]), ("Notes", &["Report 2024"])]);
    let new = book(&[
        ("Jan", &["Item", "Qty"]),
        ("Notes", &["Report 2025"]),
        ("Feb", &["Item", "Qty"]),
    ]);
    let r = read(json!({"input": "b", "sheet": "Jan", "columns": [{"name": "Qty"}]}));
    let c = check("b", &[&r], &approved, &new);
    assert!(c.refusals.is_empty(), "{c:?}");
    assert_eq!(c.notes.len(), 2, "{c:?}");
    assert!(
        c.notes.iter().any(|n| n.contains("sheet \"Feb\" is new")),
        "{c:?}"
    );
    let gone = book(&[("Notes", &["Report 2024"])]);
    let c = check("b", &[&r], &approved, &gone);
    assert_eq!(
        c.refusals,
        vec!["input b: sheet \"Jan\" is missing (the approved file had it) — the script reads it"]
    );
}

#[test]
fn a_document_table_read_by_position_is_compared() {
    let pdf = |cols: &[&str]| {
        json!({"filename": "c.pdf", "kind": "pdf", "columns": [], "sample_rows": [], "row_count": 0,
        "document": {"page_count": 1, "headings": [], "text_preview": "", "tables": [{"columns": cols, "sample_rows": [], "row_count": 2}]}})
    };
    let r = read(json!({"input": "c", "table": 0, "columns": [{"position": 2}, {"position": 3}]}));
    let c = check(
        "c",
        &[&r],
        &pdf(&["Date", "Item", "Sale", "Tip"]),
        &pdf(&["Date", "Item", "Tip", "Sale"]),
    );
    assert_eq!(c.refusals.len(), 2, "{c:?}");
    assert!(
        c.refusals[0].starts_with("input c: table 1: column 3 was \"Sale\" and is now \"Tip\""),
        "{c:?}"
    );
    let c = check(
        "c",
        &[&r],
        &pdf(&["Date", "Item", "Sale", "Tip"]),
        &json!({"kind": "pdf", "document": {"tables": []}}),
    );
    assert_eq!(
        c.refusals,
        vec!["input c: table 1 is missing (the approved file had it) — the script reads it"]
    );
}

#[test]
fn the_test_run_refuses_a_column_the_script_names_but_did_not_declare() {
    let mut spec: WorkflowSpec = serde_json::from_value(json!({
        "name": "Sales", "description": "Sums sales", "script": "",
        "fields": [{"name": "sales", "label": "Sales", "type": "file", "required": true}],
        "execution": {"runtime": "python3", "entrypoint": "script.py", "requirements": [], "outputs": []}
    }))
    .expect("spec");
    spec.script =
        "import pandas as pd\ndf = pd.read_csv(p)\nprint(df['Amount'].sum(), df['Region'])\n"
            .into();
    spec.execution.reads = Some(vec![read(
        json!({"input": "sales", "columns": [{"name": "Amount"}]}),
    )]);
    let extracts = json!([{"filename": "sales.csv", "kind": "csv", "columns": ["Region", "Amount"], "sample_rows": [], "row_count": 2}]);
    let bound = BTreeMap::from([("sales".to_owned(), vec!["sales.csv".to_owned()])]);
    assert_eq!(
        confirm(&spec, &extracts, &bound),
        vec![
            "the script uses column \"Region\" of input sales, which execution.reads does not declare"
        ]
    );
    spec.execution.reads = Some(vec![read(
        json!({"input": "sales", "columns": [{"name": "Amount"}, {"name": "Region"}]}),
    )]);
    assert!(confirm(&spec, &extracts, &bound).is_empty());
    spec.execution.reads = Some(vec![read(
        json!({"input": "sales", "columns": [{"name": "Amount"}, {"name": "Region"}, {"position": 5}]}),
    )]);
    assert_eq!(
        confirm(&spec, &extracts, &bound)[0],
        "execution.reads[0] (input sales): there is no column 6 (the table has 2) of the test file"
    );
    // Undeclared reads are a version built before reads existed: not checked.
    spec.execution.reads = None;
    assert!(confirm(&spec, &extracts, &bound).is_empty());
}

fn cats(column: &str, values: &[(&str, u64)]) -> Vec<CategoryCandidate> {
    vec![CategoryCandidate {
        sheet: None,
        column: column.into(),
        values: values
            .iter()
            .map(|(v, n)| maskflow_extractors::CategoryValue {
                value: (*v).into(),
                count: *n,
            })
            .collect(),
    }]
}

#[test]
fn a_new_category_in_a_mapped_column_refuses_masked_with_its_count_unless_expected() {
    let r = read(json!({"input": "s", "columns": [{"name": "Region", "mapped": true}]}));
    let t = table(&["Region", "Amount"]);
    let before = cats("Region", &[("East", 4), ("West", 3)]);
    let after = cats("Region", &[("East", 4), ("West", 3), ("North", 2)]);
    let c = check_assumptions("s", &[&r], &[], (&t, &before), (&t, &after));
    assert_eq!(
        c.refusals,
        vec![
            "input s: column \"Region\" has a category the approved file did not have: \"Aaaaa\" (2 rows); the script maps each category"
        ]
    );
    let c = check_assumptions(
        "s",
        &[&r],
        &["new_categories".into()],
        (&t, &before),
        (&t, &after),
    );
    assert!(c.refusals.is_empty(), "{c:?}");
    assert_eq!(c.notes.len(), 1, "{c:?}");
    assert!(!c.notes[0].contains("North"), "masked: {c:?}");
    let c = check_assumptions("s", &[&r], &[], (&t, &before), (&t, &before));
    assert_eq!(c, Check::default());
}

#[test]
fn a_key_no_longer_unique_and_a_date_layout_changed_refuse() {
    let r = read(
        json!({"input": "s", "columns": [{"name": "id", "unique": true}, {"name": "when", "format": "%d/%m/%Y"}]}),
    );
    let with = |unique: &[&str], layout: &str, shape: &str| {
        let mut v = table(&["id", "when"]);
        v["profile"] = json!({"rows_profiled": 3, "duplicate_rows": 0, "unique_columns": unique,
            "columns": [{"name": "id", "inferred_type": "integer", "nulls": 0, "placeholders": 0, "distinct": 3, "shapes": []},
                        {"name": "when", "inferred_type": "date", "date_format": layout, "nulls": 0, "placeholders": 0, "distinct": 3,
                         "shapes": [{"shape": shape, "count": 3}]}]});
        v
    };
    let approved = with(&["id"], "%d/%m/%Y", "##/##/####");
    let c = check_assumptions("s", &[&r], &[], (&approved, &[]), (&approved, &[]));
    assert_eq!(c, Check::default());
    let c = check_assumptions(
        "s",
        &[&r],
        &[],
        (&approved, &[]),
        (&with(&[], "%Y-%m-%d", "####-##-##"), &[]),
    );
    assert_eq!(c.refusals.len(), 2, "{c:?}");
    assert!(
        c.refusals[0].contains("column \"id\" is not a unique key"),
        "{c:?}"
    );
    assert!(
        c.refusals[1].contains("laid out %Y-%m-%d in this file; the script parses %d/%m/%Y"),
        "{c:?}"
    );
    assert_eq!(
        c.notes,
        vec![
            "input s: column \"when\" has 3 values of a layout the approved file did not have (\"####-##-##\")"
        ]
    );
}
