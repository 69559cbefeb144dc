// Which file feeds which input: the answers a binding gate may send.
import type { BindingQuestion } from "../generated";

/** Whether every input has a file among its candidates, no file given twice. */
export function bindingsComplete(questions: BindingQuestion[], chosen: Record<string, string>): boolean {
  const files = questions.map((q) => chosen[q.field]);
  return (
    questions.every((q, i) => files[i] !== undefined && q.candidates.includes(files[i]!)) &&
    new Set(files).size === files.length
  );
}
