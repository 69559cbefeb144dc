// The sidebar's "Conversations" section: builder conversations and flow runs
// in one list (seed 004's `GET /conversations`), most recent first, filtered
// by the server to the builder's (`__none__`) or one flow's. Collapsed until
// the user opens it; the choice is remembered.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ConversationSummary } from "../generated";
import { NO_FLOW, conversationHref, conversationMeta, isOpen } from "../lib/conversations";
import type { Route } from "../lib/router";
import { toApiError } from "../transport";

const OPEN_KEY = "maskflow.sidebar.conversations";
/** Events after which the list may have changed (not the streamed deltas). */
const REFRESH_ON = new Set(["message", "status_changed", "workflow_deleted", "flow_status"]);

function remembered(): boolean {
  try {
    return window.localStorage.getItem(OPEN_KEY) === "open";
  } catch {
    return false;
  }
}

/** The list, below the main navigation. */
export function SidebarConversations({ route }: { route: Route }) {
  const api = useTransport();
  const [open, setOpen] = useState(remembered);
  const [filter, setFilter] = useState("");
  const [flows, setFlows] = useState<string[]>([]);
  const [items, setItems] = useState<ConversationSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  const toggle = () => {
    const next = !open;
    setOpen(next);
    try {
      window.localStorage.setItem(OPEN_KEY, next ? "open" : "closed");
    } catch {
      // No storage (a locked-down browser): the choice lasts this visit.
    }
  };

  // The flows to filter by, each time the list opens.
  useEffect(() => {
    if (!open) return;
    api
      .listFlows()
      .then((l) => setFlows(l.flows.map((f) => f.name)))
      .catch(() => setFlows([]));
  }, [api, open]);

  useEffect(() => {
    if (!open) return;
    return api.onEvent((e) => {
      if (REFRESH_ON.has(e.type)) setTick((t) => t + 1);
    });
  }, [api, open]);

  // The list: on opening, on a new filter, route or change.
  useEffect(() => {
    if (!open) return;
    let current = true;
    api
      .listConversations(filter || undefined)
      .then((l) => {
        if (!current) return;
        setItems(l.conversations);
        setError(null);
      })
      .catch((e) => current && setError(toApiError(e).message));
    return () => {
      current = false;
    };
  }, [api, open, filter, route, tick]);

  const shown = (items ?? []).filter((c) => !c.archived);
  return (
    <section class="side-conversations">
      <button type="button" class="side-toggle" aria-expanded={open} aria-controls="side-conversations" onClick={toggle}>
        <span aria-hidden="true">{open ? "▾" : "▸"}</span> Conversations
      </button>
      {open && (
        <div id="side-conversations">
          <label class="sr-only" for="side-conversations-filter">
            Show
          </label>
          <select
            id="side-conversations-filter"
            class="side-filter"
            data-testid="conversations-filter"
            value={filter}
            onChange={(e) => setFilter((e.currentTarget as HTMLSelectElement).value)}
          >
            <option value="">All conversations</option>
            <option value={NO_FLOW}>Builder only</option>
            {flows.map((name) => (
              <option key={name} value={name}>
                Flow: {name}
              </option>
            ))}
          </select>
          {error && <p class="side-empty">{error}</p>}
          {items !== null && shown.length === 0 && !error && <p class="side-empty">No conversations yet.</p>}
          <ul aria-label="Conversations" data-testid="conversation-list">
            {shown.map((c) => {
              const here = isOpen(c, route);
              return (
                <li key={c.conversationId}>
                  <a
                    href={conversationHref(c)}
                    class={`side-conversation${here ? " current" : ""}`}
                    aria-current={here ? "page" : undefined}
                    data-testid="conversation-item"
                    data-kind={c.kind}
                    title={c.title}
                  >
                    <span class="side-title">{c.title}</span>
                    <span class="side-meta">{conversationMeta(c)}</span>
                  </a>
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </section>
  );
}
