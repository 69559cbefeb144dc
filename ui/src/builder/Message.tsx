// The pieces of the Builder's conversation: the progress steps of a draft
// and one chat message.
import type { MessageView, WorkflowView } from "../generated";
import { STEPS, stepOf } from "../lib/status";

/** Where the draft is on the way from data to an approved script. */
export function Steps({ status }: { status: WorkflowView["current_version"]["status"] }) {
  const at = stepOf(status);
  return (
    <ol class="steps" aria-label="Progress">
      {STEPS.map((s, i) => (
        <li key={s} class={i < at ? "done" : i === at ? "current" : ""} aria-current={i === at ? "step" : undefined}>
          {s}
        </li>
      ))}
    </ol>
  );
}

/** One message of the conversation: the user's, the assistant's, or Maskflow's notice of how something ended. */
export function Message({ m }: { m: Pick<MessageView, "role" | "content"> }) {
  return (
    <li class={`msg msg-${m.role}`} data-testid={`msg-${m.role}`} role={m.role === "notice" ? "status" : undefined}>
      <span class="sr-only">{m.role === "user" ? "You:" : "Maskflow:"}</span>
      {m.content}
    </li>
  );
}
