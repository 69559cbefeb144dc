// The form that creates or edits an agent: its name (fixed once created),
// the back end and model from the configured ones, and its persona prompt.
// What the server refuses is shown under the field it names.
import { useState } from "preact/hooks";
import type { AgentInput, AgentView, ProviderView } from "../generated";
import { kindLabel } from "../lib/settings";
import { toApiError } from "../transport";
import { draftOf, inputOf, modelChoices, problemsOf, type AgentDraft, type Problems } from "./agents";

function FieldProblems({ problems, id }: { problems?: string[]; id: string }) {
  if (!problems?.length) return null;
  return (
    <ul class="form-problems" id={id} data-testid={id}>
      {problems.map((p) => (
        <li key={p}>{p}</li>
      ))}
    </ul>
  );
}

/** Creates (no `agent`) or edits an agent; `onSave` rejects with the server's error. */
export function AgentForm({
  agent,
  providers,
  onSave,
  onCancel,
}: {
  agent?: AgentView;
  providers: ProviderView[];
  onSave: (input: AgentInput) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<AgentDraft>(() => draftOf(agent));
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);
  const editing = !!agent;
  const key = editing ? `agent-form-${agent.name}` : "agent-form-new";
  const set = (field: keyof AgentDraft) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) =>
    setDraft((d) => ({ ...d, [field]: e.currentTarget.value }));
  const models = modelChoices(providers, draft.provider, draft.model);
  const known = providers.some((p) => p.id === draft.provider);

  function pickProvider(e: { currentTarget: HTMLSelectElement }) {
    const provider = e.currentTarget.value;
    // A model of another back end would not mean the same thing here.
    setDraft((d) => ({
      ...d,
      provider,
      model: modelChoices(providers, provider, "").some((m) => m.value === d.model) ? d.model : "",
    }));
  }

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setProblems({});
    try {
      await onSave(inputOf(draft));
    } catch (err) {
      const api = toApiError(err);
      setProblems(api.code === "invalid_request" ? problemsOf(api.message) : { "": [api.message] });
    } finally {
      setBusy(false);
    }
  }

  const described = (field: string) => (problems[field]?.length ? `${key}-${field}` : undefined);
  return (
    <form class="agent-form" aria-label={editing ? `Edit agent ${agent.name}` : "New agent"} data-testid={key} onSubmit={(e) => void submit(e)}>
      <label class="field">
        <span class="field-label">Name</span>
        <input
          name="name"
          value={draft.name}
          onInput={set("name")}
          disabled={editing}
          placeholder="e.g. code_reviewer"
          aria-invalid={!!problems.name}
          aria-describedby={described("name")}
        />
        <span class="small muted">What flow steps name in <code>agentType</code>: letters, digits, - and _.</span>
        <FieldProblems problems={problems.name} id={`${key}-name`} />
      </label>
      <label class="field">
        <span class="field-label">Display name</span>
        <input
          name="displayName"
          value={draft.displayName}
          onInput={set("displayName")}
          aria-invalid={!!problems.displayName}
          aria-describedby={described("displayName")}
        />
        <span class="small muted">Optional: how people see this agent (seed 003's displayName).</span>
        <FieldProblems problems={problems.displayName} id={`${key}-displayName`} />
      </label>
      <label class="field">
        <span class="field-label">Back end</span>
        <select name="provider" value={draft.provider} onChange={pickProvider} aria-invalid={!!problems.provider} aria-describedby={described("provider")}>
          <option value="">The flow agents' default (Settings)</option>
          {providers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.id} ({kindLabel(p.kind)}
              {p.model ? ` · ${p.model}` : ""})
            </option>
          ))}
          {draft.provider && !known && <option value={draft.provider}>{draft.provider} (not configured)</option>}
        </select>
        <FieldProblems problems={problems.provider} id={`${key}-provider`} />
      </label>
      <label class="field">
        <span class="field-label">Model</span>
        <select name="model" value={draft.model} onChange={set("model")} aria-invalid={!!problems.model} aria-describedby={described("model")}>
          {models.map((m) => (
            <option key={m.value} value={m.value}>
              {m.label}
            </option>
          ))}
        </select>
        <FieldProblems problems={problems.model} id={`${key}-model`} />
      </label>
      <label class="field agent-prompt">
        <span class="field-label">Persona prompt</span>
        <textarea
          name="prompt"
          rows={6}
          value={draft.prompt}
          onInput={set("prompt")}
          placeholder="You are an expert code reviewer. You check…"
          aria-invalid={!!problems.prompt}
          aria-describedby={described("prompt")}
        />
        <span class="small muted">Put before every prompt this agent gets (seed 003's agent layer).</span>
        <FieldProblems problems={problems.prompt} id={`${key}-prompt`} />
      </label>
      {Object.keys(problems).length > 0 && (
        <div class="notice notice-error agent-problems" role="alert">
          <div>
            <strong>{editing ? "The agent was not saved" : "The agent was not created"}</strong>
            {problems[""] ? <FieldProblems problems={problems[""]} id={`${key}-other`} /> : <p>Fix what is marked above and try again.</p>}
          </div>
        </div>
      )}
      <div class="form-actions">
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="button primary" disabled={busy}>
          {editing ? "Save agent" : "Create agent"}
        </button>
      </div>
    </form>
  );
}
