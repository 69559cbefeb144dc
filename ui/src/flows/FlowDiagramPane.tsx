// The selected flow's diagram, its nodes coloured by the selected run's
// progress, under a legend of the node states and the run's status.
import { useMemo } from "preact/hooks";
import type { FlowRunView } from "../generated";
import { Diagram } from "./Diagram";
import { runBadge, STATE_LABEL } from "./labels";
import { nodeIds, nodeStates, styled, type NodeState } from "./state";

/** The diagram card of the Flows page. */
export function FlowDiagramPane({ mermaid, isGraph, run }: { mermaid: string; isGraph: boolean; run: FlowRunView | null }) {
  const known = useMemo(() => new Set(nodeIds(mermaid)), [mermaid]);
  // Graph form: the export lists node configs in node order, so path[0] is an index into them.
  const graphIds = useMemo(() => (isGraph ? nodeIds(mermaid) : null), [isGraph, mermaid]);
  const states = useMemo(() => nodeStates(run, graphIds, known), [run, graphIds, known]);
  const source = useMemo(() => (mermaid ? styled(mermaid, states) : ""), [mermaid, states]);
  const badge = run ? runBadge(run) : null;
  return (
    <div class="flow-card flow-diagram-pane">
      <div class="legend small">
        {(Object.keys(STATE_LABEL) as NodeState[]).map((s) => (
          <span key={s} class={`legend-item state-${s}`}>{STATE_LABEL[s]}</span>
        ))}
        {badge && <span class={`badge tone-${badge.tone}`} data-testid="run-status">{badge.label}</span>}
      </div>
      {source ? <Diagram source={source} /> : <p class="muted">Loading the diagram…</p>}
    </div>
  );
}
