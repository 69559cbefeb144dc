// The Flows page (issue 8, seed 004's Flows mode): the flows on disk, a flow's
// live diagram, its runs ("Flow: <name>", renamed, archived, deleted), the
// selected run's transcript as bubbles with streaming text, stop and resume,
// gates and steps that need attention, and Mermaid / bundle import and export.
import { useEffect, useMemo, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { FlowRunSummary, FlowRunView, FlowSummary, TurnView } from "../generated";
import { toApiError } from "../transport";
import { Diagram } from "../flows/Diagram";
import { ManualPrompts } from "../components/BuildPanels";
import { SafeDeleteDialog } from "../components/SafeDelete";
import { nodeIds, nodeStates, styled, type NodeState } from "../flows/state";
import { go } from "../lib/router";
import "../flows/flows.css";

type Pending =
  | { kind: "gate"; prompt: string; context?: Record<string, unknown> | { path: string; value: unknown }[]; options: { label: string; requiresInput?: boolean }[] }
  | { kind: "attention" | "join"; error?: string; options: string[] }
  | { kind: string; [k: string]: unknown };

const STATE_LABEL: Record<NodeState, string> = {
  pending: "Pending",
  running: "Running",
  done: "Done",
  failed: "Failed",
  waiting: "Waiting for you",
};

const RUN_TONE: Record<string, string> = {
  running: "busy",
  waiting: "attention",
  needs_attention: "attention",
  stopped: "muted",
  completed: "good",
  failed: "bad",
};

function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function Flows({ flowName, runId }: { flowName?: string; runId?: string }) {
  const transport = useTransport();
  const api = transport;
  const [deleting, setDeleting] = useState<FlowRunSummary | null>(null);
  const [flows, setFlows] = useState<FlowSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [mermaid, setMermaid] = useState<string>("");
  const [isGraph, setIsGraph] = useState(false);
  const [runs, setRuns] = useState<FlowRunSummary[]>([]);
  const [run, setRun] = useState<FlowRunView | null>(null);
  const [stream, setStream] = useState("");
  const [folder, setFolder] = useState("");
  const [busy, setBusy] = useState(false);
  const [showArchived, setShowArchived] = useState(false);

  const fail = (e: unknown) => setError(toApiError(e).message);

  const refreshFlows = () => api?.listFlows().then((l) => setFlows(l.flows)).catch(fail);
  useEffect(() => {
    void refreshFlows();
  }, [api]);

  // The selected flow: its diagram and runs.
  useEffect(() => {
    if (!api || !flowName) return;
    setMermaid("");
    setRun(null);
    api.flowMermaid(flowName).then(setMermaid).catch(fail);
    api
      .flowDefinition(flowName)
      .then((d) => {
        setIsGraph(Array.isArray(d.nodes));
      })
      .catch(fail);
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
  }, [api, currentId]);

  // Live: turns, status changes and streaming text of the selected run.
  useEffect(() => {
    return transport.onEvent((e) => {
      if (e.type === "flow_turn" && e.conversation_id === currentId) {
        setStream("");
        setRun((r) => (r ? { ...r, turns: [...r.turns, e.turn] } : r));
        refreshRun(e.conversation_id);
      } else if (e.type === "flow_status" && e.flow_name === flowName) {
        if (e.conversation_id === currentId) refreshRun(e.conversation_id);
        refreshRuns();
      } else if (e.type === "flow_delta" && e.conversation_id === currentId) {
        setStream((s) => s + e.delta);
      }
    });
  }, [transport, currentId, flowName, api]);

  const known = useMemo(() => new Set(nodeIds(mermaid)), [mermaid]);
  // Graph form: the export lists node configs in node order, so path[0] is an index into them.
  const graphIds = useMemo(() => (isGraph ? nodeIds(mermaid) : null), [isGraph, mermaid]);
  const states = useMemo(() => nodeStates(run, graphIds, known), [run, graphIds, known]);
  const source = useMemo(() => (mermaid ? styled(mermaid, states) : ""), [mermaid, states]);

  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (e) {
      fail(e);
    } finally {
      setBusy(false);
    }
  };

  const start = () =>
    act(async () => {
      if (!api || !flowName) return;
      const s = await api.runFlow(flowName, { working_folder: folder.trim() || null, conversationId: null, resumeStepPath: null });
      refreshRuns();
      go(`#/flows/${encodeURIComponent(flowName)}/${encodeURIComponent(s.conversationId)}`);
    });
  const resume = () =>
    act(async () => {
      if (!api || !flowName || !run) return;
      await api.runFlow(flowName, { working_folder: null, conversationId: run.conversationId, resumeStepPath: null });
      refreshRun(run.conversationId);
    });
  const stop = () =>
    act(async () => {
      if (api && run) setRun(await api.stopFlowRun(run.conversationId));
      refreshRuns();
    });
  const answer = (option: string, input?: string) =>
    act(async () => {
      if (!api || !run) return;
      await api.answerFlowRun(run.conversationId, { option, input: input ?? null });
      refreshRun(run.conversationId);
    });

  const onImport = (file: File) =>
    act(async () => {
      if (!api) return;
      const text = await file.text();
      const isBundle = text.trimStart().startsWith("{");
      const stem = file.name.replace(/\.[^.]+$/, "").replace(/[^A-Za-z0-9_-]/g, "_");
      const base = isBundle ? { bundle: JSON.parse(text) } : { mermaid: text, name: stem };
      let imported: FlowSummary;
      try {
        imported = await api.importFlow(base);
      } catch (e) {
        const err = toApiError(e);
        if (err.code !== "conflict" || !window.confirm(`${err.message}\n\nReplace it?`)) throw e;
        imported = await api.importFlow({ ...base, overwrite: true });
      }
      await refreshFlows();
      go(`#/flows/${encodeURIComponent(imported.name)}`);
    });

  const exportMermaid = () => flowName && download(`${flowName}.mmd`, mermaid, "text/plain");
  const exportBundle = () =>
    act(async () => {
      if (api && flowName) download(`${flowName}.json`, JSON.stringify(await api.exportFlow(flowName), null, 2), "application/json");
    });

  const rename = (r: FlowRunSummary) =>
    act(async () => {
      const title = window.prompt("Rename this run", r.title);
      if (api && title && title.trim()) await api.patchFlowRun(r.conversationId, { title: title.trim(), archived: null });
      refreshRuns();
    });
  const archive = (r: FlowRunSummary) =>
    act(async () => {
      if (api) await api.patchFlowRun(r.conversationId, { title: null, archived: !r.archived });
      refreshRuns();
    });
  // Two steps: the dialog shows what would be deleted, then confirms.
  const remove = (r: FlowRunSummary) => setDeleting(r);
  const removed = (r: FlowRunSummary) => {
    setDeleting(null);
    if (r.conversationId === currentId && flowName) go(`#/flows/${encodeURIComponent(flowName)}`);
    refreshRuns();
  };

  const status = run ? String(run.status) : null;
  const pending = (run?.pending ?? null) as Pending | null;
  const selected = flows?.find((f) => f.name === flowName);

  return (
    <div class="flows">
      {deleting && api && (
        <SafeDeleteDialog
          title={`Delete “${deleting.title}”?`}
          run={(confirm) => api.deleteFlowRun(deleting.conversationId, confirm)}
          onCancel={() => setDeleting(null)}
          onDone={() => removed(deleting)}
        />
      )}
      <aside class="flows-side">
        <div class="pane-head">
          <h2>Flows</h2>
          <label class="button small" title="Import a Mermaid diagram (.mmd) or a bundle (.json)">
            Import…
            <input
              type="file"
              accept=".mmd,.mermaid,.json,text/plain,application/json"
              class="sr-only"
              data-testid="flow-import"
              onChange={(e) => {
                const f = (e.currentTarget as HTMLInputElement).files?.[0];
                if (f) void onImport(f);
                (e.currentTarget as HTMLInputElement).value = "";
              }}
            />
          </label>
        </div>
        {flows === null ? (
          <p class="muted">Loading…</p>
        ) : flows.length === 0 ? (
          <p class="muted small">No flows yet. Put a flow file in the data folder's <code>flows/</code>, or import one.</p>
        ) : (
          <ul class="flow-list">
            {flows.map((f) => (
              <li key={f.name} class={f.disabled ? "disabled" : ""}>
                <a href={`#/flows/${encodeURIComponent(f.name)}`} class={f.name === flowName ? "active" : ""} aria-disabled={f.disabled}>
                  <strong>{f.name}</strong>
                  {f.description && <span class="small muted">{f.description}</span>}
                  {f.error && <span class="small flow-error">{f.error}</span>}
                </a>
              </li>
            ))}
          </ul>
        )}
        {flowName && (
          <>
            <div class="pane-head runs-head">
              <h3>Runs</h3>
              <label class="small muted">
                <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived((e.currentTarget as HTMLInputElement).checked)} /> archived
              </label>
            </div>
            <ul class="run-list" aria-label="Runs">
              {runs
                .filter((r) => showArchived || !r.archived)
                .map((r) => (
                  <li key={r.conversationId} class={r.conversationId === currentId ? "active" : ""}>
                    <a href={`#/flows/${encodeURIComponent(flowName)}/${encodeURIComponent(r.conversationId)}`}>
                      <span class="run-title">{r.title}</span>
                      <span class={`badge tone-${RUN_TONE[String(r.status)] ?? "neutral"}`}>{String(r.status).replace("_", " ")}</span>
                    </a>
                    <span class="run-actions">
                      <button type="button" class="icon-button" title="Rename" aria-label={`Rename ${r.title}`} onClick={() => rename(r)}>✎</button>
                      <button type="button" class="icon-button" title={r.archived ? "Unarchive" : "Archive"} aria-label={`Archive ${r.title}`} onClick={() => archive(r)}>⤓</button>
                      <button type="button" class="icon-button" title="Delete" aria-label={`Delete ${r.title}`} onClick={() => remove(r)}>×</button>
                    </span>
                  </li>
                ))}
              {runs.length === 0 && <li class="muted small">No runs yet.</li>}
            </ul>
          </>
        )}
      </aside>

      <section class="flows-main">
        {error && (
          <div class="notice notice-error" role="alert">
            <div>
              <strong>That did not work</strong>
              <p>{error}</p>
            </div>
            <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => setError(null)}>×</button>
          </div>
        )}
        {!flowName ? (
          <div class="empty">
            <h2>Flows</h2>
            <p class="muted">Pick a flow on the left to see its diagram and run it, or import a Mermaid diagram.</p>
          </div>
        ) : (
          <>
            <header class="flow-head">
              <div>
                <h2>{run ? run.title : `Flow: ${flowName}`}</h2>
                <p class="muted small">{selected?.description}</p>
              </div>
              <div class="flow-controls">
                <input
                  type="text"
                  placeholder="Working folder (optional)"
                  aria-label="Working folder"
                  value={folder}
                  onInput={(e) => setFolder((e.currentTarget as HTMLInputElement).value)}
                />
                <button type="button" class="button primary" disabled={!api || busy || !!selected?.disabled} onClick={start}>Run</button>
                {run && (status === "running" || status === "waiting") && (
                  <button type="button" class="button" disabled={!api || busy} onClick={stop}>Stop</button>
                )}
                {run && (status === "stopped" || status === "failed") && (
                  <button type="button" class="button" disabled={!api || busy} onClick={resume}>Resume</button>
                )}
                <button type="button" class="button" onClick={exportMermaid} disabled={!mermaid}>Export Mermaid</button>
                <button type="button" class="button" onClick={exportBundle}>Export bundle</button>
              </div>
            </header>
            {selected?.disabled && <p class="notice notice-warning">This flow is disabled: {selected.error}</p>}
            <div class="flow-body">
              <div class="flow-card flow-diagram-pane">
                <div class="legend small">
                  {(Object.keys(STATE_LABEL) as NodeState[]).map((s) => (
                    <span key={s} class={`legend-item state-${s}`}>{STATE_LABEL[s]}</span>
                  ))}
                  {status && <span class={`badge tone-${RUN_TONE[status] ?? "neutral"}`} data-testid="run-status">{status.replace("_", " ")}</span>}
                </div>
                {source ? <Diagram source={source} /> : <p class="muted">Loading the diagram…</p>}
              </div>
              <div class="flow-card flow-transcript" aria-label="Transcript">
                {/* An agent on the manual back end: its prompt to copy, and a box for the answer. */}
                <ManualPrompts />
                {!run ? (
                  <p class="muted">Run the flow to see its transcript here.</p>
                ) : (
                  <>
                    {run.turns.map((t, i) => <Bubble key={i} turn={t} />)}
                    {stream && (
                      <div class="bubble bubble-assistant streaming" data-testid="streaming">
                        <p>{stream}</p>
                      </div>
                    )}
                    {status === "running" && !stream && <p class="muted small">Working…</p>}
                    {run.error && status === "failed" && <p class="notice notice-error">{run.error}</p>}
                    {pending && <PendingPanel pending={pending} busy={busy} onAnswer={answer} />}
                  </>
                )}
              </div>
            </div>
          </>
        )}
      </section>
    </div>
  );
}

