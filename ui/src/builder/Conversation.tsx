// The Builder's message list: the conversation so far, the message on its
// way with the reply's progress, the build's progress and how a draft ended.
import { useEffect, useRef } from "preact/hooks";
import { Spinner } from "../components/ui";
import { LlmProgress, type Streaming } from "../components/LlmProgress";
import { BuildProgress } from "../components/BuildProgress";
import { BuildOptionsToggle } from "../components/BuildOptionsToggle";
import { BuildReviews } from "../components/BuildReviews";
import type { WorkflowView } from "../generated";
import { STATUS, canChat } from "../lib/status";
import { navigate } from "../lib/router";
import type { Chat } from "./useChat";
import { Message } from "./Message";
import { toldInChat } from "../lib/outcomes";

/** The messages of the open workflow (or the hint to approve data first). */
export function Conversation({
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
  const { pendingText, sending, sentAt, cancelling, cancel } = chat;
  const status = workflow?.current_version.status;
  const listEnd = useRef<HTMLLIElement>(null);

  useEffect(() => {
    listEnd.current?.scrollIntoView?.({ block: "end" });
  }, [workflow?.messages.length, pendingText, streaming]);

  return (
    <ol class="messages" aria-live="polite" data-testid="messages">
      {!workflow && (
        <li class="chat-empty">
          <strong>The chat opens after you approve your data.</strong>
          <span>Add files on the right, check the masked extract, then approve it.</span>
        </li>
      )}
      {workflow && workflow.messages.length === 0 && !pendingText && (
        <li class="chat-empty">
          <strong>What should this workflow do?</strong>
          <span>Describe it in plain words. Maskflow may ask a question or two, then writes a Python script.</span>
        </li>
      )}
      {workflow?.messages.map((m) => <Message key={m.id} m={m} />)}
      {pendingText && <Message m={{ role: "user", content: pendingText }} />}
      {sending && (
        <li class="msg msg-assistant typing">
          <LlmProgress streaming={streaming} sentAt={sentAt} onCancel={() => void cancel()} cancelling={cancelling} />
        </li>
      )}
      {status === "building" && (
        <li class="msg msg-assistant typing" data-testid="building">
          {/* At a gate nothing runs: no spinner, the decision waits below. */}
          {workflow?.current_version.build?.pending_gate ? (
            <span>{workflow.current_version.build.pending_plan ? "The plan is ready: approve it, edit it or ask for another below. No code is written yet." : "The build waits for your decision below."}</span>
          ) : (
            <Spinner label="Building: writing the script and testing it on your files…" />
          )}
        </li>
      )}
      {status === "building" && (
        <li class="build-item">
          <BuildProgress workflowId={workflow?.id} build={workflow?.current_version.build} onGate={onGate} />
        </li>
      )}
      {workflow && status !== "building" && (workflow.current_version.build?.reviews?.length || workflow.current_version.build?.plan) && (
        <li class="build-item">
          <BuildReviews build={workflow.current_version.build} />
        </li>
      )}
      {workflow && status && status !== "building" && status !== "approved" && status !== "archived" && status !== "rejected" && (
        <li class="build-item">
          <BuildOptionsToggle workflowId={workflow.id} />
        </li>
      )}
      {chat.unusable && !chat.sending && (
        <li class="callout" data-testid="unusable-reply">
          The model could not give a usable answer.{" "}
          <button type="button" class="button small" onClick={() => void chat.tryAgain()}>
            Try again
          </button>{" "}
          <button type="button" class="button small" onClick={() => navigate({ screen: "settings" })}>
            Choose another model
          </button>
        </li>
      )}
      {status === "rejected" && workflow?.current_version.rejection_reason && (
        <li class="callout bad">This task was rejected: {workflow.current_version.rejection_reason}</li>
      )}
      {status === "failed" && !toldInChat(workflow?.messages ?? [], workflow!.current_version.id) && (
        <li class="callout bad">
          The build failed{workflow?.current_version.failure_reason ? `: ${workflow.current_version.failure_reason}` : ""}.
          {workflow?.current_version.build?.retryable ? (
            <>
              {" "}The script is not at fault: fix what is missing (Settings), then retry with the same script.{" "}
              <button type="button" class="button small" data-testid="retry-build" onClick={() => void chat.retryBuild()}>
                Retry the build
              </button>
            </>
          ) : (
            " Open it in Workflows and choose Edit to try again."
          )}
        </li>
      )}
      {workflow && status && !canChat(status) && status !== "building" && status !== "rejected" && status !== "failed" && (
        <li class="callout">
          {STATUS[status].hint}{" "}
          <a href={`#/workflows/${encodeURIComponent(workflow.id)}`}>Open in Workflows</a>
        </li>
      )}
      <li ref={listEnd} class="end" aria-hidden="true" />
    </ol>
  );
}
