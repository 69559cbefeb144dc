// What a script left in outputs/ that Maskflow did not copy out (a link, a
// device, a name with control characters…): named with why, never offered.
import type { RefusedOutput } from "../generated";

/** The refused outputs of a run, or nothing when there are none. */
export function RefusedOutputs({ refused }: { refused: RefusedOutput[] }) {
  if (refused.length === 0) return null;
  return (
    <div class="notice notice-warning refused-outputs" role="note" data-testid="refused-outputs">
      <p class="small">
        {refused.length === 1 ? "One file" : `${refused.length} files`} in <code>outputs/</code> {refused.length === 1 ? "was" : "were"} not
        taken, since a script's outputs are untrusted:
      </p>
      <ul class="small">
        {refused.map((r) => (
          <li key={r.name}>
            <code>{r.name}</code> — {r.reason}
          </li>
        ))}
      </ul>
    </div>
  );
}
