//! The semantic checks a schema cannot express.

use super::*;

pub(super) fn check_conditions(step: &Step, path: &str) -> Result<(), DefinitionError> {
    let c = step.common();
    for (kind, list) in [
        ("preconditions", c.preconditions),
        ("postconditions", c.postconditions),
    ] {
        for (i, cond) in list.iter().enumerate() {
            expr::parse(cond.check.as_str()).map_err(|e| {
                DefinitionError::at(&format!("{path}.{kind}[{i}].check"), e.to_string())
            })?;
        }
    }
    Ok(())
}

pub(super) fn check_step_fields(step: &Step, path: &str) -> Result<(), DefinitionError> {
    check_conditions(step, path)?;
    match step {
        Step::Llm(s) => {
            if s.messages.is_empty() {
                return Err(DefinitionError::at(
                    &format!("{path}.messages"),
                    "must list at least one message",
                ));
            }
            for (i, m) in s.messages.iter().enumerate() {
                if m.content.is_empty() {
                    return Err(DefinitionError::at(
                        &format!("{path}.messages[{i}].content"),
                        "must list at least one line",
                    ));
                }
            }
        }
        Step::StartLoop(s) => {
            if s.max_iterations == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.maxIterations"),
                    "must be at least 1",
                ));
            }
        }
        Step::Decision(s) => {
            if s.branches.is_empty() {
                return Err(DefinitionError::at(
                    &format!("{path}.branches"),
                    "must list at least one branch",
                ));
            }
            for (i, b) in s.branches.iter().enumerate() {
                let condition = expr::parse(b.condition.as_str()).map_err(|e| {
                    DefinitionError::at(&format!("{path}.branches[{i}].condition"), e.to_string())
                })?;
                if let Some(why) = super::labels::reads_nothing(&condition) {
                    return Err(DefinitionError::at(
                        &format!("{path}.branches[{i}].condition"),
                        why,
                    ));
                }
                if condition.reads_files() {
                    return Err(DefinitionError::at(
                        &format!("{path}.branches[{i}].condition"),
                        "file checks (exists, nonEmpty, isJson, contains, matches) belong in pre- and postconditions",
                    ));
                }
                if b.max_iterations == Some(0) {
                    return Err(DefinitionError::at(
                        &format!("{path}.branches[{i}].maxIterations"),
                        "must be at least 1",
                    ));
                }
            }
        }
        Step::Foreach(s) => check_foreach(s, path)?,
        Step::Gate(s) => check_gate(s, path)?,
        Step::Script(s) => {
            if s.timeout_seconds == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.timeoutSeconds"),
                    "must be at least 1",
                ));
            }
        }
        Step::Join(s) => {
            if s.timeout_seconds == Some(0) {
                return Err(DefinitionError::at(
                    &format!("{path}.timeoutSeconds"),
                    "must be at least 1",
                ));
            }
            if s.on_timeout.is_some() && s.timeout_seconds.is_none() {
                return Err(DefinitionError::at(
                    &format!("{path}.onTimeout"),
                    "says what a timeout does, but the join sets no timeoutSeconds",
                ));
            }
            if s.prompt.is_some() {
                for (field, missing) in [
                    ("agentType", s.agent_type.is_none()),
                    ("identifier", s.identifier.is_none()),
                ] {
                    if missing {
                        return Err(DefinitionError::at(
                            &format!("{path}.{field}"),
                            "a join with a prompt needs the agent (agentType, identifier) that answers it",
                        ));
                    }
                }
            }
        }
        Step::Command(_) | Step::Break(_) | Step::Subflow(_) => {}
    }
    Ok(())
}

/// A foreach: its items path, variable, limits and per-item step.
fn check_foreach(s: &ForeachStep, path: &str) -> Result<(), DefinitionError> {
    expr::parse_path(s.items_path.as_str())
        .map_err(|e| DefinitionError::at(&format!("{path}.itemsPath"), e.to_string()))?;
    if !s
        .item_variable
        .as_str()
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_')
    {
        return Err(DefinitionError::at(
            &format!("{path}.itemVariable"),
            "must be a plain name (letters, digits, _)",
        ));
    }
    if let Some(c) = s.concurrency
        && !(1..=MAX_CONCURRENCY).contains(&c)
    {
        return Err(DefinitionError::at(
            &format!("{path}.concurrency"),
            format!("must be between 1 and {MAX_CONCURRENCY}"),
        ));
    }
    if s.max_retries.is_some_and(|r| r > MAX_ITEM_RETRIES) {
        return Err(DefinitionError::at(
            &format!("{path}.maxRetries"),
            format!("must be at most {MAX_ITEM_RETRIES}"),
        ));
    }
    if s.max_items == Some(0) {
        return Err(DefinitionError::at(
            &format!("{path}.maxItems"),
            "must be at least 1",
        ));
    }
    if !matches!(
        *s.step,
        Step::Llm(_) | Step::Command(_) | Step::Script(_) | Step::Subflow(_)
    ) {
        return Err(DefinitionError::at(
            &format!("{path}.step.type"),
            "a foreach runs an llm, command, script or subflow step per item",
        ));
    }
    if s.step.common().next.is_some() || s.step.common().id.is_some() {
        return Err(DefinitionError::at(
            &format!("{path}.step"),
            "the per-item step takes no id or next",
        ));
    }
    check_step_fields(&s.step, &format!("{path}.step"))?;
    Ok(())
}