function Bubble({ turn }: { turn: TurnView }) {
  const c = turn.command;
  return (
    <div class={`bubble bubble-${turn.role}`} data-testid="flow-bubble">
      <div class="bubble-meta small">
        <span class="pill">{c.agentType || turn.role}</span>
        {c.identifier && <span class="muted">{c.identifier}</span>}
        <strong>{c.label}</strong>
        <span class="muted">
          step {c.stepIndex + 1} / {c.totalSteps}
          {c.loopDepth > 0 ? ` · loop depth ${c.loopDepth}` : ""}
        </span>
      </div>
      <p class="bubble-text">{turn.content}</p>
    </div>
  );
}

function PendingPanel({ pending, busy, onAnswer }: { pending: Pending; busy: boolean; onAnswer: (o: string, input?: string) => void }) {
  const [input, setInput] = useState("");
  if (pending.kind === "gate") {
    const p = pending as Extract<Pending, { kind: "gate" }>;
    const ctx = Array.isArray(p.context) ? p.context.map((c) => [c.path, c.value] as const) : Object.entries(p.context ?? {});
    const needsInput = p.options.some((o) => o.requiresInput);
    return (
      <div class="gate" role="group" aria-label="Your decision">
        <h3>{p.prompt}</h3>
        {ctx.length > 0 && (
          <dl class="gate-context">
            {ctx.map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
              </>
            ))}
          </dl>
        )}
        {needsInput && (
          <textarea placeholder="Your note (required for some choices)" aria-label="Your note" value={input} onInput={(e) => setInput((e.currentTarget as HTMLTextAreaElement).value)} />
        )}
        <div class="actions">
          {p.options.map((o) => (
            <button key={o.label} type="button" class="button" disabled={busy || (!!o.requiresInput && !input.trim())} onClick={() => onAnswer(o.label, o.requiresInput ? input : undefined)}>
              {o.label}
            </button>
          ))}
        </div>
      </div>
    );
  }
  if (pending.kind === "attention" || pending.kind === "join") {
    const p = pending as { error?: string; options?: string[] };
    return (
      <div class="gate attention" role="group" aria-label="A step needs attention">
        <h3>A step needs your attention</h3>
        {p.error && <p class="flow-error">{p.error}</p>}
        <div class="actions">
          {(p.options ?? ["retry", "skip", "stop"]).map((o) => (
            <button key={o} type="button" class="button" disabled={busy} onClick={() => onAnswer(o)}>
              {o.charAt(0).toUpperCase() + o.slice(1)}
            </button>
          ))}
        </div>
      </div>
    );
  }
  return <p class="muted small">Waiting ({pending.kind})…</p>;
}
