//! Seed 003's own step shape, translated into this engine's step JSON.
//!
//! Seed 003 writes a step as `{id, name, stepType, execution, prompt,
//! defaultAssigneeId, branches, defaultBranch, itemsPath, itemVariable,
//! awaitTag, subflowId, inputMapping, hitlPhase, description}`. The mapping:
//!
//! - `name` is the label; `hitlPhase` and `description` are notes for people
//!   and are not kept; the deprecated `type: "automated" | "manual"` is read
//!   as `execution`.
//! - An automated `task` is an `llm` step of the agent `defaultAssigneeId`
//!   (or `agentType`; default `assistant`) whose message is the `prompt` (or,
//!   without one, the step's name: seed 003's daemon gives the agent the
//!   task's title). A manual task waits for the person: a `gate` whose
//!   options are the flow's `options`, or [`MANUAL_DECISIONS`] (a person
//!   assignee has no meaning in a one-user app). The decision and the
//!   person's optional result become the step's output.
//! - A `foreach` runs such an `llm` step per item; `{{index}}` (from 0) and
//!   `{{total}}` are in its prompt's context.
//! - A `join` gathers the `foreach` before it, which is what seed 003's
//!   `awaitTag: "foreach:{{parentId}}"` asks for; other tags are refused.
//! - A `decision` keeps `branches: [{condition, targetStepId}]` (a `null`
//!   condition is the default) and `defaultBranch` as branches and default.
//! - A `subflow` runs the flow `subflowId` with `inputMapping` as its input.
//!
//! Anything else stays in the step and meets the strict schema, so a
//! misspelt key is still reported. Pure: no I/O.

use serde_json::{Map, Value, json};

use super::{DefinitionError, FlowDef};

/// The `stepType` values of seed 003.
pub const SEED_STEP_TYPES: &[&str] = &["task", "decision", "foreach", "join", "subflow"];

/// The decisions a manual task offers when its flow names no `options`.
pub const MANUAL_DECISIONS: &[&str] = &["approve", "request changes", "reject"];

/// Most times a back edge of a seed decision may be taken when the seed sets no limit.
pub const SEED_BACK_EDGE_LIMIT: u32 = 10;

/// Whether a step object is written in seed 003's shape.
pub fn is_seed_step(step: &Map<String, Value>) -> bool {
    step.contains_key("stepType")
}

fn at(path: &str, message: impl Into<String>) -> DefinitionError {
    DefinitionError::at(path, message)
}

fn text_of(step: &mut Map<String, Value>, key: &str) -> Result<Option<String>, DefinitionError> {
    match step.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(at(key, "must be a string")),
    }
}

/// The agent a seed step's prompt goes to: `defaultAssigneeId`, or `agentType`.
fn agent_of(step: &mut Map<String, Value>) -> Result<Value, DefinitionError> {
    let assignee = text_of(step, "defaultAssigneeId")?;
    let agent = text_of(step, "agentType")?;
    match (assignee, agent) {
        (Some(a), Some(b)) if a.trim() != b.trim() => Err(at(
            "defaultAssigneeId",
            format!("names the agent {a:?} but agentType names {b:?}; give one"),
        )),
        (Some(a), _) | (None, Some(a)) => Ok(json!(a)),
        (None, None) => Ok(json!("assistant")),
    }
}

