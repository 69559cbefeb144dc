// The selected run's transcript: one bubble per turn, the streaming reply,
// the run's error and what it waits for.
import type { FlowRunView, ResumeContext, RetryDue, TurnView } from "../generated";
import { ManualPrompts } from "../components/ManualPrompts";
import type { Pending } from "./labels";
import { type OnAnswer, PendingPanel } from "./PendingPanel";
import { stepOf } from "./state";

/** The transcript card of the Flows page. */
export function FlowTranscript({
  run,
  stream,
  busy,
  onAnswer,
}: {
  run: FlowRunView | null;
  stream: string;
  busy: boolean;
  onAnswer: OnAnswer;
}) {
  const status = run ? String(run.status) : null;
  const pending = (run?.pending ?? null) as Pending | null;
  return (
    <div class="flow-card flow-transcript" aria-label="Transcript">
      {/* An agent on the manual back end: its prompt to copy, and a box for the answer. */}
      <ManualPrompts />
      {!run ? (
        <p class="muted">Run the flow to see its transcript here.</p>
      ) : (
        <>
          {run.turns.map((t, i) => <Bubble key={i} turn={t} />)}
          {stream && (
            <div class="bubble bubble-assistant streaming" data-testid="streaming">
              <p>{stream}</p>
            </div>
          )}
          {status === "running" && !stream && <RunningNote run={run} />}
          {run.error && status === "failed" && <p class="notice notice-error">{run.error}</p>}
          {run.retryDue && (status !== "running" || run.interrupted) && <RetryDueNote due={run.retryDue} />}
          {(status === "stopped" || status === "failed" || status === "needs_attention" || run.interrupted) && (
            <ResumeNote resume={run.resume} />
          )}
          {pending && <PendingPanel pending={pending} busy={busy} onAnswer={onAnswer} />}
        </>
      )}
    </div>
  );
}

/** What a run stored as running is doing: working here, cut off, or run by another process. */
function RunningNote({ run }: { run: FlowRunView }) {
  if (run.interrupted) {
    return (
      <div class="notice notice-warning" role="status" data-testid="run-interrupted">
        <p>
          <strong>Interrupted — Maskflow stopped while this run was going.</strong> Nothing is running it now. Resume carries
          on from the step it was on; Stop ends it here.
        </p>
      </div>
    );
  }
  if (run.runningElsewherePid != null) {
    return (
      <div class="notice notice-info" role="status" data-testid="run-elsewhere">
        <p>
          Running in another Maskflow process (pid {run.runningElsewherePid}). Follow or stop it there; this page updates
          every few seconds.
        </p>
      </div>
    );
  }
  return <p class="muted small">Working…</p>;
}

/** A single step's retry that runs first when the run is resumed. */
function RetryDueNote({ due }: { due: RetryDue }) {
  return (
    <div class="notice notice-info" role="status" data-testid="retry-due">
      <p>
        <strong>{due.message.charAt(0).toUpperCase() + due.message.slice(1)}</strong> when you resume. Last error:{" "}
        {due.feedback}
      </p>
    </div>
  );
}

function Bubble({ turn }: { turn: TurnView }) {
  const c = stepOf(turn.command);
  return (
    <div class={`bubble bubble-${turn.role}`} data-testid="flow-bubble">
      <div class="bubble-meta small">
        <span class="pill">{c?.agentType || turn.role}</span>
        {c?.identifier && <span class="muted">{c.identifier}</span>}
        {c && (
          <>
            <strong>{c.label}</strong>
            <span class="muted">
              step {c.stepIndex + 1} / {c.totalSteps}
              {c.loopDepth > 0 ? ` · loop depth ${c.loopDepth}` : ""}
            </span>
          </>
        )}
      </div>
      <p class="bubble-text">{turn.content}</p>
      {turn.suggestedTags.length > 0 && (
        <p class="bubble-tags small" aria-label="Suggested tags">
          {turn.suggestedTags.map((t) => (
            <span key={t} class="pill">
              {t}
            </span>
          ))}
        </p>
      )}
    </div>
  );
}

/** What a resume starts from (seed 002's ResumeContext): steps done, a fan-out's counts, the last output. */
function ResumeNote({ resume }: { resume: ResumeContext }) {
  const done = resume.completedSteps;
  const last = done.reduce<(typeof done)[number] | null>((a, c) => (!a || c.completedAt > a.completedAt ? c : a), null);
  const f = resume.fanOut;
  const output = resume.lastOutput == null ? null : JSON.stringify(resume.lastOutput);
  return (
    <div class="notice notice-info" role="status" data-testid="resume-context">
      <p>
        {last ? (
          <>
            {done.length} step{done.length === 1 ? "" : "s"} done; the last, <strong>{last.label}</strong>, at{" "}
            {new Date(last.completedAt).toLocaleString()}.
          </>
        ) : (
          "No step done yet."
        )}
      </p>
      {f && (
        <p data-testid="resume-fan-out">
          Fan-out <strong>{f.step}</strong>: {f.total} items, {f.completed} completed, {f.failed} failed, {f.remaining} to
          run.
        </p>
      )}
      {resume.lastOutputLocal ? (
        <p class="muted small">The last output holds your local data; it is in the transcript above.</p>
      ) : (
        output && (
          <p class="small">
            Last output: <code>{output.length > 300 ? output.slice(0, 300) + "…" : output}</code>
          </p>
        )
      )}
    </div>
  );
}
