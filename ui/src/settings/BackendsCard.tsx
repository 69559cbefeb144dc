// The "AI back ends" card: add, edit and remove back ends, and the local AI
// servers found on this machine that are not set up yet.
import { EmptyState, Spinner } from "../components/ui";
import type { LlmSettings, SettingsView } from "../generated";
import { kindLabel, providerFromDetected, removeProvider, upsertProvider } from "../lib/settings";
import { ProviderForm } from "./ProviderForm";
import { ProviderItem } from "./ProviderItem";
import type { SettingsState } from "./useSettings";

/** The back ends of `view`; `settings` is the same as a settings document. */
export function BackendsCard({ view, settings, state }: { view: SettingsView; settings: LlmSettings; state: SettingsState }) {
  const { editing, setEditing, save } = state;
  return (
    <section class="card" aria-labelledby="backends-h">
      <div class="card-head">
        <h2 id="backends-h">AI back ends</h2>
        {editing === null && (
          <button type="button" class="button" onClick={() => setEditing("new")}>
            + Add back end
          </button>
        )}
      </div>
      {editing === "new" && (
        <ProviderForm
          initial={{ id: "", kind: "ollama", base_url: "", model: "" }}
          others={settings.providers}
          onCancel={() => setEditing(null)}
          onSave={(c) => save(upsertProvider(settings, c), `Back end ${c.id.trim()} added`)}
        />
      )}
      {view.providers.length === 0 && editing !== "new" && (
        <EmptyState title="No back ends">
          <p class="muted">The manual back end (copy and paste) is used until you add one.</p>
        </EmptyState>
      )}
      <ul class="providers">
        {view.providers.map((p) => (
          <li key={p.id} class="provider" data-testid="provider">
            {editing === p.id ? (
              <ProviderForm
                initial={p}
                others={settings.providers.filter((o) => o.id !== p.id)}
                onCancel={() => setEditing(null)}
                onSave={(c) => save(upsertProvider(settings, c, p.id), `Back end ${c.id.trim()} saved`)}
              />
            ) : (
              <ProviderItem
                p={p}
                view={view}
                state={state}
                onRemove={() => void save(removeProvider(settings, p.id), `Back end ${p.id} removed`).catch(() => {})}
              />
            )}
          </li>
        ))}
      </ul>
      <DetectedServers view={view} settings={settings} state={state} />
    </section>
  );
}

function DetectedServers({ view, settings, state }: { view: SettingsView; settings: LlmSettings; state: SettingsState }) {
  const { detected, save } = state;
  const fresh = (detected ?? []).filter((d) => !view.providers.some((p) => p.base_url === d.base_url));
  return (
    <div class="detected" aria-live="polite">
      <h3>Local AI servers on this machine</h3>
      {detected === null && <Spinner label="Looking for Ollama and OpenAI-compatible servers…" />}
      {detected !== null && fresh.length === 0 && (
        <p class="muted small">{detected.length ? "Every server found is already set up." : "None found (Ollama on port 11434, llama.cpp and others on 8080)."}</p>
      )}
      {fresh.map((d) => (
        <div key={d.base_url} class="detected-row" data-testid="detected">
          <span>
            <strong>{kindLabel(d.kind)}</strong> at {d.base_url}
            <span class="muted small"> · {d.models.length ? d.models.slice(0, 3).join(", ") : "no models listed"}</span>
          </span>
          <button
            type="button"
            class="button small primary"
            onClick={() => {
              const c = providerFromDetected(d, settings.providers.map((p) => p.id));
              void save(upsertProvider(settings, c), `Back end ${c.id} added`).catch(() => {});
            }}
          >
            Use it
          </button>
        </div>
      ))}
    </div>
  );
}
