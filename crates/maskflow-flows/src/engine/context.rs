//! The expression and prompt context of a step, with local values masked.

use super::*;

/// Replaces every value under the local roots with its masked form.
pub(super) fn mask_local(ctx: &mut Value, local: &std::collections::BTreeSet<String>) {
    fn mask_value(v: &mut Value) {
        match v {
            Value::String(s) => *s = maskflow_extractors::mask::mask(s),
            Value::Number(n) => *v = Value::String(maskflow_extractors::mask::mask(&n.to_string())),
            Value::Array(a) => a.iter_mut().for_each(mask_value),
            Value::Object(o) => o.values_mut().for_each(mask_value),
            Value::Bool(_) | Value::Null => {}
        }
    }
    fn at<'v>(v: &'v mut Value, parts: &[&str]) -> Option<&'v mut Value> {
        match parts.split_first() {
            None => Some(v),
            Some((first, rest)) => at(v.get_mut(*first)?, rest),
        }
    }
    for root in local {
        let parts: Vec<&str> = root.split('.').collect();
        if let Some(v) = at(ctx, &parts) {
            mask_value(v);
        }
    }
}

pub(super) fn is_local(local: &std::collections::BTreeSet<String>, path: &str) -> bool {
    local.iter().any(|root| {
        path == root
            || path.starts_with(&format!("{root}."))
            || path.starts_with(&format!("{root}["))
    })
}

pub(super) fn render_messages(messages: &[MessageDef], ctx: &Value) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| {
            let text: Vec<&str> = m.content.iter().map(|t| t.as_str()).collect();
            ChatMessage::new(m.role, template::render(&text.join("\n"), ctx))
        })
        .collect()
}

impl FlowEngine {
    pub(super) fn context(&self, run: &Loaded, st: &RunState) -> Value {
        let iterations: Vec<u32> = st.loop_stack.iter().map(|f| f.iteration).collect();
        json!({
            "input": st.input,
            "output": st.output,
            "steps": st.steps,
            "gate": st.gate,
            "loop": {
                "iteration": iterations.last().copied().unwrap_or(0),
                "iterations": iterations,
                "depth": iterations.len(),
            },
            "flow": {"name": run.flow_name, "depth": run.depth},
        })
    }

    pub(super) fn prompt_context(&self, run: &Loaded, st: &RunState) -> Value {
        let mut ctx = self.context(run, st);
        mask_local(&mut ctx, &st.local);
        ctx
    }
}

pub(super) fn template_uses_local(text: &str, local: &std::collections::BTreeSet<String>) -> bool {
    let mut rest = text;
    while let Some(s) = rest.find("{{") {
        let after = &rest[s + 2..];
        let Some(e) = after.find("}}") else { break };
        if is_local(local, after[..e].trim()) {
            return true;
        }
        rest = &after[e + 2..];
    }
    is_local(local, text.trim())
}

/// Seed 004's turn metadata.
pub(super) fn meta(run: &Loaded, node: &compile::Node, item: Option<usize>) -> StepMeta {
    let (agent, identifier) = match &node.op {
        Op::Llm(s) => (
            Some(s.agent_type.to_string()),
            Some(s.identifier.to_string()),
        ),
        Op::Command(s) => (
            Some(s.agent_type.to_string()),
            Some(s.identifier.to_string()),
        ),
        Op::Break { step, .. } => (
            Some(step.agent_type.to_string()),
            Some(step.identifier.to_string()),
        ),
        Op::Join(j) => (
            j.agent_type.as_ref().map(|a| a.to_string()),
            j.identifier.as_ref().map(|i| i.to_string()),
        ),
        Op::Foreach(f) => match &*f.step {
            Step::Llm(s) => (
                Some(s.agent_type.to_string()),
                Some(s.identifier.to_string()),
            ),
            Step::Command(s) => (
                Some(s.agent_type.to_string()),
                Some(s.identifier.to_string()),
            ),
            _ => (None, None),
        },
        _ => (None, None),
    };
    StepMeta {
        step: Some(StepPlace {
            step_index: node.step_index,
            total_steps: node.total_steps,
            loop_depth: node.loops.len(),
            agent_type: agent,
            identifier,
            label: node.label.clone(),
            step_path: node.path.clone(),
            depth: run.depth,
            item_index: item,
        }),
        ..StepMeta::flow()
    }
}
