//! Reading the Mermaid text: node declarations, edges and the config block, and seed 003's config shape.

use super::*;

// ---------------------------------------------------------------- import

#[derive(Debug, Clone)]
pub(super) struct NodeDecl {
    pub(super) shape: Shape,
    pub(super) text: String,
    pub(super) line: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Square,
    Round,
    Curly,
    Double,
}

#[derive(Debug, Clone)]
pub(super) struct Edge {
    pub(super) from: String,
    pub(super) to: String,
    pub(super) label: Option<String>,
    pub(super) line: usize,
}

pub(super) fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Reads `ID` optionally followed by a shape; returns the rest of the line.
pub(super) fn parse_node<'a>(
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
pub(super) fn close<'a>(
    s: &'a str,
    close: &str,
    line: usize,
) -> Result<(String, &'a str), MermaidError> {
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

pub(super) struct Parsed {
    pub(super) nodes: HashMap<String, NodeDecl>,
    pub(super) order: Vec<String>,
    pub(super) edges: Vec<Edge>,
    pub(super) configs: BTreeMap<String, (Value, usize)>,
}

/// A config entry being read: its node id, its JSON so far and its first line.
type OpenConfig = Option<(String, String, usize)>;

/// Closes the config entry being read (if any) into `configs`.
fn finish_config(
    cur: OpenConfig,
    configs: &mut BTreeMap<String, (Value, usize)>,
) -> Result<(), MermaidError> {
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
}

/// One line inside the config block: `%% @ID: {…` opens an entry, other
/// `%%` lines continue it.
fn config_line(
    t: &str,
    line: usize,
    current: &mut OpenConfig,
    configs: &mut BTreeMap<String, (Value, usize)>,
) -> Result<(), MermaidError> {
    let Some(body) = t.strip_prefix("%%") else {
        if t.is_empty() {
            return Ok(());
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
        finish_config(current.take(), configs)?;
        *current = Some((id.trim().to_owned(), json_start.to_owned(), line));
    } else if let Some((_, buf, _)) = current.as_mut() {
        buf.push('\n');
        buf.push_str(body);
    } else if !body.is_empty() {
        return Err(err(
            Some(line),
            "config entries start with %% @NODE_ID: {…}",
        ));
    }
    Ok(())
}

/// Reads the diagram and its config block.
pub(super) fn parse_text(text: &str) -> Result<Parsed, MermaidError> {
    let mut p = Parsed {
        nodes: HashMap::new(),
        order: Vec::new(),
        edges: Vec::new(),
        configs: BTreeMap::new(),
    };
    let mut saw_header = false;
    let mut in_config = false;
    let mut current: OpenConfig = None;
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
            finish_config(current.take(), &mut p.configs)?;
            in_config = false;
            continue;
        }
        if in_config {
            config_line(t, line, &mut current, &mut p.configs)?;
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
        parse_chain(t, line, &mut p)?;
    }
    finish_config(current.take(), &mut p.configs)?;
    if !saw_header {
        return Err(err(
            None,
            "no diagram: a flow diagram starts with `graph TD`",
        ));
    }
    Ok(p)
}

/// A chain: node (--> [|label|] node)*
fn parse_chain(t: &str, line: usize, p: &mut Parsed) -> Result<(), MermaidError> {
    let (mut from, mut rest) = parse_node(t, line, &mut p.nodes, &mut p.order)?;
    loop {
        let r = rest.trim_start();
        if r.is_empty() || r == ";" {
            break;
        }
        let Some(r) = r.strip_prefix("-->") else {
            return Err(err(Some(line), format!("cannot read {r:?}; expected -->")));
        };
        let (label, r) = edge_label_of(r.trim_start(), line)?;
        let (to, r2) = parse_node(r, line, &mut p.nodes, &mut p.order)?;
        p.edges.push(Edge {
            from: from.clone(),
            to: to.clone(),
            label,
            line,
        });
        from = to;
        rest = r2;
    }
    Ok(())
}

/// An edge's optional `|label|` (quoted or not) and the text after it.
fn edge_label_of(r: &str, line: usize) -> Result<(Option<String>, &str), MermaidError> {
    let Some(l) = r.strip_prefix('|') else {
        return Ok((None, r));
    };
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
        Ok((Some(unescape(&lab)), rest))
    } else {
        let e = l
            .find('|')
            .ok_or_else(|| err(Some(line), "an edge label is not closed with |"))?;
        Ok((Some(unescape(l[..e].trim())), &l[e + 1..]))
    }
}

/// The node text without its `Each: ` / `Run: ` / `Loop: ` prefix.
pub(super) fn label_of(decl: &NodeDecl) -> String {
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

pub(super) fn step_from(
    id: &str,
    mut cfg: Map<String, Value>,
    line: usize,
) -> Result<Step, MermaidError> {
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

pub(super) fn clean(s: &str) -> String {
    s.replace('\u{1}', " ").trim().to_owned()
}

/// Seed 003's `stepType` configs → this engine's step JSON.
pub(super) fn translate_seed(
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
            // The fan-in prompt is asked of the same default agent as tasks.
            if let Some(p) = prompt.filter(|p| !p.trim().is_empty()) {
                cfg.insert("prompt".into(), json!(p));
                cfg.insert("agentType".into(), agent);
                cfg.insert("identifier".into(), identifier);
            }
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
