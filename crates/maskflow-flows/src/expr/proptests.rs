//! Property tests of the condition language: printing an expression and
//! parsing the text gives the same expression back.

use proptest::prelude::*;
use serde_json::Value;

use super::*;

fn name() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,6}".prop_filter("a keyword is not a name", |n| {
        !matches!(n.as_str(), "true" | "false" | "null")
    })
}

fn literal() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Eighths print as plain decimals (`-3.125`), which the parser reads.
        (-1_000_000i32..1_000_000).prop_map(|n| Value::from(f64::from(n) / 8.0)),
        "[a-zA-Z0-9 '\"\\\\\n\t.!=<>()&|é]{0,12}".prop_map(Value::String),
    ]
}

fn path() -> impl Strategy<Value = Vec<Segment>> {
    let segment = prop_oneof![
        name().prop_map(Segment::Key),
        (0usize..1000).prop_map(Segment::Index),
    ];
    (name(), prop::collection::vec(segment, 0..4)).prop_map(|(first, rest)| {
        let mut path = vec![Segment::Key(first)];
        path.extend(rest);
        path
    })
}

fn cmp() -> impl Strategy<Value = Cmp> {
    prop_oneof![
        Just(Cmp::Eq),
        Just(Cmp::Ne),
        Just(Cmp::Ge),
        Just(Cmp::Le),
        Just(Cmp::Gt),
        Just(Cmp::Lt),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![literal().prop_map(Expr::Lit), path().prop_map(Expr::Path)];
    leaf.prop_recursive(5, 40, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Or(Box::new(a), Box::new(b))),
            (inner.clone(), cmp(), inner).prop_map(|(a, op, b)| Expr::Compare(
                Box::new(a),
                op,
                Box::new(b)
            )),
        ]
    })
}

proptest! {
    #[test]
    fn parse_of_print_is_identity(e in expr()) {
        let text = e.to_string();
        prop_assert_eq!(parse(&text), Ok(e), "printed as {}", text);
    }

    #[test]
    fn a_printed_path_parses_as_that_path(p in path()) {
        let text = Expr::Path(p.clone()).to_string();
        prop_assert_eq!(parse_path(&text), Ok(p));
    }
}

#[test]
fn printing_uses_only_the_parentheses_precedence_needs() {
    for (text, printed) in [
        ("a && b || c", "a && b || c"),
        ("a && (b || c)", "a && (b || c)"),
        ("!(a && b)", "!(a && b)"),
        ("!a === 'x'", "!a == 'x'"),
        ("(a > 1) == true", "(a > 1) == true"),
        (
            "output.files[0].path !== \"it's\"",
            "output.files[0].path != 'it\\'s'",
        ),
    ] {
        assert_eq!(parse(text).expect("parses").to_string(), printed, "{text}");
    }
}
