// Settings: the AI back ends (add, edit, remove, key, test connection),
// which back end each role uses, local servers found, and the Python
// interpreter workflows run with. Keys go to the system keyring and are
// never shown again; only where a key comes from is.
import { useCallback, useEffect, useState } from "preact/hooks";
import { BackupsSetting } from "../components/BackupsSetting";
import { IsolationSetting } from "../components/IsolationSetting";
import { StorageSettings } from "../components/StorageSettings";
import { EnvironmentsSetting } from "../components/EnvironmentsSetting";
import { BudgetSettings } from "../components/BudgetSettings";
import { UsageCard } from "../components/UsageCard";
import { AgentRoles } from "../components/AgentRoles";
import { EmptyState, NoticeBanner, Spinner } from "../components/ui";
import { useTransport } from "../context";
import type { ConnectionTest, Detected, ProviderConfig, ProviderView, PythonView, SettingsView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import {
  KINDS,
  ROLES,
  assignRole,
  kindLabel,
  parseWindow,
  providerFromDetected,
  providerProblem,
  removeProvider,
  toSettings,
  upsertProvider,
  windowLabel,
} from "../lib/settings";
import { toApiError } from "../transport";

const KEY_SOURCE: Record<ProviderView["key"], { label: string; tone: string }> = {
  keyring: { label: "Key in system keyring", tone: "good" },
  environment: { label: "Key from environment", tone: "good" },
  none: { label: "No key", tone: "muted" },
};

function ProviderForm({
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
          <label>
            <span>Base URL</span>
            <input
              name="base_url"
              value={c.base_url ?? ""}
              placeholder={kind?.defaultUrl}
              onInput={(e) => setC({ ...c, base_url: e.currentTarget.value })}
            />
          </label>
          <label>
            <span>Model</span>
            <input name="model" value={c.model ?? ""} placeholder="e.g. llama3.1:8b" onInput={(e) => setC({ ...c, model: e.currentTarget.value })} />
          </label>
          <label>
            <span>Context window (tokens)</span>
            <input
              name="context_window"
              type="number"
              min={256}
              step={1}
              value={c.context_window ?? ""}
              placeholder="learned from the server"
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

function KeyEntry({ provider, onStored }: { provider: ProviderView; onStored: (n: Notice) => void }) {
  const transport = useTransport();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  async function save(e: Event) {
    e.preventDefault();
    if (!key.trim()) return;
    setBusy(true);
    try {
      await transport.setKey(provider.id, key.trim());
      setKey("");
      onStored({ tone: "info", title: "Key saved", detail: `The key for ${provider.id} is in the system keyring. It will not be shown again.` });
    } catch (err) {
      const e2 = toApiError(err);
      onStored(
        e2.code === "keyring_unavailable" || /keyring/i.test(e2.message)
          ? { tone: "warning", title: "No system keyring on this machine", detail: e2.message }
          : noticeOf(e2),
      );
    } finally {
      setBusy(false);
    }
  }
  return (
    <form class="key-entry" onSubmit={save}>
      <label class="sr-only" for={`key-${provider.id}`}>
        API key for {provider.id}
      </label>
      <input
        id={`key-${provider.id}`}
        type="password"
        autoComplete="off"
        placeholder={provider.key === "none" ? "Paste an API key" : "Replace the key"}
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
      />
      <button type="submit" class="button small" disabled={busy || !key.trim()}>
        Save key
      </button>
    </form>
  );
}

export function Settings() {
  const transport = useTransport();
  const [view, setView] = useState<SettingsView | null>(null);
  const [python, setPython] = useState<PythonView | null>(null);
  const [pythonPath, setPythonPath] = useState("");
  const [detected, setDetected] = useState<Detected[] | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [editing, setEditing] = useState<string | "new" | null>(null);
  const [tests, setTests] = useState<Record<string, ConnectionTest | "testing">>({});

  const load = useCallback(async () => {
    try {
      const [s, p] = await Promise.all([transport.settings(), transport.python()]);
      setView(s);
      setPython(p);
      setPythonPath(p.path ?? "");
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    }
  }, [transport]);

  useEffect(() => {
    void load();
    transport
      .detectProviders()
      .then(setDetected)
      .catch(() => setDetected([]));
  }, [transport, load]);

  async function save(next: ReturnType<typeof toSettings>, done?: string) {
    try {
      setView(await transport.updateSettings(next));
      setEditing(null);
      if (done) setNotice({ tone: "info", title: done, detail: "The new settings are in use." });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
      throw e;
    }
  }

  async function test(id: string) {
    setTests((t) => ({ ...t, [id]: "testing" }));
    try {
      const r = await transport.testProvider(id);
      setTests((t) => ({ ...t, [id]: r }));
    } catch (e) {
      setTests((t) => ({ ...t, [id]: { ok: false, message: toApiError(e).message } }));
    }
  }

  async function removeKey(id: string) {
    try {
      await transport.deleteKey(id);
      setNotice({ tone: "info", title: "Key removed", detail: `The key for ${id} is no longer in the keyring.` });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    }
    await load();
  }

  async function savePython(e: Event) {
    e.preventDefault();
    try {
      const p = await transport.setPython({ path: pythonPath.trim() || null });
      setPython(p);
      setNotice({ tone: "info", title: "Python saved", detail: `Python ${p.version ?? ""} at ${p.program ?? "PATH"}; used from the next run.` });
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    }
  }

  if (!view) {
    return (
      <div class="page">
        {notice ? <NoticeBanner notice={notice} /> : <Spinner label="Loading settings…" />}
      </div>
    );
  }
  const settings = toSettings(view);
  const fresh = (detected ?? []).filter((d) => !view.providers.some((p) => p.base_url === d.base_url));

  return (
    <div class="page" data-testid="settings">
      <header class="page-head">
        <div>
          <h1>Settings</h1>
          <p class="muted">Which AI answers, and how workflows run. Only masked extracts and your own messages ever reach an AI.</p>
        </div>
      </header>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}

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
          {view.providers.map((p) => {
            const t = tests[p.id];
            const roles = ROLES.filter((r) => view.roles[r.key] === p.id).map((r) => r.label);
            return (
              <li key={p.id} class="provider" data-testid="provider">
                {editing === p.id ? (
                  <ProviderForm
                    initial={p}
                    others={settings.providers.filter((o) => o.id !== p.id)}
                    onCancel={() => setEditing(null)}
                    onSave={(c) => save(upsertProvider(settings, c, p.id), `Back end ${c.id.trim()} saved`)}
                  />
                ) : (
                  <>
                    <div class="provider-main">
                      <div class="provider-title">
                        <strong>{p.id}</strong>
                        <span class="pill">{kindLabel(p.kind)}</span>
                        {roles.length > 0 && <span class="muted small">used by {roles.join(", ")}</span>}
                      </div>
                      <div class="muted small">
                        {p.kind === "manual" ? "You copy each prompt to an AI tool of your choice and paste its answer back." : `${p.model ?? "no model"} · ${p.base_url || KINDS.find((k) => k.kind === p.kind)?.defaultUrl}${windowLabel(p)}`}
                      </div>
                      {p.kind !== "manual" && (
                        <div class="provider-key">
                          <span class={`badge tone-${KEY_SOURCE[p.key].tone}`} data-testid="key-source">
                            {KEY_SOURCE[p.key].label}
                          </span>
                          {p.key_error && <span class="small warn-text">Keyring unavailable: {p.key_error}</span>}
                          <KeyEntry
                            provider={p}
                            onStored={(n) => {
                              setNotice(n);
                              void load();
                            }}
                          />
                          {p.key === "keyring" && (
                            <button type="button" class="button ghost small" onClick={() => void removeKey(p.id)}>
                              Remove key
                            </button>
                          )}
                        </div>
                      )}
                      {t && t !== "testing" && (
                        <p class={`test-result ${t.ok ? "ok" : "bad"}`} role="status" data-testid="test-result">
                          {t.ok ? "✓ " : "✕ "}
                          {t.message}
                        </p>
                      )}
                    </div>
                    <div class="provider-actions">
                      <button type="button" class="button small" disabled={t === "testing"} onClick={() => void test(p.id)}>
                        {t === "testing" ? "Testing…" : "Test connection"}
                      </button>
                      <button type="button" class="button small" onClick={() => setEditing(p.id)} aria-label={`Edit ${p.id}`}>
                        Edit
                      </button>
                      <button
                        type="button"
                        class="button small danger"
                        aria-label={`Remove ${p.id}`}
                        onClick={() => void save(removeProvider(settings, p.id), `Back end ${p.id} removed`).catch(() => {})}
                      >
                        Remove
                      </button>
                    </div>
                  </>
                )}
              </li>
            );
          })}
        </ul>
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
      </section>

      <section class="card" aria-labelledby="roles-h">
        <div class="card-head">
          <h2 id="roles-h">Who answers what</h2>
        </div>
        <div class="roles">
          {ROLES.map((r) => (
            <label key={r.key} class="role">
              <span>
                <strong>{r.label}</strong>
                <span class="muted small">{r.hint}</span>
              </span>
              <select
                name={`role-${r.key}`}
                value={view.roles[r.key] ?? ""}
                onChange={(e) => void save(assignRole(settings, r.key, e.currentTarget.value), `${r.label} changed`).catch(() => {})}
              >
                {!view.roles[r.key] && <option value="">Manual (default)</option>}
                {view.providers.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.id} ({kindLabel(p.kind)})
                  </option>
                ))}
              </select>
            </label>
          ))}
        </div>
      </section>

      <BudgetSettings />
      <UsageCard />
      <AgentRoles view={view} settings={settings} onSave={save} />

      <section class="card" aria-labelledby="python-h">
        <div class="card-head">
          <h2 id="python-h">Python interpreter</h2>
        </div>
        <form class="python-form" onSubmit={savePython}>
          <label>
            <span>Path</span>
            <input name="python" value={pythonPath} placeholder="python3 on PATH" onInput={(e) => setPythonPath(e.currentTarget.value)} />
          </label>
          <button type="submit" class="button">
            Save
          </button>
        </form>
        {python && (
          <p class="small" data-testid="python-status">
            {python.error ? <span class="warn-text">{python.error}</span> : <>Workflows run with Python {python.version} ({python.program}).</>}
          </p>
        )}
      </section>
      <IsolationSetting />
      <StorageSettings />
      <BackupsSetting />
      <EnvironmentsSetting />
    </div>
  );
}