/// Translates one step from seed 003's shape in place; `label` is the
/// fallback label (a Mermaid node's text), `manual_shape` says the node was
/// drawn as a manual task (`( )`). Errors carry the key at fault.
pub fn translate_step(
    step: &mut Map<String, Value>,
    label: Option<&str>,
    manual_shape: bool,
) -> Result<(), DefinitionError> {
    let kind = match step.remove("stepType") {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(_) => return Err(at("stepType", "must be a string")),
        None => return Ok(()),
    };
    if let Some(name) = text_of(step, "name")? {
        step.entry("label").or_insert(json!(name));
    }
    text_of(step, "hitlPhase")?;
    text_of(step, "description")?;
    let mut execution = text_of(step, "execution")?;
    match step.get("type") {
        None => {}
        Some(Value::String(t)) if t == "automated" || t == "manual" => {
            let t = t.clone();
            step.remove("type");
            execution.get_or_insert(t);
        }
        Some(_) => {
            return Err(at(
                "type",
                "a seed 003 step gives its kind in stepType; type may only be automated or manual",
            ));
        }
    }
    let manual = match execution.as_deref().map(str::trim) {
        None => manual_shape,
        Some("manual") => true,
        Some("automated") => false,
        Some(other) => {
            return Err(at(
                "execution",
                format!("unknown execution {other:?}; expected automated or manual"),
            ));
        }
    };
    let label = step
        .get("label")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| label.map(str::to_owned));
    match kind.as_str() {
        "task" if manual => manual_task(step, label),
        "task" => {
            let llm = llm_step(step, label.as_deref())?;
            step.extend(llm);
            Ok(())
        }
        "foreach" => {
            if !step.contains_key("step") {
                let llm = llm_step(step, None)?;
                step.insert("step".into(), Value::Object(llm));
            }
            step.insert("type".into(), json!("foreach"));
            Ok(())
        }
        "join" => join(step),
        "decision" => decision(step),
        "subflow" => subflow(step),
        other => Err(at(
            "stepType",
            format!(
                "unknown stepType {other:?}; expected one of {}",
                SEED_STEP_TYPES.join(", ")
            ),
        )),
    }
}

fn manual_task(
    step: &mut Map<String, Value>,
    label: Option<String>,
) -> Result<(), DefinitionError> {
    // The person is the assignee of a manual task; there is one user here.
    text_of(step, "defaultAssigneeId")?;
    let prompt = text_of(step, "prompt")?
        .filter(|p| !p.trim().is_empty())
        .or(label)
        .ok_or_else(|| at("prompt", "a manual task needs a prompt or a name"))?;
    step.insert("type".into(), json!("gate"));
    step.insert("prompt".into(), json!(prompt));
    step.entry("options").or_insert_with(|| {
        Value::Array(
            MANUAL_DECISIONS
                .iter()
                .map(|d| json!({"label": d}))
                .collect(),
        )
    });
    Ok(())
}

/// An `llm` step asking the step's agent its prompt (or `fallback`).
fn llm_step(
    step: &mut Map<String, Value>,
    fallback: Option<&str>,
) -> Result<Map<String, Value>, DefinitionError> {
    let agent = agent_of(step)?;
    let identifier = step.remove("identifier").unwrap_or(json!("default"));
    let prompt = text_of(step, "prompt")?
        .filter(|p| !p.trim().is_empty())
        .or_else(|| fallback.map(str::to_owned))
        .ok_or_else(|| at("prompt", "missing; the agent needs a prompt"))?;
    let mut m = Map::new();
    m.insert("type".into(), json!("llm"));
    m.insert("agentType".into(), agent);
    m.insert("identifier".into(), identifier);
    m.insert(
        "messages".into(),
        json!([{"role": "user", "content": [prompt]}]),
    );
    Ok(m)
}

fn join(step: &mut Map<String, Value>) -> Result<(), DefinitionError> {
    if let Some(tag) = text_of(step, "awaitTag")? {
        let t = tag.trim();
        let ok = t
            .strip_prefix("foreach:{{")
            .and_then(|r| r.strip_suffix("}}"))
            .is_some_and(|inner| !inner.trim().is_empty());
        if !ok {
            return Err(at(
                "awaitTag",
                format!(
                    "{tag:?}: a join gathers the foreach before it, written foreach:{{{{parentId}}}}"
                ),
            ));
        }
    }
    // A fan-in prompt is asked once over the gathered results, of the step's
    // agent (the default `assistant`, as for tasks); without one the join
    // only gathers.
    match text_of(step, "prompt")? {
        Some(p) if !p.trim().is_empty() => {
            let agent = agent_of(step)?;
            step.insert("prompt".into(), json!(p));
            step.insert("agentType".into(), agent);
            step.entry("identifier").or_insert(json!("default"));
        }
        _ => {}
    }
    step.insert("type".into(), json!("join"));
    Ok(())
}

