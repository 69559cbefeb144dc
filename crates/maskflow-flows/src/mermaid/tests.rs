use super::*;

const PR_REVIEW: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review.mmd");

fn graph_flow() -> FlowDef {
    definition::parse(
        r#"{
  "description": "every graph step type",
  "input": {"limit": 3},
  "start": "fetch",
  "nodes": [
{"id": "fetch", "type": "llm", "label": "Fetch \"PR\"", "agentType": "planner", "identifier": "main",
 "messages": [{"role": "user", "content": ["List files of {{input.limit}}"]}], "next": "cmd",
 "postconditions": [{"check": "output.files", "error": "no files"}]},
{"id": "cmd", "type": "command", "agentType": "planner", "identifier": "main", "commandName": "plan", "next": "each"},
{"id": "each", "type": "foreach", "label": "Review File", "itemsPath": "output.files", "itemVariable": "file",
 "concurrency": 2, "step": {"type": "llm", "agentType": "coder", "identifier": "{{file.path}}",
   "messages": [{"role": "user", "content": ["Review {{file.path}}"]}]}, "next": "join"},
{"id": "join", "type": "join", "onFailure": "skip", "next": "check"},
{"id": "check", "type": "decision", "label": "Quality Gate",
 "branches": [
   {"condition": "output.score >= 80 || output.name == \"ok\"", "next": "sub"},
   {"condition": "output.retry", "next": "fetch", "maxIterations": 3}
 ],
 "default": {"next": "ask"}},
{"id": "sub", "type": "subflow", "label": "Security Scan", "flow": "scan", "input": {"file": "output.file"}, "next": "end"},
{"id": "ask", "type": "gate", "prompt": "Ship it?", "context": ["output.summary"],
 "options": [{"label": "Yes"}, {"label": "Redo", "next": "fetch"}, {"label": "Drop", "next": null},
             {"label": "Note", "requiresInput": true}], "next": "end"},
{"id": "end", "type": "script", "path": "tidy.py", "args": ["{{output.file}}"], "timeoutSeconds": 5}
  ]
}"#,
    )
    .expect("valid graph flow")
}

fn list_flow() -> FlowDef {
    definition::parse(
        r#"{
  "description": "every list step type",
  "steps": [
{"type": "llm", "id": "plan", "agentType": "planner", "identifier": "main",
 "messages": [{"role": "system", "content": ["Plan"]}]},
{"type": "startLoop", "label": "Work", "maxIterations": 5, "steps": [
  {"type": "command", "agentType": "coder", "identifier": "main", "commandName": "code"},
  {"type": "break", "agentType": "planner", "identifier": "main", "question": "Done?", "breakOn": "yes"}
]},
{"type": "decision", "branches": [
  {"condition": "output.ok", "steps": [{"type": "gate", "prompt": "OK?", "options": [{"label": "Go"}]}]},
  {"condition": "!output.ok", "steps": [{"type": "llm", "agentType": "planner", "identifier": "main", "messages": [{"role": "user", "content": ["Why?"]}]}]}
], "default": {"steps": [{"type": "script", "workflow": "wf_1"}]}},
{"type": "decision", "label": "Maybe", "branches": [
  {"condition": "output.n > 1", "steps": [{"type": "gate", "prompt": "More?", "options": [{"label": "Go"}]}]}], "default": {}},
{"type": "foreach", "itemsPath": "output.items", "itemVariable": "it",
 "step": {"type": "subflow", "flow": "child"}},
{"type": "join"}
  ]
}"#,
    )
    .expect("valid list flow")
}

#[test]
fn graph_flows_round_trip_with_every_shape() {
    let def = graph_flow();
    let text = export(&def);
    assert!(text.starts_with("graph TD\n"), "{text}");
    for shape in [
        "fetch[\"Fetch #quot;PR#quot;\"]",
        "cmd[\"command\"]",
        "each[[\"Each: Review File\"]]",
        "join[\"join\"]",
        "check{\"Quality Gate\"}",
        "sub[[\"Run: Security Scan\"]]",
        "ask(\"gate\")",
        "n7_[\"script\"]",
    ] {
        assert!(text.contains(shape), "{shape} missing in\n{text}");
    }
    assert!(
        text.contains("check -->|\"output.score >= 80 || output.name == #quot;ok#quot;\"| sub")
    );
    assert!(text.contains("check -->|default| ask"));
    assert!(text.contains("ask -->|\"Redo\"| fetch"));
    assert!(text.contains(CONFIG_START) && text.contains(CONFIG_END));
    assert!(text.contains("%% @fetch: {"));
    assert_eq!(import(&text).expect("imports"), def);
}

