import { describe, expect, test } from "vitest";
import type { WaitingItem } from "../generated";
import { fromEvent, fromOwnCall, fromWaiting, initialState, itemHref, type Incoming, type NoticeState } from "./decide";

const away = { hash: "#/workflows", focused: true };

function gate(id: string, since = "2026-01-01T00:00:00Z", flowName = "review"): WaitingItem {
  return { id, kind: "gate", title: `Flow: ${flowName}`, flowName, runId: id, since };
}

function prompt(id: string, runId?: string): WaitingItem {
  return { id, kind: "manual_prompt", title: "agent:writer", flowName: runId ? "review" : undefined, runId, since: "2026-01-01T00:00:01Z" };
}

/** Primes the state with an empty first list, as the page's first read does. */
function primed(): NoticeState {
  return fromWaiting(initialState(), [], away).state;
}

const status = (id: string, s: string, extra: Record<string, unknown> = {}): Incoming => ({
  type: "flow_status",
  conversation_id: id,
  flow_name: "review",
  status: s,
  ...extra,
});

describe("waiting items", () => {
  test("what waited before the page opened is counted, not announced", () => {
    const { notes } = fromWaiting(initialState(), [gate("flow_1")], away);
    expect(notes).toEqual([]);
  });

  test("a gate reached after the page opened is news, even in a first list that came late", () => {
    const opened = Date.parse("2026-01-01T00:00:00Z");
    const late = fromWaiting(initialState(opened), [gate("flow_1", "2026-01-01T00:00:05Z"), gate("flow_0", "2025-12-31T23:59:00Z")], away);
    expect(late.notes.map((n) => n.key)).toEqual(["gate:flow_1:2026-01-01T00:00:05Z"]);
    expect(fromWaiting(late.state, [gate("flow_1", "2026-01-01T00:00:05Z")], away).notes).toEqual([]);
  });

  test("a new gate is told once, with a link to its run", () => {
    let state = primed();
    const first = fromWaiting(state, [gate("flow_1")], away);
    expect(first.notes).toHaveLength(1);
    expect(first.notes[0]?.title).toBe("Flow: review waits for your decision");
    expect(first.notes[0]?.href).toBe("#/flows/review/flow_1");
    state = first.state;
    // The same list read again (another event) tells nothing new.
    expect(fromWaiting(state, [gate("flow_1")], away).notes).toEqual([]);
  });

  test("the same run's next gate is news again", () => {
    const state = fromWaiting(primed(), [gate("flow_1")], away).state;
    const next = fromWaiting(state, [gate("flow_1", "2026-01-01T00:05:00Z")], away);
    expect(next.notes.map((n) => n.href)).toEqual(["#/flows/review/flow_1"]);
  });

  test("escalations and manual prompts are told, each in its own words", () => {
    const attention: WaitingItem = { ...gate("flow_2"), kind: "attention" };
    const { notes } = fromWaiting(primed(), [attention, prompt("mp_1", "flow_3"), prompt("mp_2")], away);
    expect(notes.map((n) => n.title)).toEqual(["Flow: review needs your attention", "The writer needs an answer", "The writer needs an answer"]);
    expect(notes[1]?.href).toBe("#/flows/review/flow_3");
  });

  test("a build at its gate opens its workflow in the builder", () => {
    const build: WaitingItem = { id: "wv_1", kind: "build_gate", title: "Sales report", workflowId: "wf_1", since: "2026-01-01T00:00:02Z" };
    const { notes } = fromWaiting(primed(), [build], away);
    expect(notes).toEqual([
      expect.objectContaining({ title: "The build of Sales report waits for your decision", href: "#/builder/wf_1" }),
    ]);
  });

  test("an item the user is looking at in a focused window is not announced", () => {
    const looking = { hash: "#/flows/review/flow_1", focused: true };
    expect(fromWaiting(primed(), [gate("flow_1")], looking).notes).toEqual([]);
    // In the background, the same page is no help: tell.
    expect(fromWaiting(primed(), [gate("flow_1")], { ...looking, focused: false }).notes).toHaveLength(1);
  });

  test("a prompt of no flow opens its workflow, else the flows", () => {
    expect(itemHref({ workflowId: "wf_1" })).toBe("#/builder/wf_1");
    expect(itemHref({})).toBe("#/flows");
    expect(itemHref({ flowName: "a b", runId: "flow_1" })).toBe("#/flows/a%20b/flow_1");
  });
});

