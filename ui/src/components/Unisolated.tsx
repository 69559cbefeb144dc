// Whether a run ran without isolation, and the warning that says so.
import type { LimitState } from "../generated";

/** Whether a run's report says it ran without file-system or network isolation. */
export function ranUnisolated(limits: LimitState[]): boolean {
  return limits.some((l) => (l.name === "file_system" || l.name === "network") && !l.mechanism);
}

/** The warning that a run had no file-system or network isolation. */
export function UnisolatedBanner() {
  return (
    <p class="warn-text small" role="alert" data-testid="unisolated">
      <strong>Ran without isolation</strong> — allowed in Settings on this machine; the script could read your files and reach the network.
    </p>
  );
}
