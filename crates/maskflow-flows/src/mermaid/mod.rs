//! Seed 003's Mermaid form of a flow, both ways, as pure functions.
//!
//! [`export`] prints a `graph TD` diagram (task `[ ]`, gate `( )`, decision
//! `{ }`, foreach `[[Each: …]]`, subflow `[[Run: …]]`; decision conditions as
//! edge labels) followed by the `%% === WORKFLOW_CONFIG ===` block that holds
//! each node's settings as JSON. [`import`] reads such a text back.
//!
//! Graph-form flows map node for node: a node's config is its step without
//! `id`, `next` and (for decisions) `branches`/`default`, which come from the
//! edges. A decision's back-edge limits sit in its config as
//! `"maxIterations": {"<target>": n}`. Gate options stay in the config (their
//! edges are drawn for people and checked on import).
//!
//! List-form flows have nesting a diagram cannot carry, so each step becomes a
//! node `s<path>` (the compiled step path joined by `_`, as in turns'
//! `stepPath`) whose config is the step without its nested `steps`, and a
//! reserved `%% @_flow:` entry records the tree (`{"form": "list", "steps":
//! [ids or {"id", "branches": [[ids]], "default": [ids]}]}`); the edges are
//! drawn for people and not read back.
//!
//! Seed 003's own config shape (`"stepType": "task" | "foreach" | "join" |
//! "decision" | "subflow"`, `execution`, `prompt`, `defaultAssigneeId`,
//! `awaitTag`, `subflowId`/`inputMapping`) is accepted on import and mapped
//! as [`definition::seed`] says. A node drawn with a shape and text but no
//! config gets the config its shape implies (`[task]` asks the agent its
//! text, `(task)` waits for the person, `{decision}` routes on its edges), so
//! seed 003's bare diagrams import too; a node only named by an edge, or a
//! `[[…]]` node, still needs a config.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::definition::{self, Branch, DefaultBranch, FlowDef, Step, Text};
use super::expr;

const CONFIG_START: &str = "%% === WORKFLOW_CONFIG ===";
const CONFIG_END: &str = "%% === END_CONFIG ===";
const FLOW_KEY: &str = "_flow";

/// What is wrong with a Mermaid text, with the line (1-based) when known.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct MermaidError {
    /// The line of the text, when one is to blame.
    pub line: Option<usize>,
    /// What is wrong, for people.
    pub message: String,
}

fn err(line: Option<usize>, message: impl Into<String>) -> MermaidError {
    MermaidError {
        line,
        message: message.into(),
    }
}

mod export;
mod import;
mod parse;
#[cfg(test)]
mod tests;

use export::*;
use parse::*;

pub use export::export;
pub use import::{import, import_with};

/// Whether `text` reads as a diagram at all (its nodes, edges and config
/// block), before any check of what it says.
pub fn readable(text: &str) -> bool {
    parse_text(text).is_ok()
}

/// Each node's config as the block of `text` writes it, in diagram order
/// (node id, config); nodes without one are left out.
pub fn node_configs(text: &str) -> Result<Vec<(String, Value)>, MermaidError> {
    let p = parse_text(text)?;
    Ok(p.order
        .iter()
        .filter_map(|id| p.configs.get(id).map(|(v, _)| (id.clone(), v.clone())))
        .collect())
}