fn decision(step: &mut Map<String, Value>) -> Result<(), DefinitionError> {
    step.insert("type".into(), json!("decision"));
    let mut default = text_of(step, "defaultBranch")?;
    let Some(raw) = step.remove("branches") else {
        if let Some(d) = default {
            step.insert("default".into(), json!({"next": d}));
        }
        return Ok(());
    };
    let Value::Array(list) = raw else {
        return Err(at("branches", "must be a list"));
    };
    let mut branches = Vec::new();
    for (i, b) in list.into_iter().enumerate() {
        let path = format!("branches[{i}]");
        let Value::Object(mut b) = b else {
            return Err(at(&path, "must be an object"));
        };
        let target = match b.remove("targetStepId") {
            Some(Value::String(s)) => s,
            _ => {
                return Err(at(
                    &format!("{path}.targetStepId"),
                    "missing; give a step id",
                ));
            }
        };
        match b.remove("condition") {
            None | Some(Value::Null) => match &default {
                Some(d) if d != &target => {
                    return Err(at(
                        &format!("{path}.condition"),
                        format!("a second default branch (to {target}; defaultBranch is {d})"),
                    ));
                }
                _ => default = Some(target),
            },
            Some(c) => {
                let mut out = Map::new();
                out.insert("condition".into(), c);
                out.insert("next".into(), json!(target));
                out.extend(b);
                branches.push(Value::Object(out));
            }
        }
    }
    step.insert("branches".into(), Value::Array(branches));
    if let Some(d) = default {
        step.insert("default".into(), json!({"next": d}));
    }
    Ok(())
}

fn subflow(step: &mut Map<String, Value>) -> Result<(), DefinitionError> {
    step.insert("type".into(), json!("subflow"));
    for alias in ["subflowId", "workflowName", "workflow"] {
        if let Some(v) = step.remove(alias) {
            if step.contains_key("flow") {
                return Err(at(
                    alias,
                    "names the flow a second time; give one of flow or subflowId",
                ));
            }
            step.insert("flow".into(), v);
        }
    }
    if let Some(v) = step.remove("inputMapping") {
        if step.contains_key("input") {
            return Err(at("inputMapping", "give one of input or inputMapping"));
        }
        step.insert("input".into(), v);
    }
    Ok(())
}

/// Bounds the back edges of seed decisions (a seed decision may route back
/// to an earlier step without a limit; this engine requires one).
pub fn limit_back_edges(nodes: &mut [Value]) {
    let ids: Vec<Option<String>> = nodes
        .iter()
        .map(|n| n.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let position = |id: &str| ids.iter().position(|x| x.as_deref() == Some(id));
    for (i, node) in nodes.iter_mut().enumerate() {
        let Some(branches) = node.get_mut("branches").and_then(Value::as_array_mut) else {
            continue;
        };
        for b in branches {
            let back = b
                .get("next")
                .and_then(Value::as_str)
                .and_then(position)
                .is_some_and(|t| t <= i);
            if back && let Value::Object(m) = b {
                m.entry("maxIterations")
                    .or_insert(json!(SEED_BACK_EDGE_LIMIT));
            }
        }
    }
}

/// A graph-form flow from seed 003's step list alone (a bundle whose
/// diagram cannot be read): steps follow one another in the order listed,
/// decisions route by their own branches. Errors carry `steps[i].key`.
pub fn flow_from_steps(
    steps: &[Value],
    description: Option<&str>,
) -> Result<FlowDef, DefinitionError> {
    if steps.is_empty() {
        return Err(at("steps", "the flow has no steps"));
    }
    let mut nodes = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let path = format!("steps[{i}]");
        let Value::Object(m) = s else {
            return Err(at(&path, "a step must be a JSON object"));
        };
        let mut m = m.clone();
        if !m.contains_key("id") {
            return Err(at(&format!("{path}.id"), "missing; every step needs an id"));
        }
        translate_step(&mut m, None, false)
            .map_err(|e| at(&format!("{path}.{}", e.path), e.message))?;
        nodes.push(Value::Object(m));
    }
    let ids: Vec<Value> = nodes.iter().map(|n| n["id"].clone()).collect();
    for (i, n) in nodes.iter_mut().enumerate() {
        let routes = n.get("type").and_then(Value::as_str) == Some("decision");
        if let (Value::Object(m), false) = (n, routes)
            && let Some(next) = ids.get(i + 1)
        {
            m.entry("next").or_insert(next.clone());
        }
    }
    limit_back_edges(&mut nodes);
    let mut doc = json!({ "nodes": nodes });
    if let Some(d) = description.filter(|d| !d.trim().is_empty()) {
        doc["description"] = json!(d);
    }
    // The nodes are the seed's steps, one for one: name them as the seed does.
    super::from_value(&doc).map_err(|e| match e.path.strip_prefix("nodes") {
        Some(rest) => at(&format!("steps{rest}"), e.message),
        None => e,
    })
}
