// The list of every workflow: name, label, status, description and version.
import { StatusBadge } from "../components/ui";
import type { WorkflowSummary } from "../generated";
import { when } from "./format";

/** The workflow cards; `selected` is the open one's id. */
export function WorkflowList({ items, selected }: { items: WorkflowSummary[]; selected?: string }) {
  return (
    <ul class="wf-list" aria-label="Workflows">
      {items.map((w) => (
        <li key={w.id}>
          <a
            href={`#/workflows/${encodeURIComponent(w.id)}`}
            class={`wf-card${w.id === selected ? " selected" : ""}`}
            aria-current={w.id === selected ? "page" : undefined}
            data-testid="workflow-card"
          >
            <span class="wf-name">
              {w.name ?? "Untitled workflow"}
              {w.label && (
                <span class="pill wf-label" data-testid="workflow-label">
                  {w.label}
                </span>
              )}
            </span>
            <StatusBadge status={w.current_version.status} />
            {w.description && <span class="wf-desc">{w.description}</span>}
            <span class="muted small">
              v{w.current_version.version} · updated {when(w.updated_at)}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}
