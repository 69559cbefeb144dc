// The privacy ledger's pure logic: badges, readable bodies, live merging.
import type { LedgerEntry } from "../generated";
import type { Tone } from "./status";

/** The badge of an entry's outcome. */
export function outcomeBadge(e: Pick<LedgerEntry, "outcome" | "blocked"> & { local?: boolean }): { label: string; tone: Tone } {
  if (e.blocked) return { label: "Blocked by privacy guard", tone: "bad" };
  // Exhaustive over the generated CallOutcome: a new outcome fails the type-check here.
  switch (e.outcome) {
    case "blocked":
      return { label: "Blocked by privacy guard", tone: "bad" };
    case "ok":
      return e.local ? { label: "Answered on this computer", tone: "good" } : { label: "Sent", tone: "good" };
    case "error":
      return { label: "Failed", tone: "bad" };
    case "cancelled":
      return { label: "Cancelled", tone: "muted" };
    case "in_flight":
      return { label: "Waiting for the reply", tone: "neutral" };
  }
}

/** Where a call went, as the ledger says it. */
export function destination(e: Pick<LedgerEntry, "url" | "provider" | "local">): string {
  if (e.local) return "Nowhere: the embedded model on this computer (nothing left the machine)";
  if (e.url) return e.url;
  return e.provider === "manual" ? "You (copied by hand)" : "—";
}

/** A body as people read it: JSON pretty-printed, anything else as is. */
export function prettyBody(text: string | null): string {
  if (!text) return "";
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Whether a live entry belongs in a list searched for `q` (what the server matches). */
export function matchesQuery(e: LedgerEntry, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (!needle) return true;
  return [e.request_body, e.reply ?? "", e.role, e.provider, e.model].some((f) => f.toLowerCase().includes(needle));
}

/** Puts a new entry first, replacing one with the same id. */
export function mergeEntry(list: LedgerEntry[], entry: LedgerEntry): LedgerEntry[] {
  return [entry, ...list.filter((e) => e.id !== entry.id)];
}
