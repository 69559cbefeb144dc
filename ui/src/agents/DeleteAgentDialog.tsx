// Asks before an agent's file is deleted, in two steps like a workflow's:
// the first call answers a confirmation token, "Delete" sends it back. While
// flows name the agent the delete is refused (the server says so too): the
// dialog names them.
import { useEffect, useRef, useState } from "preact/hooks";
import { NoticeBanner } from "../components/ui";
import { useTransport } from "../context";
import type { AgentView, DeleteReply } from "../generated";
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
  const [preview, setPreview] = useState<DeleteReply | null>(null);

  const refused = (e: unknown) => {
    const err = toApiError(e);
    setNotice(err.code === "conflict" ? { tone: "warning", title: "The agent is in use", detail: err.message } : noticeOf(err));
  };
  // The first step once per dialog: nothing is deleted, a token comes back.
  useEffect(() => {
    if (used) return;
    api.deleteAgent(agent.name).then((reply) => (reply.deleted ? onDone() : setPreview(reply)), refused);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onCancel();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onCancel]);

  async function remove() {
    if (!preview?.confirm_token) return;
    setBusy(true);
    setNotice(null);
    try {
      const reply = await api.deleteAgent(agent.name, preview.confirm_token);
      if (reply.deleted) {
        onDone();
      } else {
        // Expired, or the agent changed since: a new token, confirm again.
        setPreview(reply);
        setNotice({ tone: "warning", title: "Please confirm again", detail: reply.message });
      }
    } catch (e) {
      refused(e);
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
          <button type="button" class="button danger" disabled={busy || used || !preview?.confirm_token} onClick={() => void remove()}>
            Delete
          </button>
        </div>
      </div>
    </div>
  );
}
