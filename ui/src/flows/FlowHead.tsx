// The selected flow's header: its name (or the run's title), the working
// folder of a new run, and run, stop, resume and export.
import type { FlowRunView, FlowSummary } from "../generated";
import type { FlowActions } from "./useFlowActions";
import { ResumePicker } from "./ResumePicker";

/** The header of the Flows page's main pane. */
export function FlowHead({
  flowName,
  selected,
  run,
  ready,
  mermaid,
  folder,
  setFolder,
  actions,
}: {
  flowName: string;
  selected?: FlowSummary;
  run: FlowRunView | null;
  ready: boolean;
  mermaid: string;
  folder: string;
  setFolder: (folder: string) => void;
  actions: FlowActions;
}) {
  const { busy, start, stop, resume, resumeAt, exportMermaid, exportBundle, exportSeed003 } = actions;
  const status = run ? String(run.status) : null;
  // Stored as running but cut off: it can be resumed at once, or stopped.
  const interrupted = status === "running" && !!run?.interrupted;
  // Run by another Maskflow process: this window can neither stop nor resume it.
  const elsewhere = status === "running" && run?.runningElsewherePid != null;
  return (
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
        <button type="button" class="button primary" disabled={!ready || busy || !!selected?.disabled} onClick={start}>Run</button>
        {run && (status === "running" || status === "waiting") && !elsewhere && (
          <button type="button" class="button" disabled={!ready || busy} onClick={stop}>Stop</button>
        )}
        {run && (status === "stopped" || status === "failed" || interrupted) && (
          <button type="button" class="button" disabled={!ready || busy} onClick={resume}>Resume</button>
        )}
        {run && (status === "stopped" || status === "failed" || interrupted) && run.resumeSteps.length > 0 && (
          <ResumePicker key={run.conversationId} run={run} busy={!ready || busy} onResume={resumeAt} />
        )}
        <a class="button" href={`#/flow-editor/${encodeURIComponent(flowName)}`}>Edit</a>
        <button type="button" class="button" onClick={exportMermaid} disabled={!mermaid}>Export Mermaid</button>
        <button type="button" class="button" onClick={exportBundle}>Export bundle</button>
        <button type="button" class="button" onClick={exportSeed003} title="Seed 003's own shape: workflow.steps and agents">
          Export seed 003
        </button>
      </div>
    </header>
  );
}
