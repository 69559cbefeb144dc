// The Agents page's pure logic: a form's draft and the request it sends,
// the model choices of a back end, and a 400's problems by field (the
// server names every problem of a request, one `field: what` per line).
import type { AgentInput, AgentView, ProviderView } from "../generated";

/** What the agent form edits; "" is "not set". */
export interface AgentDraft {
  name: string;
  displayName: string;
  prompt: string;
  provider: string;
  model: string;
}

/** The fields of an agent, in the form's order. */
export const AGENT_FIELDS = ["name", "displayName", "provider", "model", "prompt"] as const;

/** The draft of an agent (an empty one to create). */
export function draftOf(agent?: AgentView): AgentDraft {
  return {
    name: agent?.name ?? "",
    displayName: agent?.displayName ?? "",
    prompt: agent?.prompt ?? "",
    provider: agent?.provider ?? "",
    model: agent?.model ?? "",
  };
}

/** The request of a draft: unset fields left out, the rest as typed (the server trims). */
export function inputOf(draft: AgentDraft): AgentInput {
  const input: AgentInput = { name: draft.name };
  if (draft.displayName.trim()) input.displayName = draft.displayName;
  if (draft.prompt.trim()) input.prompt = draft.prompt;
  if (draft.provider) input.provider = draft.provider;
  if (draft.model) input.model = draft.model;
  return input;
}

/** One option of the model list. */
export interface ModelChoice {
  value: string;
  label: string;
}

/**
 * The models an agent on `providerId` can ask: the back end's own, the
 * models of the configured back ends of the same kind, and `current` (so
 * an edit never loses it). Manual and the default back end take none of
 * their own.
 */
export function modelChoices(providers: ProviderView[], providerId: string, current: string): ModelChoice[] {
  const provider = providers.find((p) => p.id === providerId);
  const own: ModelChoice = {
    value: "",
    label: !providerId
      ? "The default back end's model"
      : provider?.kind === "manual"
        ? "None (you paste the answers)"
        : provider?.model
          ? `The back end's own (${provider.model})`
          : "The back end's own",
  };
  const models = new Set<string>();
  if (provider && provider.kind !== "manual") {
    for (const p of providers) if (p.kind === provider.kind && p.model && p.model !== provider.model) models.add(p.model);
  }
  if (current) models.add(current);
  return [own, ...[...models].sort().map((m) => ({ value: m, label: m }))];
}

/** A request's problems by field ("" for those of no field of the form). */
export type Problems = Record<string, string[]>;

/** The problems of an error message: `field: what` lines of a 400, or the message as one. */
export function problemsOf(message: string): Problems {
  const lines = message.includes("\n- ") ? message.split("\n- ").slice(1) : [message];
  const out: Problems = {};
  for (const line of lines) {
    const m = /^(\w+): (.*)$/s.exec(line);
    const name = m?.[1] ?? "";
    const field = (AGENT_FIELDS as readonly string[]).includes(name) ? name : "";
    const text = field ? (m?.[2] ?? line) : line;
    (out[field] ??= []).push(text);
  }
  return out;
}

/** "Used by flow a" / "Used by flows a, b" / "Not used by any flow". */
export function usedByText(flows: string[]): string {
  if (flows.length === 0) return "Not used by any flow";
  return `Used by flow${flows.length === 1 ? "" : "s"} ${flows.join(", ")}`;
}
