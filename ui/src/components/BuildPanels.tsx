// The Builder's panels for what happens between messages: the manual back
// end's pending prompt (copy it, paste the answer), the privacy guard's
// confirmation dialog, and the build's phases with its approval gate.
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { BuildView, GuardMatch, ManualPrompt } from "../generated";
import { addPrompt, manualPromptText, promptsFor } from "../lib/manual";
import { PHASES, phaseIndex } from "../lib/runs";
import { toApiError } from "../transport";
import { bytesLabel } from "../lib/extracts";

function PromptCard({ prompt }: { prompt: ManualPrompt }) {
  const transport = useTransport();
  const [answer, setAnswer] = useState("");
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const text = manualPromptText(prompt);
  const pre = useRef<HTMLTextAreaElement>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard permission: select the text for Ctrl+C instead.
      pre.current?.select();
    }
    setCopied(true);
  }
  async function submit(e: Event) {
    e.preventDefault();
    if (!answer.trim()) return;
    setBusy(true);
    setError(null);
    try {
      await transport.answerManual(prompt.id, answer);
    } catch (err) {
      setError(toApiError(err).message);
      setBusy(false);
    }
  }
  async function dismiss() {
    setBusy(true);
    try {
      await transport.dismissManual(prompt.id);
    } catch (err) {
      setError(toApiError(err).message);
      setBusy(false);
    }
  }
  return (
    <form class="manual-card" onSubmit={submit} data-testid="manual-prompt" data-prompt-id={prompt.id} aria-label={`Prompt for the ${prompt.role}`}>
      <div class="manual-head">
        <strong>The {prompt.role} needs an answer</strong>
        <span class="muted small">Copy this prompt into the AI tool you use, then paste its whole reply below.</span>
      </div>
      <textarea ref={pre} class="manual-prompt" readOnly value={text} rows={6} aria-label="The prompt to copy" />
      <div class="manual-actions">
        <button type="button" class="button small" onClick={() => void copy()}>
          {copied ? "Copied ✓" : "Copy prompt"}
        </button>
        <button type="button" class="button ghost small" disabled={busy} onClick={() => void dismiss()}>
          Dismiss
        </button>
      </div>
      <label class="sr-only" for={`answer-${prompt.id}`}>
        The AI's answer
      </label>
      <textarea
        id={`answer-${prompt.id}`}
        rows={4}
        placeholder="Paste the AI's answer here"
        value={answer}
        onInput={(e) => setAnswer(e.currentTarget.value)}
        data-testid="manual-answer"
      />
      {error && (
        <p class="form-problem" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="button primary small" disabled={busy || !answer.trim()}>
        {busy ? "Sending…" : "Send answer"}
      </button>
    </form>
  );
}

/** Every manual prompt waiting for `workflowId` (kept live by events). */
export function ManualPrompts({ workflowId }: { workflowId?: string }) {
  const transport = useTransport();
  const [prompts, setPrompts] = useState<ManualPrompt[]>([]);
  useEffect(() => {
    let live = true;
    transport
      .manualPrompts()
      .then((list) => live && setPrompts((old) => list.reduce(addPrompt, old)))
      .catch(() => {});
    const stop = transport.onEvent((event) => {
      if (event.type === "manual_prompt") setPrompts((old) => addPrompt(old, event.prompt));
      else if (event.type === "manual_prompt_closed") setPrompts((old) => old.filter((p) => p.id !== event.id));
    });
    return () => {
      live = false;
      stop();
    };
  }, [transport]);
  const shown = promptsFor(prompts, workflowId);
  if (!shown.length) return null;
  return (
    <div class="manual" aria-live="polite">
      {shown.map((p) => (
        <PromptCard key={p.id} prompt={p} />
      ))}
    </div>
  );
}

/** Asks before a message with values from the user's files is sent. */
export function PrivacyDialog({
  matches,
  onConfirm,
  onCancel,
}: {
  matches: GuardMatch[];
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onCancel();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onCancel]);
  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="privacy-title" aria-describedby="privacy-desc" data-testid="privacy-dialog">
        <h2 id="privacy-title">Your message contains values from your files</h2>
        <p id="privacy-desc" class="muted">
          The privacy guard stopped this message before it left the machine. It contains these values (shown masked) from your data:
        </p>
        <ul class="matches">
          {matches.map((m, i) => (
            <li key={i}>
              <code>{m.masked}</code> <span class="muted">from {m.source}</span>
            </li>
          ))}
        </ul>
        <p>Send it anyway? Only the text you typed is sent; your files are not.</p>
        <div class="form-actions">
          <button ref={cancel} type="button" class="button" onClick={onCancel}>
            Cancel and edit
          </button>
          <button type="button" class="button danger" onClick={onConfirm}>
            Send anyway
          </button>
        </div>
      </div>
    </div>
  );
}

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
  onGate: (decision: "approve" | "reject", feedback: string | null) => Promise<void>;
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
          Iteration {build.iteration}
          {build.stage === "prompt" ? " · asking the builder" : build.stage === "response" ? " · checking its answer" : ""}
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
                {p.size != null ? ` · ${bytesLabel(Number(p.size))}` : ""}
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
      {build?.pending_gate && !build.pending_packages && (
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
