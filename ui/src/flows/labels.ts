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
