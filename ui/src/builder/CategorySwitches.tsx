// Columns of few values, each in many rows, none of them a name, a date,
// an ID or a number (#28): their values help the AI get a build right
// (which spellings a filter must match), so each is offered here with its
// values and counts behind one switch, off by default. Only what is
// switched on is sent — and only that the privacy guard then lets through.
import type { Chip } from "../lib/chips";
import { categoryKey } from "../lib/extracts";

/** The category columns of the files to approve, one switch per column. */
export function CategorySwitches({
  files,
  shown,
  onToggle,
  disabled,
}: {
  files: Chip[];
  shown: ReadonlySet<string>;
  onToggle: (key: string) => void;
  disabled?: boolean;
}) {
  const rows = files.flatMap((c) =>
    (c.categories ?? []).map((cat) => ({ file: c.extract?.filename ?? c.name, cat, key: categoryKey(c.fileId ?? c.key, cat) })),
  );
  if (rows.length === 0) return null;
  return (
    <div class="category-switches" role="group" aria-label="Category columns">
      <h3>Category columns</h3>
      <p class="muted">
        These columns hold a few values, each in many rows. The AI sees them masked unless you switch a column on: then it
        sees exactly these values and counts, and may use them (a filter on a category, a label), and the privacy guard
        lets exactly these values through.
      </p>
      <ul>
        {rows.map(({ file, cat, key }) => {
          const on = shown.has(key);
          const n = cat.values.length;
          return (
            <li key={key} data-testid="category-column">
              <label>
                <input type="checkbox" role="switch" aria-checked={on} checked={on} disabled={disabled} onChange={() => onToggle(key)} />{" "}
                Show {n === 1 ? "this value" : `these ${n} values`} to the AI
              </label>
              <span class="muted">
                {" "}
                — {file}
                {cat.sheet != null ? `, sheet ${cat.sheet}` : ""}, column <strong>{cat.column}</strong>
              </span>
              <ul class="category-values" aria-label={`Values of ${cat.column}`}>
                {cat.values.map((v) => (
                  <li key={v.value}>
                    <code>{v.value}</code> <span class="muted">× {v.count.toLocaleString("en-US")}</span>
                  </li>
                ))}
              </ul>
            </li>
          );
        })}
      </ul>
    </div>
  );
}
