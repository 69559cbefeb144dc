//! The agents a flow may name: an `agentType` must be an agent Maskflow
//! knows, or the flow is listed disabled with the reason and its runs are
//! refused (a misspelt agent used to run silently with default settings).
//!
//! An agent is known when `agents/<name>.json` exists, when
//! `agents/<name>/commands/` holds its commands, or when it is a built-in
//! agent ([`BUILT_IN_AGENTS`]); [`crate::agents::known_agents`] reads them
//! from the data folder. Pure.

use std::collections::BTreeSet;

use super::definition::{DefinitionError, FlowDef, Step};

/// Agents that need no file: `assistant` is the agent seed 003's steps
/// without `defaultAssigneeId` go to; it runs with the default settings.
pub const BUILT_IN_AGENTS: &[&str] = &["assistant"];

/// Each step with its JSON path, in document order (as [`FlowDef::all_steps`]).
fn steps_with_paths(def: &FlowDef) -> Vec<(String, &Step)> {
    fn walk<'a>(prefix: &str, steps: &'a [Step], out: &mut Vec<(String, &'a Step)>) {
        for (i, s) in steps.iter().enumerate() {
            let path = format!("{prefix}[{i}]");
            one(&path, s, out);
        }
    }
    fn one<'a>(path: &str, s: &'a Step, out: &mut Vec<(String, &'a Step)>) {
        out.push((path.to_owned(), s));
        match s {
            Step::StartLoop(l) => walk(&format!("{path}.steps"), &l.steps, out),
            Step::Decision(d) => {
                for (j, b) in d.branches.iter().enumerate() {
                    let at = format!("{path}.branches[{j}].steps");
                    walk(&at, b.steps.as_deref().unwrap_or(&[]), out);
                }
                if let Some(df) = &d.default {
                    let at = format!("{path}.default.steps");
                    walk(&at, df.steps.as_deref().unwrap_or(&[]), out);
                }
            }
            Step::Foreach(f) => one(&format!("{path}.step"), &f.step, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("steps", def.steps.as_deref().unwrap_or(&[]), &mut out);
    walk("nodes", def.nodes.as_deref().unwrap_or(&[]), &mut out);
    out
}

/// The first step naming an agent not in `known`, as a loader error at its
/// `agentType` ("step 3 (steps[1].steps[0]) names the agent \"reveiwer\",
/// which does not exist; agents: assistant, coder, reviewer").
pub fn check_agents(def: &FlowDef, known: &BTreeSet<String>) -> Result<(), DefinitionError> {
    for (n, (path, step)) in steps_with_paths(def).into_iter().enumerate() {
        let Some((agent, _)) = step.agent() else {
            continue;
        };
        if known.contains(agent.as_str()) {
            continue;
        }
        let list: Vec<&str> = known.iter().map(String::as_str).collect();
        return Err(DefinitionError {
            path: format!("{path}.agentType"),
            message: format!(
                "step {} ({path}) names the agent {:?}, which does not exist; agents: {} \
                 (add agents/{}.json or name one of these)",
                n + 1,
                agent.as_str(),
                list.join(", "),
                agent.as_str(),
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition;
    use serde_json::json;

    fn flow() -> FlowDef {
        definition::from_value(&json!({"steps": [
            {"type": "llm", "agentType": "coder", "identifier": "x",
             "messages": [{"role": "user", "content": ["hi"]}]},
            {"type": "startLoop", "maxIterations": 3, "steps": [
                {"type": "break", "agentType": "reveiwer", "identifier": "x",
                 "question": "done?", "breakOn": "yes"}
            ]}
        ]}))
        .expect("valid")
    }

    #[test]
    fn a_misspelt_agent_is_named_with_its_step_and_the_known_agents() {
        let known: BTreeSet<String> = ["assistant", "coder", "reviewer"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let e = check_agents(&flow(), &known).expect_err("unknown agent");
        assert_eq!(e.path, "steps[1].steps[0].agentType");
        assert!(
            e.message.starts_with(
                "step 3 (steps[1].steps[0]) names the agent \"reveiwer\", which does not exist; \
                 agents: assistant, coder, reviewer"
            ),
            "{}",
            e.message
        );
    }
}
