// The form that adds or edits one AI back end: name, kind, and for a
// network back end its URL, model and context window.
import { useState } from "preact/hooks";
import type { ProviderConfig } from "../generated";
import { KINDS, isNetworkKind, parseWindow, providerProblem } from "../lib/settings";

/** Edits `initial`; `others` are the back ends its name must not clash with. */
export function ProviderForm({
  initial,
  others,
  onSave,
  onCancel,
}: {
  initial: ProviderConfig;
  others: ProviderConfig[];
  onSave: (c: ProviderConfig) => Promise<void>;
  onCancel: () => void;
}) {
  const [c, setC] = useState<ProviderConfig>(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const kind = KINDS.find((k) => k.kind === c.kind);
  async function submit(e: Event) {
    e.preventDefault();
    const p = providerProblem(c, others);
    setProblem(p);
    if (p) return;
    setSaving(true);
    try {
      await onSave(c);
    } catch {
      // The page shows what went wrong; the form stays open to fix it.
    } finally {
      setSaving(false);
    }
  }
  return (
    <form class="provider-form" onSubmit={submit} aria-label="Back end">
      <label>
        <span>Name</span>
        <input name="id" value={c.id} onInput={(e) => setC({ ...c, id: e.currentTarget.value })} placeholder="local-llama" required />
      </label>
      <label>
        <span>Kind</span>
        <select name="kind" value={c.kind} onChange={(e) => setC({ ...c, kind: e.currentTarget.value as ProviderConfig["kind"] })}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      {c.kind !== "manual" && (
        <>
          {isNetworkKind(c.kind) && (
            <label>
              <span>Base URL</span>
              <input
                name="base_url"
                value={c.base_url ?? ""}
                placeholder={kind?.defaultUrl}
                onInput={(e) => setC({ ...c, base_url: e.currentTarget.value })}
              />
            </label>
          )}
          <label>
            <span>{c.kind === "local" ? "Model file (GGUF)" : "Model"}</span>
            <input
              name="model"
              value={c.model ?? ""}
              placeholder={c.kind === "local" ? "/home/me/models/model.gguf" : "e.g. llama3.1:8b"}
              onInput={(e) => setC({ ...c, model: e.currentTarget.value })}
            />
          </label>
          <label>
            <span>Context window (tokens)</span>
            <input
              name="context_window"
              type="number"
              min={256}
              step={1}
              value={c.context_window ?? ""}
              placeholder={c.kind === "local" ? "from the model and this computer's memory" : "learned from the server"}
              onInput={(e) => setC({ ...c, context_window: parseWindow(e.currentTarget.value) })}
            />
          </label>
        </>
      )}
      {problem && (
        <p class="form-problem" role="alert">
          {problem}
        </p>
      )}
      <div class="form-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button primary" disabled={saving}>
          {saving ? "Saving…" : "Save back end"}
        </button>
      </div>
    </form>
  );
}
