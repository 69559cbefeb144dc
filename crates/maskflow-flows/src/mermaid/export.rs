//! Printing a flow as a Mermaid diagram with its config block.

use super::*;

// ---------------------------------------------------------------- export

/// Escapes a label for a quoted Mermaid node text.
pub(super) fn label_text(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    format!("\"{}\"", s.replace('"', "#quot;"))
}

pub(super) fn shape(id: &str, step: &Step) -> String {
    let label = step.display_label();
    match step {
        Step::Gate(_) => format!("{id}({})", label_text(&label)),
        Step::Decision(_) => format!("{id}{{{}}}", label_text(&label)),
        Step::Foreach(_) => format!("{id}[[{}]]", label_text(&format!("Each: {label}"))),
        Step::Subflow(_) => format!("{id}[[{}]]", label_text(&format!("Run: {label}"))),
        Step::StartLoop(_) => format!("{id}[[{}]]", label_text(&format!("Loop: {label}"))),
        _ => format!("{id}[{}]", label_text(&label)),
    }
}

pub(super) fn edge_label(s: &str) -> String {
    s.replace('"', "#quot;")
}

pub(super) fn unescape(s: &str) -> String {
    s.replace("#quot;", "\"")
}

/// The step as JSON, without the fields named.
pub(super) fn config_of(step: &Step, drop: &[&str]) -> Map<String, Value> {
    let mut v = match serde_json::to_value(step) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for k in drop {
        v.remove(*k);
    }
    v
}

pub(super) fn push_config(out: &mut String, id: &str, cfg: &Value) {
    let text = serde_json::to_string_pretty(cfg).unwrap_or_else(|_| "{}".into());
    let mut lines = text.lines();
    if let Some(first) = lines.next() {
        out.push_str(&format!("%% @{id}: {first}\n"));
    }
    for l in lines {
        out.push_str(&format!("%% {l}\n"));
    }
}

/// Prints a flow as a Mermaid `graph TD` diagram with its config block.
pub fn export(def: &FlowDef) -> String {
    let mut out = String::from("graph TD\n");
    let mut configs: Vec<(String, Value)> = Vec::new();
    let mut head = Map::new();
    if let Some(d) = &def.description {
        head.insert("description".into(), json!(d));
    }
    if let Some(i) = &def.input {
        head.insert("input".into(), Value::Object(i.clone()));
    }
    if let Some(nodes) = &def.nodes {
        if let Some(s) = &def.start {
            head.insert("start".into(), json!(s));
        }
        export_graph(nodes, &mut out, &mut configs);
    } else if let Some(steps) = &def.steps {
        head.insert("form".into(), json!("list"));
        let mut ctx = ListExport {
            out: &mut out,
            configs: &mut configs,
        };
        let tree = ctx.seq(steps, "s");
        head.insert("steps".into(), Value::Array(tree));
    }
    out.push('\n');
    out.push_str(CONFIG_START);
    out.push('\n');
    if !head.is_empty() {
        push_config(&mut out, FLOW_KEY, &Value::Object(head));
    }
    for (id, cfg) in &configs {
        push_config(&mut out, id, cfg);
    }
    out.push_str(CONFIG_END);
    out.push('\n');
    out
}

pub(super) fn export_graph(nodes: &[Step], out: &mut String, configs: &mut Vec<(String, Value)>) {
    let originals: Vec<String> = nodes
        .iter()
        .map(|n| n.common().id.map(|i| i.to_string()).unwrap_or_default())
        .collect();
    let ids: Vec<String> = originals
        .iter()
        .enumerate()
        .map(|(i, id)| safe_id(i, id))
        .collect();
    let to_mermaid: HashMap<&str, &str> = originals
        .iter()
        .map(String::as_str)
        .zip(ids.iter().map(String::as_str))
        .collect();
    let m = |t: &Text| -> String {
        to_mermaid
            .get(t.as_str())
            .map_or_else(|| t.to_string(), |s| (*s).to_owned())
    };
    for (node, id) in nodes.iter().zip(&ids) {
        out.push_str(&format!("    {}\n", shape(id, node)));
    }
    for (node, id) in nodes.iter().zip(&ids) {
        let c = node.common();
        match node {
            Step::Decision(d) => {
                let mut limits = Map::new();
                for b in &d.branches {
                    if let Some(n) = &b.next {
                        out.push_str(&format!(
                            "    {id} -->|\"{}\"| {}\n",
                            edge_label(b.condition.as_str()),
                            m(n)
                        ));
                        if let Some(max) = b.max_iterations {
                            limits.insert(m(n), json!(max));
                        }
                    }
                }
                if let Some(DefaultBranch { next: Some(n), .. }) = &d.default {
                    out.push_str(&format!("    {id} -->|default| {}\n", m(n)));
                }
                let mut cfg = config_of(node, &["id", "next", "label", "branches", "default"]);
                if !limits.is_empty() {
                    cfg.insert("maxIterations".into(), Value::Object(limits));
                }
                if d.default.is_some() && d.default.as_ref().and_then(|x| x.next.as_ref()).is_none()
                {
                    cfg.insert("default".into(), json!({}));
                }
                configs.push((id.clone(), Value::Object(cfg)));
            }
            Step::Gate(g) => {
                for o in &g.options {
                    let target = match &o.next {
                        None => c.next,
                        Some(Some(n)) => Some(n),
                        Some(None) => None,
                    };
                    if let Some(t) = target {
                        out.push_str(&format!(
                            "    {id} -->|\"{}\"| {}\n",
                            edge_label(o.label.as_str()),
                            m(t)
                        ));
                    }
                }
                let mut cfg = config_of(node, &["id", "label"]);
                cfg.remove("next");
                if let Some(n) = c.next {
                    cfg.insert("next".into(), json!(n));
                }
                configs.push((id.clone(), Value::Object(cfg)));
            }
            _ => {
                if let Some(n) = c.next {
                    out.push_str(&format!("    {id} --> {}\n", m(n)));
                }
                configs.push((
                    id.clone(),
                    Value::Object(config_of(node, &["id", "next", "label"])),
                ));
            }
        }
    }
    // An id Mermaid cannot take stays in the config.
    for (((id, cfg), original), _) in configs.iter_mut().zip(&originals).zip(nodes) {
        if id != original
            && let Value::Object(map) = cfg
        {
            map.insert("id".into(), json!(original));
        }
    }
    // Keep labels that differ from the default so the round trip is exact.
    for ((_, cfg), node) in configs.iter_mut().zip(nodes) {
        if node.common().label.is_none()
            && let Value::Object(m) = cfg
        {
            m.insert("label".into(), Value::Null);
        }
    }
}

