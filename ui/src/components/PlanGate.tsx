// The plan gate (issue 31 point 3): the builder proposed the workflow's
// steps, inputs and outputs before writing any code. The person approves
// it as it is or as they edit it here, or asks for another plan with what
// to change. Shown as plain text: the plan is the LLM's words.
import { useState } from "preact/hooks";

/** The proposed plan, editable, with Approve and Ask again. */
export function PlanGate({
  proposed,
  onGate,
}: {
  proposed: string;
  onGate: (decision: "approve" | "reject", feedback: string | null, bindings?: Record<string, string>, plan?: string) => Promise<void>;
}) {
  const [text, setText] = useState(proposed);
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  async function decide(decision: "approve" | "reject") {
    setBusy(true);
    try {
      if (decision === "approve") {
        // Only an edit is sent: otherwise the plan is approved as proposed.
        await onGate("approve", null, undefined, text.trim() !== proposed.trim() ? text : undefined);
      } else {
        await onGate("reject", feedback.trim() || null);
        setFeedback("");
      }
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="gate plan-gate" data-testid="plan-gate">
      <strong>The builder proposes this plan</strong>
      <p class="muted small">No code is written yet. Approve the plan, edit it first, or ask for another one.</p>
      <label class="sr-only" for="plan-text">
        The plan
      </label>
      <textarea id="plan-text" data-testid="plan-text" rows={10} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <label class="sr-only" for="plan-feedback">
        What to change
      </label>
      <textarea
        id="plan-feedback"
        rows={2}
        placeholder="What to change (for another plan)"
        value={feedback}
        onInput={(e) => setFeedback(e.currentTarget.value)}
      />
      <div class="form-actions">
        <button type="button" class="button" disabled={busy || !feedback.trim()} onClick={() => void decide("reject")}>
          Ask for another plan
        </button>
        <button type="button" class="button primary" disabled={busy || !text.trim()} onClick={() => void decide("approve")}>
          {text.trim() !== proposed.trim() ? "Approve my edit" : "Approve the plan"}
        </button>
      </div>
    </div>
  );
}
