//! The flow editor's calls: checks with the loader's own messages, saves
//! through them, conflicts with edits made outside, and hostile drafts and
//! names that must not write anything.

use std::sync::Arc;

use super::*;
use crate::service::flow_editor::MAX_FLOW_TEXT;
use crate::service::tests::service_with;
use maskflow_llm::ReplayProvider;

fn service(home: &Path) -> Service {
    // The agent the flows below name: a flow may only name agents Maskflow knows.
    std::fs::create_dir_all(home.join("agents")).expect("mkdir");
    std::fs::write(home.join("agents/writer.json"), "{}").expect("agent");
    let replay = ReplayProvider::from_value(&serde_json::json!({})).expect("replay");
    service_with(home, Arc::new(replay))
}

const GOOD: &str = r#"{
  "description": "Drafts, then loops over a review",
  "steps": [
    {"type": "llm", "label": "Draft", "agentType": "writer", "identifier": "main",
     "messages": [{"role": "user", "content": ["Write a draft."]}]},
    {"type": "startLoop", "label": "Review loop", "maxIterations": 3, "steps": [
      {"type": "llm", "label": "Improve", "agentType": "writer", "identifier": "main",
       "messages": [{"role": "user", "content": ["Improve it."]}]},
      {"type": "break", "label": "Done?", "agentType": "writer", "identifier": "main",
       "question": "Is it done?", "breakOn": "yes"}
    ]}
  ]
}"#;

fn flow_file(home: &Path, name: &str) -> PathBuf {
    home.join("flows").join(format!("{name}.json"))
}

fn save(text: &str, base: Option<&str>) -> FlowSave {
    FlowSave {
        text: text.into(),
        base_revision: base.map(str::to_owned),
    }
}

#[test]
fn a_new_flow_is_checked_saved_loaded_and_reopened_with_its_revision() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let check = s
        .flow_validate(FlowDraft { text: GOOD.into() })
        .expect("check");
    assert!(check.valid, "{:?}", check.messages);
    let diagram = check.mermaid.expect("a diagram");
    assert!(diagram.contains("Review loop"), "{diagram}");
    assert!(
        !flow_file(home.path(), "review").exists(),
        "a check writes nothing"
    );

    let saved = s.flow_save("review", save(GOOD, None)).expect("save");
    assert_eq!(saved.name, "review");
    // The loader reads what was saved, and the list shows it enabled.
    let def = s.flow_definition("review").expect("loads");
    assert_eq!(def["steps"][1]["steps"][1]["breakOn"], "yes");
    let listed = s.flow_list().expect("list");
    let entry = listed
        .flows
        .iter()
        .find(|f| f.name == "review")
        .expect("listed");
    assert!(!entry.disabled, "{:?}", entry.error);

    let source = s.flow_source("review").expect("source");
    assert_eq!(source.revision, saved.revision);
    assert!(source.check.valid);
    assert_eq!(
        source.text,
        std::fs::read_to_string(flow_file(home.path(), "review")).expect("file")
    );
    // A second save from that revision goes through, and moves it on.
    let edited = GOOD.replace("Write a draft.", "Write a short draft.");
    let again = s
        .flow_save("review", save(&edited, Some(&source.revision)))
        .expect("second save");
    assert_ne!(again.revision, source.revision);
    assert!(
        s.flow_source("review")
            .expect("source")
            .text
            .contains("Write a short draft.")
    );
}

