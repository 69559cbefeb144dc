// What a waiting run asks of the user: a gate's options (some with a note),
// or a failed step's retry / skip / stop, or a fan-out item's retry that was
// due when the run stopped (never run without the person's word).
import { useState } from "preact/hooks";
import { decisionLabel, readResult, type ResultMode } from "./decision";
import { dueRetries, type Pending } from "./labels";

/** Answers a waiting run: the option, a note some options require, the person's result. */
export type OnAnswer = (option: string, input?: string, result?: unknown) => void;

/** The controls that answer a waiting run. */
export function PendingPanel({ pending, busy, onAnswer }: { pending: Pending; busy: boolean; onAnswer: OnAnswer }) {
  if (pending.kind === "gate") {
    return <DecisionForm pending={pending as Extract<Pending, { kind: "gate" }>} busy={busy} onAnswer={onAnswer} />;
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

/**
 * A gate or manual task: a button per decision, and an optional result
 * (text, or JSON the later steps read like an agent's output).
 */
function DecisionForm({ pending: p, busy, onAnswer }: { pending: Extract<Pending, { kind: "gate" }>; busy: boolean; onAnswer: OnAnswer }) {
  const [text, setText] = useState("");
  const [mode, setMode] = useState<ResultMode>("text");
  const ctx = Array.isArray(p.context) ? p.context.map((c) => [c.path, c.value] as const) : Object.entries(p.context ?? {});
  const needsInput = p.options.some((o) => o.requiresInput);
  const read = readResult(text, mode);
  const hasText = mode === "text" && !!text.trim();
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
      <label class="small" for="decision-result">
        {needsInput ? "Your note (required for some choices)" : "Your result (optional)"}
      </label>
      <textarea
        id="decision-result"
        aria-label={needsInput ? "Your note" : "Your result"}
        placeholder={mode === "json" ? '{"notes": "…"}' : "What the next steps should know"}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <div class="decision-mode small" role="radiogroup" aria-label="The result is">
        <label>
          <input type="radio" name="decision-mode" checked={mode === "text"} onChange={() => setMode("text")} /> Text
        </label>
        <label>
          <input type="radio" name="decision-mode" checked={mode === "json"} onChange={() => setMode("json")} /> JSON
        </label>
      </div>
      {!read.ok && (
        <p class="flow-error" role="alert">
          {read.error}
        </p>
      )}
      <div class="actions">
        {p.options.map((o) => (
          <button
            key={o.label}
            type="button"
            class="button"
            disabled={busy || !read.ok || (!!o.requiresInput && !hasText)}
            onClick={() => {
              // Text goes as the note (what an agent's pause takes too); JSON as the result.
              if (read.ok) onAnswer(o.label, mode === "text" ? (read.value as string | undefined) : undefined, mode === "json" ? read.value : undefined);
            }}
          >
            {decisionLabel(o.label)}
          </button>
        ))}
      </div>
    </div>
  );
}

/** What each answer to a due retry does, in the person's words. */
const DUE_RETRY_ANSWERS: Record<string, { label: string; hint: string }> = {
  retry: { label: "Retry now", hint: "run the failed item again" },
  skip: { label: "Skip it", hint: "carry on without the failed item" },
  stop: { label: "Stop the run", hint: "end here; you can resume later" },
};

/** A fan-out item's retry that was due when the run stopped or Maskflow quit. */
function DueRetryPanel({ pending, busy, onAnswer }: { pending: { step?: string; error?: string; options?: string[] }; busy: boolean; onAnswer: OnAnswer }) {
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