/// A gate: at least one option, distinct labels, context paths that parse.
fn check_gate(s: &GateStep, path: &str) -> Result<(), DefinitionError> {
    if s.options.is_empty() {
        return Err(DefinitionError::at(
            &format!("{path}.options"),
            "must list at least one option",
        ));
    }
    let mut seen = HashSet::new();
    for (i, o) in s.options.iter().enumerate() {
        if !seen.insert(o.label.as_str()) {
            return Err(DefinitionError::at(
                &format!("{path}.options[{i}].label"),
                format!("{:?} is listed twice", o.label.as_str()),
            ));
        }
    }
    for (i, c) in s.context.iter().enumerate() {
        expr::parse_path(c.as_str())
            .map_err(|e| DefinitionError::at(&format!("{path}.context[{i}]"), e.to_string()))?;
    }
    Ok(())
}

/// The semantic checks of a parsed document.
pub fn validate(def: &FlowDef) -> Result<(), DefinitionError> {
    match (&def.steps, &def.nodes) {
        (Some(_), Some(_)) => Err(DefinitionError::at(
            "$",
            "give either steps (list form) or nodes (graph form), not both",
        )),
        (None, None) => Err(DefinitionError::at(
            "$",
            "missing field `steps` (or `nodes` for the graph form)",
        )),
        (Some(steps), None) => {
            if def.start.is_some() {
                return Err(DefinitionError::at(
                    "start",
                    "only the graph form (nodes) has a start",
                ));
            }
            let mut ids = HashMap::new();
            let mut gate_targets = Vec::new();
            validate_list(steps, "steps", 0, &mut ids, &mut gate_targets)?;
            for (path, target) in gate_targets {
                if !ids.contains_key(&target) {
                    return Err(DefinitionError::at(
                        &path,
                        format!("no step has the id {target:?}"),
                    ));
                }
            }
            Ok(())
        }
        (None, Some(nodes)) => validate_graph(def, nodes),
    }
}

