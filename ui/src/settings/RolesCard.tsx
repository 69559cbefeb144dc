// The "Who answers what" card: which back end each role uses.
import type { LlmSettings, SettingsView } from "../generated";
import { ROLES, assignRole, kindLabel } from "../lib/settings";
import type { SettingsState } from "./useSettings";

/** A back-end choice per role of `view`. */
export function RolesCard({ view, settings, save }: { view: SettingsView; settings: LlmSettings; save: SettingsState["save"] }) {
  return (
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
  );
}
