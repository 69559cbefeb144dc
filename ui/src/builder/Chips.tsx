// The files being added before approval: one chip each, with its reading
// progress, row count, size or why it cannot be read.
import { ProgressBar } from "../components/ui";
import type { Chip } from "../lib/chips";
import { bytesLabel, kindLabel } from "../lib/extracts";

/** What a file being read is doing now. */
function readingLabel(c: Chip): string {
  if (c.phase === "uploading") return "Reading…";
  if (c.phase === "waiting") return "Waiting for the files ahead of it…";
  return `Counting rows… ${Math.round(c.progress * 100)}%`;
}

/** The chips of the files added so far; `frozen` hides their remove buttons. */
export function Chips({ chips, onRemove, frozen }: { chips: Chip[]; onRemove: (key: string) => void; frozen: boolean }) {
  return (
    <ul class="chips" aria-label="Files">
      {chips.map((c) => (
        <li key={c.key} class={`chip chip-${c.status}`} data-testid="chip">
          <div class="chip-main">
            <span class="chip-name" title={c.name}>
              {c.name}
            </span>
            <span class="chip-meta">
              {c.status === "reading" && readingLabel(c)}
              {c.status === "ready" && c.extract && `${kindLabel(c.extract)} · ${c.extract.row_count.toLocaleString("en-US")} rows`}
              {c.status === "error" && "Cannot be read"}
              {c.size != null && c.status !== "error" && ` · ${bytesLabel(c.size)}`}
            </span>
            {c.status === "reading" && <ProgressBar value={c.progress} label={`Reading ${c.name}`} />}
            {c.status === "error" && (
              <span class="chip-problem" role="alert">
                {c.error}
              </span>
            )}
          </div>
          {!frozen && (
            <button type="button" class="icon-button" aria-label={`Remove ${c.name}`} onClick={() => onRemove(c.key)}>
              ×
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}
