// Seed 004's step paths as the Flows page's resume picker writes them:
// zero-based indices through nested `steps`, joined by dots ("1.0").
import type { FlowRunView, ResumeStep } from "../generated";

/** A step path as the picker shows it: `[1, 0]` → "1.0". */
export function formatStepPath(path: readonly number[]): string {
  return path.join(".");
}

/** The path typed in the picker, or why it is not one. */
export function parseStepPath(text: string): number[] | { error: string } {
  const t = text.trim();
  if (!t) return { error: "Type a step path, such as 0 or 1.0." };
  const parts = t.split(".").map((p) => p.trim());
  // Negative indices pass through: the server refuses them by name (seed 004's 400).
  if (parts.some((p) => !/^-?\d+$/.test(p))) {
    return { error: `"${t}" is not a step path: write zero-based step numbers joined by dots, such as 1.0.` };
  }
  return parts.map(Number);
}

/** The step the picker starts on: the last completed one, else the first. */
export function defaultResumeStep(run: Pick<FlowRunView, "flags" | "resumeSteps">): ResumeStep | null {
  const done = formatStepPath(run.flags.flow.stepPath.map(Number));
  return run.resumeSteps.find((s) => formatStepPath(s.stepPath) === done) ?? run.resumeSteps[0] ?? null;
}

/** How a refused resume reads on the page. */
export function refusedResume(text: string, message: string): string {
  return `Cannot resume at step path ${text}: ${message}`;
}
