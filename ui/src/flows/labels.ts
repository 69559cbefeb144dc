// The words and tones the Flows page shows for node and run states, and the
// shapes of what a waiting run asks of the user.
import type { NodeState } from "./state";

/** What a waiting run asks: a gate's decision, or a failed step's way on. */
export type Pending =
  | { kind: "gate"; prompt: string; context?: Record<string, unknown> | { path: string; value: unknown }[]; options: { label: string; requiresInput?: boolean }[] }
  | { kind: "attention" | "join"; error?: string; options: string[] }
  | { kind: string; [k: string]: unknown };

/** The diagram legend's label of each node state. */
export const STATE_LABEL: Record<NodeState, string> = {
  pending: "Pending",
  running: "Running",
  done: "Done",
  failed: "Failed",
  waiting: "Waiting for you",
};

/** The badge tone of each run status. */
export const RUN_TONE: Record<string, string> = {
  running: "busy",
  waiting: "attention",
  needs_attention: "attention",
  stopped: "muted",
  completed: "good",
  failed: "bad",
};

/** What a run's badge says: its status, or whether a run stored as running
 * is cut off (its process died) or run by another Maskflow process. */
export type RunLiveness = { status: unknown; interrupted?: boolean; runningElsewherePid?: number | null };

/** The badge's words and tone for a run. */
export function runBadge(run: RunLiveness): { label: string; tone: string } {
  const status = String(run.status);
  if (status === "running" && run.interrupted) return { label: "interrupted", tone: "bad" };
  if (status === "running" && run.runningElsewherePid != null) return { label: "running elsewhere", tone: "busy" };
  return { label: status.replace(/_/g, " "), tone: RUN_TONE[status] ?? "neutral" };
}

/** One fan-out item's retry that is due: its place in the list (from 1), the retry and the last error. */
export type DueRetry = { item: number; retry: number; limit: number; error: string };

/** The due retries of the engine's "retry pending" message (`item 1: retry 1 of 2 (last error: …)`,
 * items counted from 0 there); null when the message has another shape, to be shown as it is. */
export function dueRetries(message: string): DueRetry[] | null {
  const list = message.slice(message.indexOf("? ") + 2);
  const found: DueRetry[] = [];
  const re = /item (\d+): retry (\d+) of (\d+) \(last error: (.*?)\)(?=; item \d+: retry |$)/gs;
  for (const m of list.matchAll(re)) {
    found.push({ item: Number(m[1]) + 1, retry: Number(m[2]), limit: Number(m[3]), error: m[4] ?? "" });
  }
  return found.length > 0 ? found : null;
}
