//! Turning a parsed diagram back into a flow.

use super::*;

/// Reads a Mermaid diagram with its config block back into a flow (validated).
pub fn import(text: &str) -> Result<FlowDef, MermaidError> {
    import_with(text, &BTreeMap::new())
}

/// [`import`], with configs for nodes the config block leaves out (a seed
/// 003 bundle's parsed-out `steps`); the block's own entries win.
pub fn import_with(text: &str, extra: &BTreeMap<String, Value>) -> Result<FlowDef, MermaidError> {
    let mut p = parse_text(text)?;
    for (id, cfg) in extra {
        let Some(node) = p.nodes.get(id) else {
            return Err(err(
                None,
                format!("the step {id} is not a node of the diagram"),
            ));
        };
        if !p.configs.contains_key(id) {
            let line = node.line;
            p.configs.insert(id.clone(), (cfg.clone(), line));
        }
    }
    if !p.configs.contains_key(FLOW_KEY) {
        for id in &p.order {
            if !p.configs.contains_key(id)
                && let Some(cfg) = implied_config(&p.nodes[id])
            {
                let line = p.nodes[id].line;
                p.configs.insert(id.clone(), (cfg, line));
            }
        }
    }
    for (id, (_, line)) in &p.configs {
        if id != FLOW_KEY && !p.nodes.contains_key(id) {
            return Err(err(
                Some(*line),
                format!("the config names {id}, which is not a node of the diagram"),
            ));
        }
    }
    for id in &p.order {
        if !p.configs.contains_key(id) {
            let line = p.nodes.get(id).map(|n| n.line);
            return Err(err(
                line,
                format!(
                    "node {id} has no config; add `%% @{id}: {{…}}` to the WORKFLOW_CONFIG block"
                ),
            ));
        }
    }
    let head = match p.configs.get(FLOW_KEY) {
        Some((Value::Object(m), _)) => m.clone(),
        Some((_, line)) => return Err(err(Some(*line), "@_flow must be a JSON object")),
        None => Map::new(),
    };
    let mut def = FlowDef {
        description: head
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        steps: None,
        nodes: None,
        start: head
            .get("start")
            .and_then(Value::as_str)
            .and_then(Text::new),
        input: head.get("input").and_then(Value::as_object).cloned(),
    };
    if head.get("form").and_then(Value::as_str) == Some("list") {
        let tree = head
            .get("steps")
            .and_then(Value::as_array)
            .ok_or_else(|| err(None, "@_flow of a list-form flow needs \"steps\""))?;
        let mut used = HashSet::new();
        def.steps = Some(list_steps(tree, &p, &mut used)?);
    } else {
        def.nodes = Some(graph_nodes(&p)?);
    }
    definition::validate(&def)
        .map_err(|e| err(None, format!("the imported flow is invalid: {e}")))?;
    Ok(def)
}

pub(super) fn node_cfg(p: &Parsed, id: &str) -> Result<(Map<String, Value>, usize), MermaidError> {
    match p.configs.get(id) {
        Some((Value::Object(m), line)) => Ok((m.clone(), *line)),
        Some((_, line)) => Err(err(
            Some(*line),
            format!("the config of {id} must be an object"),
        )),
        None => Err(err(None, format!("node {id} has no config"))),
    }
}

pub(super) fn with_label(cfg: &mut Map<String, Value>, decl: &NodeDecl) {
    match cfg.get("label") {
        Some(Value::Null) => {
            cfg.remove("label");
        }
        Some(_) => {}
        None => {
            let l = label_of(decl);
            if !l.is_empty() {
                cfg.insert("label".into(), json!(l));
            }
        }
    }
}

/// Where each node was declared, and the ids Mermaid could not take.
struct NodeIds<'a> {
    position: HashMap<&'a str, usize>,
    original: HashMap<&'a str, String>,
}

impl NodeIds<'_> {
    /// The flow's id of a diagram node.
    fn orig(&self, id: &str) -> String {
        self.original
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_owned())
    }
}

