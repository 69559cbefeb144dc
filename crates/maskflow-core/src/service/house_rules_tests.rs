use std::sync::Arc;

use super::*;
use crate::service::tests::service_with;
use maskflow_llm::ReplayProvider;

fn service(home: &Path) -> Service {
    let replay = ReplayProvider::from_value(&serde_json::json!({})).expect("replay");
    service_with(home, Arc::new(replay))
}

fn write(home: &Path, name: &str, text: &str) {
    let dir = home.join(HOUSE_RULES_DIR);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(name), text).expect("write");
}

fn input(text: &str) -> HouseRulesInput {
    HouseRulesInput { text: text.into() }
}

#[test]
fn the_settings_text_and_the_files_merge_in_order() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    assert!(s.house_rules_bundle().expect("empty").sections.is_empty());
    write(home.path(), "_naming.md", "Columns in snake_case.");
    write(
        home.path(),
        "b-excel.md",
        "# Excel outputs\nFreeze the header row.",
    );
    write(
        home.path(),
        "a-python.md",
        "# Python\nUse pathlib.\n{{include:_naming}}",
    );
    write(home.path(), "notes.txt", "# ignored\nnot Markdown");
    let view = s
        .set_house_rules(input("# Always\nNever print values."))
        .expect("saved");
    assert_eq!(view.text, "# Always\nNever print values.");
    assert_eq!(view.scopes, ["Always"]);
    let files: Vec<(&str, bool, Vec<String>)> = view
        .files
        .iter()
        .map(|f| (f.name.as_str(), f.include_only, f.scopes.clone()))
        .collect();
    assert_eq!(
        files,
        [
            ("_naming", true, vec![]),
            ("a-python", false, vec!["Python".to_owned()]),
            ("b-excel", false, vec!["Excel outputs".to_owned()]),
        ]
    );
    let bundle = s.house_rules_bundle().expect("bundle");
    let got: Vec<(&str, &str)> = bundle
        .sections
        .iter()
        .map(|x| (x.scope.as_str(), x.source.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("Always", "Settings"),
            ("Python", "house-rules/a-python.md"),
            ("Excel outputs", "house-rules/b-excel.md"),
        ]
    );
    assert_eq!(
        bundle.sections[1].body,
        "Use pathlib.\nColumns in snake_case."
    );
    // Persisted: a new service over the same folder reads it back.
    drop(s);
    assert_eq!(
        service(home.path()).house_rules().expect("view").text,
        view.text
    );
}

#[test]
fn a_missing_include_or_a_cycle_is_refused_with_the_chain() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let err = s
        .set_house_rules(input("# Python\n{{include:style}}"))
        .expect_err("missing");
    assert!(
        matches!(&err, CoreError::InvalidRequest(m) if m.contains("{{include:style}} in the Settings text names no file house-rules/style.md")),
        "{err}"
    );
    write(home.path(), "_a.md", "{{include:_b}}");
    write(home.path(), "_b.md", "{{include:_a}}");
    let err = s
        .set_house_rules(input("{{include:_a}}"))
        .expect_err("cycle");
    assert!(
        matches!(&err, CoreError::InvalidRequest(m) if m.ends_with("the Settings text → _a → _b → _a")),
        "{err}"
    );
    assert_eq!(s.house_rules().expect("view").text, "", "nothing was saved");
    let too_long = "x".repeat(MAX_TEXT_CHARS + 1);
    assert!(matches!(
        s.set_house_rules(input(&too_long)),
        Err(CoreError::InvalidRequest(_))
    ));
}

#[test]
fn a_broken_file_is_shown_in_the_view_and_fails_the_bundle() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    write(home.path(), "loop.md", "# Python\n{{include:loop}}");
    let dir = home.path().join(HOUSE_RULES_DIR);
    std::fs::write(dir.join("binary.md"), [0xff, 0xfe, 0x00]).expect("write");
    let view = s.house_rules().expect("view");
    let errors: Vec<String> = view.files.iter().filter_map(|f| f.error.clone()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("is not UTF-8 text"), "{errors:?}");
    assert!(errors[1].contains("loop → loop"), "{errors:?}");
    let err = s.house_rules_bundle().expect_err("a build cannot use them");
    assert!(err.to_string().contains("binary.md"), "{err}");
    // Including an unreadable file says why it is unreadable.
    let err = s
        .set_house_rules(input("{{include:binary}}"))
        .expect_err("unreadable");
    assert!(err.to_string().contains("is not UTF-8 text"), "{err}");
}
