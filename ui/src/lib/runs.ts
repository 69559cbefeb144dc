// The run form and run history's pure logic: values from a version's
// `fields`, the `RunInputs` they make, and labels.
import type { Field, RunInputs } from "../generated";

/** One field's value in the form: file ids for file fields. */
export type FieldValue = string | number | boolean | string[];

/** The form's starting values. */
export function initialValues(fields: Field[]): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const f of fields) {
    if (f.type === "boolean") out[f.name] = false;
    else if (f.type === "file" || f.type === "files") out[f.name] = [];
    else if (f.type === "choice") out[f.name] = f.options?.[0] ?? "";
    else out[f.name] = "";
  }
  return out;
}

/** The request of a filled form, or the first problem. */
export function runRequest(fields: Field[], values: Record<string, FieldValue>): { request: RunInputs } | { problem: string } {
  const inputs: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.type === "file" || f.type === "files") {
      const ids = Array.isArray(v) ? v : [];
      if (!ids.length) {
        if (f.required) return { problem: `Add a file for “${f.label}”.` };
        continue;
      }
      inputs[f.name] = f.type === "file" ? ids[0] : ids;
    } else if (f.type === "boolean") {
      inputs[f.name] = v === true;
    } else if (f.type === "number") {
      if (v === "" || v === undefined) {
        if (f.required) return { problem: `Fill in “${f.label}”.` };
        continue;
      }
      const n = Number(v);
      if (!Number.isFinite(n)) return { problem: `“${f.label}” must be a number.` };
      inputs[f.name] = n;
    } else {
      const s = typeof v === "string" ? v.trim() : "";
      if (!s) {
        if (f.required) return { problem: `Fill in “${f.label}”.` };
        continue;
      }
      inputs[f.name] = s;
    }
  }
  return { request: { inputs } };
}

/** A duration for people: `850 ms`, `2.4 s`, `1 min 5 s`. */
export function durationLabel(ms: number | bigint | null | undefined): string {
  if (ms == null) return "—";
  const n = Number(ms);
  if (n < 1000) return `${n} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)} s`;
  const m = Math.floor(n / 60_000);
  return `${m} min ${Math.round((n % 60_000) / 1000)} s`;
}

/** The tone of a run status. */
export function runTone(status: string): "good" | "bad" | "busy" {
  if (status === "succeeded") return "good";
  if (status === "running") return "busy";
  return "bad";
}

/** The build's phases in order, and where `phase` is among them. */
export const PHASES = ["generate", "review", "revise", "complete"] as const;
export function phaseIndex(phase: string): number {
  const i = (PHASES as readonly string[]).indexOf(phase);
  return i < 0 ? (phase === "failed" ? -1 : 0) : i;
}
