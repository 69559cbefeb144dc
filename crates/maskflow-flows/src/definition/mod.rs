//! Flow definitions as stored in `flows/<name>.json`: the strict schema of
//! both shapes (seed 004's nested list, `steps`; seed 003's graph, `nodes`),
//! parsing with errors that carry a JSON path, and the semantic checks a
//! schema cannot express (targets exist, `break` sits in a loop, back edges
//! are guarded, conditions parse).
//!
//! These types are plain data (serialisable both ways) so that other
//! front ends — the Mermaid import/export of the next issue, a UI — can build
//! and print them. Running them is [`super::compile`]'s and the engine's job.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::expr;
use maskflow_llm::ChatRole;

/// Most items a `foreach` may fan out to (when it sets no `maxItems`).
pub const DEFAULT_MAX_ITEMS: u32 = 1000;
/// Most items of a `foreach` that may run at once.
pub const MAX_CONCURRENCY: u32 = 16;

/// A definition error: where (a JSON path such as `steps[0].steps[1].agentType`) and what.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{path}: {message}")]
pub struct DefinitionError {
    /// The JSON path of the offending value (`$` for the whole document).
    pub path: String,
    /// What is wrong, for people.
    pub message: String,
}

impl DefinitionError {
    fn at(path: &str, message: impl Into<String>) -> Self {
        Self {
            path: if path.is_empty() {
                "$".into()
            } else {
                path.to_owned()
            },
            message: message.into(),
        }
    }
}

mod labels;
mod read;
mod script;
pub mod seed;
#[cfg(test)]
mod tests;
mod types;
mod validate;

pub use labels::CONTEXT_ROOTS;
pub use read::{from_value, parse};
pub use script::{ScriptSource, ScriptSourceError, ScriptStep};
pub use types::*;
pub use validate::validate;

impl FlowDef {
    /// Every step of the flow, nested ones (loops, branches, a foreach's
    /// step) included, in document order.
    pub fn all_steps(&self) -> Vec<&Step> {
        fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
            for s in steps {
                out.push(s);
                match s {
                    Step::StartLoop(l) => walk(&l.steps, out),
                    Step::Decision(d) => {
                        for b in &d.branches {
                            walk(b.steps.as_deref().unwrap_or(&[]), out);
                        }
                        if let Some(df) = &d.default {
                            walk(df.steps.as_deref().unwrap_or(&[]), out);
                        }
                    }
                    Step::Foreach(f) => walk(std::slice::from_ref(&f.step), out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(self.steps.as_deref().unwrap_or(&[]), &mut out);
        walk(self.nodes.as_deref().unwrap_or(&[]), &mut out);
        out
    }
}
