// What a person's answer at a gate or manual task sends: the decision, and
// the optional result typed beside it, as text or as JSON (which later steps
// read like an agent's output).
import type { GateAnswer } from "../generated";

/** How the result field is read. */
export type ResultMode = "text" | "json";

/** The result field read as `mode`: `{ok}` with the value (absent when empty), or the reason it is not valid JSON. */
export function readResult(text: string, mode: ResultMode): { ok: true; value?: unknown } | { ok: false; error: string } {
  const t = text.trim();
  if (!t) return { ok: true };
  if (mode === "text") return { ok: true, value: t };
  try {
    return { ok: true, value: JSON.parse(t) as unknown };
  } catch (e) {
    return { ok: false, error: `The result is not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The answer the gate endpoint takes for `option`, its note `input` and the result `value`. */
export function decisionAnswer(option: string, input?: string, value?: unknown): GateAnswer {
  const base = { option, input: input ?? null };
  return value === undefined ? base : { ...base, result: value };
}

/** A decision's button text: an all-lowercase label (the defaults: approve, request changes, reject) starts with a capital. */
export function decisionLabel(label: string): string {
  return label === label.toLowerCase() ? label.charAt(0).toUpperCase() + label.slice(1) : label;
}
