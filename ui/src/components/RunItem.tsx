// One run in a workflow's run history: status, inputs, outputs, and on
// demand its limits, standard output and standard error.
import { useState } from "preact/hooks";
import type { RunView } from "../generated";
import { durationLabel, runTone } from "../lib/runs";
import { OutputView } from "./OutputView";
import { RefusedOutputs } from "./RefusedOutputs";
import { UnisolatedBanner, ranUnisolated } from "./Unisolated";

/** One run of the history. */
export function RunItem({ run }: { run: RunView }) {
  const [open, setOpen] = useState(false);
  const inputs = run.inputs && typeof run.inputs === "object" ? Object.entries(run.inputs as Record<string, unknown>) : [];
  return (
    <li class="run" data-testid="run">
      <div class="run-head">
        <span class={`badge tone-${runTone(run.status)}`}>{run.status.replace(/_/g, " ")}</span>
        <span class="muted small">
          {new Date(run.started_at).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" })} · {durationLabel(run.duration_ms)}
        </span>
        <span class="run-msg">{run.message}</span>
        {run.trigger && run.trigger.kind !== "manual" && (
          <span class="badge" data-testid="run-trigger" title={run.trigger.file ?? undefined}>
            {run.trigger.kind === "cron" ? "scheduled" : "watched folder"}
            {run.trigger.schedule ? `: ${run.trigger.schedule}` : ""}
            {run.trigger.file ? ` · ${run.trigger.file.split(/[\\/]/).pop()}` : ""}
          </span>
        )}
      </div>
      {ranUnisolated(run.limits) && <UnisolatedBanner />}
      {inputs.length > 0 && (
        <p class="muted small">
          Inputs: {inputs.map(([k, v]) => `${k} = ${Array.isArray(v) ? v.join(", ") : String(v)}`).join(" · ")}
        </p>
      )}
      {run.status === "needs_look" && (
        <div class="warn-text" data-testid="run-needs-look">
          <strong>Needs a look:</strong> the output differs from the approved run's.
          <ul>
            {run.output_jumps.map((j) => (
              <li key={j}>{j}</li>
            ))}
          </ul>
        </div>
      )}
      {run.input_notes.length > 0 && (
        <div class="muted small" data-testid="run-input-notes">
          Changes in the files that the script does not read:
          <ul>
            {run.input_notes.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </div>
      )}
      {run.stdout.trim() && (
        <pre class="preview small" data-testid="run-stdout">{run.stdout.trim()}</pre>
      )}
      {run.output_comparison.length > 0 && (
        <details data-testid="run-comparison">
          <summary class="small">Output against the approved run</summary>
          <ul class="small">
            {run.output_comparison.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </details>
      )}
      {run.outputs.map((o) => (
        <OutputView key={o.name} source={{ kind: "run", runId: run.id }} output={o} testId="run-output" />
      ))}
      <RefusedOutputs refused={run.refused_outputs} />
      <button type="button" class="button ghost small" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide details" : "Output, errors and limits"}
      </button>
      {open && (
        <div class="run-details">
          <h4>Limits</h4>
          <ul class="limits">
            {run.limits.map((l) => (
              <li key={l.name}>
                <strong>{l.name.replace(/_/g, " ")}</strong> {l.limit} —{" "}
                {l.mechanism ? <span>enforced by {l.mechanism}</span> : <span class="warn-text">not enforced{l.note ? `: ${l.note}` : ""}</span>}
              </li>
            ))}
          </ul>
          <h4>Standard output</h4>
          <pre class="preview">{run.stdout || "(empty)"}</pre>
          <h4>Standard error</h4>
          <pre class="preview">{run.stderr || "(empty)"}</pre>
        </div>
      )}
    </li>
  );
}
