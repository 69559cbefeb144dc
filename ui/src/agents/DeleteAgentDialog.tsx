// Asks before an agent's file is deleted. While flows name the agent the
// delete is refused (the server says so too): the dialog names them.
import { useEffect, useRef, useState } from "preact/hooks";
import { NoticeBanner } from "../components/ui";
import { useTransport } from "../context";
import type { AgentView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { usedByText } from "./agents";

/** The confirmation of an agent's delete. */
export function DeleteAgentDialog({ agent, onDone, onCancel }: { agent: AgentView; onDone: () => void; onCancel: () => void }) {
  const api = useTransport();
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  const used = agent.usedBy.length > 0;

  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onCancel();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onCancel]);

  async function remove() {
    setBusy(true);
    setNotice(null);
    try {
      await api.deleteAgent(agent.name);
      onDone();
    } catch (e) {
      const err = toApiError(e);
      setNotice(err.code === "conflict" ? { tone: "warning", title: "The agent is in use", detail: err.message } : noticeOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="agent-delete-title" data-testid="agent-delete-dialog">
        <h2 id="agent-delete-title">Delete agent “{agent.name}”?</h2>
        {notice && <NoticeBanner notice={notice} />}
        {used ? (
          <p>
            {usedByText(agent.usedBy)}. Change {agent.usedBy.length === 1 ? "that flow" : "those flows"} to another agent first.
          </p>
        ) : (
          <p>
            This deletes <code>agents/{agent.name}.json</code>: its persona prompt, back end and model. Runs that already started
            keep the settings they started with.
          </p>
        )}
        <div class="form-actions">
          <button ref={cancel} type="button" class="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" class="button danger" disabled={busy || used} onClick={() => void remove()}>
            Delete
          </button>
        </div>
      </div>
    </div>
  );
}
