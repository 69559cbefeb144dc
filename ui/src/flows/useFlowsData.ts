// What the Flows page shows, kept fresh: the flows on disk, the selected
// flow's diagram and runs, and the selected run with its live streaming text.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { FlowRunSummary, FlowRunView, FlowSummary } from "../generated";
import { toApiError } from "../transport";

/** The Flows page's data for the route's flow and run, and how to refresh it. */
export function useFlowsData(flowName: string | undefined, runId: string | undefined) {
  const transport = useTransport();
  const api = transport;
  const [flows, setFlows] = useState<FlowSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [mermaid, setMermaid] = useState<string>("");
  const [isGraph, setIsGraph] = useState(false);
  const [runs, setRuns] = useState<FlowRunSummary[]>([]);
  const [run, setRun] = useState<FlowRunView | null>(null);
  const [stream, setStream] = useState("");

  const fail = (e: unknown) => setError(toApiError(e).message);

  const refreshFlows = () => api?.listFlows().then((l) => setFlows(l.flows)).catch(fail);
  useEffect(() => {
    void refreshFlows();
    // Once the transport is there; refreshFlows is new on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api]);

  // The selected flow: its diagram and runs.
  useEffect(() => {
    if (!api || !flowName) return;
    setMermaid("");
    setRun(null);
    api.flowMermaid(flowName).then(setMermaid).catch(fail);
    // The diagram's call reports what keeps a flow from loading; the
    // definition alone is refused for a flow whose agent is missing, which
    // the page's "disabled" notice explains already.
    api
      .flowDefinition(flowName)
      .then((d) => setIsGraph(Array.isArray(d.nodes)))
      .catch(() => setIsGraph(false));
    api.flowRuns(flowName).then((r) => setRuns(r.runs)).catch(fail);
  }, [api, flowName]);

  const refreshRuns = () => {
    if (api && flowName) api.flowRuns(flowName).then((r) => setRuns(r.runs)).catch(fail);
  };
  const refreshRun = (id: string) => {
    api?.getFlowRun(id).then(setRun).catch(fail);
  };

  // The selected run: the route's, else the newest.
  const currentId = runId ?? runs.find((r) => !r.archived)?.conversationId;
  useEffect(() => {
    setStream("");
    if (currentId) refreshRun(currentId);
    else setRun(null);
    // refreshRun only closes over api, which is listed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, currentId]);

  // A run another Maskflow process runs sends no events here: look again now and then.
  const elsewhere = run?.runningElsewherePid != null && String(run.status) === "running";
  useEffect(() => {
    if (!elsewhere || !currentId) return;
    const timer = setInterval(() => {
      refreshRun(currentId);
      refreshRuns();
    }, 3000);
    return () => clearInterval(timer);
    // refreshRun and refreshRuns only close over api and flowName, which are listed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [elsewhere, currentId, api, flowName]);

  // Events sent while the stream was down were missed: read the run and the list again.
  useEffect(
    () =>
      transport.onConnected(() => {
        if (currentId) refreshRun(currentId);
        refreshRuns();
      }),
    // refreshRun and refreshRuns only close over api and flowName, which are listed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [transport, currentId, flowName, api],
  );

  // Live, by seed 004's contract: `user_turn` starts a step, `assistant_delta`
  // streams its reply, `tool_event` shows a script running, `turn_final` ends
  // the run. `flow_turn` (a committed turn with its step metadata) and
  // `flow_status` (waiting states and the run list) have no seed equivalent.
  useEffect(() => {
    return transport.onEvent((e) => {
      if (e.type === "user_turn" && e.conversationId === currentId) {
        // The step's prompt shows at once; its committed turn replaces it on refresh.
        setStream("");
        const turn = { role: "user", content: e.content, createdAt: e.createdAt, command: e.command, suggestedTags: [] };
        setRun((r) => (r ? { ...r, turns: [...r.turns, turn] } : r));
      } else if (e.type === "assistant_delta" && e.conversationId === currentId) {
        setStream((s) => s + e.delta);
      } else if (e.type === "tool_event" && e.conversationId === currentId) {
        setStream(e.event.type === "tool-request" ? `Running ${e.event.name}…` : "");
      } else if (e.type === "turn_final" && e.conversationId === currentId) {
        setStream("");
        refreshRun(e.conversationId);
      } else if (e.type === "flow_turn" && e.conversation_id === currentId) {
        setStream("");
        // A committed prompt is on screen already (from its user_turn); a
        // refresh that answered first may hold this turn too: never twice.
        const turn = e.turn;
        const same = (t: typeof turn) =>
          t.role === turn.role && t.createdAt === turn.createdAt && t.content === turn.content;
        if (turn.role !== "user")
          setRun((r) => (r && !r.turns.some(same) ? { ...r, turns: [...r.turns, turn] } : r));
        refreshRun(e.conversation_id);
      } else if (e.type === "flow_status" && e.flow_name === flowName) {
        // Waiting and needs-attention have no turn_final: the open run follows them here.
        if (e.conversation_id === currentId && !isEnd(e.status)) refreshRun(e.conversation_id);
        refreshRuns();
      }
    });
    // refreshRun and refreshRuns only close over api and flowName, which are listed.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [transport, currentId, flowName, api]);

  return { api, flows, error, setError, fail, mermaid, isGraph, runs, run, setRun, stream, currentId, refreshFlows, refreshRuns, refreshRun };
}

/** What useFlowsData returns. */
export type FlowsData = ReturnType<typeof useFlowsData>;

/** The statuses seed 004's `turn_final` announces. */
function isEnd(status: string): boolean {
  return status === "completed" || status === "failed" || status === "stopped";
}
