// The manual back end's pending prompts: copy one into any AI tool, paste
// its reply back (or dismiss it).
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { ManualPrompt } from "../generated";
import { addPrompt, canAnswer, manualPromptText, promptsFor } from "../lib/manual";
import { toApiError } from "../transport";

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
      {prompt.interrupted && (
        <p class={`notice ${prompt.interrupted.resumes ? "notice-info" : "notice-warning"}`} role="status" data-testid="manual-interrupted">
          {prompt.interrupted.reason}
        </p>
      )}
      <textarea ref={pre} class="manual-prompt" readOnly value={text} rows={6} aria-label="The prompt to copy" />
      <div class="manual-actions">
        <button type="button" class="button small" onClick={() => void copy()}>
          {copied ? "Copied ✓" : "Copy prompt"}
        </button>
        <button type="button" class="button ghost small" disabled={busy} onClick={() => void dismiss()}>
          Dismiss
        </button>
      </div>
      {canAnswer(prompt) && (
        <>
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
        </>
      )}
      {error && (
        <p class="form-problem" role="alert">
          {error}
        </p>
      )}
      {canAnswer(prompt) && (
        <button type="submit" class="button primary small" disabled={busy || !answer.trim()}>
          {busy ? "Sending…" : "Send answer"}
        </button>
      )}
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
