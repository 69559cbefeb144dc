use serde_json::json;

use super::*;

fn policy(stages: &[&str], threshold: Option<f64>) -> Policy {
    Policy {
        next_stages: stages.iter().map(|s| (*s).to_owned()).collect(),
        confidence_threshold: threshold,
    }
}

fn md(status: &str, next: &str, meta: &str) -> String {
    format!(
        "## Status\n{status}\n\n## Summary\nLooked at it.\n\n## Output\nwork\n\n## Next Action\n{next}\n\n## Metadata\n```json\n{meta}\n```\n"
    )
}

/// Every row of the table, written as an agent would, decides as the row says.
#[test]
fn every_row_of_the_table_acts_as_declared() {
    assert_eq!(TABLE.len(), STATUSES.len() + NEXT_ACTIONS.len());
    for (signal, name, act) in TABLE {
        assert_eq!(action(*signal), *act);
        assert_eq!(word(*signal), *name);
        let is_status = STATUSES.contains(signal);
        assert!(
            is_status != NEXT_ACTIONS.contains(signal),
            "{name} is one kind"
        );
        let text = if is_status {
            md(name, "CONTINUE", "{}")
        } else {
            md("SUCCESS", &format!("{name}: because"), "{}")
        };
        let reply = read_reply(&text).expect("reads");
        let got = if is_status {
            reply.steering.status
        } else {
            reply.steering.next_action
        };
        assert_eq!(got, Some(*signal), "{name}");
        let d = decide(&reply.steering, &Policy::default());
        match act {
            Action::Proceed => assert!(
                matches!(
                    d,
                    Decision::Proceed {
                        stage: None,
                        note: None
                    }
                ),
                "{name}: {d:?}"
            ),
            Action::FailStep => assert_eq!(
                d,
                Decision::Fail(format!("the agent replied {name}: Looked at it."))
            ),
            Action::AskPerson(a) => assert_eq!(d, Decision::Ask(*a, "because".into())),
        }
        // The same word in a JSON reply steers the same way.
        let key = if is_status { "status" } else { "nextAction" };
        let j = read_reply(&json!({key: name.to_lowercase(), "summary": "s"}).to_string())
            .expect("json");
        assert_eq!(
            if is_status {
                j.steering.status
            } else {
                j.steering.next_action
            },
            Some(*signal)
        );
    }
}

#[test]
fn a_request_for_a_person_wins_over_a_failure_and_low_confidence_asks() {
    let r = read_reply(&md(
        "BLOCKED",
        "ESCALATE\nLegal must sign first.",
        "{\"confidence\": 0.2}",
    ))
    .expect("reads");
    assert_eq!(r.steering.reason.as_deref(), Some("Legal must sign first."));
    assert_eq!(
        decide(&r.steering, &policy(&[], Some(0.5))),
        Decision::Ask(Ask::Escalate, "Legal must sign first.".into())
    );
    let r = read_reply(&md("SUCCESS", "COMPLETE", "{\"confidence\": 0.2}")).expect("reads");
    assert_eq!(r.steering.confidence, Some(0.2));
    assert!(
        matches!(decide(&r.steering, &policy(&[], Some(0.5))), Decision::Ask(Ask::LowConfidence, m) if m.contains("0.2 is below the step's threshold 0.5"))
    );
    assert!(matches!(
        decide(&r.steering, &policy(&[], Some(0.2))),
        Decision::Proceed { .. }
    ));
    assert!(matches!(
        decide(&r.steering, &Policy::default()),
        Decision::Proceed { .. }
    ));
}

