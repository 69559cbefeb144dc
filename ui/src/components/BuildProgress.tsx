// The build's phases between messages: the current iteration and stage,
// Cancel, the Python environment's install progress, and the gates that
// wait for the user (extra packages, what the machine is missing, which
// file feeds which input, or the builder's prompt and answer).
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { BuildView } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { PHASES, phaseIndex } from "../lib/runs";
import { BindingGate } from "./BindingGate";
import { BuildReviews } from "./BuildReviews";
import { EnvironmentGate } from "./EnvironmentGate";
import { PlanGate } from "./PlanGate";

const PHASE_LABEL: Record<string, string> = {
  generate: "Write the script",
  review: "Review it",
  revise: "Revise",
  complete: "Done",
};

/** The build's phases, and Approve / Reject at a gate. */
export function BuildProgress({
  build,
  onGate,
  workflowId,
}: {
  build: BuildView | undefined;
  onGate: (decision: "approve" | "reject", feedback: string | null, bindings?: Record<string, string>, plan?: string) => Promise<void>;
  /** Shows the progress of a Python environment being installed for it. */
  workflowId?: string;
}) {
  const transport = useTransport();
  const [envLine, setEnvLine] = useState<string | null>(null);
  useEffect(() => {
    if (!workflowId) return;
    return transport.onEvent((e) => {
      if (e.type === "environment_progress" && e.workflow_id === workflowId) setEnvLine(`${e.stage}: ${e.message}`);
    });
  }, [transport, workflowId]);
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  // Cancel: the LLM call is dropped, the test script killed, the version fails.
  const [stopping, setStopping] = useState(false);
  const at = build ? phaseIndex(build.phase) : 0;
  async function decide(decision: "approve" | "reject") {
    setBusy(true);
    try {
      await onGate(decision, decision === "reject" ? feedback.trim() || null : null);
      setFeedback("");
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="build-progress" data-testid="build-progress">
      <ol class="phases" aria-label="Build phases">
        {PHASES.map((p, i) => (
          <li key={p} class={i < at ? "done" : i === at ? "current" : ""} aria-current={i === at ? "step" : undefined}>
            {PHASE_LABEL[p]}
          </li>
        ))}
      </ol>
      {build && (
        <p class="muted small">
          {build.iteration === 0 ? (
            // Before the first script: the plan step, or the build starting.
            build.pending_plan ? "Planning · the plan waits for you" : "Preparing the build"
          ) : (
            <>
              Iteration {build.iteration}
              {build.stage === "prompt" ? " · asking the builder" : build.stage === "response" ? " · checking its answer" : ""}
            </>
          )}
        </p>
      )}
      {workflowId && build && !build.pending_gate && build.phase !== "complete" && build.phase !== "failed" && (
        <button
          type="button"
          class="button danger"
          disabled={stopping}
          onClick={() => {
            setStopping(true);
            transport.cancelMessage(workflowId).catch(() => setStopping(false));
          }}
        >
          {stopping ? "Cancelling…" : "Cancel build"}
        </button>
      )}
      {envLine && !build?.pending_gate && (
        <p class="muted small" data-testid="env-progress" aria-live="polite">
          Python environment — {envLine}
        </p>
      )}
      {build?.pending_gate && build.pending_packages && (
        <div class="gate packages-gate" data-testid="packages-gate">
          <strong>The script asks for Python packages outside Maskflow's curated set</strong>
          <p class="muted small">
            A package is code that will run on your data. Install them only if you trust them; refusing stops this build.
          </p>
          <ul>
            {build.pending_packages.map((p) => (
              <li key={p.name}>
                <code>{p.name}</code>
                {p.version ? ` ${p.version}` : ""}
                {p.size != null ? ` · ${bytesLabel(Number(p.size))}` : " · size unknown"}
                {p.index ? (
                  <>
                    {" · from "}
                    <code data-testid="package-index">{p.index}</code>
                  </>
                ) : null}
              </li>
            ))}
          </ul>
          <div class="form-actions">
            <button type="button" class="button" disabled={busy} onClick={() => void decide("reject")}>
              Refuse and stop the build
            </button>
            <button type="button" class="button primary" disabled={busy} onClick={() => void decide("approve")}>
              Install and continue
            </button>
          </div>
        </div>
      )}
      {build?.pending_gate && build.pending_environment && <EnvironmentGate missing={build.pending_environment} onGate={onGate} />}
      {build?.pending_gate && build.pending_binding && (
        <BindingGate questions={build.pending_binding} onGate={onGate} />
      )}
      {build?.pending_gate && build.pending_plan && <PlanGate key={build.pending_plan} proposed={build.pending_plan} onGate={onGate} />}
      <BuildReviews build={build} />
      {build?.pending_gate && !build.pending_packages && !build.pending_environment && !build.pending_binding && !build.pending_plan && (
        <div class="gate" data-testid="gate">
          <strong>The build waits for you</strong>
          <p class="muted small">
            {build.stage === "prompt"
              ? "The builder's prompt is ready (read it under Workflows → Build session). Let it go, or send it back with what to change."
              : "The builder answered (read it under Workflows → Build session). Let the build test it, or send it back with what to fix."}
          </p>
          <label class="sr-only" for="gate-feedback">
            What to fix
          </label>
          <textarea id="gate-feedback" rows={2} placeholder="What to fix (for Reject)" value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
          <div class="form-actions">
            <button type="button" class="button" disabled={busy || !feedback.trim()} onClick={() => void decide("reject")}>
              Reject with feedback
            </button>
            <button type="button" class="button primary" disabled={busy} onClick={() => void decide("approve")}>
              Approve and continue
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
