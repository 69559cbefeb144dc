// The preflight before a workflow's first message: what a build needs on
// this machine (Python, uv, isolation, free disk), what is missing with
// its fix as a button. It informs and never holds the conversation (issue
// 44): a build that needs what is missing waits at its environment gate.
import { useCallback, useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { PreflightItem, PreflightView, WorkflowView } from "../generated";
import { navigate } from "../lib/router";
import { toApiError } from "../transport";

const LABEL: Record<PreflightItem["check"], string> = {
  python: "Python",
  uv: "uv (Python packages)",
  isolation: "Script isolation",
  disk: "Free disk",
};

/** The preflight panel of a workflow that has no message of the user's yet. */
export function Preflight({ workflow }: { workflow: WorkflowView | null }) {
  const transport = useTransport();
  const [view, setView] = useState<PreflightView | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [hidden, setHidden] = useState(false);
  const first = !!workflow && !workflow.messages.some((m) => m.role === "user");

  const check = useCallback(async () => {
    try {
      setView(await transport.preflight());
    } catch (e) {
      setProblem(toApiError(e).message);
    }
  }, [transport]);

  useEffect(() => {
    if (first) void check();
  }, [first, check]);

  if (!first || !view || view.ready || hidden) return null;

  async function installUv() {
    setBusy(true);
    setProblem(null);
    try {
      await transport.installUv();
    } catch (e) {
      setProblem(toApiError(e).message);
    } finally {
      setBusy(false);
      await check();
    }
  }

  return (
    <div class="callout preflight" role="region" aria-label="Before the first message" data-testid="preflight">
      <strong>This machine is missing what some builds need.</strong>
      <p class="small">You can start the conversation now: a build that needs it waits for it, with the same fix.</p>
      <ul>
        {view.items
          .filter((i) => !i.ok)
          .map((i) => (
            <li key={i.check} data-testid={`preflight-${i.check}`}>
              <b>{LABEL[i.check]}</b>: {i.detail}
              {i.fix && <div class="muted small">Fix: {i.fix}</div>}
              {i.action === "install_uv" && (
                <button type="button" class="button small" disabled={busy} onClick={() => void installUv()}>
                  {busy ? "Installing uv…" : "Install uv"}
                </button>
              )}
              {i.action === "open_settings" && (
                <button type="button" class="button small" onClick={() => navigate({ screen: "settings" })}>
                  Open Settings
                </button>
              )}
            </li>
          ))}
      </ul>
      {problem && <p class="bad small">{problem}</p>}
      <div class="row">
        <button type="button" class="button small" onClick={() => void check()}>
          Check again
        </button>
        <button type="button" class="button small" onClick={() => setHidden(true)}>
          Hide
        </button>
      </div>
    </div>
  );
}
