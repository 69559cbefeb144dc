// The build's environment gate (issue 44): what this machine is missing
// for the script's test (Python, or uv for a script that needs packages),
// its fix, and its one-click action. "Install uv" installs it and the
// build goes on by itself; "Check again and continue" goes on once it is
// fixed another way (or waits again); "Stop the build" ends it (a failed
// build that can be retried with the same script).
import { useState } from "preact/hooks";
import { useTransport } from "../context";
import type { PreflightItem } from "../generated";
import { navigate } from "../lib/router";
import { toApiError } from "../transport";

const LABEL: Record<PreflightItem["check"], string> = {
  python: "Python",
  uv: "uv (Python packages)",
  isolation: "Script isolation",
  disk: "Free disk",
};

/** The gate of a build waiting for what this machine is missing. */
export function EnvironmentGate({
  missing,
  onGate,
}: {
  missing: PreflightItem;
  onGate: (decision: "approve" | "reject", feedback: string | null) => Promise<void>;
}) {
  const transport = useTransport();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  async function act(what: () => Promise<unknown>) {
    setBusy(true);
    setProblem(null);
    try {
      await what();
    } catch (e) {
      setProblem(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="gate environment-gate" data-testid="environment-gate" role="region" aria-label="The build waits">
      <strong>The build waits: this machine is missing {LABEL[missing.check]}</strong>
      <p class="small">{missing.detail}</p>
      {missing.fix && <p class="muted small">Fix: {missing.fix}</p>}
      {problem && <p class="bad small">{problem}</p>}
      <div class="form-actions">
        <button type="button" class="button" disabled={busy} onClick={() => void act(() => onGate("reject", null))}>
          Stop the build
        </button>
        <button type="button" class="button" disabled={busy} onClick={() => void act(() => onGate("approve", null))}>
          Check again and continue
        </button>
        {missing.action === "install_uv" && (
          <button type="button" class="button primary" disabled={busy} onClick={() => void act(() => transport.installUv())}>
            {busy ? "Installing uv…" : "Install uv"}
          </button>
        )}
        {missing.action === "open_settings" && (
          <button type="button" class="button primary" onClick={() => navigate({ screen: "settings" })}>
            Open Settings
          </button>
        )}
      </div>
    </div>
  );
}