#[test]
fn a_suggested_stage_is_followed_only_when_the_step_allows_it() {
    let r = read_reply(&md(
        "SUCCESS",
        "CONTINUE",
        "{\"suggested_next_stage\": \"review\"}",
    ))
    .expect("reads");
    assert_eq!(
        decide(&r.steering, &policy(&["review", "ship"], None)),
        Decision::Proceed {
            stage: Some("review".into()),
            note: None
        }
    );
    let Decision::Proceed {
        stage: None,
        note: Some(n),
    } = decide(&r.steering, &policy(&["ship"], None))
    else {
        panic!("ignored");
    };
    assert!(n.contains("\"review\"") && n.contains("allows ship"), "{n}");
    let Decision::Proceed { note: Some(n), .. } = decide(&r.steering, &Policy::default()) else {
        panic!("ignored");
    };
    assert!(n.contains("allows none"), "{n}");
    let j =
        read_reply(r#"{"score": 3, "suggestedNextStage": "ship", "suggested_next_stage": null}"#)
            .expect("json");
    assert_eq!(j.steering.suggested_next_stage, None);
    let j = read_reply(r#"{"score": 3, "metadata": {"suggested_next_stage": " ship "}}"#)
        .expect("json");
    assert_eq!(j.steering.suggested_next_stage.as_deref(), Some("ship"));
}

#[test]
fn malformed_steering_is_a_clear_error_and_plain_replies_just_go_on() {
    for (text, words) in [
        (md("MAYBE", "COMPLETE", "{}"), "## Status"),
        (md("SUCCESS", "", "{}"), "## Next Action is empty"),
        (
            md("SUCCESS", "LATER", "{}"),
            "expected one of COMPLETE, CONTINUE, ESCALATE, HOLD",
        ),
        (
            md("SUCCESS", "COMPLETE", "confidence: high"),
            "## Metadata is not a JSON object",
        ),
        (
            md("SUCCESS", "COMPLETE", "{\"confidence\": 85}"),
            "confidence is 85; expected a number from 0 to 1",
        ),
        (
            r#"{"confidence": "high"}"#.to_owned(),
            "confidence is \"high\"",
        ),
        (
            r#"{"suggested_next_stage": 3}"#.to_owned(),
            "suggested_next_stage is 3",
        ),
    ] {
        let e = read_reply(&text).expect_err(words);
        assert!(e.message.contains(words), "{} / {words}", e.message);
    }
    // A JSON reply's own `status` data is not a steering word.
    let j = read_reply(r#"{"status": "approved"}"#).expect("data");
    assert_eq!(
        (j.steering.status, j.output),
        (None, json!({"status": "approved"}))
    );
    for plain in ["just words", "", "## Nothing\nhere", "```json\n[1,2]\n```"] {
        let r = read_reply(plain).expect("plain");
        assert!(
            matches!(
                decide(&r.steering, &policy(&[], Some(0.9))),
                Decision::Proceed {
                    stage: None,
                    note: None
                }
            ),
            "{plain}"
        );
    }
}

/// The steering fields of a step survive the Mermaid export and import.
#[test]
fn steering_fields_survive_a_mermaid_round_trip() {
    let def = crate::definition::from_value(&json!({"nodes": [
        {"type": "llm", "id": "triage", "agentType": "a", "identifier": "x", "next": "review",
         "instructions": "Sort the ticket.", "nextStages": ["review"], "confidenceThreshold": 0.6,
         "messages": [{"role": "user", "content": ["Go."]}]},
        {"type": "llm", "id": "review", "agentType": "b", "identifier": "y",
         "messages": [{"role": "user", "content": ["Check."]}]}
    ]}))
    .expect("valid");
    let back = crate::mermaid::import(&crate::mermaid::export(&def)).expect("imports");
    let Some(crate::definition::Step::Llm(s)) = back.nodes.as_ref().and_then(|n| n.first()) else {
        panic!("llm first: {back:?}");
    };
    assert_eq!(
        s.instructions.as_ref().map(|t| t.as_str()),
        Some("Sort the ticket.")
    );
    assert_eq!(s.next_stages.len(), 1);
    assert_eq!(s.confidence_threshold.map(|c| c.get()), Some(0.6));
}

#[test]
fn suggested_tags_are_kept_with_the_steps_output() {
    let sections = md(
        "SUCCESS",
        "COMPLETE",
        r#"{"confidence": 0.9, "suggested_tags": ["billing", 3, "urgent"]}"#,
    );
    let r = read_reply(&sections).expect("reads");
    assert_eq!(r.output["suggested_tags"], json!(["billing", "urgent"]));
    assert_eq!(
        r.output["metadata"]["suggested_tags"],
        json!(["billing", 3, "urgent"])
    );
    let r = read_reply(r#"{"answer": 1, "suggestedTags": ["a"]}"#).expect("reads");
    assert_eq!(r.output["suggested_tags"], json!(["a"]));
    assert_eq!(r.output["answer"], 1);
    let r = read_reply(r#"{"answer": 1}"#).expect("reads");
    assert!(r.output.get("suggested_tags").is_none());
}
