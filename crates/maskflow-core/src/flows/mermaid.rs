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
//! "decision" | "subflow"`, `execution`, `prompt`) is accepted on import: a
//! task becomes an `llm` step of agent `assistant` (or `agentType`), a manual
//! task a gate with one `Done` option, a foreach runs an `llm` step per item.
//! A join's `prompt` has no equivalent in the engine and is dropped.

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

// ---------------------------------------------------------------- export

/// Escapes a label for a quoted Mermaid node text.
fn label_text(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    format!("\"{}\"", s.replace('"', "#quot;"))
}

fn shape(id: &str, step: &Step) -> String {
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

fn edge_label(s: &str) -> String {
    s.replace('"', "#quot;")
}

fn unescape(s: &str) -> String {
    s.replace("#quot;", "\"")
}

/// The step as JSON, without the fields named.
fn config_of(step: &Step, drop: &[&str]) -> Map<String, Value> {
    let mut v = match serde_json::to_value(step) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    for k in drop {
        v.remove(*k);
    }
    v
}

fn push_config(out: &mut String, id: &str, cfg: &Value) {
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

fn export_graph(nodes: &[Step], out: &mut String, configs: &mut Vec<(String, Value)>) {
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
const RESERVED: &[&str] = &[
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
fn safe_id(index: usize, id: &str) -> String {
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

struct ListExport<'a> {
    out: &'a mut String,
    configs: &'a mut Vec<(String, Value)>,
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

fn entry_id(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => m.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

// ---------------------------------------------------------------- import

#[derive(Debug, Clone)]
struct NodeDecl {
    shape: Shape,
    text: String,
    line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Square,
    Round,
    Curly,
    Double,
}

#[derive(Debug, Clone)]
struct Edge {
    from: String,
    to: String,
    label: Option<String>,
    line: usize,
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Reads `ID` optionally followed by a shape; returns the rest of the line.
fn parse_node<'a>(
    s: &'a str,
    line: usize,
    nodes: &mut HashMap<String, NodeDecl>,
    order: &mut Vec<String>,
) -> Result<(String, &'a str), MermaidError> {
    let s = s.trim_start();
    let end = s.find(|c: char| !is_id_char(c)).unwrap_or(s.len());
    // `-->` starts with '-', which is an id char: stop before it.
    let end = s[..end].find("--").unwrap_or(end);
    let id = &s[..end];
    if id.is_empty() {
        return Err(err(Some(line), format!("expected a node id at {s:?}")));
    }
    let rest = &s[end..];
    let (decl, rest) = if let Some(r) = rest.strip_prefix("[[") {
        let (t, r) = close(r, "]]", line)?;
        (Some((Shape::Double, t)), r)
    } else if let Some(r) = rest.strip_prefix('[') {
        let (t, r) = close(r, "]", line)?;
        (Some((Shape::Square, t)), r)
    } else if let Some(r) = rest.strip_prefix('(') {
        let (t, r) = close(r, ")", line)?;
        (Some((Shape::Round, t)), r)
    } else if let Some(r) = rest.strip_prefix('{') {
        let (t, r) = close(r, "}", line)?;
        (Some((Shape::Curly, t)), r)
    } else {
        (None, rest)
    };
    if !nodes.contains_key(id) || decl.is_some() {
        if !nodes.contains_key(id) {
            order.push(id.to_owned());
        }
        let (shape, text) = decl.unwrap_or((Shape::Square, id.to_owned()));
        let prev_line = nodes.get(id).map(|n| n.line);
        nodes.insert(
            id.to_owned(),
            NodeDecl {
                shape,
                text,
                line: prev_line.unwrap_or(line),
            },
        );
    }
    Ok((id.to_owned(), rest))
}

/// The text up to `close` (quotes respected, unquoted), and what follows.
fn close<'a>(s: &'a str, close: &str, line: usize) -> Result<(String, &'a str), MermaidError> {
    if let Some(q) = s.strip_prefix('"')
        && let Some(e) = q.find('"')
        && let Some(rest) = q[e + 1..].strip_prefix(close)
    {
        return Ok((unescape(&q[..e]), rest));
    }
    let e = s.find(close).ok_or_else(|| {
        err(
            Some(line),
            format!("a node shape is not closed with {close:?}"),
        )
    })?;
    Ok((unescape(s[..e].trim()), &s[e + close.len()..]))
}

struct Parsed {
    nodes: HashMap<String, NodeDecl>,
    order: Vec<String>,
    edges: Vec<Edge>,
    configs: BTreeMap<String, (Value, usize)>,
}

fn parse_text(text: &str) -> Result<Parsed, MermaidError> {
    let mut nodes = HashMap::new();
    let mut order = Vec::new();
    let mut edges = Vec::new();
    let mut configs = BTreeMap::new();
    let mut saw_header = false;
    let mut in_config = false;
    let mut current: Option<(String, String, usize)> = None;
    let finish = |cur: Option<(String, String, usize)>,
                  configs: &mut BTreeMap<String, (Value, usize)>|
     -> Result<(), MermaidError> {
        if let Some((id, json_text, line)) = cur {
            let v: Value = serde_json::from_str(&json_text).map_err(|e| {
                err(
                    Some(line),
                    format!("the config of {id} is not valid JSON: {e}"),
                )
            })?;
            if configs.insert(id.clone(), (v, line)).is_some() {
                return Err(err(Some(line), format!("{id} has two configs")));
            }
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.starts_with("```") {
            continue;
        }
        if t == CONFIG_START {
            in_config = true;
            continue;
        }
        if t == CONFIG_END {
            finish(current.take(), &mut configs)?;
            in_config = false;
            continue;
        }
        if in_config {
            let Some(body) = t.strip_prefix("%%") else {
                if t.is_empty() {
                    continue;
                }
                return Err(err(
                    Some(line),
                    "lines of the config block must start with %%",
                ));
            };
            let body = body.trim();
            if let Some(rest) = body.strip_prefix('@')
                && let Some((id, json_start)) = rest.split_once(':')
                && id.chars().all(is_id_char)
            {
                finish(current.take(), &mut configs)?;
                current = Some((id.trim().to_owned(), json_start.to_owned(), line));
            } else if let Some((_, buf, _)) = current.as_mut() {
                buf.push('\n');
                buf.push_str(body);
            } else if !body.is_empty() {
                return Err(err(
                    Some(line),
                    "config entries start with %% @NODE_ID: {…}",
                ));
            }
            continue;
        }
        if t.is_empty() || t.starts_with("%%") {
            continue;
        }
        if !saw_header {
            let first = t.split_whitespace().next().unwrap_or("");
            if first != "graph" && first != "flowchart" {
                return Err(err(Some(line), "a flow diagram starts with `graph TD`"));
            }
            saw_header = true;
            continue;
        }
        if t.starts_with("classDef") || t.starts_with("class ") || t.starts_with("style ") {
            continue;
        }
        // A chain: node (--> [|label|] node)*
        let (mut from, mut rest) = parse_node(t, line, &mut nodes, &mut order)?;
        loop {
            let r = rest.trim_start();
            if r.is_empty() || r == ";" {
                break;
            }
            let Some(r) = r.strip_prefix("-->") else {
                return Err(err(Some(line), format!("cannot read {r:?}; expected -->")));
            };
            let r = r.trim_start();
            let (label, r) = if let Some(l) = r.strip_prefix('|') {
                let lt = l.trim_start();
                let quoted = lt
                    .strip_prefix('"')
                    .and_then(|q| q.find('"').map(|e| (q, e)))
                    .and_then(|(q, e)| {
                        q[e + 1..]
                            .trim_start()
                            .strip_prefix('|')
                            .map(|rest| (q[..e].to_owned(), rest))
                    });
                if let Some((lab, rest)) = quoted {
                    (Some(unescape(&lab)), rest)
                } else {
                    let e = l
                        .find('|')
                        .ok_or_else(|| err(Some(line), "an edge label is not closed with |"))?;
                    (Some(unescape(l[..e].trim())), &l[e + 1..])
                }
            } else {
                (None, r)
            };
            let (to, r2) = parse_node(r, line, &mut nodes, &mut order)?;
            edges.push(Edge {
                from: from.clone(),
                to: to.clone(),
                label,
                line,
            });
            from = to;
            rest = r2;
        }
    }
    finish(current.take(), &mut configs)?;
    if !saw_header {
        return Err(err(
            None,
            "no diagram: a flow diagram starts with `graph TD`",
        ));
    }
    Ok(Parsed {
        nodes,
        order,
        edges,
        configs,
    })
}

/// The node text without its `Each: ` / `Run: ` / `Loop: ` prefix.
fn label_of(decl: &NodeDecl) -> String {
    let t = decl.text.trim();
    for p in ["Each:", "Run:", "Loop:"] {
        if decl.shape == Shape::Double
            && let Some(r) = t.strip_prefix(p)
        {
            return r.trim().to_owned();
        }
    }
    t.to_owned()
}

fn step_from(id: &str, mut cfg: Map<String, Value>, line: usize) -> Result<Step, MermaidError> {
    if !cfg.contains_key("type") {
        return Err(err(
            Some(line),
            format!("the config of {id} needs a \"type\" (or seed 003's \"stepType\")"),
        ));
    }
    if matches!(cfg.get("label"), Some(Value::Null)) {
        cfg.remove("label");
    }
    serde_json::from_value::<Step>(Value::Object(cfg)).map_err(|e| {
        err(
            Some(line),
            format!("the config of {id}: {}", clean(&e.to_string())),
        )
    })
}

fn clean(s: &str) -> String {
    s.replace('\u{1}', " ").trim().to_owned()
}

/// Seed 003's `stepType` configs → this engine's step JSON.
fn translate_seed(
    cfg: &mut Map<String, Value>,
    decl: &NodeDecl,
    id: &str,
    line: usize,
) -> Result<(), MermaidError> {
    let Some(kind) = cfg.remove("stepType") else {
        return Ok(());
    };
    let kind = kind.as_str().unwrap_or("").to_owned();
    let prompt = cfg
        .remove("prompt")
        .and_then(|p| p.as_str().map(str::to_owned));
    let agent = cfg
        .remove("agentType")
        .or_else(|| cfg.remove("agent"))
        .unwrap_or(json!("assistant"));
    let identifier = cfg.remove("identifier").unwrap_or(json!("default"));
    let llm = |prompt: &Option<String>| -> Result<Value, MermaidError> {
        let p = prompt
            .as_deref()
            .filter(|p| !p.trim().is_empty())
            .ok_or_else(|| err(Some(line), format!("{id}: a task needs a \"prompt\"")))?;
        Ok(
            json!({"type": "llm", "agentType": agent, "identifier": identifier,
                  "messages": [{"role": "user", "content": [p]}]}),
        )
    };
    let manual = cfg
        .remove("execution")
        .and_then(|e| e.as_str().map(str::to_owned));
    match kind.as_str() {
        "task" if manual.as_deref() == Some("manual") || decl.shape == Shape::Round => {
            cfg.insert("type".into(), json!("gate"));
            cfg.insert(
                "prompt".into(),
                json!(prompt.unwrap_or_else(|| label_of(decl))),
            );
            if !cfg.contains_key("options") {
                cfg.insert("options".into(), json!([{"label": "Done"}]));
            }
        }
        "task" => {
            if let Value::Object(m) = llm(&prompt)? {
                cfg.extend(m);
            }
        }
        "foreach" => {
            cfg.insert("type".into(), json!("foreach"));
            if !cfg.contains_key("step") {
                cfg.insert("step".into(), llm(&prompt)?);
            }
        }
        "join" => {
            cfg.remove("awaitTag");
            cfg.insert("type".into(), json!("join"));
        }
        "decision" => {
            cfg.insert("type".into(), json!("decision"));
            cfg.insert("seedLimits".into(), json!(true));
        }
        "subflow" => {
            cfg.insert("type".into(), json!("subflow"));
            if let Some(w) = cfg
                .remove("workflowName")
                .or_else(|| cfg.remove("workflow"))
            {
                cfg.entry("flow").or_insert(w);
            }
        }
        other => {
            return Err(err(
                Some(line),
                format!(
                    "{id}: unknown stepType {other:?} (task, foreach, join, decision or subflow)"
                ),
            ));
        }
    }
    Ok(())
}

/// Reads a Mermaid diagram with its config block back into a flow (validated).
pub fn import(text: &str) -> Result<FlowDef, MermaidError> {
    let p = parse_text(text)?;
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

fn node_cfg(p: &Parsed, id: &str) -> Result<(Map<String, Value>, usize), MermaidError> {
    match p.configs.get(id) {
        Some((Value::Object(m), line)) => Ok((m.clone(), *line)),
        Some((_, line)) => Err(err(
            Some(*line),
            format!("the config of {id} must be an object"),
        )),
        None => Err(err(None, format!("node {id} has no config"))),
    }
}

fn with_label(cfg: &mut Map<String, Value>, decl: &NodeDecl) {
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

fn graph_nodes(p: &Parsed) -> Result<Vec<Step>, MermaidError> {
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
    let orig = |id: &str| original.get(id).cloned().unwrap_or_else(|| id.to_owned());
    let mut out = Vec::new();
    for id in &p.order {
        let decl = &p.nodes[id];
        let (mut cfg, line) = node_cfg(p, id)?;
        translate_seed(&mut cfg, decl, id, line)?;
        let seed_limits = cfg.remove("seedLimits").is_some();
        with_label(&mut cfg, decl);
        cfg.entry("id").or_insert_with(|| json!(id));
        let outgoing: Vec<&Edge> = p.edges.iter().filter(|e| &e.from == id).collect();
        let ty = cfg
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match ty.as_str() {
            "decision" => {
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
                let mut default: Option<DefaultBranch> =
                    cfg.remove("default").map(|_| DefaultBranch {
                        steps: None,
                        next: None,
                    });
                for e in &outgoing {
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
                            next: Text::new(&orig(&e.to)),
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
                    let back = position.get(e.to.as_str()) <= position.get(id.as_str());
                    if max.is_none() && seed_limits && back {
                        max = Some(10);
                    }
                    branches.push(Branch {
                        condition: Text::new(label)
                            .ok_or_else(|| err(Some(e.line), "empty condition"))?,
                        steps: None,
                        next: Text::new(&orig(&e.to)),
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
            }
            "gate" => {
                // Options and `next` come from the config; an edge must match an option.
                if !cfg.contains_key("next")
                    && let Some(e) = outgoing.iter().find(|e| e.label.is_none())
                {
                    cfg.insert("next".into(), json!(orig(&e.to)));
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
                for e in &outgoing {
                    if let Some(l) = &e.label
                        && !options.iter().any(|o| o == l)
                    {
                        return Err(err(
                            Some(e.line),
                            format!(
                                "the gate {id} has no option {l:?} (options: {})",
                                options.join(", ")
                            ),
                        ));
                    }
                }
            }
            _ => {
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
                    cfg.insert("next".into(), json!(orig(&e.to)));
                }
            }
        }
        out.push(step_from(id, cfg, line)?);
    }
    Ok(out)
}

fn list_steps(
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

#[cfg(test)]
mod tests {
    use super::*;

    const PR_REVIEW: &str = include_str!("../../../../tests/fixtures/flows/mermaid/pr-review.mmd");

    fn graph_flow() -> FlowDef {
        definition::parse(
            r#"{
  "description": "every graph step type",
  "input": {"limit": 3},
  "start": "fetch",
  "nodes": [
    {"id": "fetch", "type": "llm", "label": "Fetch \"PR\"", "agentType": "planner", "identifier": "main",
     "messages": [{"role": "user", "content": ["List files of {{input.limit}}"]}], "next": "cmd",
     "postconditions": [{"check": "output.files", "error": "no files"}]},
    {"id": "cmd", "type": "command", "agentType": "planner", "identifier": "main", "commandName": "plan", "next": "each"},
    {"id": "each", "type": "foreach", "label": "Review File", "itemsPath": "output.files", "itemVariable": "file",
     "concurrency": 2, "step": {"type": "llm", "agentType": "coder", "identifier": "{{file.path}}",
       "messages": [{"role": "user", "content": ["Review {{file.path}}"]}]}, "next": "join"},
    {"id": "join", "type": "join", "onFailure": "skip", "next": "check"},
    {"id": "check", "type": "decision", "label": "Quality Gate",
     "branches": [
       {"condition": "output.score >= 80 || output.name == \"ok\"", "next": "sub"},
       {"condition": "output.retry", "next": "fetch", "maxIterations": 3}
     ],
     "default": {"next": "ask"}},
    {"id": "sub", "type": "subflow", "label": "Security Scan", "flow": "scan", "input": {"file": "output.file"}, "next": "end"},
    {"id": "ask", "type": "gate", "prompt": "Ship it?", "context": ["output.summary"],
     "options": [{"label": "Yes"}, {"label": "Redo", "next": "fetch"}, {"label": "Drop", "next": null},
                 {"label": "Note", "requiresInput": true}], "next": "end"},
    {"id": "end", "type": "script", "path": "tidy.py", "args": ["{{output.file}}"], "timeoutSeconds": 5}
  ]
}"#,
        )
        .expect("valid graph flow")
    }

    fn list_flow() -> FlowDef {
        definition::parse(
            r#"{
  "description": "every list step type",
  "steps": [
    {"type": "llm", "id": "plan", "agentType": "planner", "identifier": "main",
     "messages": [{"role": "system", "content": ["Plan"]}]},
    {"type": "startLoop", "label": "Work", "maxIterations": 5, "steps": [
      {"type": "command", "agentType": "coder", "identifier": "main", "commandName": "code"},
      {"type": "break", "agentType": "planner", "identifier": "main", "question": "Done?", "breakOn": "yes"}
    ]},
    {"type": "decision", "branches": [
      {"condition": "output.ok", "steps": [{"type": "gate", "prompt": "OK?", "options": [{"label": "Go"}]}]},
      {"condition": "!output.ok", "steps": [{"type": "llm", "agentType": "planner", "identifier": "main", "messages": [{"role": "user", "content": ["Why?"]}]}]}
    ], "default": {"steps": [{"type": "script", "workflow": "wf_1"}]}},
    {"type": "decision", "label": "Maybe", "branches": [
      {"condition": "output.n > 1", "steps": [{"type": "gate", "prompt": "More?", "options": [{"label": "Go"}]}]}], "default": {}},
    {"type": "foreach", "itemsPath": "output.items", "itemVariable": "it",
     "step": {"type": "subflow", "flow": "child"}},
    {"type": "join"}
  ]
}"#,
        )
        .expect("valid list flow")
    }

    #[test]
    fn graph_flows_round_trip_with_every_shape() {
        let def = graph_flow();
        let text = export(&def);
        assert!(text.starts_with("graph TD\n"), "{text}");
        for shape in [
            "fetch[\"Fetch #quot;PR#quot;\"]",
            "cmd[\"command\"]",
            "each[[\"Each: Review File\"]]",
            "join[\"join\"]",
            "check{\"Quality Gate\"}",
            "sub[[\"Run: Security Scan\"]]",
            "ask(\"gate\")",
            "n7_[\"script\"]",
        ] {
            assert!(text.contains(shape), "{shape} missing in\n{text}");
        }
        assert!(
            text.contains("check -->|\"output.score >= 80 || output.name == #quot;ok#quot;\"| sub")
        );
        assert!(text.contains("check -->|default| ask"));
        assert!(text.contains("ask -->|\"Redo\"| fetch"));
        assert!(text.contains(CONFIG_START) && text.contains(CONFIG_END));
        assert!(text.contains("%% @fetch: {"));
        assert_eq!(import(&text).expect("imports"), def);
    }

    #[test]
    fn list_flows_round_trip() {
        let def = list_flow();
        let text = export(&def);
        assert!(text.contains("s1[[\"Loop: Work\"]]"), "{text}");
        assert!(text.contains("s2{\"decision\"}"), "{text}");
        assert!(text.contains("s2_0_0(\"gate\")"), "{text}");
        assert!(text.contains("s4[[\"Each: foreach\"]]"), "{text}");
        assert!(!text.contains("s2 --> s3"), "{text}");
        assert!(text.contains("s3 --> s4"), "{text}");
        assert!(text.contains("s2 -->|\"output.ok\"| s2_0_0"), "{text}");
        assert_eq!(import(&text).expect("imports"), def);
    }

    #[test]
    fn the_seed_example_imports() {
        let def = import(PR_REVIEW).expect("seed 003's PR Review Workflow imports");
        let nodes = def.nodes.as_ref().expect("graph form");
        assert_eq!(nodes.len(), 11);
        let ids: Vec<String> = nodes
            .iter()
            .map(|n| n.common().id.map(|i| i.to_string()).unwrap_or_default())
            .collect();
        assert_eq!(ids, ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"]);
        assert!(matches!(&nodes[2], Step::Foreach(f) if f.item_variable.as_str() == "file"));
        assert!(matches!(&nodes[3], Step::Join(_)));
        assert!(matches!(&nodes[6], Step::Gate(_)));
        assert_eq!(nodes[6].common().next.map(Text::as_str), Some("I"));
        let Step::Decision(e) = &nodes[4] else {
            panic!("E is a decision")
        };
        assert_eq!(e.branches.len(), 2);
        assert_eq!(e.branches[0].condition.as_str(), "output.score >= 80");
        assert_eq!(
            e.default
                .as_ref()
                .and_then(|d| d.next.as_ref())
                .map(Text::as_str),
            Some("H")
        );
        let Step::Decision(j) = &nodes[9] else {
            panic!("J is a decision")
        };
        assert_eq!(
            j.branches[0].max_iterations,
            Some(10),
            "the back edge gets a limit"
        );
        assert_eq!(nodes[0].display_label(), "Fetch PR Details");
        // and it survives its own round trip
        assert_eq!(import(&export(&def)).expect("re-imports"), def);
    }

    fn import_err(text: &str) -> MermaidError {
        import(text).expect_err(text)
    }

    const CFG_A: &str = "%% @A: {\"type\": \"join\"}\n";

    #[test]
    fn errors_are_clear() {
        let e = import_err(&format!(
            "graph TD\n    A --> B\n{CONFIG_START}\n{CFG_A}{CONFIG_END}\n"
        ));
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("node B has no config"), "{e}");

        let e = import_err(&format!(
            "graph TD\n    A\n{CONFIG_START}\n{CFG_A}%% @Z: {{\"type\": \"join\"}}\n{CONFIG_END}\n"
        ));
        assert!(e.message.contains("names Z, which is not a node"), "{e}");
        assert_eq!(e.line, Some(5));

        let e = import_err(&format!(
            "graph TD\n    D{{Check}} -->|\"output.x >>= 3\"| A\n{CONFIG_START}\n{CFG_A}%% @D: {{\"type\": \"decision\"}}\n{CONFIG_END}\n"
        ));
        assert!(e.message.contains("not a valid condition"), "{e}");
        assert_eq!(e.line, Some(2));

        let e = import_err(&format!(
            "graph TD\n    A -->|\"x\"| B\n{CONFIG_START}\n{CFG_A}%% @B: {{\"type\": \"join\"}}\n{CONFIG_END}\n"
        ));
        assert!(
            e.message
                .contains("only a decision's edges carry conditions"),
            "{e}"
        );

        let e = import_err("flow\n");
        assert!(e.message.contains("graph TD"), "{e}");

        let e = import_err(&format!(
            "graph TD\n    A\n{CONFIG_START}\n%% @A: {{\"type\": \"llm\"}}\n{CONFIG_END}\n"
        ));
        assert!(e.message.contains("config of A"), "{e}");

        let e = import_err(&format!(
            "graph TD\n    A\n{CONFIG_START}\n%% @A: {{\"type\": \n{CONFIG_END}\n"
        ));
        assert!(e.message.contains("not valid JSON"), "{e}");
    }
}
