// One AI back end in the list: what it is, which roles use it, where its key
// comes from, the last connection test, and test / edit / remove.
import type { ConnectionTest, ProviderView, SettingsView } from "../generated";
import { ROLES, isNetworkKind, kindLabel, providerSummary } from "../lib/settings";
import { KeyEntry } from "./KeyEntry";
import type { SettingsState } from "./useSettings";

const KEY_SOURCE: Record<ProviderView["key"], { label: string; tone: string }> = {
  keyring: { label: "Key in system keyring", tone: "good" },
  environment: { label: "Key from environment", tone: "good" },
  none: { label: "No key", tone: "muted" },
};

/** The body of a back end's list item (when it is not being edited). */
export function ProviderItem({ p, view, state, onRemove }: { p: ProviderView; view: SettingsView; state: SettingsState; onRemove: () => void }) {
  const { setNotice, load, removeKey, test, setEditing } = state;
  const t: ConnectionTest | "testing" | undefined = state.tests[p.id];
  const roles = ROLES.filter((r) => view.roles[r.key] === p.id).map((r) => r.label);
  return (
    <>
      <div class="provider-main">
        <div class="provider-title">
          <strong>{p.id}</strong>
          <span class="pill">{kindLabel(p.kind)}</span>
          {roles.length > 0 && <span class="muted small">used by {roles.join(", ")}</span>}
        </div>
        <div class="muted small">
          {providerSummary(p)}
        </div>
        {isNetworkKind(p.kind) && (
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
        <button type="button" class="button small danger" aria-label={`Remove ${p.id}`} onClick={onRemove}>
          Remove
        </button>
      </div>
    </>
  );
}