#[test]
fn list_flows_round_trip() {
    let def = list_flow();
    let text = export(&def);
    assert!(text.contains("s1[[\"Loop: Work\"]]"), "{text}");
    assert!(text.contains("s2{\"decision\"}"), "{text}");
    assert!(text.contains("s2_0_0(\"gate\")"), "{text}");
    assert!(text.contains("s4[[\"Each: foreach\"]]"), "{text}");
    assert!(!text.contains("s2 --> s3"), "{text}");
    assert!(text.contains("s3 --> s4"), "{text}");
    assert!(text.contains("s2 -->|\"output.ok\"| s2_0_0"), "{text}");
    assert_eq!(import(&text).expect("imports"), def);
}

#[test]
fn the_seed_example_imports() {
    let def = import(PR_REVIEW).expect("seed 003's PR Review Workflow imports");
    let nodes = def.nodes.as_ref().expect("graph form");
    assert_eq!(nodes.len(), 11);
    let ids: Vec<String> = nodes
        .iter()
        .map(|n| n.common().id.map(|i| i.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(ids, ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"]);
    assert!(matches!(&nodes[2], Step::Foreach(f) if f.item_variable.as_str() == "file"));
    assert!(matches!(&nodes[3], Step::Join(_)));
    assert!(matches!(&nodes[6], Step::Gate(_)));
    assert_eq!(nodes[6].common().next.map(Text::as_str), Some("I"));
    let Step::Decision(e) = &nodes[4] else {
        panic!("E is a decision")
    };
    assert_eq!(e.branches.len(), 2);
    assert_eq!(e.branches[0].condition.as_str(), "output.score >= 80");
    assert_eq!(
        e.default
            .as_ref()
            .and_then(|d| d.next.as_ref())
            .map(Text::as_str),
        Some("H")
    );
    let Step::Decision(j) = &nodes[9] else {
        panic!("J is a decision")
    };
    assert_eq!(
        j.branches[0].max_iterations,
        Some(10),
        "the back edge gets a limit"
    );
    assert_eq!(nodes[0].display_label(), "Fetch PR Details");
    // and it survives its own round trip
    assert_eq!(import(&export(&def)).expect("re-imports"), def);
}

fn import_err(text: &str) -> MermaidError {
    import(text).expect_err(text)
}

const CFG_A: &str = "%% @A: {\"type\": \"join\"}\n";

#[test]
fn errors_are_clear() {
    let e = import_err(&format!(
        "graph TD\n    A --> B\n{CONFIG_START}\n{CFG_A}{CONFIG_END}\n"
    ));
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("node B has no config"), "{e}");

    let e = import_err(&format!(
        "graph TD\n    A\n{CONFIG_START}\n{CFG_A}%% @Z: {{\"type\": \"join\"}}\n{CONFIG_END}\n"
    ));
    assert!(e.message.contains("names Z, which is not a node"), "{e}");
    assert_eq!(e.line, Some(5));

    let e = import_err(&format!(
        "graph TD\n    D{{Check}} -->|\"output.x >>= 3\"| A\n{CONFIG_START}\n{CFG_A}%% @D: {{\"type\": \"decision\"}}\n{CONFIG_END}\n"
    ));
    assert!(e.message.contains("not a valid condition"), "{e}");
    assert_eq!(e.line, Some(2));

    let e = import_err(&format!(
        "graph TD\n    A -->|\"x\"| B\n{CONFIG_START}\n{CFG_A}%% @B: {{\"type\": \"join\"}}\n{CONFIG_END}\n"
    ));
    assert!(
        e.message
            .contains("only a decision's edges carry conditions"),
        "{e}"
    );

    let e = import_err("flow\n");
    assert!(e.message.contains("graph TD"), "{e}");

    let e = import_err(&format!(
        "graph TD\n    A\n{CONFIG_START}\n%% @A: {{\"type\": \"llm\"}}\n{CONFIG_END}\n"
    ));
    assert!(e.message.contains("config of A"), "{e}");

    let e = import_err(&format!(
        "graph TD\n    A\n{CONFIG_START}\n%% @A: {{\"type\": \n{CONFIG_END}\n"
    ));
    assert!(e.message.contains("not valid JSON"), "{e}");
}