#[test]
fn the_loaders_own_messages_come_back_and_nothing_invalid_is_saved() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let cases = [
        ("{\"steps\": [", "not valid JSON"),
        ("steps:\n  - type: llm\n", "not valid JSON"),
        (
            r#"{"steps": [{"type": "teleport"}]}"#,
            "unknown step type \"teleport\"",
        ),
        (
            r#"{"steps": [{"type": "break", "agentType": "a", "identifier": "b", "question": "q", "breakOn": "yes"}]}"#,
            "inside a startLoop",
        ),
        (
            r#"{"steps": [{"type": "llm", "agentType": "a", "identifier": "b", "messages": []}]}"#,
            "at least one message",
        ),
        (r#"{"steps": [], "extra": 1}"#, "extra"),
    ];
    for (text, expected) in cases {
        let check = s
            .flow_validate(FlowDraft { text: text.into() })
            .expect("check");
        assert!(!check.valid, "{text} was accepted");
        assert!(check.mermaid.is_none());
        let shown: String = check
            .messages
            .iter()
            .map(|m| format!("{}: {}; ", m.path, m.message))
            .collect();
        assert!(shown.contains(expected), "{text}: {shown}");
        // The same message the loader gives a file with this text.
        let loader = maskflow_flows::definition::parse(text).expect_err("the loader refuses it");
        assert_eq!(check.messages[0].message, loader.message);
        assert_eq!(check.messages[0].path, loader.path);

        let err = s
            .flow_save("hostile", save(text, None))
            .expect_err("refused");
        assert!(matches!(err, CoreError::InvalidRequest(_)), "{err:?}");
        assert!(err.to_string().contains("flows/hostile.json"), "{err}");
        assert!(!flow_file(home.path(), "hostile").exists());
    }
    let huge = format!(
        "{{\"description\": \"{}\", \"steps\": []}}",
        "x".repeat(MAX_FLOW_TEXT)
    );
    let check = s.flow_validate(FlowDraft { text: huge }).expect("check");
    assert!(
        check.messages[0].message.contains("at most"),
        "{:?}",
        check.messages
    );
}

#[test]
fn a_file_changed_outside_since_it_was_opened_is_not_overwritten() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    s.flow_save("review", save(GOOD, None)).expect("save");
    let opened = s.flow_source("review").expect("open");
    let outside = GOOD.replace("Write a draft.", "Edited in a text editor.");
    std::fs::write(flow_file(home.path(), "review"), &outside).expect("outside edit");

    let mine = GOOD.replace("Write a draft.", "Edited in Maskflow.");
    let err = s
        .flow_save("review", save(&mine, Some(&opened.revision)))
        .expect_err("conflict");
    assert!(matches!(err, CoreError::Conflict(_)), "{err:?}");
    assert!(
        err.to_string().contains("changed outside Maskflow"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(flow_file(home.path(), "review")).expect("file"),
        outside,
        "the outside edit stays"
    );
    // Overwriting is a choice: the editor saves from the revision now on disk.
    let now = s.flow_source("review").expect("reload");
    assert_ne!(now.revision, opened.revision);
    s.flow_save("review", save(&mine, Some(&now.revision)))
        .expect("overwrite on purpose");
    assert!(
        s.flow_source("review")
            .expect("source")
            .text
            .contains("Edited in Maskflow.")
    );

    // A new flow does not replace one of the same name.
    let err = s.flow_save("review", save(GOOD, None)).expect_err("exists");
    assert!(matches!(err, CoreError::Conflict(_)), "{err:?}");
    assert!(err.to_string().contains("exists already"), "{err}");

    // A file removed since it was opened is not silently written again.
    let opened = s.flow_source("review").expect("open");
    std::fs::remove_file(flow_file(home.path(), "review")).expect("remove");
    let err = s
        .flow_save("review", save(GOOD, Some(&opened.revision)))
        .expect_err("removed");
    assert!(
        err.to_string().contains("removed outside Maskflow"),
        "{err}"
    );
    assert!(!flow_file(home.path(), "review").exists());
}

#[test]
fn names_cannot_leave_the_flows_folder() {
    let home = tempfile::tempdir().expect("tmp");
    let inner = home.path().join("data");
    std::fs::create_dir_all(&inner).expect("mkdir");
    let s = service(&inner);
    for name in [
        "../escape",
        "..",
        "a/b",
        "a\\b",
        "/tmp/abs",
        "x.json",
        "",
        " spaced",
        "dot.",
        "nul\0byte",
        "é",
        &"n".repeat(129),
    ] {
        let err = s.flow_save(name, save(GOOD, None)).expect_err(name);
        assert!(
            matches!(err, CoreError::InvalidRequest(_)),
            "{name}: {err:?}"
        );
        assert!(err.to_string().contains("flow name"), "{name}: {err}");
        assert!(s.flow_source(name).is_err(), "{name}");
    }
    // Nothing was written anywhere: not beside the data folder, not in it.
    let mut beside: Vec<_> = std::fs::read_dir(home.path())
        .expect("read")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    beside.sort();
    assert_eq!(beside, vec![std::ffi::OsString::from("data")]);
    assert!(
        !inner.join("flows").exists()
            || std::fs::read_dir(inner.join("flows"))
                .expect("read")
                .next()
                .is_none()
    );
}

