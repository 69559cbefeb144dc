//! The expression and prompt context of a step, with local values masked.
//!
//! A value is local when it was computed from local data: a `script` step's
//! output (and what is derived from it: a subflow's, a fan-out's), a
//! subflow's input built from one. Such a value reaches a prompt only
//! masked, in a bounded grammar ([`LOCAL_CHARS`]: `John Smith` → `aaaa aaaaa`,
//! `42` → `##`, case folded) — its object keys too, unless the run's own definitions name
//! them (`{{output.rows}}` names `rows`) or Maskflow wrote them (`stdout`,
//! `total`…): a script can put a row in a key as easily as in a value.
//! This holds whatever the script read, so it does not depend on knowing
//! which files that was; the privacy guard's check of the working folder
//! (see the service's `flow_guard`) is the second line behind it.

use super::*;

/// Keys Maskflow itself writes into step outputs (a script's wrapper, a
/// fan-out's summary, a gate's answer, a break's answer): never data.
const ENGINE_KEYS: &[&str] = &[
    "stdout",
    "exitCode",
    "total",
    "succeeded",
    "failed",
    "results",
    "retries",
    "index",
    "error",
    "option",
    "input",
    "answer",
];

/// Every fixed word of the prompts flows send (the layers' headings and
/// wording, the break, retry, answer and fan-in wording, Maskflow's own
/// output keys): never data, so the privacy guard allows it — a file of the
/// working folder that happens to hold `nextAction` or `stdout` must not
/// block every prompt.
pub fn prompt_vocabulary() -> String {
    let brief = prompt::StepBrief {
        instructions: None,
        expected: Vec::new(),
        next_stages: vec!["stage".into()],
        confidence_threshold: Some(0.5),
        steers: true,
    };
    let task = TaskContext {
        flow: String::new(),
        step: String::new(),
        iterations: vec![1],
        item: Some(("item".into(), Value::Null)),
    };
    let system = prompt::system_message(
        Some("persona"),
        prompt::step_instructions(&brief).as_deref(),
        &task,
    );
    let mut text: Vec<String> = prompt::assemble(system, &[], Vec::new(), Some(""))
        .into_iter()
        .map(|m| m.content)
        .collect();
    text.push(prompt::break_question(""));
    text.push(join::fan_in_message("", &Value::Null));
    text.extend(steer::take_answer_wording());
    text.extend(ENGINE_KEYS.iter().map(|k| (*k).to_owned()));
    text.join("\n")
}

/// The words of a run's definitions (its snapshot as JSON): what the
/// person who wrote the flow and its agents named.
pub(super) fn authored_words(definition: &Value) -> BTreeSet<String> {
    definition
        .to_string()
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The most characters of local data one masked context carries, values
/// and masked keys together (a value or key counts at least one). Masked
/// local text is written in a grammar of 36 characters — `a` for any letter
/// (case folded), `#` for any digit, ASCII punctuation and space, `?` for
/// anything else — so whatever a script prints, one context carries at most
/// `LOCAL_CHARS × log2(36)` ≈ 5,200 bits of it (issue 38, finding 9): no
/// letter case, no boolean, no length past the bound.
pub const LOCAL_CHARS: usize = 1_000;

/// What stands for local data past [`LOCAL_CHARS`], and for a boolean.
const HELD_BACK: &str = "…";
const BOOLEAN: &str = "bool";

/// One local text in the bounded grammar, cut to what `budget` has left.
fn fold(text: &str, budget: &mut usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if *budget == 0 {
            out.push_str(HELD_BACK);
            return out;
        }
        *budget -= 1;
        out.push(match maskflow_extractors::mask::mask_char(c) {
            'A' => 'a',
            m if m.is_ascii() => m,
            _ => '?',
        });
    }
    out
}