pub(super) fn validate_list(
    steps: &[Step],
    path: &str,
    loop_depth: usize,
    ids: &mut HashMap<String, String>,
    gate_targets: &mut Vec<(String, String)>,
) -> Result<(), DefinitionError> {
    if steps.is_empty() {
        return Err(DefinitionError::at(path, "must list at least one step"));
    }
    for (i, step) in steps.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let c = step.common();
        if c.next.is_some() {
            return Err(DefinitionError::at(
                &format!("{p}.next"),
                "next belongs to the graph form (nodes); list steps run in order",
            ));
        }
        if let Some(id) = c.id
            && let Some(first) = ids.insert(id.to_string(), p.clone())
        {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                format!("{:?} is already the id of {first}", id.as_str()),
            ));
        }
        check_step_fields(step, &p)?;
        match step {
            Step::StartLoop(s) => validate_list(
                &s.steps,
                &format!("{p}.steps"),
                loop_depth + 1,
                ids,
                gate_targets,
            )?,
            Step::Break(_) if loop_depth == 0 => {
                return Err(DefinitionError::at(
                    &p,
                    "a break must be inside a startLoop",
                ));
            }
            Step::Decision(s) => {
                for (b, branch) in s.branches.iter().enumerate() {
                    let bp = format!("{p}.branches[{b}]");
                    if branch.next.is_some() || branch.max_iterations.is_some() {
                        return Err(DefinitionError::at(
                            &bp,
                            "list-form branches take steps, not next or maxIterations",
                        ));
                    }
                    match &branch.steps {
                        Some(list) => validate_list(
                            list,
                            &format!("{bp}.steps"),
                            loop_depth,
                            ids,
                            gate_targets,
                        )?,
                        None => {
                            return Err(DefinitionError::at(
                                &format!("{bp}.steps"),
                                "missing; list the steps of this branch",
                            ));
                        }
                    }
                }
                if let Some(d) = &s.default {
                    if d.next.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{p}.default.next"),
                            "list-form defaults take steps",
                        ));
                    }
                    if let Some(list) = &d.steps {
                        validate_list(
                            list,
                            &format!("{p}.default.steps"),
                            loop_depth,
                            ids,
                            gate_targets,
                        )?;
                    }
                }
            }
            Step::Foreach(_) if !matches!(steps.get(i + 1), Some(Step::Join(_))) => {
                return Err(DefinitionError::at(
                    &p,
                    "a foreach must be followed by a join step",
                ));
            }
            Step::Join(_) if i == 0 || !matches!(steps[i - 1], Step::Foreach(_)) => {
                return Err(DefinitionError::at(
                    &p,
                    "a join must come right after a foreach",
                ));
            }
            Step::Gate(s) => {
                for (o, opt) in s.options.iter().enumerate() {
                    if let Some(Some(t)) = &opt.next {
                        gate_targets.push((format!("{p}.options[{o}].next"), t.to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn validate_graph(def: &FlowDef, nodes: &[Step]) -> Result<(), DefinitionError> {
    if nodes.is_empty() {
        return Err(DefinitionError::at("nodes", "must list at least one node"));
    }
    let index = graph_index(nodes)?;
    let target = |path: String, t: &Text| -> Result<usize, DefinitionError> {
        index.get(t.as_str()).copied().ok_or_else(|| {
            DefinitionError::at(&path, format!("no node has the id {:?}", t.as_str()))
        })
    };
    let start = match &def.start {
        Some(s) => target("start".into(), s)?,
        None => 0,
    };
    // Edges: (from, to, guarded, path).
    let mut edges: Edges = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let p = format!("nodes[{i}]");
        if let Some(n) = node.common().next {
            edges[i].push((target(format!("{p}.next"), n)?, false, format!("{p}.next")));
        }
        match node {
            Step::Decision(s) => {
                if node.common().next.is_some() {
                    return Err(DefinitionError::at(
                        &format!("{p}.next"),
                        "a decision routes by its branches and default",
                    ));
                }
                for (b, br) in s.branches.iter().enumerate() {
                    let bp = format!("{p}.branches[{b}]");
                    if br.steps.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{bp}.steps"),
                            "graph-form branches name a node in next",
                        ));
                    }
                    let Some(n) = &br.next else {
                        return Err(DefinitionError::at(
                            &format!("{bp}.next"),
                            "missing; name the node this branch goes to",
                        ));
                    };
                    edges[i].push((
                        target(format!("{bp}.next"), n)?,
                        br.max_iterations.is_some(),
                        bp,
                    ));
                }
                if let Some(d) = &s.default {
                    if d.steps.is_some() {
                        return Err(DefinitionError::at(
                            &format!("{p}.default.steps"),
                            "graph-form defaults name a node in next",
                        ));
                    }
                    if let Some(n) = &d.next {
                        edges[i].push((
                            target(format!("{p}.default.next"), n)?,
                            false,
                            format!("{p}.default"),
                        ));
                    }
                }
            }
            Step::Gate(s) => {
                for (o, opt) in s.options.iter().enumerate() {
                    if let Some(Some(n)) = &opt.next {
                        // A person chooses: a gate edge is its own guard.
                        edges[i].push((
                            target(format!("{p}.options[{o}].next"), n)?,
                            true,
                            format!("{p}.options[{o}]"),
                        ));
                    }
                }
            }
            Step::Foreach(_) => {
                let ok = node
                    .common()
                    .next
                    .and_then(|n| index.get(n.as_str()))
                    .is_some_and(|&j| matches!(nodes[j], Step::Join(_)));
                if !ok {
                    return Err(DefinitionError::at(
                        &format!("{p}.next"),
                        "a foreach's next must be a join node",
                    ));
                }
            }
            _ => {}
        }
    }
    check_guarded_cycles(start, &edges)
}

/// The graph's node ids by position; every node has a distinct id, no list-form
/// step, and valid fields.
fn graph_index(nodes: &[Step]) -> Result<HashMap<&str, usize>, DefinitionError> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        let p = format!("nodes[{i}]");
        let Some(id) = node.common().id else {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                "missing; every node of the graph form needs an id",
            ));
        };
        if index.insert(id.as_str(), i).is_some() {
            return Err(DefinitionError::at(
                &format!("{p}.id"),
                format!("{:?} is used twice", id.as_str()),
            ));
        }
        if matches!(node, Step::StartLoop(_) | Step::Break(_)) {
            return Err(DefinitionError::at(
                &format!("{p}.type"),
                "startLoop and break belong to the list form; in a graph, loop with a decision branch back to an earlier node (with maxIterations)",
            ));
        }
        check_step_fields(node, &p)?;
    }
    Ok(index)
}

/// Graph edges per node: (to, guarded, path).
type Edges = Vec<Vec<(usize, bool, String)>>;

/// Every cycle must pass a guarded edge.
fn check_guarded_cycles(start: usize, edges: &Edges) -> Result<(), DefinitionError> {
    // Find back edges by depth-first search.
    let mut state = vec![0u8; edges.len()]; // 0 new, 1 on stack, 2 done
    let mut stack = vec![(start, 0usize)];
    state[start] = 1;
    while let Some(&mut (node, ref mut next_edge)) = stack.last_mut() {
        if let Some((to, guarded, path)) = edges[node].get(*next_edge) {
            *next_edge += 1;
            match state[*to] {
                0 => {
                    state[*to] = 1;
                    stack.push((*to, 0));
                }
                1 if !guarded => {
                    return Err(DefinitionError::at(
                        path,
                        "this edge closes a loop; loop through a decision branch with maxIterations",
                    ));
                }
                _ => {}
            }
        } else {
            state[node] = 2;
            stack.pop();
        }
    }
    Ok(())
}
