// The Models card's logic, apart from the component so it can be tested:
// following `model_progress` events, what a row shows (size, memory,
// speed), what the first start recommends, and reading a pasted SHA-256.
import type { CatalogEntry, Event, InstalledModel, ModelsView } from "../generated";
import { bytesLabel } from "../lib/extracts";

/** A download as the card shows it. */
export interface Progress {
  stage: string;
  done: number;
  total: number | null;
  message: string;
}

/** The stages after which a download is over (the list is read again). */
export const FINAL_STAGES = ["ready", "failed", "cancelled"];

type ModelEvent = Extract<Event, { type: "model_progress" }>;

/** Whether `e` is a model download's progress. */
export function isModelProgress(e: Event): e is ModelEvent {
  return e.type === "model_progress";
}

/** The downloads after `e`: one that ended (ready, failed, cancelled) is dropped. */
export function applyProgress(downloads: Record<string, Progress>, e: ModelEvent): Record<string, Progress> {
  const next = { ...downloads };
  if (FINAL_STAGES.includes(e.stage)) {
    delete next[e.name];
    return next;
  }
  const before = downloads[e.name];
  next[e.name] = {
    stage: e.stage,
    // "verifying" and "measuring" carry no byte counts of their own.
    done: e.stage === "downloading" ? e.done : (before?.done ?? e.done),
    total: e.total ?? before?.total ?? null,
    message: e.message,
  };
  return next;
}

/** The downloads the list says are running, merged with what events said since. */
export function downloadsOf(view: ModelsView, seen: Record<string, Progress>): Record<string, Progress> {
  const out: Record<string, Progress> = {};
  for (const d of view.downloads) {
    out[d.name] = seen[d.name] ?? { stage: "downloading", done: d.done, total: d.total, message: "" };
  }
  return out;
}

/** 0–1 of a download, or null when its size is not known. */
export function fraction(p: Progress): number | null {
  if (!p.total || p.total <= 0) return null;
  return Math.min(1, p.done / p.total);
}

/** "12 MB of 98 MB (12%)", or the bytes alone when the size is not known. */
export function progressLabel(p: Progress): string {
  if (p.stage === "verifying") return "Checking its SHA-256…";
  if (p.stage === "measuring") return "Measuring its speed on this machine…";
  const f = fraction(p);
  if (f === null) return `${bytesLabel(p.done)} so far`;
  return `${bytesLabel(p.done)} of ${bytesLabel(p.total ?? 0)} (${Math.floor(f * 100)}%)`;
}

/** What a recommended model's speed line says. */
export function speedLabel(entry: CatalogEntry): string {
  const tps = entry.expected_tokens_per_second;
  if (tps === null) return "Speed: not measured yet";
  return `About ${tps >= 10 ? Math.round(tps) : tps.toFixed(1)} tokens/s (${entry.speed_note})`;
}

/** An installed model's speed line. */
export function installedSpeedLabel(m: InstalledModel): string {
  if (!m.speed) return "Speed: not measured yet";
  const tps = m.speed.tokens_per_second;
  return `${tps >= 10 ? Math.round(tps) : tps.toFixed(1)} tokens/s here, first token after ${m.speed.first_token_seconds.toFixed(1)} s`;
}

/** What a model needs in memory, against this machine's. */
export function memoryLabel(bytes: number, total: number | null): string {
  const need = `Needs about ${bytesLabel(bytes)} of memory`;
  return total ? `${need} (this machine has ${bytesLabel(total)})` : need;
}

/** The first start's local choice: the recommended model, if one fits. */
export function firstStartModel(view: ModelsView): CatalogEntry | null {
  if (!view.recommended) return null;
  return view.catalog.find((c) => c.name === view.recommended) ?? null;
}

/** A pasted SHA-256 in lower case, or null when it is not 64 hex digits. */
export function parseSha256(text: string): string | null {
  const t = text.trim().toLowerCase();
  return /^[0-9a-f]{64}$/.test(t) ? t : null;
}
