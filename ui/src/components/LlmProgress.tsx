// Live progress of the LLM reply in flight in the builder conversation:
// which role is speaking, tokens so far and elapsed time, and Cancel.
import { useEffect, useState } from "preact/hooks";
import { Spinner } from "./ui";

/** The reply in flight: its role, streamed pieces so far and start time. */
export type Streaming = { role: string; chars: number; pieces: number; started: number };

/** The next streaming state after a delta of `role` (a new role restarts the count). */
export function nextStreaming(s: Streaming | null, role: string, delta: string, now: number): Streaming {
  if (s && s.role === role) return { ...s, chars: s.chars + delta.length, pieces: s.pieces + 1 };
  return { role, chars: delta.length, pieces: 1, started: now };
}

/** "1.2 s", "1 min 05 s". */
export function elapsedLabel(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
}

// Servers stream about one token a piece; the count is labelled as approximate.
export function LlmProgress({
  streaming,
  sentAt,
  onCancel,
  cancelling,
}: {
  streaming: Streaming | null;
  sentAt: number;
  onCancel: () => void;
  cancelling: boolean;
}) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, []);
  const label = streaming
    ? `The ${streaming.role} is replying · ≈${streaming.pieces} tokens · ${elapsedLabel(now - streaming.started)}`
    : `Waiting for the model · ${elapsedLabel(now - sentAt)}`;
  return (
    <div class="llm-progress" data-testid="llm-progress">
      <Spinner label={label} />
      <button type="button" class="button small" data-testid="llm-cancel" onClick={onCancel} disabled={cancelling}>
        {cancelling ? "Stopping…" : "Cancel"}
      </button>
    </div>
  );
}
