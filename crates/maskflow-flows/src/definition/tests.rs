use super::*;

fn err(text: &str) -> DefinitionError {
    parse(text).expect_err(text)
}

#[test]
fn errors_name_the_path_and_the_problem() {
    let e = err(
        r#"{"steps":[{"type":"startLoop","steps":[{"type":"llm","agentType":"a","identifier":"i","messages":[{"role":"user","content":["x"]}]},{"type":"llm","identifier":"i","messages":[]}]}]}"#,
    );
    assert_eq!(e.path, "steps[0].steps[1]");
    assert!(e.message.contains("agentType"), "{e}");
    let e = err(
        r#"{"steps":[{"type":"llm","agentType":"a","identifier":"i","messages":[{"role":"user","content":["x"]}],"colour":1}]}"#,
    );
    assert_eq!(e.path, "steps[0].colour");
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    let e = err(r#"{"steps":[{"type":"llm","agentType":"  ","identifier":"i","messages":[]}]}"#);
    assert_eq!(e.path, "steps[0].agentType");
    assert!(e.message.contains("must not be empty"), "{e}");
    let e = err(r#"{"steps":[{"type":"startLoop","steps":[]}]}"#);
    assert_eq!(e.path, "steps[0].steps");
    let e = err(r#"{"steps":[{"type":"loop"}]}"#);
    assert_eq!(e.path, "steps[0].type");
    let e = err(r#"{"steps":[], "extra": 1}"#);
    assert!(e.message.contains("unknown field `extra`"), "{e}");
    let e = err(
        r#"{"steps":[{"type":"break","agentType":"a","identifier":"i","question":"q","breakOn":"yes"}]}"#,
    );
    assert!(e.message.contains("inside a startLoop"), "{e}");
    let e = err(
        r#"{"steps":[{"type":"startLoop","steps":[{"type":"break","agentType":"a","identifier":"i","question":"q","breakOn":"maybe"}]}]}"#,
    );
    assert_eq!(e.path, "steps[0].steps[0].breakOn");
    let e = err(
        r#"{"steps":[{"type":"decision","branches":[{"condition":"output.score >=","steps":[]}]}]}"#,
    );
    assert_eq!(e.path, "steps[0].branches[0].condition");
    let e = err("{not json");
    assert!(e.message.contains("not valid JSON"), "{e}");
    let e = err(r#"{"description":"x"}"#);
    assert!(e.message.contains("steps"), "{e}");
}

#[test]
fn graph_loops_must_be_guarded() {
    let node = |id: &str, next: &str| {
        format!(
            r#"{{"id":"{id}","type":"llm","agentType":"a","identifier":"i","messages":[{{"role":"user","content":["x"]}}]{next}}}"#
        )
    };
    let unguarded = format!(
        r#"{{"nodes":[{},{{"id":"J","type":"decision","branches":[{{"condition":"output.shouldRetry","next":"A"}}],"default":{{"next":"K"}}}},{}]}}"#,
        node("A", r#","next":"J""#),
        node("K", "")
    );
    let e = err(&unguarded);
    assert_eq!(e.path, "nodes[1].branches[0]");
    let guarded = unguarded.replace(r#""next":"A"}"#, r#""next":"A","maxIterations":3}"#);
    parse(&guarded).expect("guarded loop is fine");
    let e = err(&guarded.replace(r#""next":"K""#, r#""next":"Z""#));
    assert!(e.message.contains("no node has the id \"Z\""), "{e}");
}

#[test]
fn definitions_round_trip_through_serde() {
    let text = include_str!("../../../../tests/fixtures/flows/seed004/flows/seed_example.json");
    let def = parse(text).expect("seed 004's example loads as written");
    let again = from_value(&serde_json::to_value(&def).expect("serialises")).expect("reparses");
    assert_eq!(def, again);
}
