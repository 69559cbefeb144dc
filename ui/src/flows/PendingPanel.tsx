// What a waiting run asks of the user: a gate's options (some with a note),
// or a failed step's retry / skip / stop, or a fan-out item's retry that was
// due when the run stopped (never run without the person's word).
import { useState } from "preact/hooks";
import { dueRetries, type Pending } from "./labels";

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
  if (pending.kind === "attention" && (pending as { reason?: unknown }).reason === "retry pending") {
    return <DueRetryPanel pending={pending as { step?: string; error?: string; options?: string[] }} busy={busy} onAnswer={onAnswer} />;
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

/** What each answer to a due retry does, in the person's words. */
const DUE_RETRY_ANSWERS: Record<string, { label: string; hint: string }> = {
  retry: { label: "Retry now", hint: "run the failed item again" },
  skip: { label: "Skip it", hint: "carry on without the failed item" },
  stop: { label: "Stop the run", hint: "end here; you can resume later" },
};

/** A fan-out item's retry that was due when the run stopped or Maskflow quit. */
function DueRetryPanel({ pending, busy, onAnswer }: { pending: { step?: string; error?: string; options?: string[] }; busy: boolean; onAnswer: (o: string) => void }) {
  const due = dueRetries(pending.error ?? "");
  return (
    <div class="gate attention" role="group" aria-label="A retry is waiting for you">
      <h3>A retry is waiting for you</h3>
      <p>
        An item of step <strong>“{pending.step ?? "?"}”</strong> failed, and the run stopped before its retry ran. Maskflow does not retry it
        without you.
      </p>
      {due ? (
        <ul class="flow-error" data-testid="due-retry">
          {due.map((d) => (
            <li key={d.item}>
              Item {d.item} of the list: retry {d.retry} of {d.limit} is due. Last error: {d.error}
            </li>
          ))}
        </ul>
      ) : (
        pending.error && <p class="flow-error" data-testid="due-retry">{pending.error}</p>
      )}
      <div class="actions">
        {(pending.options ?? ["retry", "skip", "stop"]).map((o) => {
          const a = DUE_RETRY_ANSWERS[o] ?? { label: o, hint: "" };
          return (
            <button key={o} type="button" class="button" title={a.hint} disabled={busy} onClick={() => onAnswer(o)}>
              {a.label}
            </button>
          );
        })}
      </div>
      <p class="muted small">
        {(pending.options ?? ["retry", "skip", "stop"])
          .flatMap((o) => {
            const a = DUE_RETRY_ANSWERS[o];
            return a ? [`${a.label}: ${a.hint}.`] : [];
          })
          .join(" ")}
      </p>
    </div>
  );
}