#[cfg(unix)]
#[test]
fn a_flow_file_that_is_a_symlink_is_replaced_not_written_through() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let outside = home.path().join("outside.json");
    std::fs::write(&outside, GOOD).expect("outside file");
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, flow_file(home.path(), "linked")).expect("symlink");
    let opened = s.flow_source("linked").expect("open");
    let mine = GOOD.replace("Write a draft.", "Mine.");
    s.flow_save("linked", save(&mine, Some(&opened.revision)))
        .expect("save");
    assert_eq!(std::fs::read_to_string(&outside).expect("outside"), GOOD);
    let meta = std::fs::symlink_metadata(flow_file(home.path(), "linked")).expect("meta");
    assert!(meta.file_type().is_file());
}

#[test]
fn the_pickers_offer_the_step_types_agents_and_their_commands() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let agents = home.path().join("agents");
    std::fs::create_dir_all(agents.join("planner/commands")).expect("mkdir");
    std::fs::create_dir_all(agents.join("bare/commands")).expect("mkdir");
    std::fs::write(agents.join("planner.json"), r#"{"displayName": "Planner"}"#).expect("agent");
    std::fs::write(agents.join("writer.json"), "{}").expect("agent");
    std::fs::write(agents.join("broken.json"), "{\"nope\": 1}").expect("agent");
    let cmd = r#"{"messages": [{"role": "user", "content": ["Improve."]}]}"#;
    std::fs::write(agents.join("planner/commands/improve.json"), cmd).expect("cmd");
    std::fs::write(agents.join("planner/commands/bad name.json"), cmd).expect("cmd");
    std::fs::write(agents.join("bare/commands/go.json"), cmd).expect("cmd");

    let options = s.flow_editor_options().expect("options");
    assert!(options.step_types.iter().any(|t| t == "foreach"));
    assert!(options.step_types.iter().any(|t| t == "startLoop"));
    let names: Vec<&str> = options.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["bare", "broken", "planner", "writer"]);
    let planner = &options.agents[2];
    assert_eq!(planner.display_name.as_deref(), Some("Planner"));
    assert_eq!(planner.commands, ["improve"]);
    assert_eq!(options.agents[0].commands, ["go"]);
    assert!(options.agents[1].error.is_some());
}

#[test]
fn a_flow_naming_an_unknown_agent_is_shown_why_and_not_saved() {
    let home = tempfile::tempdir().expect("tmp");
    let s = service(home.path());
    let text = GOOD.replacen("\"agentType\": \"writer\"", "\"agentType\": \"wirter\"", 1);
    assert_ne!(text, GOOD);
    let check = s
        .flow_validate(FlowDraft { text: text.clone() })
        .expect("check");
    assert!(!check.valid);
    assert_eq!(check.messages[0].path, "steps[0].agentType");
    assert!(
        check.messages[0].message.starts_with(
            "step 1 (steps[0]) names the agent \"wirter\", which does not exist; agents: assistant, writer"
        ),
        "{:?}",
        check.messages
    );
    let err = s.flow_save("typo", save(&text, None)).expect_err("refused");
    assert!(
        err.to_string().contains("names the agent \"wirter\""),
        "{err}"
    );
    assert!(!flow_file(home.path(), "typo").exists());
    // The same text, written outside Maskflow, is listed disabled with that reason.
    std::fs::create_dir_all(home.path().join("flows")).expect("mkdir");
    std::fs::write(flow_file(home.path(), "typo"), &text).expect("write");
    let listed = s.flow_list().expect("list");
    assert!(listed.flows[0].disabled);
    let reason = listed.flows[0].error.as_deref().unwrap_or_default();
    assert!(reason.contains(&check.messages[0].message), "{reason}");
}