pub(super) fn graph_nodes(p: &Parsed) -> Result<Vec<Step>, MermaidError> {
    let position: HashMap<&str, usize> = p
        .order
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    // Node ids Mermaid could not take are kept in their config's "id".
    let original: HashMap<&str, String> = p
        .order
        .iter()
        .map(|id| {
            let o = match p.configs.get(id) {
                Some((Value::Object(m), _)) => {
                    m.get("id").and_then(Value::as_str).map(str::to_owned)
                }
                _ => None,
            };
            (id.as_str(), o.unwrap_or_else(|| id.clone()))
        })
        .collect();
    let ids = NodeIds { position, original };
    // Each node's outgoing edges, indexed once: a lookup per node over all
    // edges made a long chain quadratic (issue 39).
    let mut from: HashMap<&str, Vec<&Edge>> = HashMap::new();
    for e in &p.edges {
        from.entry(e.from.as_str()).or_default().push(e);
    }
    let mut out = Vec::new();
    for id in &p.order {
        let decl = &p.nodes[id];
        let (mut cfg, line) = node_cfg(p, id)?;
        translate_seed(&mut cfg, decl, id, line)?;
        let seed_limits = cfg.remove("seedLimits").is_some();
        with_label(&mut cfg, decl);
        cfg.entry("id").or_insert_with(|| json!(id));
        let outgoing: Vec<&Edge> = from.get(id.as_str()).cloned().unwrap_or_default();
        let ty = cfg
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match ty.as_str() {
            "decision" => decision_edges(&mut cfg, id, line, &outgoing, seed_limits, &ids)?,
            "gate" => gate_edges(&mut cfg, id, &outgoing, &ids)?,
            _ => plain_edges(&mut cfg, id, &outgoing, &ids)?,
        }
        out.push(step_from(id, cfg, line)?);
    }
    Ok(out)
}

/// A decision's edges become its branches (labelled with their condition)
/// and its default (labelled `default`).
fn decision_edges(
    cfg: &mut Map<String, Value>,
    id: &String,
    line: usize,
    outgoing: &[&Edge],
    seed_limits: bool,
    ids: &NodeIds<'_>,
) -> Result<(), MermaidError> {
    let limits = match cfg.remove("maxIterations") {
        Some(Value::Object(m)) => m,
        Some(_) => {
            return Err(err(
                Some(line),
                format!("{id}: maxIterations is {{\"<target node>\": n}}"),
            ));
        }
        None => Map::new(),
    };
    let mut branches = Vec::new();
    let mut default: Option<DefaultBranch> = cfg.remove("default").map(|_| DefaultBranch {
        steps: None,
        next: None,
    });
    for e in outgoing {
        let label = e.label.as_deref().map(str::trim).unwrap_or("");
        if label.is_empty() {
            return Err(err(
                Some(e.line),
                format!(
                    "the edge {} --> {} leaves a decision without a condition; label it |\"condition\"| or |default|",
                    e.from, e.to
                ),
            ));
        }
        if label == "default" {
            default = Some(DefaultBranch {
                steps: None,
                next: Text::new(&ids.orig(&e.to)),
            });
            continue;
        }
        expr::parse(label).map_err(|x| {
            err(
                Some(e.line),
                format!("the edge label {label:?} is not a valid condition: {x}"),
            )
        })?;
        let mut max = limits.get(&e.to).and_then(Value::as_u64).map(|n| n as u32);
        let back = ids.position.get(e.to.as_str()) <= ids.position.get(id.as_str());
        if max.is_none() && seed_limits && back {
            max = Some(10);
        }
        branches.push(Branch {
            condition: Text::new(label).ok_or_else(|| err(Some(e.line), "empty condition"))?,
            steps: None,
            next: Text::new(&ids.orig(&e.to)),
            max_iterations: max,
        });
    }
    cfg.insert(
        "branches".into(),
        serde_json::to_value(&branches).unwrap_or(Value::Null),
    );
    if let Some(d) = default {
        cfg.insert(
            "default".into(),
            serde_json::to_value(&d).unwrap_or(Value::Null),
        );
    }
    Ok(())
}

