// The Builder's left pane: the draft's name and status, its steps, the
// conversation, manual prompts to copy, and the message composer.
import { StatusBadge } from "../components/ui";
import { ManualPrompts } from "../components/ManualPrompts";
import type { Streaming } from "../components/LlmProgress";
import type { WorkflowView } from "../generated";
import { STATUS, canChat } from "../lib/status";
import { Conversation } from "./Conversation";
import { Preflight } from "./Preflight";
import { Steps } from "./Message";
import type { Chat } from "./useChat";

/** The conversation pane of the Builder. */
export function ChatPane({
  workflow,
  chat,
  streaming,
  onGate,
}: {
  workflow: WorkflowView | null;
  chat: Chat;
  streaming: Streaming | null;
  onGate: (decision: "approve" | "reject", feedback: string | null, bindings?: Record<string, string>, plan?: string) => Promise<void>;
}) {
  const { draft, setDraft, sending, send } = chat;
  const status = workflow?.current_version.status;
  const chatOpen = !!workflow && !!status && canChat(status);
  const chatPlaceholder = !workflow
    ? "Approve the masked extract first — then describe what you want done."
    : status && !canChat(status)
      ? STATUS[status].hint
      : "Describe the task, e.g. “merge these files by the date column”";

  return (
    <section class="chat-pane" aria-label="Conversation">
      <header class="pane-head">
        <h2>{workflow?.name ?? "New workflow"}</h2>
        {status ? (
          <div class="status-line" data-testid="draft-status">
            <StatusBadge status={status} />
            <span class="muted">v{workflow!.current_version.version}</span>
          </div>
        ) : (
          <div class="status-line muted" data-testid="draft-status">
            Not started
          </div>
        )}
      </header>
      {status && <Steps status={status} />}
      <Conversation workflow={workflow} chat={chat} streaming={streaming} onGate={onGate} />
      <Preflight workflow={workflow} />
      <ManualPrompts workflowId={workflow?.id} />
      <form class="composer" onSubmit={send}>
        <label for="message" class="sr-only">
          Message
        </label>
        <textarea
          id="message"
          rows={3}
          value={draft}
          disabled={!chatOpen || sending}
          placeholder={chatPlaceholder}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <button type="submit" class="button primary" disabled={!chatOpen || sending || !draft.trim()}>
          {sending ? "Waiting…" : "Send"}
        </button>
      </form>
    </section>
  );
}