/// Words Mermaid reads as keywords, not node ids.
pub(super) const RESERVED: &[&str] = &[
    "end",
    "graph",
    "flowchart",
    "subgraph",
    "class",
    "classDef",
    "style",
    "click",
    "linkStyle",
    "direction",
    "default",
];

/// `id` when Mermaid can take it as a node id, else `n<index>`.
pub(super) fn safe_id(index: usize, id: &str) -> String {
    let ok = !id.is_empty()
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(id))
        && id != FLOW_KEY;
    if ok {
        id.to_owned()
    } else {
        format!("n{index}_")
    }
}

pub(super) struct ListExport<'a> {
    pub(super) out: &'a mut String,
    pub(super) configs: &'a mut Vec<(String, Value)>,
}

impl ListExport<'_> {
    /// Emits a sequence; returns its tree entries. Edges join consecutive steps.
    fn seq(&mut self, steps: &[Step], prefix: &str) -> Vec<Value> {
        let mut tree = Vec::new();
        let mut prev: Vec<String> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let id = format!("{prefix}{i}");
            self.out.push_str(&format!("    {}\n", shape(&id, step)));
            for p in &prev {
                self.out.push_str(&format!("    {p} --> {id}\n"));
            }
            prev = vec![id.clone()];
            let mut cfg = config_of(step, &["steps", "branches", "default"]);
            if step.common().label.is_none() {
                cfg.insert("label".into(), Value::Null);
            }
            match step {
                Step::StartLoop(l) => {
                    let inner = self.seq(&l.steps, &format!("{id}_"));
                    if let Some(first) = inner.first().and_then(entry_id) {
                        self.out.push_str(&format!("    {id} --> {first}\n"));
                    }
                    if let Some(last) = inner.last().and_then(entry_id) {
                        self.out.push_str(&format!("    {last} -->|repeat| {id}\n"));
                    }
                    tree.push(json!({"id": id, "steps": inner}));
                }
                Step::Decision(d) => {
                    let mut branches = Vec::new();
                    let mut conds = Vec::new();
                    let mut ends = Vec::new();
                    for (b, br) in d.branches.iter().enumerate() {
                        let inner =
                            self.seq(br.steps.as_deref().unwrap_or(&[]), &format!("{id}_{b}_"));
                        if let Some(first) = inner.first().and_then(entry_id) {
                            self.out.push_str(&format!(
                                "    {id} -->|\"{}\"| {first}\n",
                                edge_label(br.condition.as_str())
                            ));
                        }
                        if let Some(last) = inner.last().and_then(entry_id) {
                            ends.push(last);
                        }
                        let mut c = Map::new();
                        c.insert("condition".into(), json!(br.condition));
                        if let Some(m) = br.max_iterations {
                            c.insert("maxIterations".into(), json!(m));
                        }
                        conds.push(Value::Object(c));
                        branches.push(Value::Array(inner));
                    }
                    let mut entry = json!({"id": id, "branches": branches});
                    if let Some(df) = &d.default {
                        let inner = self.seq(
                            df.steps.as_deref().unwrap_or(&[]),
                            &format!("{id}_{}_", d.branches.len()),
                        );
                        if let Some(first) = inner.first().and_then(entry_id) {
                            self.out
                                .push_str(&format!("    {id} -->|default| {first}\n"));
                        }
                        if let Some(last) = inner.last().and_then(entry_id) {
                            ends.push(last);
                        }
                        entry["default"] = Value::Array(inner);
                    }
                    cfg.insert("branches".into(), Value::Array(conds));
                    tree.push(entry);
                    let falls_through = d
                        .default
                        .as_ref()
                        .is_none_or(|df| df.steps.as_ref().is_none_or(Vec::is_empty));
                    if !falls_through {
                        prev.clear();
                    }
                    prev.extend(ends);
                }
                _ => tree.push(json!(id)),
            }
            self.configs.push((id, Value::Object(cfg)));
        }
        tree
    }
}

pub(super) fn entry_id(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => m.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}
