//! Seed 003's own export shape (`GET /api/flows/{name}/export?format=seed003`):
//! `workflow.{name, description, mermaidSource, steps}` and
//! `agents[{id, displayName, agentPrompt}]`, without Maskflow's `definition`
//! and agent files.
//!
//! The flow itself travels in `mermaidSource` (its config block holds every
//! node); `steps` are the nodes parsed out for people and other tools, in
//! seed 003's vocabulary where it has one (`task` automated or manual,
//! `foreach`, `join`, `decision`, `subflow`) and as the node's config
//! otherwise. Importing the bundle reads the diagram, so an export imported
//! and exported again gives the same JSON (but `exportedAt`). An agent's back
//! end and model are not part of seed 003's agent and are not carried: the
//! default format carries them.

use serde_json::{Map, Value, json};

use super::bundle::{BundledAgent, BundledFlow, EXPORT_VERSION, FlowBundle};
use super::engine::FlowEngine;
use super::mermaid;
use crate::error::{Error, Result};

/// The text of an engine message list (`[{role, content: [lines]}]`), lines joined.
fn prompt_of(messages: Option<&Value>) -> Option<String> {
    let lines: Vec<&str> = messages?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn put(out: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v.filter(|v| !v.is_null()) {
        out.insert(key.into(), v);
    }
}

/// One node's config in seed 003's step shape (`id` is the diagram's node id).
pub fn seed_step(id: &str, config: &Value) -> Value {
    let get = |k: &str| config.get(k).cloned();
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    put(&mut out, "name", get("label"));
    match config.get("type").and_then(Value::as_str) {
        Some("llm") => {
            out.insert("stepType".into(), json!("task"));
            out.insert("execution".into(), json!("automated"));
            put(
                &mut out,
                "prompt",
                prompt_of(config.get("messages")).map(Value::from),
            );
            put(&mut out, "defaultAssigneeId", get("agentType"));
        }
        Some("gate") => {
            out.insert("stepType".into(), json!("task"));
            out.insert("execution".into(), json!("manual"));
            put(&mut out, "prompt", get("prompt"));
        }
        Some("foreach") => {
            out.insert("stepType".into(), json!("foreach"));
            put(&mut out, "itemsPath", get("itemsPath"));
            put(&mut out, "itemVariable", get("itemVariable"));
            let inner = config.get("step");
            put(
                &mut out,
                "prompt",
                prompt_of(inner.and_then(|s| s.get("messages"))).map(Value::from),
            );
            put(
                &mut out,
                "defaultAssigneeId",
                inner.and_then(|s| s.get("agentType")).cloned(),
            );
        }
        Some("join") => {
            out.insert("stepType".into(), json!("join"));
            put(&mut out, "prompt", get("prompt"));
            put(&mut out, "defaultAssigneeId", get("agentType"));
        }
        Some("decision") => {
            out.insert("stepType".into(), json!("decision"));
        }
        Some("subflow") => {
            out.insert("stepType".into(), json!("subflow"));
            put(&mut out, "subflowId", get("flow"));
            put(&mut out, "inputMapping", get("input"));
        }
        // A kind seed 003 has no word for: the node's own config.
        _ => {
            if let Value::Object(m) = config {
                for (k, v) in m {
                    out.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    Value::Object(out)
}

impl FlowEngine {
    /// A flow with its agents in seed 003's export shape (see the module).
    pub fn export_seed003(&self, name: &str) -> Result<FlowBundle> {
        let full = self.export_bundle(name)?;
        let source = full.workflow.mermaid_source.clone();
        let steps = mermaid::node_configs(&source)
            .map_err(|e| Error::Corrupt(format!("the exported diagram: {e}")))?
            .iter()
            .map(|(id, cfg)| seed_step(id, cfg))
            .collect();
        let mut agents = Vec::new();
        for a in full.agents {
            let def = super::bundle::bundled_agent(&a)?;
            agents.push(BundledAgent {
                id: a.id,
                agent: Value::Null,
                display_name: def.display_name.map(|t| t.to_string()),
                agent_prompt: def.prompt.map(|t| t.to_string()),
                commands: a.commands,
            });
        }
        Ok(FlowBundle {
            workflow: BundledFlow {
                name: full.workflow.name,
                description: full.workflow.description,
                mermaid_source: source,
                definition: None,
                steps: Some(steps),
            },
            agents,
            export_version: EXPORT_VERSION.to_owned(),
            exported_at: full.exported_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_steps_read_in_seed_words() {
        let llm = json!({"type": "llm", "label": "Fetch PR", "agentType": "code-reviewer",
            "identifier": "x", "messages": [{"role": "user", "content": ["Fetch", "PR 1"]}]});
        assert_eq!(
            seed_step("A", &llm),
            json!({"id": "A", "name": "Fetch PR", "stepType": "task", "execution": "automated",
                   "prompt": "Fetch\nPR 1", "defaultAssigneeId": "code-reviewer"})
        );
        let gate = json!({"type": "gate", "prompt": "Approve?", "options": [{"label": "ok"}]});
        assert_eq!(
            seed_step("B", &gate),
            json!({"id": "B", "stepType": "task", "execution": "manual", "prompt": "Approve?"})
        );
        let other = json!({"type": "startLoop", "maxIterations": 3});
        assert_eq!(
            seed_step("s0", &other),
            json!({"id": "s0", "type": "startLoop", "maxIterations": 3})
        );
    }
}
