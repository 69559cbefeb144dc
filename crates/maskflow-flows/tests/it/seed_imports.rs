//! Every example of seeds 003 and 004 (copied verbatim into
//! `tests/fixtures/seeds/`, see its README) imports, and maps to the model
//! the seeds describe: steps, edges, agents and subflows. Seed 003's other
//! step fields (`defaultAssigneeId`, `subflowId`/`inputMapping`, `awaitTag`,
//! `branches`/`defaultBranch`) map too, and wrong input is still refused by
//! name.

use maskflow_flows::bundle::{self, FlowBundle};
use maskflow_flows::definition::{self, FlowDef, Step};
use maskflow_flows::mermaid;
use serde_json::{Value, json};

const EDGE_LABELS: &str = include_str!("../fixtures/seeds/003-edge-labels.mmd");
const PR_REVIEW: &str = include_str!("../fixtures/seeds/003-pr-review.mmd");
const BUNDLE: &str = include_str!("../fixtures/seeds/003-export-bundle.json");
const FLOW_004: &str = include_str!("../fixtures/seeds/004-flow-example.json");

fn nodes(def: &FlowDef) -> &[Step] {
    def.nodes.as_deref().expect("graph form")
}

fn id(s: &Step) -> &str {
    s.common().id.map(|t| t.as_str()).unwrap_or("")
}

fn next(s: &Step) -> Option<&str> {
    s.common().next.map(|t| t.as_str())
}

/// (agent, identifier, first message) of an `llm` step.
fn ask(s: &Step) -> (&str, &str, &str) {
    let Step::Llm(l) = s else {
        panic!("{} is not an llm step: {s:?}", id(s))
    };
    (
        l.agent_type.as_str(),
        l.identifier.as_str(),
        l.messages[0].content[0].as_str(),
    )
}

/// A branch as (condition, target, limit).
type Route = (String, String, Option<u32>);

/// The branches of a decision, then its default's target.
fn routes(s: &Step) -> (Vec<Route>, Option<String>) {
    let Step::Decision(d) = s else {
        panic!("{} is not a decision", id(s))
    };
    let b = d
        .branches
        .iter()
        .map(|b| {
            (
                b.condition.to_string(),
                b.next.as_ref().map(ToString::to_string).unwrap_or_default(),
                b.max_iterations,
            )
        })
        .collect();
    let default = d
        .default
        .as_ref()
        .and_then(|x| x.next.as_ref())
        .map(ToString::to_string);
    (b, default)
}

#[test]
fn seed_003_edge_label_diagram_imports_without_a_config_block() {
    let def = mermaid::import(EDGE_LABELS).expect("seed 003's edge-label diagram imports");
    let n = nodes(&def);
    assert_eq!(
        n.iter().map(id).collect::<Vec<_>>(),
        ["A", "B", "C", "D", "E"]
    );
    assert_eq!(ask(&n[0]), ("assistant", "default", "Analyze"));
    assert_eq!(next(&n[0]), Some("B"));
    assert_eq!(n[1].display_label(), "Score Check");
    assert_eq!(
        routes(&n[1]),
        (
            vec![
                ("output.score >= 80".into(), "C".into(), None),
                ("output.score >= 50".into(), "D".into(), None),
            ],
            Some("E".into())
        )
    );
    assert_eq!(ask(&n[2]).2, "Approve");
    let Step::Gate(g) = &n[3] else {
        panic!("D(Human Review) is a manual task: a gate")
    };
    assert_eq!(g.prompt.as_str(), "Human Review");
    // Issue 31 point 2: a manual task asks for a decision.
    let labels: Vec<&str> = g.options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["approve", "request changes", "reject"]);
    assert_eq!(ask(&n[4]).2, "Reject");
    assert!(
        n[2..].iter().all(|s| next(s).is_none()),
        "C, D, E end the flow"
    );
}

