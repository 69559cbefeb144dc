// The manual back end's pure logic: the text a person copies into an AI tool.
import type { ManualPrompt } from "../generated";

/** The prompt as one text: each message under its role, then the answer's schema. */
export function manualPromptText(p: Pick<ManualPrompt, "messages" | "schema">): string {
  const parts = p.messages.map((m) => `### ${m.role}\n${m.content.trim()}`);
  if (p.schema !== null && p.schema !== undefined) {
    parts.push(`### Answer with JSON matching this schema\n${JSON.stringify(p.schema, null, 2)}`);
  }
  return parts.join("\n\n");
}

/** Adds a prompt (oldest first), once. */
export function addPrompt(list: ManualPrompt[], p: ManualPrompt): ManualPrompt[] {
  return list.some((x) => x.id === p.id) ? list : [...list, p];
}

/** The prompts a screen about `workflowId` shows: its own and those of no workflow. */
export function promptsFor(list: ManualPrompt[], workflowId: string | undefined): ManualPrompt[] {
  // A prompt of no workflow comes without the field.
  return list.filter((p) => (p.workflow_id ?? null) === null || p.workflow_id === workflowId);
}

/** Whether an answer can still be given: a prompt cut off by a restart whose
 * work ended can only be dismissed. */
export function canAnswer(p: Pick<ManualPrompt, "interrupted">): boolean {
  return !p.interrupted || p.interrupted.resumes;
}
