// The Builder's chat: sending a message (with the privacy check's second
// chance), cancelling a reply, and leaving for the review once approved.
import { useEffect, useState } from "preact/hooks";
import type { Dispatch, StateUpdater } from "preact/hooks";
import { useTransport } from "../context";
import type { GuardMatch, WorkflowView } from "../generated";
import type { Streaming } from "../components/LlmProgress";
import { noticeOf, reducedNotice, type Notice } from "../lib/errors";
import { navigate } from "../lib/router";
import { wasCancelled } from "../lib/outcomes";
import { toApiError } from "../transport";

/** The conversation state of the open workflow. */
export function useChat(
  workflow: WorkflowView | null,
  reload: (id: string) => Promise<unknown>,
  setNotice: Dispatch<StateUpdater<Notice | null>>,
  setStreaming: Dispatch<StateUpdater<Streaming | null>>,
) {
  const transport = useTransport();
  const [sending, setSending] = useState(false);
  const [draft, setDraft] = useState("");
  const [pendingText, setPendingText] = useState<string | null>(null);
  const [sentAt, setSentAt] = useState(0);
  const [cancelling, setCancelling] = useState(false);
  const [blocked, setBlocked] = useState<{ content: string; matches: GuardMatch[] } | null>(null);
  // A weak model's two unusable replies: the message to try again with.
  const [unusable, setUnusable] = useState<string | null>(null);

  const id = workflow?.id;
  const status = workflow?.current_version.status;
  useEffect(() => {
    if (id && status === "pending_user_approval" && !sending) navigate({ screen: "workflows", workflowId: id });
  }, [id, status, sending]);

  async function send(e: Event) {
    e.preventDefault();
    await deliver(draft.trim(), false);
  }

  async function deliver(content: string, confirmPrivacy: boolean) {
    if (!workflow || !content || sending) return;
    setSending(true);
    setSentAt(Date.now());
    setNotice(null);
    setUnusable(null);
    setPendingText(content);
    setDraft("");
    try {
      const reply = await transport.sendMessage(workflow.id, content, confirmPrivacy);
      if (reply.context_reductions?.length) setNotice(reducedNotice(reply.context_reductions));
    } catch (err) {
      const apiError = toApiError(err);
      if (apiError.code === "privacy_blocked" && !confirmPrivacy) {
        setBlocked({ content, matches: apiError.matches });
      } else if (apiError.nextSteps.includes("try_again")) {
        // The chat's stored notice says what happened; the two ways on are offered under it.
        setUnusable(content);
      } else if (wasCancelled(apiError)) {
        setNotice({ tone: "info", title: "Stopped", detail: "The reply was cancelled. Edit your message and send it again." });
      } else {
        setNotice(noticeOf(apiError));
      }
      setDraft(content);
    } finally {
      setPendingText(null);
      setStreaming(null);
      setSending(false);
      setCancelling(false);
      await reload(workflow.id);
    }
  }

  async function cancel() {
    if (!workflow) return;
    setCancelling(true);
    try {
      await transport.cancelMessage(workflow.id);
    } catch (err) {
      setCancelling(false);
      setNotice(noticeOf(toApiError(err)));
    }
  }

  /** "Try again" after a weak model's unusable replies: the same message, sent again. */
  async function tryAgain() {
    if (unusable) await deliver(unusable, false);
  }

  /** Retries a build that failed on its environment, with the same script. */
  async function retryBuild() {
    if (!workflow) return;
    try {
      await transport.retryBuild(workflow.id, workflow.current_version.id);
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    } finally {
      await reload(workflow.id);
    }
  }

  return {
    sending,
    draft,
    setDraft,
    pendingText,
    sentAt,
    cancelling,
    blocked,
    setBlocked,
    send,
    deliver,
    cancel,
    retryBuild,
    unusable,
    tryAgain,
  };
}

/** What useChat returns. */
export type Chat = ReturnType<typeof useChat>;
