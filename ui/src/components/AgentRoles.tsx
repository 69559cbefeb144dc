// Flow agents as roles (issue 12): the flows' default back end (the `flows`
// role; without it, the builder's) and one `agent:<name>` role per agent
// the flows in the flows folder use. An agent whose file names its own
// provider uses that one, and the row says so instead of offering a choice.
import { useEffect, useState } from "preact/hooks";
import type { LlmSettings, SettingsView } from "../generated";
import { kindLabel } from "../lib/settings";
import { useTransport } from "../context";
import { toApiError } from "../transport";

/** An agent found in the flows folder. */
export interface FlowAgent {
  name: string;
  /** The provider id its file names, if any (it wins over the roles). */
  provider: string | null;
  /** The model its file names, if any. */
  model: string | null;
}

/** The agents of exported flow bundles, by name, once each. */
export function agentsOf(bundles: { agents: { id: string; agent?: unknown }[] }[]): FlowAgent[] {
  const found = new Map<string, FlowAgent>();
  for (const b of bundles) {
    for (const a of b.agents) {
      if (found.has(a.id)) continue;
      const def = (a.agent ?? {}) as { provider?: unknown; model?: unknown };
      const text = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
      found.set(a.id, { name: a.id, provider: text(def.provider), model: text(def.model) });
    }
  }
  return [...found.values()].sort((x, y) => x.name.localeCompare(y.name));
}

/** `settings` with `role` on provider `id` ("" removes the role). */
export function withRole(settings: LlmSettings, role: string, id: string): LlmSettings {
  const roles = { ...settings.roles };
  if (id === "") delete roles[role];
  else roles[role] = id;
  return { ...settings, roles };
}

export function AgentRoles({
  view,
  settings,
  onSave,
}: {
  view: SettingsView;
  settings: LlmSettings;
  onSave: (next: LlmSettings, done: string) => Promise<void>;
}) {
  const transport = useTransport();
  const [agents, setAgents] = useState<FlowAgent[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const list = await transport.listFlows();
        const bundles = await Promise.all(list.flows.filter((f) => !f.disabled).map((f) => transport.exportFlow(f.name)));
        if (live) setAgents(agentsOf(bundles));
      } catch (e) {
        if (live) {
          setProblem(toApiError(e).message);
          setAgents([]);
        }
      }
    })();
    return () => {
      live = false;
    };
  }, [transport]);

  const options = view.providers.map((p) => (
    <option key={p.id} value={p.id}>
      {p.id} ({kindLabel(p.kind)})
    </option>
  ));
  const assign = (role: string, label: string) => (e: { currentTarget: HTMLSelectElement }) =>
    void onSave(withRole(settings, role, e.currentTarget.value), `${label} changed`).catch(() => {});

  return (
    <section class="card" aria-labelledby="agent-roles-h" data-testid="agent-roles">
      <div class="card-head">
        <h2 id="agent-roles-h">Flow agents</h2>
      </div>
      <div class="roles">
        <label class="role">
          <span>
            <strong>All flow agents</strong>
            <span class="muted small">The default of every agent below without its own choice.</span>
          </span>
          <select name="role-flows" value={view.roles["flows"] ?? ""} onChange={assign("flows", "Flow agents' default")}>
            <option value="">Same as the builder</option>
            {options}
          </select>
        </label>
        {agents === null && <p class="muted small">Looking for agents in the flows folder…</p>}
        {agents?.map((a) => {
          const role = `agent:${a.name}`;
          return (
            <label key={a.name} class="role">
              <span>
                <strong>{a.name}</strong>
                <span class="muted small">
                  {a.provider
                    ? `Its file names provider ${a.provider}${a.model ? `, model ${a.model}` : ""}.`
                    : a.model
                      ? `Its file names model ${a.model}.`
                      : "A flow agent."}
                </span>
              </span>
              {a.provider ? (
                <span class={view.providers.some((p) => p.id === a.provider) ? "small" : "small warn-text"}>
                  {view.providers.some((p) => p.id === a.provider)
                    ? `Uses ${a.provider}`
                    : `No provider ${a.provider} is configured: add it above`}
                </span>
              ) : (
                <select name={`role-${role}`} value={view.roles[role] ?? ""} onChange={assign(role, a.name)}>
                  <option value="">Flow agents' default</option>
                  {options}
                </select>
              )}
            </label>
          );
        })}
      </div>
      {agents?.length === 0 && !problem && <p class="muted small">No flow in the flows folder names an agent with a file.</p>}
      {problem && <p class="small warn-text">Could not read the flows: {problem}</p>}
    </section>
  );
}