describe("run ends", () => {
  test("a failed run is told once though two events say it", () => {
    let state = primed();
    const first = fromEvent(state, status("flow_1", "failed", { error: "step 2 broke" }), away);
    expect(first.notes).toEqual([
      expect.objectContaining({ title: "Flow review failed", body: "step 2 broke", href: "#/flows/review/flow_1" }),
    ]);
    state = first.state;
    expect(fromEvent(state, status("flow_1", "failed"), away).notes).toEqual([]);
    // Resumed and failed again: that is a new failure.
    state = fromEvent(state, status("flow_1", "running"), away).state;
    expect(fromEvent(state, status("flow_1", "failed"), away).notes).toHaveLength(1);
  });

  test("a completed or stopped run started by hand is not news", () => {
    const state = primed();
    expect(fromEvent(state, status("flow_1", "completed"), away).notes).toEqual([]);
    expect(fromEvent(state, status("flow_1", "stopped"), away).notes).toEqual([]);
    expect(fromEvent(state, { type: "run_changed", workflow_id: "wf_1", run_id: "run_1", status: "succeeded" }, away).notes).toEqual([]);
  });

  test("a scheduled run that finishes is told, with what started it", () => {
    const e = { type: "run_changed", workflow_id: "wf_1", run_id: "run_1", status: "succeeded", trigger: "schedule" };
    const { notes } = fromEvent(primed(), e, away);
    expect(notes).toEqual([expect.objectContaining({ title: "A workflow run finished", href: "#/workflows/wf_1", body: "Started by its schedule." })]);
    expect(fromEvent(primed(), { ...e, trigger: "manual" }, away).notes).toEqual([]);
  });

  test("a run whose output jumped from the approved run's is told as needing a look", () => {
    const e = { type: "run_changed", workflow_id: "wf_1", run_id: "run_1", status: "needs_look" };
    expect(fromEvent(primed(), e, away).notes).toEqual([expect.objectContaining({ title: "A workflow run needs a look", href: "#/workflows/wf_1" })]);
  });

  test("a schedule's refused firing is told once per reason, with its stale outputs; a success is not", () => {
    const refused = { type: "schedule_ran", schedule_id: "sch_1", name: "monthly", status: "refused", error: "feb.csv: not run: the column Amount is gone", stale: true };
    const first = fromEvent(primed(), refused, away);
    expect(first.notes).toEqual([
      expect.objectContaining({
        title: "Schedule monthly was refused: its file differs from the approved one",
        body: "feb.csv: not run: the column Amount is gone. The outputs it placed last are stale.",
        href: "#/settings",
      }),
    ]);
    // The back-off's retry, refused for the same reason: no news.
    expect(fromEvent(first.state, refused, away).notes).toEqual([]);
    expect(fromEvent(first.state, { ...refused, error: "mar.csv: not run: the column Region is gone" }, away).notes).toHaveLength(1);
    expect(fromEvent(primed(), { ...refused, status: "succeeded", error: undefined, stale: false }, away).notes).toEqual([]);
    // Someone looking at Settings sees it there.
    expect(fromEvent(primed(), refused, { hash: "#/settings", focused: true }).notes).toEqual([]);
  });

  test("a workflow run that fails is told", () => {
    const e = { type: "run_changed", workflow_id: "wf_1", run_id: "run_1", status: "timed_out" };
    expect(fromEvent(primed(), e, away).notes.map((n) => n.title)).toEqual(["A workflow run failed"]);
    expect(fromEvent(primed(), { ...e, status: "running" }, away).notes).toEqual([]);
  });

  test("other events tell nothing", () => {
    expect(fromEvent(primed(), { type: "message_delta", workflow_id: "wf_1", role: "builder", delta: "x" }, away).notes).toEqual([]);
  });
});

describe("the user's own actions", () => {
  test("a run the user stopped here is not told back when it ends", () => {
    let state = fromOwnCall(primed(), { name: "flow_run_stop", args: { id: "flow_1" } }, []);
    const ended = fromEvent(state, status("flow_1", "failed"), away);
    expect(ended.notes).toEqual([]);
    state = ended.state;
    // Only that end: a later failure of the resumed run is news.
    state = fromEvent(state, status("flow_1", "running"), away).state;
    expect(fromEvent(state, status("flow_1", "failed"), away).notes).toHaveLength(1);
  });

  test("dismissing the prompt a run waits on is the user's doing; its failure is not told", () => {
    const items = [prompt("mp_1", "flow_3")];
    const state = fromOwnCall(primed(), { name: "dismiss_manual", args: { id: "mp_1" } }, items);
    expect(fromEvent(state, status("flow_3", "failed", { error: "cancelled" }), away).notes).toEqual([]);
  });

  test("choosing stop at a gate is the user's doing; another option is not", () => {
    const stop = fromOwnCall(primed(), { name: "flow_run_answer", args: { id: "flow_1", answer: { option: "stop" } } }, []);
    expect(fromEvent(stop, status("flow_1", "failed"), away).notes).toEqual([]);
    const approve = fromOwnCall(primed(), { name: "flow_run_answer", args: { id: "flow_1", answer: { option: "Approve" } } }, []);
    expect(fromEvent(approve, status("flow_1", "failed"), away).notes).toHaveLength(1);
  });

  test("calls that end nothing change nothing", () => {
    const state = primed();
    expect(fromOwnCall(state, { name: "list_workflows", args: {} }, [])).toBe(state);
  });
});
