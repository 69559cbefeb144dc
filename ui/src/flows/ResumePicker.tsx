// Resume from a chosen step: the run's flow's steps with their paths (the
// last completed one preselected), or a path typed in seed 004's dotted form.
// It sends `resumeStepPath`; a path the server refuses is shown in words by
// the page's error notice.
import { useState } from "preact/hooks";
import type { FlowRunView } from "../generated";
import { defaultResumeStep, formatStepPath, parseStepPath } from "./resumePath";

/** The "Resume from a step…" control of a stopped, failed or interrupted run. */
export function ResumePicker({
  run,
  busy,
  onResume,
}: {
  run: FlowRunView;
  busy: boolean;
  onResume: (path: number[], text: string) => void;
}) {
  const first = defaultResumeStep(run);
  const [text, setText] = useState(first ? formatStepPath(first.stepPath) : "");
  const [problem, setProblem] = useState<string | null>(null);
  const chosen = run.resumeSteps.findIndex((s) => formatStepPath(s.stepPath) === text.trim());
  const submit = (e: Event) => {
    e.preventDefault();
    const path = parseStepPath(text);
    if ("error" in path) {
      setProblem(path.error);
      return;
    }
    setProblem(null);
    onResume(path, text.trim());
  };
  return (
    <details class="resume-pick" data-testid="resume-pick">
      <summary>Resume from a step…</summary>
      <form class="resume-pick-form" onSubmit={submit}>
        <label>
          Step
          <select
            aria-label="Resume from step"
            value={chosen >= 0 ? String(chosen) : ""}
            onChange={(e) => {
              const s = run.resumeSteps[Number((e.currentTarget as HTMLSelectElement).value)];
              if (s) setText(formatStepPath(s.stepPath));
            }}
          >
            {chosen < 0 && <option value="">(the path typed below)</option>}
            {run.resumeSteps.map((s, i) => (
              <option key={i} value={String(i)}>
                {"\u2003".repeat(s.stepPath.length - 1)}
                {formatStepPath(s.stepPath)} · {s.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Step path
          <input type="text" aria-label="Step path" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="button" disabled={busy}>Resume from this step</button>
        <p class="muted small">
          Runs that step again and what follows it. Resume alone carries on where the run stopped
          {run.retryDue ? ", starting with the retry that is due" : ""}.
        </p>
        {problem && <p class="notice notice-error" role="alert">{problem}</p>}
      </form>
    </details>
  );
}
