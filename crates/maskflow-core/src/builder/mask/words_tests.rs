//! Issue 28: Python's own error words pass the masker as Python wrote them
//! (in a traceback, and in a caught error the script printed itself), while
//! the values around them stay masked.

use super::tests::{PRELUDE, columns};
use super::*;

fn feedback(stderr: &str, columns: &[String]) -> String {
    let script = format!("{PRELUDE}total = rows[0]\n");
    repair_feedback(stderr, &Grammar::new(&script, columns), &Machine::default())
}

fn traceback(exception: &str) -> String {
    format!("{HEADER}\n  File \"script.py\", line 4, in <module>\n    total = rows[0]\n{exception}")
}

#[test]
fn the_wording_of_a_caught_error_passes_and_its_values_are_masked() {
    // A script that catches the error and prints it: no traceback to parse.
    let out = feedback(
        "Error: 'DataFrame' object has no attribute 'star_baker'",
        &columns(),
    );
    assert_eq!(
        out,
        "Aaaaa: 'DataFrame' object has no attribute 'aaaa_aaaaa'"
    );
    let mut with_column = columns();
    with_column.push("star_baker".into());
    let out = feedback(
        "Error: 'DataFrameGroupBy' object has no attribute 'star_baker'",
        &with_column,
    );
    assert_eq!(
        out,
        "Aaaaa: 'DataFrameGroupBy' object has no attribute 'star_baker'"
    );
    let out = feedback("failed: 'Zebulon' object is not subscriptable", &columns());
    assert_eq!(out, "aaaaaa: 'Aaaaaaa' object is not subscriptable");
}

#[test]
fn errors_on_a_column_of_a_masked_name_stay_readable() {
    // The extract showed the column as `Aaaaaaa Aaaaaaaa` (it looked like a
    // name): its real name is a value, masked; Python's words are not.
    let cases = [
        (
            "AttributeError: 'DataFrame' object has no attribute 'Zebulon_Quagmire'",
            "AttributeError: 'DataFrame' object has no attribute 'Aaaaaaa_Aaaaaaaa'",
        ),
        (
            "KeyError: \"['Zebulon Quagmire'] not found in axis\"",
            "KeyError: \"['Aaaaaaa Aaaaaaaa'] not found in axis\"",
        ),
        (
            "KeyError: \"['amount'] not found in axis\"",
            "KeyError: \"['amount'] not found in axis\"",
        ),
        (
            "TypeError: 'float' object is not subscriptable",
            "TypeError: 'float' object is not subscriptable",
        ),
        (
            "TypeError: unsupported operand type(s) for +: 'Zebulon' and 'int'",
            "TypeError: unsupported operand type(s) for +: 'Aaaaaaa' and 'int'",
        ),
    ];
    for (raw, shown) in cases {
        let out = feedback(&traceback(raw), &columns());
        assert!(out.ends_with(shown), "{raw}\n→ {out}");
        assert!(!out.contains("Zebulon"), "{out}");
    }
}

#[test]
fn a_word_of_the_data_is_masked_even_beside_python_words() {
    // Only whole phrases pass: "has" or "object" alone is data.
    let out = feedback("Zebulon has object 1234.50", &columns());
    assert_eq!(out, "Aaaaaaa aaa aaaaaa ####.##");
    // A capitalised type name passes only quoted, as Python quotes types.
    let out = feedback("Series Index 'Series'", &columns());
    assert_eq!(out, "Aaaaaa Aaaaa 'Series'");
}

#[test]
fn the_phrases_are_python_wording_of_at_least_two_words() {
    let phrases = vocab::phrases();
    for p in [
        "object has no attribute",
        "object is not subscriptable",
        "not found in axis",
        "is not defined",
    ] {
        assert!(phrases.iter().any(|x| x == p), "{p} missing");
    }
    assert!(phrases.iter().all(|p| p.contains(' ')), "{phrases:?}");
}
