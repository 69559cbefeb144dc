// What a waiting run asks of the user: a gate's options (some with a note),
// or a failed step's retry / skip / stop.
import { useState } from "preact/hooks";
import type { Pending } from "./labels";

/** The controls that answer a waiting run. */
export function PendingPanel({ pending, busy, onAnswer }: { pending: Pending; busy: boolean; onAnswer: (o: string, input?: string) => void }) {
  const [input, setInput] = useState("");
  if (pending.kind === "gate") {
    const p = pending as Extract<Pending, { kind: "gate" }>;
    const ctx = Array.isArray(p.context) ? p.context.map((c) => [c.path, c.value] as const) : Object.entries(p.context ?? {});
    const needsInput = p.options.some((o) => o.requiresInput);
    return (
      <div class="gate" role="group" aria-label="Your decision">
        <h3>{p.prompt}</h3>
        {ctx.length > 0 && (
          <dl class="gate-context">
            {ctx.map(([k, v]) => (
              <>
                <dt>{k}</dt>
                <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
              </>
            ))}
          </dl>
        )}
        {needsInput && (
          <textarea placeholder="Your note (required for some choices)" aria-label="Your note" value={input} onInput={(e) => setInput((e.currentTarget as HTMLTextAreaElement).value)} />
        )}
        <div class="actions">
          {p.options.map((o) => (
            <button key={o.label} type="button" class="button" disabled={busy || (!!o.requiresInput && !input.trim())} onClick={() => onAnswer(o.label, o.requiresInput ? input : undefined)}>
              {o.label}
            </button>
          ))}
        </div>
      </div>
    );
  }
  if (pending.kind === "attention" || pending.kind === "join") {
    const p = pending as { error?: string; options?: string[] };
    return (
      <div class="gate attention" role="group" aria-label="A step needs attention">
        <h3>A step needs your attention</h3>
        {p.error && <p class="flow-error">{p.error}</p>}
        <div class="actions">
          {(p.options ?? ["retry", "skip", "stop"]).map((o) => (
            <button key={o} type="button" class="button" disabled={busy} onClick={() => onAnswer(o)}>
              {o.charAt(0).toUpperCase() + o.slice(1)}
            </button>
          ))}
        </div>
      </div>
    );
  }
  return <p class="muted small">Waiting ({pending.kind})…</p>;
}
