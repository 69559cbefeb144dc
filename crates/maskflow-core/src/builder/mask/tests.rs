//! The repair feedback keeps what is known not to be data and masks the
//! rest; one regression test per leak of issue #13.

use super::*;

const SCRIPT: &str = "import pandas as pd
from datetime import datetime

df = pd.read_csv(INPUTS['orders'])
total = 0
for row in df.itertuples():
    total += int(row.age)
when = datetime.strptime(text, '%Y-%m-%d')
";

fn allow() -> Allowlist {
    Allowlist::new(
        SCRIPT,
        &["age".into(), "customer name".into(), "notes".into()],
    )
}

const WORKDIR: &str = "/data/test-runs/wv_1/iteration-1";

#[test]
fn a_traceback_keeps_its_structure_script_lines_and_types() {
    let trace = format!(
        "Traceback (most recent call last):
  File \"{WORKDIR}/script.py\", line 7, in <module>
    total += int(row.age)
             ^^^^^^^^^^^^
ValueError: invalid literal for int() with base 10: 'John Smith'"
    );
    let out = mask_error(&trace, WORKDIR, &allow());
    assert!(
        out.contains("File \"./script.py\", line 7, in <module>"),
        "{out}"
    );
    assert!(out.contains("    total += int(row.age)"), "{out}");
    assert!(
        out.contains("ValueError: invalid literal for int() with base 10: 'Aaaa Aaaaa'"),
        "{out}"
    );
}

#[test]
fn library_frames_are_kept_and_other_frames_masked() {
    let trace = "Traceback (most recent call last):
  File \"/usr/lib/python3.12/json/decoder.py\", line 337, in decode
    obj, end = self.raw_decode(s, idx=_w(s, 0).end())
  File \"./helper_data.py\", line 1, in <module>
    SECRET = 'Zebulon Quux 5558675309'
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)";
    let out = mask_error(trace, "", &allow());
    assert!(out.contains("File \"/usr/lib/python3.12/json/decoder.py\", line 337, in decode"));
    assert!(out.contains("obj, end = self.raw_decode(s, idx=_w(s, 0).end())"));
    for raw in ["Zebulon", "Quux", "5558675309", "helper_data"] {
        assert!(!out.contains(raw), "{raw} leaked: {out}");
    }
}

#[test]
fn an_unquoted_message_of_document_text_is_masked() {
    // Regression (#13): a Word document's text went out in a ValueError.
    let out = mask_error(
        "ValueError: unconverted data remains: Patient Zebulon Quux was diagnosed with hypertension",
        "",
        &allow(),
    );
    assert!(
        out.starts_with("ValueError: unconverted data remains: "),
        "{out}"
    );
    for raw in ["Patient", "Zebulon", "Quux", "diagnosed", "hypertension"] {
        assert!(!out.contains(raw), "{raw} leaked: {out}");
    }
}

#[test]
fn reformatted_values_in_messages_are_masked() {
    // Regression (#13): values printed in another format were not known raw values.
    let out = mask_error(
        "ValueError: bad salary 85,000 for 555-867-5309, 92,000.50 on 2021-03-14",
        "",
        &allow(),
    );
    for raw in [
        "85,000",
        "555-867-5309",
        "92,000.50",
        "2021-03-14",
        "85",
        "555",
    ] {
        assert!(!out.contains(raw), "{raw} leaked: {out}");
    }
    assert!(out.contains("##,###"), "the shape stays: {out}");
}

#[test]
fn a_source_line_not_in_the_script_is_masked() {
    // Regression (#13): a script that base64-encodes a file into a line the
    // traceback shows as source sent the file.
    let trace = "Traceback (most recent call last):
  File \"./script.py\", line 3, in <module>
    blob = 'Sm9obiBTbWl0aCw1NTU4Njc1MzA5'
NameError: name 'undefined_thing' is not defined";
    let out = mask_error(trace, "", &allow());
    assert!(!out.contains("Sm9obiBTbWl0aCw1NTU4Njc1MzA5"), "{out}");
    assert!(out.contains("NameError: name '"), "{out}");
}

#[test]
fn column_names_and_script_words_stay_and_printed_output_is_masked() {
    let out = mask_error(
        "KeyError: 'customer name'\nprocessing Zebulon row 12 of notes",
        "",
        &allow(),
    );
    assert!(out.contains("KeyError: 'customer name'"), "{out}");
    assert!(out.contains("notes"), "{out}");
    assert!(!out.contains("Zebulon") && !out.contains("12"), "{out}");
}

#[test]
fn the_feedback_is_capped_keeping_its_end() {
    let long = format!("{}\nValueError: end", "x".repeat(MAX_FEEDBACK_CHARS * 2));
    let out = mask_error(&long, "", &allow());
    assert!(out.chars().count() < MAX_FEEDBACK_CHARS + 60);
    assert!(
        out.ends_with("ValueError: end") || out.ends_with("ValueError: aaa"),
        "{out}"
    );
    assert!(out.starts_with("[… "));
}
