//! A join's timeout (seed 003's open question 7): the fan-out before a join
//! with `timeoutSeconds` stops starting items when the time is up, counted
//! on the engine's clock from its first item; items not done by then
//! (waiting, due for a retry, or running, which are stopped) are recorded as
//! timed out, and the join goes on with the finished ones or fails, as its
//! `onTimeout` says.

use super::attempts::Todo;
use super::*;

/// When the fan-out at `node` must be done, if the join after it sets a
/// timeout; the fan-out's start is set to `now` on its first call.
pub(super) fn join_deadline(
    run: &Loaded,
    node: &compile::Node,
    progress: &mut ForeachProgress,
    now: u64,
) -> Option<u64> {
    let join = node.next.and_then(|n| run.program.nodes.get(n))?;
    let Op::Join(j) = &join.op else {
        return None;
    };
    let seconds = j.timeout_seconds?;
    let started = *progress.started_ms.get_or_insert(now);
    Some(started.saturating_add(u64::from(seconds) * 1000))
}

/// Records every item not done as timed out: those still to run (`todo`)
/// and those running (`running`). A timed-out item has no result (it is
/// neither a success nor a failure) and no retry left due.
pub(super) fn time_out(
    progress: &mut ForeachProgress,
    todo: &mut Vec<Todo>,
    running: &BTreeSet<usize>,
) {
    let mut out: BTreeSet<usize> = progress.timed_out.iter().copied().collect();
    out.extend(todo.drain(..).map(|t| t.0));
    out.extend(running.iter().copied());
    for i in &out {
        progress.results.remove(i);
    }
    progress.timed_out = out.into_iter().collect();
}

/// The system turn of a fan-out cut off by its join's timeout.
pub(super) fn timed_out_turn(
    run: &Loaded,
    node: &compile::Node,
    progress: &ForeachProgress,
) -> TurnRow {
    TurnRow {
        role: TurnRole::System,
        content: format!(
            "The join's timeout ran out: {} of {} items were not done in time (items {})",
            progress.timed_out.len(),
            progress.total,
            progress
                .timed_out
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        command: meta(run, node, None),
    }
}

/// The failure of a join with `onTimeout: fail` whose fan-out timed out.
pub(super) fn timeout_failure(
    node: &compile::Node,
    j: &crate::definition::JoinStep,
    progress: &ForeachProgress,
) -> Option<StepFailure> {
    let late = &progress.timed_out;
    if late.is_empty() || j.on_timeout != Some(crate::definition::JoinTimeout::Fail) {
        return None;
    }
    Some(failure(format!(
        "join {:?}: {} of {} items were not done within its {}s timeout (items {})",
        node.label,
        late.len(),
        progress.total,
        j.timeout_seconds.unwrap_or_default(),
        late.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}
