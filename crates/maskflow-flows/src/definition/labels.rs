//! A decision branch that names a person's choice by its option's label
//! (`approve`, `"request changes"`) instead of a condition over the context:
//! it routes by that label, as `gate.decision == "<label>"`, or it is
//! refused at load. Left alone, such a condition reads nothing (a bare name
//! outside the context is `null`) or is always true (a string alone), and
//! the run would silently take the default or the first branch.
//! Pure: no I/O.

use super::*;

/// The names a decision's condition may start with (the run context).
pub const CONTEXT_ROOTS: &[&str] = &["input", "output", "steps", "gate", "loop", "flow"];

/// Every gate option label of the flow, nested steps included.
fn option_labels(def: &FlowDef) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for step in def.all_steps() {
        if let Step::Gate(g) = step {
            for o in &g.options {
                if !labels.iter().any(|l| l == o.label.as_str()) {
                    labels.push(o.label.to_string());
                }
            }
        }
    }
    labels
}

/// The label `condition` names, when it is nothing but a label (bare or
/// quoted, any case) and not a name of the context.
fn named_label<'a>(condition: &str, labels: &'a [String]) -> Option<&'a str> {
    let t = condition.trim();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t)
        .trim();
    if CONTEXT_ROOTS.contains(&unquoted) {
        return None;
    }
    labels
        .iter()
        .find(|l| l.eq_ignore_ascii_case(unquoted))
        .map(String::as_str)
}

fn rewrite(steps: &mut [Step], labels: &[String]) {
    for s in steps {
        match s {
            Step::StartLoop(l) => rewrite(&mut l.steps, labels),
            Step::Foreach(f) => rewrite(std::slice::from_mut(&mut *f.step), labels),
            Step::Decision(d) => {
                for b in &mut d.branches {
                    if let Some(label) = named_label(b.condition.as_str(), labels) {
                        let quoted = Value::String(label.to_owned()).to_string();
                        if let Some(c) = Text::new(&format!("gate.decision == {quoted}")) {
                            b.condition = c;
                        }
                    }
                    if let Some(list) = b.steps.as_mut() {
                        rewrite(list, labels);
                    }
                }
                if let Some(list) = d.default.as_mut().and_then(|d| d.steps.as_mut()) {
                    rewrite(list, labels);
                }
            }
            _ => {}
        }
    }
}

/// Rewrites each decision branch whose condition is a gate option's label
/// into `gate.decision == "<label>"` (the label as the flow spells it).
pub(super) fn route_labels(def: &mut FlowDef) {
    let labels = option_labels(def);
    if labels.is_empty() {
        return;
    }
    if let Some(steps) = def.steps.as_mut() {
        rewrite(steps, &labels);
    }
    if let Some(nodes) = def.nodes.as_mut() {
        rewrite(nodes, &labels);
    }
}

/// Why a decision's (parsed) condition cannot route anything: a string
/// alone (always true) or a bare name outside the context (always `null`).
pub(super) fn reads_nothing(condition: &expr::Expr) -> Option<String> {
    let hint = "to route by a person's choice, name one of the flow's gate options \
                (e.g. approve) or write gate.decision == \"approve\"";
    match condition {
        expr::Expr::Lit(Value::String(s)) => Some(format!(
            "the string {s:?} alone is always true, so this branch would always be taken; {hint}"
        )),
        expr::Expr::Path(p) => match p.as_slice() {
            [expr::Segment::Key(k)] if !CONTEXT_ROOTS.contains(&k.as_str()) => Some(format!(
                "{k:?} is not in the run's context ({}), so this branch would never be taken; {hint}",
                CONTEXT_ROOTS.join(", ")
            )),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::definition::{DecisionStep, Step, from_value};

    fn flow(condition: &str) -> serde_json::Value {
        json!({"steps": [
            {"type": "gate", "prompt": "Look?", "options": [
                {"label": "approve"}, {"label": "Request changes"}]},
            {"type": "decision", "branches": [
                {"condition": condition, "steps": [{"type": "llm", "agentType": "assistant",
                    "identifier": "a", "messages": [
                    {"role": "user", "content": ["go"]}]}]}],
             "default": {"steps": [{"type": "llm", "agentType": "assistant",
                "identifier": "b", "messages": [{"role": "user", "content": ["stop"]}]}]}}
        ]})
    }

    fn condition_of(v: serde_json::Value) -> String {
        let def = from_value(&v).expect("loads");
        let steps = def.steps.expect("list form");
        let Step::Decision(DecisionStep { branches, .. }) = &steps[1] else {
            panic!("not a decision: {:?}", steps[1]);
        };
        branches[0].condition.to_string()
    }

    #[test]
    fn a_branch_named_by_an_option_label_routes_by_the_decision() {
        assert_eq!(
            condition_of(flow("approve")),
            r#"gate.decision == "approve""#
        );
        assert_eq!(
            condition_of(flow("\"request changes\"")),
            r#"gate.decision == "Request changes""#
        );
        assert_eq!(
            condition_of(flow("APPROVE")),
            r#"gate.decision == "approve""#
        );
        // A real condition is left as written.
        assert_eq!(
            condition_of(flow("output.decision == 'approve'")),
            "output.decision == 'approve'"
        );
    }

    #[test]
    fn a_branch_that_reads_nothing_is_refused_with_its_path() {
        for c in ["aprove", "'maybe'"] {
            let e = from_value(&flow(c)).expect_err(c);
            let text = e.to_string();
            assert!(text.contains("steps[1].branches[0].condition"), "{text}");
            assert!(text.contains("gate.decision =="), "{text}");
        }
    }
}
