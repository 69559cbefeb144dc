// A build's session folder for offline review: each iteration's prompts,
// answers and scripts, read on demand.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { SessionIteration } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { toApiError } from "../transport";
import { EmptyState, Spinner } from "./ui";

/** The build's session folder: iterations and their files, read on demand. */
export function SessionsView({ workflowId, versionId }: { workflowId: string; versionId: string }) {
  const transport = useTransport();
  const [iterations, setIterations] = useState<SessionIteration[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ iteration: number; path: string; text: string } | null>(null);
  useEffect(() => {
    setIterations(null);
    setOpen(null);
    transport.sessions(workflowId, versionId).then(setIterations, (e) => setError(toApiError(e).message));
  }, [transport, workflowId, versionId]);
  async function show(iteration: number, path: string) {
    try {
      setOpen({ iteration, path, text: await transport.sessionFile(workflowId, versionId, iteration, path) });
    } catch (e) {
      setError(toApiError(e).message);
    }
  }
  if (error) return <p class="warn-text">{error}</p>;
  if (!iterations) return <Spinner label="Loading the session…" />;
  if (!iterations.length) {
    return (
      <EmptyState title="No build session" icon="🗂">
        <p class="muted">The prompts, answers and scripts of each build iteration are kept here for review.</p>
      </EmptyState>
    );
  }
  return (
    <div class="sessions">
      <ul class="session-tree" aria-label="Session files">
        {iterations.map((it) => (
          <li key={it.iteration}>
            <strong>Iteration {it.iteration}</strong>
            <ul>
              {it.files.map((f) => (
                <li key={f.path}>
                  <button
                    type="button"
                    class={`link${open?.iteration === it.iteration && open.path === f.path ? " selected" : ""}`}
                    onClick={() => void show(it.iteration, f.path)}
                  >
                    {f.path}
                  </button>{" "}
                  <span class="muted small">{bytesLabel(Number(f.size))}</span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
      <div class="session-file">
        {open ? (
          <>
            <h4>
              Iteration {open.iteration} · {open.path}
            </h4>
            <pre class="preview" tabIndex={0} data-testid="session-file">
              {open.text}
            </pre>
          </>
        ) : (
          <p class="muted">Choose a file to read it.</p>
        )}
      </div>
    </div>
  );
}
