// How the Workflows page words dates and where a version came from.
import type { VersionSummary } from "../generated";

/** A date and time to the minute, or the text as given if it is not a date. */
export function when(rfc3339: string): string {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

/** Where a version came from, e.g. "restored from v1". */
export function originText(v: VersionSummary): string | null {
  if (v.origin === "restored") return v.origin_version ? `restored from v${v.origin_version}` : "restored";
  if (v.origin === "edited" && v.origin_version) return `edited from v${v.origin_version}`;
  return null;
}
