// The warning beside Approve when a version's inputs or outputs differ
// from the approved version's, with the `maskflow run` line that changes.
import type { InterfaceChange } from "../generated";
import { commandLines, interfaceChangeTitle } from "./interfaceChange";

/** Says what approving changes; saved `maskflow run` calls need the new line. */
export function InterfaceChangeNote({ change }: { change: InterfaceChange }) {
  return (
    <div class="notice-warning interface-change" role="note" data-testid="interface-change">
      <strong>{interfaceChangeTitle(change)}</strong>
      <ul>
        {change.changes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      {commandLines(change).length > 0 && (
        <>
          <p class="muted small">Scripts or schedules that call this workflow with <code>maskflow run</code> need the new line:</p>
          <dl class="command-lines">
            {commandLines(change).map(({ label, line }) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>
                  <code>{line}</code>
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </div>
  );
}
