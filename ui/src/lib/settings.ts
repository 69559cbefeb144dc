// The settings screen's pure logic: editing the LLM settings document
// (providers and roles), turning a detected local server into a provider.
import type { Detected, LlmSettings, ProviderConfig, ProviderKind, SettingsView } from "../generated";

/** The roles a person assigns a back end to, with what each does. */
export const ROLES: { key: string; label: string; hint: string }[] = [
  { key: "validator", label: "Validator", hint: "Checks that a task can be done by a local script." },
  { key: "clarifier", label: "Clarifier", hint: "Asks the questions before building." },
  { key: "builder", label: "Builder", hint: "Writes, reviews and revises the script." },
];

export const KINDS: { kind: ProviderKind; label: string; needsKey: boolean; defaultUrl: string }[] = [
  { kind: "manual", label: "Manual (copy & paste)", needsKey: false, defaultUrl: "" },
  { kind: "ollama", label: "Ollama", needsKey: false, defaultUrl: "http://127.0.0.1:11434" },
  { kind: "openai", label: "OpenAI-compatible", needsKey: true, defaultUrl: "https://api.openai.com/v1" },
  { kind: "anthropic", label: "Anthropic", needsKey: true, defaultUrl: "https://api.anthropic.com" },
  { kind: "local", label: "Embedded model (on this computer)", needsKey: false, defaultUrl: "" },
];

/** Whether a kind reaches a server (and so has a URL and maybe a key). */
export function isNetworkKind(kind: ProviderKind): boolean {
  return kind !== "manual" && kind !== "local";
}

export function kindLabel(kind: ProviderKind): string {
  return KINDS.find((k) => k.kind === kind)?.label ?? kind;
}

/** The settings document of a view (what `PUT /api/settings` takes). */
export function toSettings(view: SettingsView): LlmSettings {
  return {
    providers: view.providers.map(({ key: _key, key_error: _err, ...config }) => config),
    roles: { ...view.roles },
  };
}

/** Empty optional strings become null; trims the rest. */
function clean(config: ProviderConfig): ProviderConfig {
  const opt = (v: string | null | undefined) => (v && v.trim() ? v.trim() : null);
  return { ...config, id: config.id.trim(), base_url: opt(config.base_url), model: opt(config.model) };
}

/** Checks a provider form before it is sent; returns the problem, or null. */
export function providerProblem(config: ProviderConfig, others: ProviderConfig[]): string | null {
  const c = clean(config);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(c.id)) return "Give it a short id: letters, digits, - _ or . (e.g. local-llama).";
  if (others.some((o) => o.id === c.id)) return `A back end named “${c.id}” already exists.`;
  if (c.kind !== "manual" && !c.model) return c.kind === "local" ? "Give the model file's path (a .gguf file)." : "Say which model to ask.";
  if (c.kind === "local" && !/^(\/|[A-Za-z]:[\\/])/.test(c.model ?? "")) return "The model file's path must be absolute (e.g. /home/me/models/model.gguf).";
  if (c.kind === "local" && c.base_url) return "The embedded model runs on this computer: leave the base URL empty.";
  if (c.base_url && !/^https?:\/\/[^\s]+$/.test(c.base_url)) return "The base URL must start with http:// or https://.";
  if (c.context_window != null && !(Number.isInteger(c.context_window) && c.context_window >= MIN_WINDOW && c.context_window <= MAX_WINDOW))
    return `The context window must be a whole number of tokens from ${MIN_WINDOW.toLocaleString("en-US")} to ${MAX_WINDOW.toLocaleString("en-US")}, or blank to learn it from the server.`;
  return null;
}

/** Adds or replaces (by `replacing` id) a provider; roles follow a rename. */
export function upsertProvider(s: LlmSettings, config: ProviderConfig, replacing?: string): LlmSettings {
  const c = clean(config);
  const providers = replacing
    ? s.providers.map((p) => (p.id === replacing ? c : p))
    : [...s.providers, c];
  const roles: LlmSettings["roles"] = {};
  for (const [role, id] of Object.entries(s.roles)) roles[role] = id === replacing ? c.id : id;
  return { providers, roles };
}

/** Removes a provider; roles that used it fall back to the first one left. */
export function removeProvider(s: LlmSettings, id: string): LlmSettings {
  const providers = s.providers.filter((p) => p.id !== id);
  const fallback = providers[0]?.id;
  const roles: LlmSettings["roles"] = {};
  for (const [role, used] of Object.entries(s.roles)) {
    if (used !== id) roles[role] = used;
    else if (fallback) roles[role] = fallback;
  }
  return { providers, roles };
}

/** Points a role at a provider. */
export function assignRole(s: LlmSettings, role: string, id: string): LlmSettings {
  return { ...s, roles: { ...s.roles, [role]: id } };
}

/** A provider for a detected local server, with an id not yet taken. */
export function providerFromDetected(d: Detected, taken: string[]): ProviderConfig {
  const base = `local-${d.kind}`;
  let id = base;
  for (let n = 2; taken.includes(id); n++) id = `${base}-${n}`;
  return { id, kind: d.kind, base_url: d.base_url, model: d.models[0] ?? null };
}

/** The context window bounds the server accepts (`settings::MIN_CONTEXT_WINDOW`…). */
export const MIN_WINDOW = 256;
export const MAX_WINDOW = 10_000_000;

/** The context-window input's value: blank is null (learn it from the server). */
export function parseWindow(text: string): number | null {
  const t = text.trim();
  return t === "" ? null : Number(t);
}

/** Checks the embedded model's idle-minutes input; returns the problem, or null. */
export function idleProblem(text: string): string | null {
  const n = Number(text.trim());
  if (text.trim() === "" || !Number.isInteger(n) || n < 1 || n > 1440) return "Give a whole number of minutes from 1 to 1440.";
  return null;
}

/** The one line under a provider's name on its card. */
export function providerSummary(p: ProviderConfig): string {
  if (p.kind === "manual") return "You copy each prompt to an AI tool of your choice and paste its answer back.";
  if (p.kind === "local") return `${p.model ?? "no model file"} · runs in this process; nothing leaves this computer${windowLabel(p)}`;
  return `${p.model ?? "no model"} · ${p.base_url || KINDS.find((k) => k.kind === p.kind)?.defaultUrl}${windowLabel(p)}`;
}

/** " · 4,096-token window (set)" on a provider card, when one is set. */
export function windowLabel(p: ProviderConfig): string {
  return p.context_window != null ? ` · ${p.context_window.toLocaleString("en-US")}-token context window (set)` : "";
}
