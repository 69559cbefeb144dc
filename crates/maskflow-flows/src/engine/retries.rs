//! Foreach retries that were due when a run stopped or its process died
//! (seed 002's resume flow): shown to the person, who retries, skips or stops.

use super::*;

/// Retries that were due when the run stopped or its process died: the
/// person decides (`retry`, `skip`, `stop`) instead of them running silently.
pub(super) fn due_retries(
    run: &Loaded,
    node: &compile::Node,
    st: &RunState,
    progress: ForeachProgress,
    limit: u32,
) -> Option<Outcome> {
    let due: Vec<String> = progress
        .results
        .iter()
        .filter(|(_, r)| r.retry.as_ref().is_some_and(|x| !x.approved))
        .map(|(i, r)| {
            format!(
                "item {i}: retry {} of {limit} (last error: {})",
                r.retry_count,
                r.error.as_deref().unwrap_or("unknown")
            )
        })
        .collect();
    if due.is_empty() {
        return None;
    }
    let message = format!(
        "foreach {:?} stopped with {} due; retry, skip or stop? {}",
        node.label,
        if due.len() == 1 {
            "a retry".to_owned()
        } else {
            format!("{} retries", due.len())
        },
        due.join("; ")
    );
    Some(attention(run, node, st, progress, "retry pending", message))
}

/// Items whose agents failed them past their retries or asked for a person
/// (see `record_attempt`), once the fan-out's other items are done: the
/// person decides with the agents' reasons (`retry`, `skip`, `stop`).
pub(super) fn steered_wait(
    run: &Loaded,
    node: &compile::Node,
    st: &RunState,
    progress: &ForeachProgress,
) -> Option<Outcome> {
    let waiting: Vec<(&usize, &crate::state::ItemResult)> = progress
        .results
        .iter()
        .filter(|(_, r)| r.retry.as_ref().is_some_and(|x| !x.approved))
        .collect();
    if waiting.is_empty() {
        return None;
    }
    let by_agents = waiting
        .iter()
        .all(|(_, r)| r.retry.as_ref().is_some_and(|x| x.by_agent));
    let asked: Vec<String> = waiting
        .iter()
        .map(|(i, r)| format!("item {i}: {}", r.error.as_deref().unwrap_or("unknown")))
        .collect();
    let message = format!(
        "foreach {:?}: {} of {} items need a person; retry, skip or stop? {}",
        node.label,
        asked.len(),
        progress.total,
        asked.join("; ")
    );
    let reason = if by_agents {
        "an agent asked for a person"
    } else {
        "items failed past their retries or asked for a person"
    };
    Some(attention(run, node, st, progress.clone(), reason, message))
}

/// The run waits at the foreach for a person, saying `message`.
fn attention(
    run: &Loaded,
    node: &compile::Node,
    st: &RunState,
    progress: ForeachProgress,
    reason: &str,
    message: String,
) -> Outcome {
    let mut waiting = st.clone();
    waiting.foreach = Some(progress);
    Outcome::Wait {
        next: waiting,
        event: RunEvent::Escalate,
        pending: Pending::Attention {
            reason: reason.into(),
            step: node.label.clone(),
            step_path: node.path.clone(),
            error: message.clone(),
            options: ATTENTION_OPTIONS.map(str::to_owned).to_vec(),
        },
        turns: vec![TurnRow {
            role: TurnRole::System,
            content: message,
            command: meta(run, node, None),
        }],
    }
}

/// The answer to retries due at the foreach the run waits at: `retry` lets
/// them run, `skip` gives them up (the join carries on without them).
/// False when no retry is due there.
pub(super) fn answer_due_retries(next: &mut RunState, choice: &str) -> bool {
    let cursor = next.cursor;
    let Some(p) = next.foreach.as_mut().filter(|p| Some(p.node) == cursor) else {
        return false;
    };
    let mut due = p
        .results
        .values_mut()
        .filter(|r| r.retry.is_some())
        .peekable();
    if due.peek().is_none() {
        return false;
    }
    match choice {
        "retry" => due.for_each(|r| {
            if let Some(x) = r.retry.as_mut() {
                x.approved = true;
            }
        }),
        "skip" => {
            due.for_each(|r| r.retry = None);
            next.join_skip_failures = true;
        }
        _ => return false,
    }
    true
}
