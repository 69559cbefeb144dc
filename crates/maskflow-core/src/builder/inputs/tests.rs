use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::conversation::current::input_name;
use crate::conversation::spec::{Execution, Field};

fn file(name: &str, columns: &[&str]) -> InputFile {
    InputFile {
        filename: name.into(),
        path: PathBuf::from(format!("/stored/{name}")),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
    }
}

fn field(name: &str, t: FieldType) -> Field {
    Field {
        name: name.into(),
        label: format!("The {name}"),
        field_type: t,
        required: true,
        options: None,
        accept: None,
    }
}

fn spec(fields: Vec<Field>, script: &str) -> WorkflowSpec {
    WorkflowSpec {
        name: "W".into(),
        description: "d".into(),
        script: script.into(),
        fields,
        execution: Execution {
            runtime: "python3".into(),
            entrypoint: "script.py".into(),
            requirements: vec![],
            outputs: vec![],
            reads: None,
            drift: vec![],
        },
    }
}

fn got(bound: &Bound, field: &str) -> Vec<String> {
    bound.1.get(field).cloned().unwrap_or_default()
}

#[test]
fn input_names_are_identifiers_made_from_the_stems() {
    assert_eq!(input_name("Bakers 2024.csv"), "bakers");
    assert_eq!(input_name("2024-results.xlsx"), "results");
    assert_eq!(input_name("originations_2018-02.csv"), "originations");
    assert_eq!(input_name("Sales Q3 FY24 march.xlsx"), "sales");
    assert_eq!(input_name("2024.csv"), "file_2024");
    assert_eq!(input_name("maybe may.csv"), "maybe");
    assert_eq!(input_name("Ärger.csv"), "rger");
    assert_eq!(input_name(".csv"), "csv");
    assert_eq!(input_name("***.csv"), "file");
    assert_eq!(
        input_names(&["sales.csv".into(), "sales.xlsx".into(), "Sales.txt".into()]),
        vec!["sales", "sales_2", "sales_3"]
    );
}

/// Issue 28: inputs declared in the reverse order of the files still get
/// the right files.
#[test]
fn files_bind_to_inputs_by_name_whatever_the_order() {
    let files = [
        file("bakers.csv", &["baker"]),
        file("results.csv", &["episode"]),
    ];
    let s = spec(
        vec![
            field("results", FieldType::File),
            field("bakers", FieldType::File),
        ],
        "",
    );
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "results"), vec!["results.csv"]);
    assert_eq!(got(&bound, "bakers"), vec!["bakers.csv"]);
    assert_eq!(
        bound.0["bakers"],
        InputValue::File(PathBuf::from("/stored/bakers.csv"))
    );
}

#[test]
fn names_match_across_case_separators_and_partial_words() {
    let files = [
        file("Star-Bakers.CSV", &[]),
        file("episode_results_2024.xlsx", &[]),
    ];
    let s = spec(
        vec![
            field("episode_results", FieldType::File),
            field("starBakers", FieldType::File),
        ],
        "",
    );
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "starBakers"), vec!["Star-Bakers.CSV"]);
    assert_eq!(
        got(&bound, "episode_results"),
        vec!["episode_results_2024.xlsx"]
    );
}

#[test]
fn the_columns_the_script_quotes_break_a_tie() {
    let files = [
        file("export_a.csv", &["island", "species"]),
        file("export_b.csv", &["star_baker"]),
    ];
    let script = "df = pd.read_csv(inputs['contestants'])\nprint(df['star_baker'])\n";
    let s = spec(
        vec![
            field("contestants", FieldType::File),
            field("penguins", FieldType::File),
        ],
        script,
    );
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "contestants"), vec!["export_b.csv"]);
    // The last input takes the last file: nothing else could take it.
    assert_eq!(got(&bound, "penguins"), vec!["export_a.csv"]);
}

#[test]
fn an_ambiguous_binding_is_asked_then_answered() {
    let files = [file("a.csv", &["x"]), file("b.csv", &["x"])];
    let s = spec(
        vec![
            field("left", FieldType::File),
            field("right", FieldType::File),
        ],
        "",
    );
    let questions = bind_test_inputs(&s, &files, &BTreeMap::new()).expect_err("ambiguous");
    assert_eq!(questions.len(), 2);
    assert_eq!(questions[0].field, "left");
    assert_eq!(questions[0].candidates, vec!["a.csv", "b.csv"]);
    let mut answers = BTreeMap::new();
    answers.insert("left".to_owned(), "b.csv".to_owned());
    let err = check_answers(&questions, &answers).expect_err("right is missing");
    assert!(
        err.contains("`right`") && err.contains("a.csv, b.csv"),
        "{err}"
    );
    answers.insert("right".to_owned(), "b.csv".to_owned());
    assert!(
        check_answers(&questions, &answers)
            .expect_err("twice")
            .contains("two inputs")
    );
    answers.insert("right".to_owned(), "c.csv".to_owned());
    assert!(check_answers(&questions, &answers).is_err());
    answers.insert("right".to_owned(), "a.csv".to_owned());
    check_answers(&questions, &answers).expect("good answers");
    let bound = bind_test_inputs(&s, &files, &answers).expect("bound");
    assert_eq!(got(&bound, "left"), vec!["b.csv"]);
    assert_eq!(got(&bound, "right"), vec!["a.csv"]);
}

#[test]
fn a_files_input_takes_what_the_named_inputs_left() {
    let files = [
        file("jan.csv", &[]),
        file("lookup.csv", &[]),
        file("feb.csv", &[]),
    ];
    let mut choice = field("mode", FieldType::Choice);
    choice.options = Some(vec!["fast".into(), "slow".into()]);
    let s = spec(
        vec![
            field("months", FieldType::Files),
            field("lookup", FieldType::File),
            choice,
        ],
        "",
    );
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "lookup"), vec!["lookup.csv"]);
    assert_eq!(got(&bound, "months"), vec!["jan.csv", "feb.csv"]);
    assert_eq!(bound.0["mode"], InputValue::Value(json!("fast")));
    assert!(describe(&bound.1).contains("- input `lookup` was fed lookup.csv"));
}

#[test]
fn one_input_and_one_file_bind_whatever_their_names() {
    let files = [file("penguins_raw.xlsx", &[])];
    let s = spec(vec![field("data", FieldType::File)], "");
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "data"), vec!["penguins_raw.xlsx"]);
}

#[test]
fn the_columns_count_only_where_the_script_reads_that_input() {
    let script = "import csv, json, sys\nf = json.load(open(sys.argv[1]))['fields']\n\
with open(f['left']) as fh:\n    rows = list(csv.DictReader(fh))\nprint(rows[0]['species'])\n\
for r in csv.DictReader(open(f['right'])):\n    print(r['star_baker'])\n";
    let files = [file("x.csv", &["star_baker"]), file("y.csv", &["species"])];
    let s = spec(
        vec![
            field("left", FieldType::File),
            field("right", FieldType::File),
        ],
        script,
    );
    let bound = bind_test_inputs(&s, &files, &BTreeMap::new()).expect("bound");
    assert_eq!(got(&bound, "left"), vec!["y.csv"]);
    assert_eq!(got(&bound, "right"), vec!["x.csv"]);
}
