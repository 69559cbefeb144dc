// The sidebar's count of what waits for the user (flow and build gates,
// escalations, manual prompts), live; opened, it lists them as links to each item. It
// also hosts the notifications, so they run on every screen.
import type { WaitingItem } from "../generated";
import { itemHref, itemKey } from "./decide";
import { useWaiting } from "./useWaiting";
import "./notifications.css";

/** How an item reads in the list. */
export function itemLabel(item: WaitingItem): string {
  if (item.kind === "gate") return `${item.title}: your decision`;
  if (item.kind === "attention") return `${item.title}: needs attention`;
  if (item.kind === "build_gate") return `The build of ${item.title || "a workflow"}: your decision`;
  const who = item.title.replace(/^agent:/, "");
  return item.flowName ? `${who} (flow ${item.flowName}): an answer` : `The ${who}: an answer`;
}

/** The badge and its list; nothing while nothing waits. */
export function WaitingBadge() {
  const { items, permission, ask } = useWaiting();
  if (!items.length) return null;
  const count = items.length;
  const canAsk = permission === "default" || permission === "asked";
  return (
    <details class="waiting" data-testid="waiting">
      <summary>
        <span>Waiting for you</span>
        <span class="waiting-count" data-testid="waiting-count" aria-label={`${count} waiting`}>
          {count}
        </span>
      </summary>
      <ul aria-label="Waiting for you">
        {items.map((item) => (
          <li key={`${item.kind}:${item.id}`} data-key={itemKey(item)}>
            <a href={itemHref(item)}>{itemLabel(item)}</a>
          </li>
        ))}
      </ul>
      {canAsk && (
        <button type="button" class="waiting-ask" onClick={() => void ask()}>
          Notify me when something waits
        </button>
      )}
    </details>
  );
}
