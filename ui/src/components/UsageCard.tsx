// The Settings card with token totals from the ledger: in all, per role and
// per workflow, as the servers reported them (no price: a count, not a cost).
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { Usage, UsageRow } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { NoticeBanner, Spinner } from "./ui";

const n = (v: number) => v.toLocaleString("en-US");

/** One line of the card: "12 calls · 3,400 in · 1,200 out (2 unreported)". */
export function usageLine(r: UsageRow): string {
  const calls = `${n(r.calls)} call${r.calls === 1 ? "" : "s"}`;
  const unreported = r.unreported ? ` (${n(r.unreported)} without counts)` : "";
  return `${calls} · ${n(r.input_tokens)} in · ${n(r.output_tokens)} out${unreported}`;
}

/** A role key as people read it: `agent:critic` → "Flow agent critic". */
export function roleLabel(key: string): string {
  if (key.startsWith("agent:")) return `Flow agent ${key.slice(6)}`;
  if (key.startsWith("mcp:")) return `MCP client, ${key.slice(4)}`;
  return key.charAt(0).toUpperCase() + key.slice(1);
}

export function UsageCard() {
  const transport = useTransport();
  const [usage, setUsage] = useState<Usage | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);

  useEffect(() => {
    transport
      .usage()
      .then(setUsage)
      .catch((e) => setNotice(noticeOf(toApiError(e))));
  }, [transport]);

  return (
    <section class="card" aria-labelledby="usage-h" data-testid="usage">
      <div class="card-head">
        <h2 id="usage-h">Token usage</h2>
      </div>
      <p class="small">Tokens sent and received, from the ledger of every LLM call, as the servers reported them.</p>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {!usage ? (
        !notice && <Spinner label="Adding up the ledger…" />
      ) : (
        <table class="usage-table">
          <tbody>
            <tr>
              <th scope="row">All calls</th>
              <td data-testid="usage-total">{usageLine(usage.total)}</td>
            </tr>
            {usage.by_role.map((r) => (
              <tr key={`role-${r.key}`}>
                <th scope="row">{roleLabel(r.key)}</th>
                <td>{usageLine(r)}</td>
              </tr>
            ))}
            {usage.by_workflow.map((r) => (
              <tr key={`wf-${r.key}`}>
                <th scope="row">Workflow {r.name ?? r.key}</th>
                <td>{usageLine(r)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