#[test]
fn seed_003_pr_review_imports_step_for_step() {
    let def = mermaid::import(PR_REVIEW).expect("seed 003's PR Review imports");
    let n = nodes(&def);
    let ids: Vec<&str> = n.iter().map(id).collect();
    assert_eq!(ids, ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"]);
    let (agent, ident, prompt) = ask(&n[0]);
    assert_eq!((agent, ident), ("assistant", "default"));
    assert!(
        prompt.starts_with("Fetch PR #{{input.prNumber}} metadata"),
        "{prompt}"
    );
    assert_eq!(n[0].display_label(), "Fetch PR Details");
    let Step::Foreach(c) = &n[2] else {
        panic!("C is a foreach")
    };
    assert_eq!(
        (c.items_path.as_str(), c.item_variable.as_str()),
        ("output.files", "file")
    );
    assert!(
        ask(&c.step)
            .2
            .starts_with("Review {{file.path}} for code style")
    );
    assert!(
        matches!(&n[3], Step::Join(_)),
        "D (awaitTag foreach:{{parentId}}) is a join"
    );
    assert_eq!(
        routes(&n[4]),
        (
            vec![
                ("output.score >= 80".into(), "F".into(), None),
                ("output.score >= 50".into(), "G".into(), None),
            ],
            Some("H".into())
        )
    );
    assert!(matches!(&n[6], Step::Gate(_)), "G is a manual task");
    assert_eq!(
        routes(&n[9]),
        (
            vec![("output.shouldRetry".into(), "A".into(), Some(10))],
            Some("K".into())
        ),
        "the retry edge back to A is bounded"
    );
    let edges: Vec<(&str, Option<&str>)> = n.iter().map(|s| (id(s), next(s))).collect();
    for (from, to) in [
        ("A", "B"),
        ("B", "C"),
        ("C", "D"),
        ("D", "E"),
        ("F", "I"),
        ("G", "I"),
        ("H", "J"),
    ] {
        assert!(
            edges.contains(&(from, Some(to))),
            "{from} --> {to} in {edges:?}"
        );
    }
    assert_eq!(next(&n[8]), None, "I ends the flow");
    assert_eq!(next(&n[10]), None, "K ends the flow");
}

#[test]
fn seed_003_export_bundle_imports_with_its_agents() {
    let b: FlowBundle = serde_json::from_str(BUNDLE).expect("the seed's bundle is a bundle");
    assert_eq!(bundle::file_stem_of(&b.workflow.name), "pr-review-pipeline");
    let def = bundle::bundled_definition(&b.workflow).expect("the seed's bundle imports");
    assert_eq!(
        def.description.as_deref(),
        Some("Automated PR review with human escalation")
    );
    let n = nodes(&def);
    assert_eq!(n.len(), 1, "the abridged diagram leaves the listed step");
    assert_eq!(id(&n[0]), "A");
    assert_eq!(n[0].display_label(), "Fetch PR Details");
    assert_eq!(
        ask(&n[0]),
        ("assistant", "default", "Fetch PR #{{input.prNumber}}...")
    );
    assert_eq!(b.agents.len(), 1);
    let a = bundle::bundled_agent(&b.agents[0]).expect("seed agent");
    assert_eq!(b.agents[0].id, "code-reviewer");
    assert_eq!(
        a.display_name.as_ref().map(|t| t.as_str()),
        Some("Code Review Agent")
    );
    assert_eq!(
        a.prompt.as_ref().map(|t| t.as_str()),
        Some("You are an expert code reviewer...")
    );
}

#[test]
fn seed_004_flow_example_parses_as_written() {
    let def = definition::parse(FLOW_004).expect("seed 004's example");
    assert_eq!(
        def.description.as_deref(),
        Some("Summarize, refine, and iterate until done.")
    );
    let steps = def.steps.as_deref().expect("list form");
    assert_eq!(steps.len(), 1);
    let Step::StartLoop(l) = &steps[0] else {
        panic!("a loop")
    };
    let kinds: Vec<&str> = l.steps.iter().map(Step::type_name).collect();
    assert_eq!(kinds, ["llm", "command", "break"]);
    assert_eq!(
        ask(&l.steps[0]),
        ("coding_agent", "summary", "Summarize the current notes.")
    );
    let Step::Command(c) = &l.steps[1] else {
        panic!("command")
    };
    assert_eq!(c.command_name.as_str(), "improve_plan");
    // and it travels in a bundle as its definition
    let b: FlowBundle = serde_json::from_value(json!({
        "workflow": {"name": "seed", "definition": serde_json::from_str::<Value>(FLOW_004).expect("json")},
        "exportVersion": "2.0", "exportedAt": "2025-01-15T10:00:00Z"
    }))
    .expect("bundle");
    assert_eq!(
        bundle::bundled_definition(&b.workflow).expect("imports"),
        def
    );
}

fn seed_bundle(steps: Value, mermaid_source: &str) -> FlowBundle {
    serde_json::from_value(json!({
        "workflow": {"name": "Seed Fields", "description": "", "mermaidSource": mermaid_source, "steps": steps},
        "agents": [],
        "exportVersion": "2.0",
        "exportedAt": "2025-01-15T10:00:00Z"
    }))
    .expect("bundle")
}

#[test]
fn seed_003_step_fields_map_to_the_model() {
    let steps = json!([
        {"id": "list", "name": "List files", "stepType": "task", "execution": "automated",
         "hitlPhase": "intake", "defaultAssigneeId": "code-reviewer",
         "prompt": "List the files. Output: {files: []}"},
        {"id": "each", "name": "Each file", "stepType": "foreach", "itemsPath": "output.files",
         "itemVariable": "file", "defaultAssigneeId": "code-reviewer",
         "prompt": "Review {{file.path}} ({{index}} of {{total}})"},
        {"id": "gather", "name": "Join", "stepType": "join", "awaitTag": "foreach:{{parentId}}"},
        {"id": "scan", "name": "Security Scan", "stepType": "subflow", "subflowId": "security-scan",
         "inputMapping": {"files": "output.results", "note": "{{input.note}}"}},
        {"id": "check", "name": "Check", "stepType": "decision",
         "branches": [{"condition": "output.failed > 0", "targetStepId": "list"},
                      {"condition": null, "targetStepId": "sign"}]},
        {"id": "sign", "name": "Sign off", "type": "manual", "stepType": "task",
         "defaultAssigneeId": "someone", "description": "A person signs."}
    ]);
    let b = seed_bundle(steps.clone(), "");
    let def = bundle::bundled_definition(&b.workflow).expect("imports");
    let n = nodes(&def);
    assert_eq!(
        ask(&n[0]),
        (
            "code-reviewer",
            "default",
            "List the files. Output: {files: []}"
        )
    );
    assert_eq!(next(&n[0]), Some("each"));
    let Step::Foreach(f) = &n[1] else {
        panic!("foreach")
    };
    assert_eq!(ask(&f.step).0, "code-reviewer");
    assert_eq!(
        ask(&f.step).2,
        "Review {{file.path}} ({{index}} of {{total}})"
    );
    assert!(matches!(&n[2], Step::Join(_)));
    let Step::Subflow(s) = &n[3] else {
        panic!("subflow")
    };
    assert_eq!(s.flow.as_str(), "security-scan");
    assert_eq!(
        s.input
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect::<Vec<_>>(),
        [("files", "output.results"), ("note", "{{input.note}}")]
    );
    assert_eq!(next(&n[3]), Some("check"));
    assert_eq!(
        routes(&n[4]),
        (
            vec![("output.failed > 0".into(), "list".into(), Some(10))],
            Some("sign".into())
        )
    );
    assert_eq!(next(&n[4]), None, "a decision routes by its branches only");
    let Step::Gate(g) = &n[5] else {
        panic!("a manual task is a gate")
    };
    assert_eq!(g.prompt.as_str(), "Sign off");

    // The same steps as a diagram's configs: the edges come from the diagram.
    let diagram = "graph TD\n  list[List files] --> each[[Each: file]]\n  each --> gather[Join]\n  gather --> scan[[Run: Security Scan]]\n  scan --> check{Check}\n  check -->|\"output.failed > 0\"| list\n  check -->|default| sign(Sign off)\n";
    let b = seed_bundle(steps, diagram);
    let from_diagram = bundle::bundled_definition(&b.workflow).expect("imports with the diagram");
    let m = nodes(&from_diagram);
    assert_eq!(
        m.iter().map(id).collect::<Vec<_>>(),
        ["list", "each", "gather", "scan", "check", "sign"]
    );
    assert_eq!(routes(&m[4]), routes(&n[4]));
    assert_eq!(ask(&m[0]), ask(&n[0]));
}

fn bundle_err(steps: Value) -> String {
    let b = seed_bundle(steps, "");
    bundle::bundled_definition(&b.workflow)
        .expect_err("refused")
        .to_string()
}

#[test]
fn wrong_seed_input_is_refused_by_name() {
    let e = bundle_err(json!([{"id": "a", "stepType": "task", "prompt": "x", "promt": "typo"}]));
    assert!(
        e.contains("workflow.steps[0]") && e.contains("promt"),
        "{e}"
    );
    let e = bundle_err(json!([{"id": "a", "stepType": "loop"}]));
    assert!(
        e.contains("steps[0].stepType") && e.contains("unknown stepType \"loop\""),
        "{e}"
    );
    let e = bundle_err(json!([{"id": "a", "stepType": "join", "awaitTag": "review-done"}]));
    assert!(
        e.contains("steps[0].awaitTag") && e.contains("review-done"),
        "{e}"
    );
    let e =
        bundle_err(json!([{"id": "a", "stepType": "task", "execution": "robot", "prompt": "x"}]));
    assert!(e.contains("unknown execution \"robot\""), "{e}");
    let e = bundle_err(
        json!([{"id": "a", "stepType": "foreach", "itemsPath": "output.x", "prompt": "x"}]),
    );
    assert!(e.contains("steps[0]") && e.contains("itemVariable"), "{e}");
    let e = bundle_err(json!([{"id": "a", "stepType": "subflow", "subflowId": "x", "flow": "y"}]));
    assert!(e.contains("subflowId"), "{e}");
    let e = bundle_err(json!([{"id": "a", "stepType": "decision",
        "branches": [{"condition": "output.ok", "targetStepId": "nowhere"}]}]));
    assert!(e.contains("nowhere"), "{e}");
    let e = bundle_err(json!([{"stepType": "task", "prompt": "x"}]));
    assert!(e.contains("steps[0].id"), "{e}");

    // In a diagram, the line and node are named.
    let e = mermaid::import(
        "graph TD\n  A[Do it]\n%% === WORKFLOW_CONFIG ===\n%% @A: {\"stepType\": \"join\", \"awaitTag\": \"x\"}\n%% === END_CONFIG ===\n",
    )
    .expect_err("refused")
    .to_string();
    assert!(e.starts_with("line 4: the config of A: awaitTag"), "{e}");
    let e = mermaid::import(
        "graph TD\n  A[Do it]\n%% === WORKFLOW_CONFIG ===\n%% @A: {\"stepType\": \"task\", \"promt\": \"x\"}\n%% === END_CONFIG ===\n",
    )
    .expect_err("refused")
    .to_string();
    assert!(
        e.starts_with("line 4: the config of A: promt: unknown field"),
        "{e}"
    );
    // A node only named by an edge, or a [[…]] node, still needs its config.
    let e = mermaid::import("graph TD\n  A[Do it] --> B\n")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("node B has no config"), "{e}");
    let e = mermaid::import("graph TD\n  A[[Each: file]]\n")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("node A has no config"), "{e}");
}
