// The "Client requests" card: files an AI client connected through
// `maskflow mcp` asked to see. The client gets a file's masked extract —
// exactly the one shown here — only once the user approves it. The MCP
// server is another process, so the list is read again every few seconds
// while the card is shown.
import { useCallback, useEffect, useState } from "preact/hooks";
import { ExtractView } from "../components/ExtractView";
import { NoticeBanner } from "../components/ui";
import { useTransport } from "../context";
import type { ClientRequestView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";

/** How often the list is read again, in milliseconds. */
export const REFRESH_MS = 5000;

/** The pending requests, each with the extract the client would get. */
export function ClientRequestsCard() {
  const transport = useTransport();
  const [requests, setRequests] = useState<ClientRequestView[] | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(
    () =>
      transport.clientRequests().then(setRequests, (e) => setNotice(noticeOf(toApiError(e)))),
    [transport],
  );

  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  async function decide(id: string, approve: boolean) {
    setBusy(id);
    try {
      await (approve ? transport.approveClientRequest(id) : transport.declineClientRequest(id));
      setNotice(null);
      await load();
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section class="card" aria-labelledby="client-requests-h" data-testid="client-requests">
      <div class="card-head">
        <h2 id="client-requests-h">Client requests</h2>
      </div>
      <p class="small">
        AI clients connected through <code>maskflow mcp</code> ask here to see a file's masked extract. A client gets exactly the
        extract shown, only after you approve it; everything it receives is in the privacy ledger.
      </p>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {requests && requests.length === 0 && <p class="muted small">No requests are waiting.</p>}
      {requests?.map((r) => (
        <article key={r.id} class="client-request" data-testid="client-request">
          <p>
            <strong>{r.client}</strong> asks for <code>{r.path}</code>
          </p>
          <ExtractView extract={r.file.extract} />
          <div class="actions">
            <button type="button" class="button primary small" disabled={busy === r.id} onClick={() => decide(r.id, true)}>
              Approve
            </button>{" "}
            <button type="button" class="button small danger" disabled={busy === r.id} onClick={() => decide(r.id, false)}>
              Decline
            </button>
          </div>
        </article>
      ))}
    </section>
  );
}
