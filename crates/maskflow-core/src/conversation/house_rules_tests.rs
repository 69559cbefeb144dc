use serde_json::json;

use super::*;

fn templates(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn nested_includes_expand_in_place() {
    let t = templates(&[
        ("python-style", "Use pathlib.\n{{include:naming}}"),
        ("naming", "Name columns in snake_case."),
    ]);
    let out = expand_includes(
        "# python\n{{ include: python-style }}\nEnd.",
        "settings",
        &t,
    )
    .expect("expands");
    assert_eq!(
        out,
        "# python\nUse pathlib.\nName columns in snake_case.\nEnd."
    );
    // The same template twice is not a cycle.
    let twice = expand_includes("{{include:naming}} {{include:naming}}", "s", &t).expect("ok");
    assert_eq!(
        twice,
        "Name columns in snake_case. Name columns in snake_case."
    );
}

#[test]
fn a_cycle_is_an_error_naming_the_chain() {
    let t = templates(&[("a", "A {{include:b}}"), ("b", "B {{include:a}}")]);
    let err = expand_includes("x {{include:a}}", "the Settings text", &t).expect_err("cycle");
    assert_eq!(
        err,
        IncludeError::Cycle {
            chain: vec![
                "the Settings text".into(),
                "a".into(),
                "b".into(),
                "a".into()
            ]
        }
    );
    assert_eq!(
        err.to_string(),
        "house rules: the includes make a cycle: the Settings text → a → b → a"
    );
    // A file including itself.
    let t = templates(&[("self", "{{include:self}}")]);
    let err = expand_includes(&t["self"], "self", &t).expect_err("cycle");
    assert_eq!(
        err,
        IncludeError::Cycle {
            chain: vec!["self".into(), "self".into()]
        }
    );
}

#[test]
fn a_missing_include_is_an_error_naming_where_it_was_met() {
    let t = templates(&[("a", "{{include:nowhere}}")]);
    let err = expand_includes("{{include:a}}", "the Settings text", &t).expect_err("missing");
    assert_eq!(
        err,
        IncludeError::Missing {
            name: "nowhere".into(),
            chain: vec!["the Settings text".into(), "a".into()]
        }
    );
    assert_eq!(
        err.to_string(),
        "house rules: {{include:nowhere}} in the Settings text → a names no file house-rules/nowhere.md"
    );
    let bad = expand_includes("{{include:../etc/passwd}}", "s", &t).expect_err("bad name");
    assert!(matches!(bad, IncludeError::BadName { .. }), "{bad:?}");
    // An unclosed marker is left as text.
    assert_eq!(
        expand_includes("see {{include:a", "s", &t).expect("text"),
        "see {{include:a"
    );
}

#[test]
fn includes_that_multiply_are_refused_past_the_limit() {
    let mut t = templates(&[("l0", &"x".repeat(1024))]);
    for i in 1..=12 {
        t.insert(
            format!("l{i}"),
            format!("{{{{include:l{}}}}}{{{{include:l{}}}}}", i - 1, i - 1),
        );
    }
    let err = expand_includes("{{include:l12}}", "big", &t).expect_err("too large");
    assert_eq!(
        err,
        IncludeError::TooLarge {
            origin: "big".into()
        }
    );
}

const RULES: &str = "Be brief in comments.\n\n## Always\nNever print data values.\n\n## Python\nUse pathlib.\n### Example\n```python\n# not a heading\nimport pathlib\n```\n\n## Excel outputs\nFreeze the header row.\n\n## PDF reports\nUse A4 pages.\n\n## Outputs\nName outputs after the task.\n";

#[test]
fn the_shallowest_headings_name_the_scopes() {
    let sections = parse(RULES, "settings");
    let scopes: Vec<&str> = sections.iter().map(|s| s.scope.as_str()).collect();
    assert_eq!(
        scopes,
        [
            "always",
            "Always",
            "Python",
            "Excel outputs",
            "PDF reports",
            "Outputs"
        ]
    );
    assert_eq!(sections[0].body, "Be brief in comments.");
    assert!(sections[2].body.contains("### Example"));
    assert!(sections[2].body.contains("# not a heading"));
    assert!(sections.iter().all(|s| s.source == "settings"));
    assert!(parse("  \n", "x").is_empty());
}

#[test]
fn sections_are_chosen_by_the_words_of_the_request() {
    let rules = HouseRules {
        sections: parse(RULES, "settings"),
    };
    let history = vec![
        ChatMessage::new(ChatRole::User, "Merge the sheets into one table"),
        ChatMessage::new(ChatRole::Assistant, "Should the PDF be landscape?"),
    ];
    let extracts = json!([{"filename": "sales.xlsx"}]);
    let words = request_words(&history, &extracts, &[]);
    assert!(words.contains("excel") && words.contains("python") && words.contains("sheet"));
    let chosen: Vec<&str> = select(&rules, &words)
        .iter()
        .map(|s| s.scope.as_str())
        .collect();
    // "pdf" was only in the assistant's words: not the user's request.
    assert_eq!(
        chosen,
        ["always", "Always", "Python", "Excel outputs", "Outputs"]
    );

    let csv = request_words(
        &[ChatMessage::new(ChatRole::User, "total per order")],
        &json!([{"filename": "orders.csv"}]),
        &["report.pdf".to_owned()],
    );
    let chosen: Vec<&str> = select(&rules, &csv)
        .iter()
        .map(|s| s.scope.as_str())
        .collect();
    assert_eq!(
        chosen,
        ["always", "Always", "Python", "PDF reports", "Outputs"]
    );
}

#[test]
fn plurals_and_file_kinds_match() {
    let words = request_words(
        &[ChatMessage::new(
            ChatRole::User,
            "make charts in a workbook",
        )],
        &json!([]),
        &[],
    );
    assert!(applies("chart", &words));
    assert!(applies("Excel", &words));
    assert!(applies("general", &words));
    assert!(!applies("word documents", &words));
}

#[test]
fn rendering_names_each_scope_and_nothing_renders_empty() {
    let rules = HouseRules {
        sections: parse(RULES, "settings"),
    };
    let words = request_words(&[], &json!([]), &[]);
    let text = render(&select(&rules, &words));
    assert!(text.starts_with("The user's house rules"));
    assert!(text.contains("### Python\nUse pathlib."));
    assert!(!text.contains("Freeze the header row."));
    assert_eq!(render(&[]), "");
    assert_eq!(
        for_request(&HouseRules::default(), &[], &json!([]), &[]),
        ""
    );
}
