// Two-step deletes (issue 18): the first call answers what would be
// deleted and a token; this dialog shows those counts and, on "Delete",
// sends the token back. Used for workflows, flow runs and backups.
import { useEffect, useRef, useState } from "preact/hooks";
import type { DeleteCounts, DeleteReply } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner } from "./ui";

/** The counts in words, the non-zero ones only, e.g. "3 versions". */
export function countLines(c: DeleteCounts): string[] {
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const lines: string[] = [];
  if (c.workflows) lines.push(plural(c.workflows, "workflow"));
  if (c.versions) lines.push(plural(c.versions, "version"));
  if (c.messages) lines.push(plural(c.messages, "conversation message"));
  if (c.runs) lines.push(plural(c.runs, "run"));
  if (c.flow_runs) lines.push(plural(c.flow_runs, "flow run"));
  if (c.checkpoints) lines.push(plural(c.checkpoints, "checkpoint"));
  if (c.turns) lines.push(plural(c.turns, "transcript turn"));
  if (c.agents) lines.push(plural(c.agents, "agent file"));
  if (c.backups) lines.push(`${plural(c.backups, "backup file")} (${formatBytes(c.bytes)})`);
  return lines;
}

/** Bytes for people: "12.3 KB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/**
 * Asks the first step on open, shows the counts, and confirms with the
 * token. `run(confirm)` is the transport's delete call.
 */
export function SafeDeleteDialog({
  title,
  run,
  onDone,
  onCancel,
}: {
  title: string;
  run: (confirm?: string) => Promise<DeleteReply>;
  onDone: (reply: DeleteReply) => void;
  onCancel: () => void;
}) {
  const [preview, setPreview] = useState<DeleteReply | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    run().then(
      (reply) => (reply.deleted ? onDone(reply) : setPreview(reply)),
      (e) => setNotice(noticeOf(toApiError(e))),
    );
    // The first step once per dialog.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onCancel();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onCancel]);

  async function confirm() {
    if (!preview?.confirm_token) return;
    setBusy(true);
    setNotice(null);
    try {
      const reply = await run(preview.confirm_token);
      if (reply.deleted) onDone(reply);
      else setPreview(reply); // expired or changed: show the new counts
      if (!reply.deleted) setNotice({ tone: "warning", title: "Please confirm again", detail: reply.message });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(false);
    }
  }

  const kept = preview?.would_delete.ledger_entries_kept ?? 0;
  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="delete-title" data-testid="delete-dialog">
        <h2 id="delete-title">{title}</h2>
        {notice && <NoticeBanner notice={notice} />}
        {preview ? (
          <>
            <p>This permanently deletes:</p>
            <ul class="delete-counts" data-testid="delete-counts">
              {countLines(preview.would_delete).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            {kept > 0 && (
              <p class="muted small" data-testid="ledger-kept">
                {kept === 1 ? "1 privacy-ledger entry stays" : `${kept} privacy-ledger entries stay`} on record (what left
                this machine is never deleted).
              </p>
            )}
          </>
        ) : (
          !notice && <p class="muted">Counting what would be deleted…</p>
        )}
        <div class="form-actions">
          <button ref={cancel} type="button" class="button" onClick={onCancel}>
            Cancel
          </button>
          <button type="button" class="button danger" disabled={!preview || busy} onClick={() => void confirm()}>
            Delete
          </button>
        </div>
      </div>
    </div>
  );
}
