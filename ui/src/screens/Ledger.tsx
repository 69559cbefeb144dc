// The privacy ledger: every request that left the machine (or was stopped
// by the privacy guard), newest first, searchable, each expandable to the
// exact body sent and the reply. New entries arrive live.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { EmptyState, NoticeBanner, Spinner } from "../components/ui";
import { useTransport } from "../context";
import type { LedgerEntry } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { destination, matchesQuery, mergeEntry, outcomeBadge, prettyBody } from "../lib/ledger";
import { toApiError } from "../transport";

const PAGE = 50;

function when(rfc3339: string): string {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" });
}

function Entry({ e }: { e: LedgerEntry }) {
  const [open, setOpen] = useState(false);
  const badge = outcomeBadge(e);
  return (
    <li class={`ledger-entry${open ? " open" : ""}`} data-testid="ledger-entry">
      <button type="button" class="ledger-row" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span class="ledger-when">{when(e.created_at)}</span>
        <span class="ledger-role">{e.role}</span>
        <span class="ledger-to">
          {e.provider}
          {e.model ? ` · ${e.model}` : ""}
        </span>
        <span class={`badge tone-${badge.tone}`}>{badge.label}</span>
        {e.local && (
          <span class="badge tone-good" data-testid="ledger-local" title="The embedded model answered in this process; the privacy guard checked the prompt all the same">
            local
          </span>
        )}
        {e.deleted_workflow != null && (
          <span class="badge tone-muted" data-testid="ledger-deleted" title="The workflow was deleted; its ledger entries stay">
            deleted: {e.deleted_workflow}
          </span>
        )}
        <span class="muted small ledger-size">{(e.request_body.length / 1024).toFixed(1)} KB</span>
        <span class="chev" aria-hidden="true">
          {open ? "▾" : "▸"}
        </span>
      </button>
      {open && (
        <div class="ledger-body">
          <dl class="ledger-meta">
            <dt>Sent to</dt>
            <dd>{destination(e)}</dd>
            <dt>Workflow</dt>
            <dd>{e.deleted_workflow != null ? `${e.deleted_workflow} (deleted; was ${e.workflow_id ?? "?"})` : (e.workflow_id ?? "—")}</dd>
            <dt>Time taken</dt>
            <dd>{Number(e.latency_ms)} ms</dd>
            {(e.input_tokens != null || e.output_tokens != null) && (
              <>
                <dt>Tokens</dt>
                <dd>
                  {e.input_tokens != null ? Number(e.input_tokens) : "?"} in · {e.output_tokens != null ? Number(e.output_tokens) : "?"} out
                </dd>
              </>
            )}
            {e.note && (
              <>
                <dt>Privacy note</dt>
                <dd data-testid="ledger-note">{e.note}</dd>
              </>
            )}
            {e.error && (
              <>
                <dt>Error</dt>
                <dd class="warn-text">{e.error}</dd>
              </>
            )}
          </dl>
          <h4>Exactly what was sent</h4>
          <pre class="json" tabIndex={0} data-testid="ledger-request">
            {prettyBody(e.request_body) || "(nothing was sent)"}
          </pre>
          <h4>Reply</h4>
          <pre class="json" tabIndex={0}>
            {prettyBody(e.reply) || "(no reply)"}
          </pre>
        </div>
      )}
    </li>
  );
}

export function Ledger() {
  const transport = useTransport();
  const [entries, setEntries] = useState<LedgerEntry[] | null>(null);
  const [q, setQ] = useState("");
  const [more, setMore] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const query = useRef("");

  const load = useCallback(
    async (text: string, offset: number) => {
      try {
        const page = await transport.ledger(text, PAGE, offset);
        if (query.current !== text) return;
        setEntries((old) => (offset === 0 ? page : [...(old ?? []), ...page]));
        setMore(page.length === PAGE);
      } catch (e) {
        setNotice(noticeOf(toApiError(e)));
        setEntries((old) => old ?? []);
      }
    },
    [transport],
  );

  useEffect(() => {
    query.current = q;
    const timer = setTimeout(() => void load(q, 0), 200);
    return () => clearTimeout(timer);
  }, [q, load]);

  useEffect(
    () =>
      transport.onEvent((event) => {
        if (event.type === "ledger_entry" && matchesQuery(event.entry, query.current)) {
          setEntries((old) => mergeEntry(old ?? [], event.entry));
        }
      }),
    [transport],
  );

  return (
    <div class="page" data-testid="ledger">
      <header class="page-head">
        <div>
          <h1>Privacy ledger</h1>
          <p class="muted">Every request that left this machine for an AI, with its full body — and those the privacy guard stopped.</p>
        </div>
        <label class="search">
          <span class="sr-only">Search the ledger</span>
          <input type="search" placeholder="Search bodies, replies, roles, models…" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </label>
      </header>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {entries === null && <Spinner label="Loading the ledger…" />}
      {entries !== null && entries.length === 0 && (
        <EmptyState title={q ? "Nothing matches" : "Nothing has left this machine yet"} icon="🛡">
          <p class="muted">{q ? "Try other words." : "When an AI is asked something, the exact request appears here."}</p>
        </EmptyState>
      )}
      {entries !== null && entries.length > 0 && (
        <div class="card ledger">
          <div class="ledger-row ledger-headings" aria-hidden="true">
            <span>When</span>
            <span>Role</span>
            <span>Back end</span>
            <span>Outcome</span>
            <span>Size</span>
            <span />
          </div>
          <ul class="ledger-list" aria-label="Ledger entries">
            {entries.map((e) => (
              <Entry key={e.id} e={e} />
            ))}
          </ul>
          {more && (
            <button type="button" class="button" onClick={() => void load(q, entries.length)}>
              Show older
            </button>
          )}
        </div>
      )}
    </div>
  );
}
