// What deserves a notification, decided without I/O: from the list of
// waiting items (a new gate of a flow or a build, an escalation, a manual prompt) and from events
// (a run that failed, a scheduled run that finished). Each item and each
// run's end is told once; what the user did themselves in this window
// (stopping a run, dismissing the prompt its step waited on) is never told
// back to them, and neither is an item they are looking at right now.
import type { WaitingItem } from "../generated";

/** A notification to show: `key` says which item, `href` opens it. */
export type Note = { key: string; title: string; body: string; href: string };

/** An event as the transport delivers it: the app's `Event`, or one added
 * later (e.g. a run finished by a schedule, with its `trigger`), read loosely. */
export type Incoming = { type: string } & Record<string, unknown>;

/** What the user is doing: the page they look at, and whether they look. */
export type Viewing = { hash: string; focused: boolean };

/** What the decider remembers between calls. */
export type NoticeState = {
  /** Keys of items and ends already told (or already there at start). */
  told: ReadonlySet<string>;
  /** Runs whose next end the user caused here (stop, a dismissed prompt). */
  own: ReadonlySet<string>;
  /** The last status seen per run, so an end repeated by a second event is told once. */
  last: ReadonlyMap<string, string>;
  /** Whether the first list has been read (items there at start are not news). */
  primed: boolean;
  /** When the page opened (ms since the epoch): an item of the first list
   * that began to wait after it is news, whenever that list arrives. */
  openedAt: number;
};

/** The state before anything was seen, the page opened at `openedAt`. */
export function initialState(openedAt: number = Date.now()): NoticeState {
  return { told: new Set(), own: new Set(), last: new Map(), primed: false, openedAt };
}

/** One episode of waiting: the same gate keeps its key, the run's next gate has a new one. */
export function itemKey(item: WaitingItem): string {
  return `${item.kind}:${item.id}:${item.since}`;
}

/** Where an item opens: its flow run's page, or the workflow whose prompt it is. */
export function itemHref(item: Pick<WaitingItem, "flowName" | "runId" | "workflowId">): string {
  if (item.flowName && item.runId) return `#/flows/${encodeURIComponent(item.flowName)}/${encodeURIComponent(item.runId)}`;
  if (item.workflowId) return `#/builder/${encodeURIComponent(item.workflowId)}`;
  return "#/flows";
}

function itemNote(item: WaitingItem): Note {
  const href = itemHref(item);
  const key = itemKey(item);
  if (item.kind === "gate") return { key, href, title: `${item.title} waits for your decision`, body: "Open it to answer the gate." };
  if (item.kind === "attention")
    return { key, href, title: `${item.title} needs your attention`, body: "A step failed twice or retries are due: retry, skip or stop." };
  if (item.kind === "build_gate")
    return { key, href, title: `The build of ${item.title || "your workflow"} waits for your decision`, body: "Open it to approve or reject." };
  const who = item.title.replace(/^agent:/, "");
  return { key, href, title: `The ${who} needs an answer`, body: "Copy the prompt into your AI tool and paste its reply." };
}

/** Whether the user sees this note's item already. */
function onScreen(note: Note, viewing: Viewing): boolean {
  return viewing.focused && decodeURIComponent(viewing.hash) === decodeURIComponent(note.href);
}

/** A new list of waiting items: a note for each item not told before. The
 * first list only primes the state: what waited before the page opened is
 * on the badge, not news (an item that began to wait since is, even when
 * the first list comes late, on a loaded machine). */
export function fromWaiting(state: NoticeState, items: WaitingItem[], viewing: Viewing): { state: NoticeState; notes: Note[] } {
  const told = new Set(state.told);
  const notes: Note[] = [];
  for (const item of items) {
    const note = itemNote(item);
    if (told.has(note.key)) continue;
    told.add(note.key);
    const news = state.primed || Date.parse(item.since) > state.openedAt;
    if (news && !onScreen(note, viewing)) notes.push(note);
  }
  return { state: { ...state, told, primed: true }, notes };
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);

/** Statuses in which a run has ended badly. */
const FAILED = new Set(["failed", "error", "timed_out", "memory_limit", "cpu_limit", "output_limit", "process_limit", "missing_packages"]);
/** Statuses in which a run is over. */
const ENDED = new Set([...FAILED, "completed", "succeeded", "needs_look", "stopped", "cancelled"]);
/** Triggers that are the user's own doing (a run started by hand is watched, not announced). */
const BY_HAND = new Set(["manual", "user", "app", "ui"]);

/** A run's end as an event tells it: the run, its status, where it opens, what to call it. */
function runEnd(e: Incoming): { run: string; status: string; href: string; what: string; error?: string; trigger?: string } | null {
  const status = str(e.status);
  if (!status || !ENDED.has(status)) return null;
  const trigger = str(e.trigger);
  if (e.type === "flow_status") {
    const run = str(e.conversation_id);
    const flow = str(e.flow_name);
    if (!run || !flow) return null;
    return { run, status, href: itemHref({ flowName: flow, runId: run }), what: `Flow ${flow}`, error: str(e.error), trigger };
  }
  // `run_changed` (a workflow's run), or any later event of a run that finished.
  const run = str(e.run_id) ?? str(e.conversationId);
  if (!run) return null;
  const flow = str(e.flow_name);
  const workflow = str(e.workflow_id);
  const href = flow ? itemHref({ flowName: flow, runId: run }) : workflow ? `#/workflows/${encodeURIComponent(workflow)}` : "#/workflows";
  return { run, status, href, what: flow ? `Flow ${flow}` : "A workflow run", error: str(e.error), trigger };
}