/// Replaces every value under the local roots with its masked form; object
/// keys are masked too unless they are among `keep` or Maskflow's own. All
/// of it in the bounded grammar of [`LOCAL_CHARS`].
pub(super) fn mask_local(ctx: &mut Value, local: &BTreeSet<String>, keep: &BTreeSet<String>) {
    fn mask_key(k: String, keep: &BTreeSet<String>, budget: &mut usize) -> String {
        if keep.contains(&k) || ENGINE_KEYS.contains(&k.as_str()) {
            k
        } else {
            *budget = budget.saturating_sub(1);
            fold(&k, budget)
        }
    }
    fn mask_value(v: &mut Value, keep: &BTreeSet<String>, budget: &mut usize) {
        match v {
            Value::Array(a) => {
                let mut kept = Vec::new();
                for mut item in std::mem::take(a) {
                    if *budget == 0 {
                        kept.push(Value::String(HELD_BACK.into()));
                        break;
                    }
                    mask_value(&mut item, keep, budget);
                    kept.push(item);
                }
                *a = kept;
            }
            Value::Object(o) => {
                for (k, mut v) in std::mem::take(o) {
                    if *budget == 0 {
                        o.insert(HELD_BACK.into(), Value::String(HELD_BACK.into()));
                        break;
                    }
                    let masked = mask_key(k, keep, budget);
                    mask_value(&mut v, keep, budget);
                    // Two keys of one shape (`Anna`, `Bert` → `aaaa`) stay two.
                    let mut key = masked.clone();
                    let mut n = 1;
                    while o.contains_key(&key) {
                        n += 1;
                        key = format!("{masked} ({n})");
                    }
                    // The count a suffix shows is local data too.
                    *budget = budget.saturating_sub(key.chars().count() - masked.chars().count());
                    o.insert(key, v);
                }
            }
            Value::Null => *budget = budget.saturating_sub(1),
            Value::Bool(_) => {
                *budget = budget.saturating_sub(1);
                *v = Value::String(BOOLEAN.into());
            }
            Value::Number(n) => {
                let text = n.to_string();
                *v = Value::String(fold(&text, budget));
            }
            // An empty text still costs one: the bound holds for any count of values.
            Value::String(s) if s.is_empty() => *budget = budget.saturating_sub(1),
            Value::String(s) => *s = fold(s, budget),
        }
    }
    fn at<'v>(v: &'v mut Value, parts: &[&str]) -> Option<&'v mut Value> {
        match parts.split_first() {
            None => Some(v),
            Some((first, rest)) => at(v.get_mut(*first)?, rest),
        }
    }
    let mut budget = LOCAL_CHARS;
    for root in local {
        let parts: Vec<&str> = root.split('.').collect();
        if let Some(v) = at(ctx, &parts) {
            mask_value(v, keep, &mut budget);
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
        mask_local(&mut ctx, &st.local, &run.authored);
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
    StepMeta::step(StepPlace {
        step_index: node.step_index,
        total_steps: node.total_steps,
        loop_depth: node.loops.len(),
        agent_type: agent,
        identifier,
        label: node.label.clone(),
        step_path: node.path.clone(),
        depth: run.depth,
        item_index: item,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_local_value_is_masked_keys_included_unless_the_flow_names_them() {
        let definition = json!({"steps": [{"type": "llm", "messages": [
            {"role": "user", "content": ["{{output.rows}} rows, columns {{output.columns}}"]}
        ]}]});
        let keep = authored_words(&definition);
        assert!(keep.contains("rows") && keep.contains("columns"));
        let mut ctx = json!({
            "output": {
                "rows": 42,
                "columns": ["name", "city"],
                "John Smith": {"Lagos": 1},
                "Anna": 1,
                "Bert": 2,
                "stdout": "Okonkwo,Lagos"
            },
            "steps": {"other": {"Okonkwo": 3}},
            "gate": {"option": "Go", "input": "typed by a person"}
        });
        mask_local(&mut ctx, &set(&["output", "steps.other"]), &keep);
        assert_eq!(
            ctx,
            json!({
                "output": {
                    "rows": "##",
                    "columns": ["aaaa", "aaaa"],
                    "aaaa aaaaa": {"aaaaa": "#"},
                    "aaaa": "#",
                    "aaaa (2)": "#",
                    "stdout": "aaaaaaa,aaaaa"
                },
                "steps": {"other": {"aaaaaaa": "#"}},
                "gate": {"option": "Go", "input": "typed by a person"}
            })
        );
    }

    /// Issue 38, finding 9: a row written as letter case or as booleans
    /// decodes from nothing — two outputs that differ only there mask alike.
    #[test]
    fn letter_case_and_booleans_carry_nothing() {
        let keep = BTreeSet::new();
        let masked = |v: Value| {
            let mut ctx = json!({ "output": v });
            mask_local(&mut ctx, &set(&["output"]), &keep);
            ctx
        };
        assert_eq!(
            masked(json!({"bits": [true, false, true], "row": "ZeBuLoN"})),
            masked(json!({"bits": [false, false, false], "row": "zEbUlOn"})),
        );
        assert_eq!(
            masked(json!(["Ünïcödé ✓"])),
            json!({"output": ["aaaaaaa ?"]})
        );
    }

    /// However much a script prints, and however it nests it, one masked
    /// context carries at most `LOCAL_CHARS` characters of it.
    #[test]
    fn a_masked_context_carries_at_most_the_bound() {
        fn chars(v: &Value) -> usize {
            match v {
                // Maskflow's constant words are one symbol each.
                Value::String(s) if s == BOOLEAN || s == HELD_BACK => 1,
                Value::String(s) => s.chars().count().max(1),
                Value::Array(a) => a.iter().map(chars).sum(),
                Value::Object(o) => o.iter().map(|(k, v)| k.chars().count() + chars(v)).sum(),
                _ => 1,
            }
        }
        let keep = BTreeSet::new();
        let rows: Vec<Value> = (0..5_000)
            .map(|i| json!({format!("Customer {i}"): [format!("Name {i}"), i, i % 2 == 0, null, ""]}))
            .collect();
        for output in [
            json!(rows),
            json!("x".repeat(50_000)),
            json!({"deep": [[[rows]]]}),
        ] {
            let mut ctx = json!({ "output": output });
            mask_local(&mut ctx, &set(&["output"]), &keep);
            // The held-back markers are Maskflow's; a handful at most.
            let shown = chars(&ctx["output"]);
            assert!(shown <= LOCAL_CHARS + 16, "{shown} characters");
        }
    }
}
