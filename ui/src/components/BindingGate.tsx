// The gate that asks which uploaded file feeds which input, when the
// inputs' names could not tell (files are never matched by position).
import { useState } from "preact/hooks";
import type { BindingQuestion } from "../generated";
import { bindingsComplete } from "../lib/bindings";

/** One choice of file per input; Continue sends them with the gate's approval. */
export function BindingGate({
  questions,
  onGate,
}: {
  questions: BindingQuestion[];
  onGate: (decision: "approve" | "reject", feedback: string | null, bindings?: Record<string, string>) => Promise<void>;
}) {
  const [chosen, setChosen] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  async function decide(decision: "approve" | "reject") {
    setBusy(true);
    try {
      await onGate(decision, null, decision === "approve" ? chosen : undefined);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div class="gate binding-gate" data-testid="binding-gate">
      <strong>Which file is which input?</strong>
      <p class="muted small">The script's input names do not match your files' names clearly enough. Pick the file for each input to test the script on.</p>
      {questions.map((q) => (
        <label key={q.field} class="field">
          <span>
            {q.label} (<code>{q.field}</code>)
          </span>
          <select
            value={chosen[q.field] ?? ""}
            onChange={(e) => setChosen({ ...chosen, [q.field]: e.currentTarget.value })}
            data-testid={`binding-${q.field}`}
          >
            <option value="">Choose a file…</option>
            {q.candidates.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
      ))}
      <div class="form-actions">
        <button type="button" class="button" disabled={busy} onClick={() => void decide("reject")}>
          Stop the build
        </button>
        <button
          type="button"
          class="button primary"
          disabled={busy || !bindingsComplete(questions, chosen)}
          onClick={() => void decide("approve")}
        >
          Test with these files
        </button>
      </div>
    </div>
  );
}