/// Options and `next` of a gate come from the config; an edge must match an option.
fn gate_edges(
    cfg: &mut Map<String, Value>,
    id: &String,
    outgoing: &[&Edge],
    ids: &NodeIds<'_>,
) -> Result<(), MermaidError> {
    // Options and `next` come from the config; an edge must match an option.
    if !cfg.contains_key("next")
        && let Some(e) = outgoing.iter().find(|e| e.label.is_none())
    {
        cfg.insert("next".into(), json!(ids.orig(&e.to)));
    }
    let options: Vec<String> = cfg
        .get("options")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|o| o.get("label").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    for e in outgoing {
        let Some(l) = &e.label else { continue };
        if !options.iter().any(|o| o == l.trim()) {
            return Err(err(
                Some(e.line),
                format!(
                    "the gate {id} has no option {l:?} (options: {})",
                    options.join(", ")
                ),
            ));
        }
        // A labelled edge routes its option, unless the config already does;
        // one to the gate's own next is what an option without one does.
        let to = ids.orig(&e.to);
        if cfg.get("next").and_then(Value::as_str) == Some(to.as_str()) {
            continue;
        }
        let all = cfg.get_mut("options").and_then(Value::as_array_mut);
        let option = all.into_iter().flatten().find_map(|o| match o {
            Value::Object(o) if o.get("label").and_then(Value::as_str) == Some(l.trim()) => Some(o),
            _ => None,
        });
        if let Some(o) = option {
            o.entry("next").or_insert_with(|| json!(to));
        }
    }
    Ok(())
}

/// Any other node has at most one unlabelled edge: its `next`.
fn plain_edges(
    cfg: &mut Map<String, Value>,
    id: &String,
    outgoing: &[&Edge],
    ids: &NodeIds<'_>,
) -> Result<(), MermaidError> {
    if outgoing.len() > 1 {
        return Err(err(
            Some(outgoing[1].line),
            format!(
                "{id} has {} outgoing edges; only a decision or a gate may branch",
                outgoing.len()
            ),
        ));
    }
    if let Some(e) = outgoing.first() {
        if let Some(l) = &e.label {
            return Err(err(
                Some(e.line),
                format!(
                    "the edge {} --> {} is labelled {l:?}, but only a decision's edges carry conditions",
                    e.from, e.to
                ),
            ));
        }
        cfg.insert("next".into(), json!(ids.orig(&e.to)));
    }
    Ok(())
}

pub(super) fn list_steps(
    tree: &[Value],
    p: &Parsed,
    used: &mut HashSet<String>,
) -> Result<Vec<Step>, MermaidError> {
    let mut out = Vec::new();
    for entry in tree {
        let id = entry_id(entry).ok_or_else(|| err(None, "@_flow.steps entries are ids"))?;
        if !used.insert(id.clone()) {
            return Err(err(None, format!("@_flow.steps lists {id} twice")));
        }
        let decl = p.nodes.get(&id).ok_or_else(|| {
            err(
                None,
                format!("@_flow.steps names {id}, which is not a node"),
            )
        })?;
        let (mut cfg, line) = node_cfg(p, &id)?;
        with_label(&mut cfg, decl);
        let sub =
            |key: &str, used: &mut HashSet<String>| -> Result<Option<Vec<Step>>, MermaidError> {
                match entry.get(key).and_then(Value::as_array) {
                    Some(a) => Ok(Some(list_steps(a, p, used)?)),
                    None => Ok(None),
                }
            };
        match cfg.get("type").and_then(Value::as_str) {
            Some("startLoop") => {
                let steps = sub("steps", used)?.unwrap_or_default();
                cfg.insert(
                    "steps".into(),
                    serde_json::to_value(&steps).unwrap_or(Value::Null),
                );
            }
            Some("decision") => {
                let conds = cfg
                    .remove("branches")
                    .and_then(|b| b.as_array().cloned())
                    .unwrap_or_default();
                let bodies = entry
                    .get("branches")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut branches = Vec::new();
                for (i, c) in conds.into_iter().enumerate() {
                    let mut c = c.as_object().cloned().unwrap_or_default();
                    let body = match bodies.get(i).and_then(Value::as_array) {
                        Some(a) => list_steps(a, p, used)?,
                        None => Vec::new(),
                    };
                    c.insert(
                        "steps".into(),
                        serde_json::to_value(&body).unwrap_or(Value::Null),
                    );
                    branches.push(Value::Object(c));
                }
                cfg.insert("branches".into(), Value::Array(branches));
                if let Some(d) = sub("default", used)? {
                    let d = if d.is_empty() {
                        json!({})
                    } else {
                        json!({"steps": d})
                    };
                    cfg.insert("default".into(), d);
                }
            }
            _ => {}
        }
        out.push(step_from(&id, cfg, line)?);
    }
    Ok(out)
}
