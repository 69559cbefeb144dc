// The Flows page's left pane: the flows on disk with an import button, and
// the selected flow's runs with rename, archive and delete.
import { useState } from "preact/hooks";
import type { FlowRunSummary, FlowSummary } from "../generated";
import { runBadge } from "./labels";
import type { FlowActions } from "./useFlowActions";

/** What the loader accepts as a flow's name (its file stem). */
const FLOW_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** The flow list and, for a selected flow, its runs. */
export function FlowSide({
  flows,
  flowName,
  runs,
  currentId,
  actions,
}: {
  flows: FlowSummary[] | null;
  flowName?: string;
  runs: FlowRunSummary[];
  currentId?: string;
  actions: FlowActions;
}) {
  // Here, not in RunList: the choice outlives a visit to no flow.
  const [showArchived, setShowArchived] = useState(false);
  return (
    <aside class="flows-side">
      <div class="pane-head">
        <h2>Flows</h2>
        <a class="button small" href="#/flow-editor">New flow</a>
        <label class="button small" title="Import a Mermaid diagram (.mmd) or a bundle (.json)">
          Import…
          <input
            type="file"
            accept=".mmd,.mermaid,.json,text/plain,application/json"
            class="sr-only"
            data-testid="flow-import"
            onChange={(e) => {
              const f = (e.currentTarget as HTMLInputElement).files?.[0];
              if (f) void actions.onImport(f);
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
          {flows.map((f) => {
            const body = (
              <>
                <strong>{f.name}</strong>
                {f.description && <span class="small muted">{f.description}</span>}
                {f.error && <span class="small flow-error">{f.error}</span>}
              </>
            );
            return (
              <li key={f.name} class={f.disabled ? "disabled" : ""} data-testid={`flow-${f.name}`}>
                {/* A file whose name the loader refuses cannot be opened: its error says how to rename it. */}
                {f.disabled && !FLOW_NAME.test(f.name) ? (
                  <span class="flow-refused" aria-disabled="true">{body}</span>
                ) : (
                  <a href={`#/flows/${encodeURIComponent(f.name)}`} class={f.name === flowName ? "active" : ""} aria-disabled={f.disabled}>
                    {body}
                  </a>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {flowName && (
        <RunList
          flowName={flowName}
          runs={runs}
          currentId={currentId}
          actions={actions}
          showArchived={showArchived}
          setShowArchived={setShowArchived}
        />
      )}
    </aside>
  );
}

function RunList({
  flowName,
  runs,
  currentId,
  actions,
  showArchived,
  setShowArchived,
}: {
  flowName: string;
  runs: FlowRunSummary[];
  currentId?: string;
  actions: FlowActions;
  showArchived: boolean;
  setShowArchived: (show: boolean) => void;
}) {
  const { rename, archive, remove } = actions;
  return (
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
                <span class={`badge tone-${runBadge(r).tone}`}>{runBadge(r).label}</span>
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
  );
}