/** How a schedule's firing that did not succeed is told, by its status. */
function scheduleTrouble(status: string): string | null {
  if (status === "refused") return "was refused: its file differs from the approved one";
  if (status === "needs_look") return "ran, but its output needs a look";
  if (status === "succeeded" || status === "started" || status === "skipped") return null;
  return "failed";
}

/** A schedule fired while the user was elsewhere: told when it did not
 * succeed, once per schedule and reason (a back-off's retry refused for
 * the same reason again is no news). */
function fromScheduleRan(state: NoticeState, e: Incoming, viewing: Viewing): { state: NoticeState; notes: Note[] } {
  const id = str(e.schedule_id);
  const status = str(e.status);
  const trouble = status && scheduleTrouble(status);
  if (!id || !status || !trouble) return { state, notes: [] };
  const error = str(e.error);
  const key = `schedule:${id}:${status}:${error ?? ""}`;
  if (state.told.has(key)) return { state, notes: [] };
  const why = error ? (/[.!?]$/.test(error) ? error : `${error}.`) : "Open Settings → Schedules to see why.";
  const stale = e.stale === true ? " The outputs it placed last are stale." : "";
  const note = { key, href: "#/settings", title: `Schedule ${str(e.name) ?? id} ${trouble}`, body: `${why}${stale}` };
  const told = new Set(state.told).add(key);
  return { state: { ...state, told }, notes: onScreen(note, viewing) ? [] : [note] };
}

/** An event: a note when a run failed or needs a look, when a scheduled
 * (not hand-started) run finished, or when a schedule's firing did not succeed. */
export function fromEvent(state: NoticeState, e: Incoming, viewing: Viewing): { state: NoticeState; notes: Note[] } {
  if (e.type === "schedule_ran") return fromScheduleRan(state, e, viewing);
  if (e.type !== "flow_status" && e.type !== "run_changed" && e.type !== "run_finished") return { state, notes: [] };
  const status = str(e.status);
  const id = str(e.conversation_id) ?? str(e.run_id) ?? str(e.conversationId);
  if (!status || !id) return { state, notes: [] };
  const last = new Map(state.last);
  const before = last.get(id);
  last.set(id, status);
  const end = runEnd(e);
  if (!end || before === status) return { state: { ...state, last }, notes: [] };
  // The user ended this run themselves: its end is no news to them.
  if (state.own.has(end.run)) {
    const own = new Set(state.own);
    own.delete(end.run);
    return { state: { ...state, last, own }, notes: [] };
  }
  const scheduled = end.trigger !== undefined && !BY_HAND.has(end.trigger);
  let note: Note | null = null;
  const key = `end:${end.run}:${end.status}:${state.told.size}`;
  if (FAILED.has(end.status)) {
    note = { key, href: end.href, title: `${end.what} failed`, body: end.error ?? "Open it to see why." };
  } else if (end.status === "needs_look") {
    note = { key, href: end.href, title: `${end.what} needs a look`, body: "Its script succeeded, but its output differs from the approved run's: open it to see how." };
  } else if (scheduled && end.status !== "stopped" && end.status !== "cancelled") {
    note = { key, href: end.href, title: `${end.what} finished`, body: `Started by its ${end.trigger}.` };
  }
  if (!note) return { state: { ...state, last }, notes: [] };
  const told = new Set(state.told).add(note.key);
  return { state: { ...state, last, told }, notes: onScreen(note, viewing) ? [] : [note] };
}

/** A call this window made, by its name in core's list and its arguments. */
export type OwnCall = { name: string; args: Record<string, unknown> };

/** Remembers a run the user is ending here, so its end is not told back:
 * stopping a run, choosing "stop" at its gate or escalation, or dismissing
 * the manual prompt its step waits on (its call fails as cancelled). */
export function fromOwnCall(state: NoticeState, call: OwnCall, items: WaitingItem[]): NoticeState {
  let run: string | undefined;
  if (call.name === "flow_run_stop") run = str(call.args.id);
  else if (call.name === "flow_run_answer") {
    const answer = call.args.answer as { option?: unknown } | undefined;
    if (typeof answer?.option === "string" && answer.option.toLowerCase() === "stop") run = str(call.args.id);
  } else if (call.name === "dismiss_manual") {
    const prompt = items.find((i) => i.kind === "manual_prompt" && i.id === call.args.id);
    run = prompt?.runId ?? prompt?.workflowId;
  }
  if (!run) return state;
  return { ...state, own: new Set(state.own).add(run) };
}
