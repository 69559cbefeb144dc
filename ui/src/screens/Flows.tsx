// The Flows page (issue 8, seed 004's Flows mode): the flows on disk, a flow's
// live diagram, its runs ("Flow: <name>", renamed, archived, deleted), the
// selected run's transcript as bubbles with streaming text, stop and resume,
// gates and steps that need attention, and Mermaid / bundle import and export.
// The data lives in useFlowsData, the actions in useFlowActions.
import { useState } from "preact/hooks";
import { SafeDeleteDialog } from "../components/SafeDelete";
import { FlowDiagramPane } from "../flows/FlowDiagramPane";
import { FlowHead } from "../flows/FlowHead";
import { FlowSide } from "../flows/FlowSide";
import { FlowTranscript } from "../flows/FlowTranscript";
import { useFlowActions } from "../flows/useFlowActions";
import { useFlowsData } from "../flows/useFlowsData";
import "../flows/flows.css";

/** The Flows page for the route's flow and run. */
export function Flows({ flowName, runId }: { flowName?: string; runId?: string }) {
  const data = useFlowsData(flowName, runId);
  const [folder, setFolder] = useState("");
  const actions = useFlowActions(data, flowName, folder);
  const { api, flows, error, setError, mermaid, isGraph, runs, run, stream, currentId } = data;
  const { deleting, setDeleting, removed } = actions;
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
      <FlowSide flows={flows} flowName={flowName} runs={runs} currentId={currentId} actions={actions} />

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
        {actions.imported && (
          <div class="notice notice-info" role="status" data-testid="flow-imported">
            <p>{actions.imported}</p>
            <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => actions.setImported(null)}>×</button>
          </div>
        )}
        {!flowName ? (
          <div class="empty">
            <h2>Flows</h2>
            <p class="muted">Pick a flow on the left to see its diagram and run it, or import one: a Mermaid diagram (.mmd) or a bundle or flow file (.json).</p>
          </div>
        ) : (
          <>
            <FlowHead
              flowName={flowName}
              selected={selected}
              run={run}
              ready={!!api}
              mermaid={mermaid}
              folder={folder}
              setFolder={setFolder}
              actions={actions}
            />
            {selected?.disabled && <p class="notice notice-warning">This flow is disabled: {selected.error}</p>}
            <div class="flow-body">
              <FlowDiagramPane mermaid={mermaid} isGraph={isGraph} run={run} />
              <FlowTranscript run={run} stream={stream} busy={actions.busy} onAnswer={actions.answer} />
            </div>
          </>
        )}
      </section>
    </div>
  );
}
