//! The bookkeeping of a fan-out's item attempts: what each attempt got,
//! which items are still to run, and how an attempt is recorded (a result,
//! a retry, or a retry a person decides on).

use super::*;

/// One attempt at an item: which item, how many retries came before it, the
/// prompt it sent (seed 004's user turn, for an agent item), its reply text
/// and result, and the feedback a retry would be given.
pub(super) struct Attempted {
    pub(super) index: usize,
    pub(super) retry_count: u32,
    pub(super) prompt: Option<TurnRow>,
    /// How the item's agent steered it.
    pub(super) steered: Steered,
    pub(super) text: String,
    pub(super) result: std::result::Result<Value, FlowError>,
    pub(super) feedback: Option<String>,
}

/// An item that is to run: its index, the retries before it, its feedback.
pub(super) type Todo = (usize, u32, Option<String>);

/// What an item's agent said of it (seed 003's status and next action).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Steered {
    /// Nothing that fails it or asks a person.
    No,
    /// FAILED or BLOCKED: retried, then a person decides.
    Failed,
    /// ESCALATE, HOLD or low confidence: a person decides.
    Asks,
}

/// The final result of an item and its transcript turn.
fn item_turn(run: &Loaded, node: &compile::Node, a: Attempted) -> (ItemResult, TurnRow) {
    // The prompt turn is the caller's (see `record_attempt`).
    let command = meta(run, node, Some(a.index));
    let retry_count = a.retry_count;
    let (result, content) = match a.result {
        Ok(output) => (
            ItemResult {
                ok: true,
                output: Some(output),
                error: None,
                retry_count,
                retry: None,
            },
            a.text,
        ),
        Err(FlowError { message: e, .. }) => {
            let after = match retry_count {
                0 => String::new(),
                1 => " (after 1 retry)".to_owned(),
                n => format!(" (after {n} retries)"),
            };
            let content = if a.text.is_empty() || a.text == e {
                format!("Failed: {e}{after}")
            } else {
                format!("{}\nFailed: {e}{after}", a.text)
            };
            (
                ItemResult {
                    ok: false,
                    output: None,
                    error: Some(e),
                    retry_count,
                    retry: None,
                },
                content,
            )
        }
    };
    (
        result,
        TurnRow {
            role: TurnRole::Assistant,
            content,
            command,
        },
    )
}

/// The items still to run (as a stack, first item on top): those without a
/// result, and those whose retry a person allowed (then no longer marked
/// allowed: should the process die again before they finish, the person is
/// asked again). True when some retry was allowed.
pub(super) fn todo_of(progress: &mut ForeachProgress) -> (Vec<Todo>, bool) {
    let mut todo: Vec<Todo> = (0..progress.total)
        .filter(|i| !progress.results.contains_key(i) && !progress.timed_out.contains(i))
        .map(|i| (i, 0, None))
        .collect();
    let mut approved = false;
    for (i, r) in progress.results.iter_mut() {
        if let Some(x) = r.retry.as_mut().filter(|x| x.approved) {
            x.approved = false;
            approved = true;
            todo.push((*i, r.retry_count, x.feedback.clone()));
        }
    }
    todo.sort_by_key(|t| std::cmp::Reverse(t.0));
    (todo, approved)
}

/// Records an attempt in `progress`: a failure within the retry limit is
/// kept as a due retry (so a resume finds it) and returned to run again;
/// anything else is the item's result, with its transcript turn. The
/// attempt's prompt turn comes first either way.
pub(super) fn record_attempt(
    run: &Loaded,
    node: &compile::Node,
    progress: &mut ForeachProgress,
    mut a: Attempted,
    limit: u32,
) -> (Vec<TurnRow>, Option<Todo>) {
    let mut turns: Vec<TurnRow> = a.prompt.take().into_iter().collect();
    // Steered by its agent and past its retries: kept as a retry a person
    // decides on when the fan-out ends (seed 003, through seed 002's contract).
    // So is any item past its retries when its join asks (`onExhausted`,
    // whose default asks; see `JoinStep::exhausted`).
    let exhausted = a.retry_count >= limit
        && a.result
            .as_ref()
            .is_err_and(|e| e.code != crate::error::FlowErrorCode::Store);
    let ask = match a.steered {
        Steered::Asks => true,
        Steered::Failed => a.retry_count >= limit,
        Steered::No => exhausted && asks_when_exhausted(run, node),
    };
    if ask {
        let (index, reply, asks) = (a.index, a.text.clone(), a.steered == Steered::Asks);
        let by_agent = a.steered != Steered::No;
        let feedback = a.feedback.clone();
        let (mut result, mut turn) = item_turn(run, node, a);
        result.retry = Some(ItemRetry {
            feedback,
            approved: false,
            by_agent,
        });
        if asks && !reply.is_empty() {
            // The agent's reply as it came: the wait says what it asks.
            turn.content = reply;
        }
        progress.results.insert(index, result);
        turns.push(turn);
        return (turns, None);
    }
    let retry = a.retry_count < limit
        && a.result
            .as_ref()
            .is_err_and(|e| e.code != crate::error::FlowErrorCode::Store);
    if !retry {
        let index = a.index;
        let (result, turn) = item_turn(run, node, a);
        progress.results.insert(index, result);
        turns.push(turn);
        return (turns, None);
    }
    let error = a.result.err().map(|e| e.message);
    progress.results.insert(
        a.index,
        ItemResult {
            ok: false,
            output: None,
            error,
            retry_count: a.retry_count + 1,
            retry: Some(ItemRetry {
                feedback: a.feedback.clone(),
                approved: false,
                by_agent: false,
            }),
        },
    );
    (turns, Some((a.index, a.retry_count + 1, a.feedback)))
}

/// Whether the join after the fan-out at `node` asks a person about an item
/// past its retries (`onExhausted: ask`, or unset; see `JoinStep::exhausted`).
pub(super) fn asks_when_exhausted(run: &Loaded, node: &compile::Node) -> bool {
    node.next
        .and_then(|n| run.program.nodes.get(n))
        .is_some_and(|j| {
            matches!(&j.op, Op::Join(j)
                if j.exhausted() == crate::definition::JoinExhausted::Ask)
        })
}
