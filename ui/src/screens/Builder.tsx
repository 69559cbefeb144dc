// The Builder (seed 000's layout): chat on the left (30%), files on the
// right (70%). Files are read locally into masked extracts; the chat opens
// only after the user approves exactly what will be sent.
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { EmptyState, NoticeBanner, ProgressBar, Spinner, StatusBadge } from "../components/ui";
import { ExtractView } from "../components/ExtractView";
import { LlmProgress, nextStreaming, type Streaming } from "../components/LlmProgress";
import { BuildProgress, ManualPrompts, PrivacyDialog } from "../components/BuildPanels";
import { useTransport } from "../context";
import type { FileExtract, GuardMatch, MessageView, WorkflowView } from "../generated";
import { approvable, chipsReducer, type Chip } from "../lib/chips";
import { noticeOf, reducedNotice, type Notice } from "../lib/errors";
import { approvalRequest, bytesLabel, kindLabel, payloadJson } from "../lib/extracts";
import { navigate } from "../lib/router";
import { STATUS, STEPS, canChat, stepOf } from "../lib/status";
import { sourceName, sourceSize, toApiError, type FileSource } from "../transport";

let nextKey = 0;

function Chips({ chips, onRemove, frozen }: { chips: Chip[]; onRemove: (key: string) => void; frozen: boolean }) {
  return (
    <ul class="chips" aria-label="Files">
      {chips.map((c) => (
        <li key={c.key} class={`chip chip-${c.status}`} data-testid="chip">
          <div class="chip-main">
            <span class="chip-name" title={c.name}>
              {c.name}
            </span>
            <span class="chip-meta">
              {c.status === "reading" && (c.phase === "uploading" ? "Reading…" : `Counting rows… ${Math.round(c.progress * 100)}%`)}
              {c.status === "ready" && c.extract && `${kindLabel(c.extract)} · ${c.extract.row_count.toLocaleString("en-US")} rows`}
              {c.status === "error" && "Cannot be read"}
              {c.size != null && c.status !== "error" && ` · ${bytesLabel(c.size)}`}
            </span>
            {c.status === "reading" && <ProgressBar value={c.progress} label={`Reading ${c.name}`} />}
            {c.status === "error" && (
              <span class="chip-problem" role="alert">
                {c.error}
              </span>
            )}
          </div>
          {!frozen && (
            <button type="button" class="icon-button" aria-label={`Remove ${c.name}`} onClick={() => onRemove(c.key)}>
              ×
            </button>
          )}
        </li>
      ))}
    </ul>
  );
}

function DropZone({ onFiles, disabled }: { onFiles: (s: FileSource[]) => void; disabled: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  return (
    <div
      class={`dropzone${over ? " over" : ""}${disabled ? " disabled" : ""}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        if (!disabled) setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        const files = Array.from(e.dataTransfer?.files ?? []);
        if (!disabled && files.length) onFiles(files.map((file) => ({ kind: "file", file })));
      }}
    >
      <div class="dropzone-icon" aria-hidden="true">
        ⇪
      </div>
      <p>
        <strong>Drop data files here</strong> — CSV, Excel, PDF, Word or images, as many as you need.
      </p>
      <p class="muted">They are read on this machine. Only a masked extract is ever shown to an AI, after you approve it.</p>
      <button type="button" class="button" disabled={disabled} onClick={() => input.current?.click()}>
        Choose files…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-label="Choose files"
        data-testid="file-input"
        onChange={(e) => {
          const el = e.currentTarget;
          const files = Array.from(el.files ?? []);
          el.value = "";
          if (files.length) onFiles(files.map((file) => ({ kind: "file", file })));
        }}
      />
    </div>
  );
}

function Steps({ status }: { status: WorkflowView["current_version"]["status"] }) {
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

function Message({ m }: { m: Pick<MessageView, "role" | "content"> }) {
  return (
    <li class={`msg msg-${m.role}`} data-testid={`msg-${m.role}`}>
      <span class="sr-only">{m.role === "user" ? "You:" : "Maskflow:"}</span>
      {m.content}
    </li>
  );
}

export function Builder({ workflowId }: { workflowId?: string }) {
  const transport = useTransport();
  const [chips, dispatch] = useReducer(chipsReducer, []);
  const [workflow, setWorkflow] = useState<WorkflowView | null>(null);
  const [loading, setLoading] = useState(!!workflowId);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [showJson, setShowJson] = useState(false);
  const [approving, setApproving] = useState(false);
  const [sending, setSending] = useState(false);
  const [draft, setDraft] = useState("");
  const [pendingText, setPendingText] = useState<string | null>(null);
  const [streaming, setStreaming] = useState<Streaming | null>(null);
  const [sentAt, setSentAt] = useState(0);
  const [cancelling, setCancelling] = useState(false);
  const listEnd = useRef<HTMLLIElement>(null);
  const [blocked, setBlocked] = useState<{ content: string; matches: GuardMatch[] } | null>(null);

  const reload = useCallback(
    async (id: string) => {
      try {
        const w = await transport.getWorkflow(id);
        setWorkflow(w);
        return w;
      } catch (e) {
        setNotice(noticeOf(toApiError(e)));
        return null;
      } finally {
        setLoading(false);
      }
    },
    [transport],
  );

  // Open an existing workflow (after "Edit", or from a link); a new route clears.
  useEffect(() => {
    dispatch({ type: "clear" });
    setNotice(null);
    setShowJson(false);
    setWorkflow(null);
    if (workflowId) {
      setLoading(true);
      void reload(workflowId);
    } else {
      setLoading(false);
    }
  }, [workflowId, reload]);

  const addSources = useCallback(
    (sources: FileSource[]) => {
      for (const source of sources) {
        const key = `f${nextKey++}`;
        dispatch({ type: "add", key, name: sourceName(source), size: sourceSize(source) });
        transport
          .extract(source, (fraction) => dispatch({ type: "upload", key, fraction }))
          .then((file) => dispatch({ type: "done", key, file }))
          .catch((e) => dispatch({ type: "fail", key, message: toApiError(e).message }));
      }
    },
    [transport],
  );

  // Files dropped by the operating system (desktop window): paths.
  useEffect(
    () => transport.onNativeDrop((paths) => {
      if (!workflow) addSources(paths.map((path) => ({ kind: "path", path })));
    }),
    [transport, addSources, workflow],
  );

  // Core events: row-count progress, streamed replies, status changes.
  const id = workflow?.id;
  useEffect(
    () =>
      transport.onEvent((event) => {
        if (event.type === "extract_progress") {
          dispatch({ type: "count", name: event.filename, fraction: event.done / Math.max(event.total, 1) });
        } else if (event.type === "message_delta" && event.workflow_id === id) {
          setStreaming((s) => nextStreaming(s, event.role, event.delta, Date.now()));
        } else if (event.type === "build_changed" && event.workflow_id === id && event.build.context_reduction) {
          setNotice(reducedNotice([event.build.context_reduction]));
          void reload(event.workflow_id);
        } else if (
          (event.type === "status_changed" || event.type === "message" || event.type === "build_changed") &&
          event.workflow_id === id &&
          id
        ) {
          void reload(id);
        }
      }),
    [transport, id, reload],
  );

  const status = workflow?.current_version.status;

  // While building, poll once a second (seed 000), then go to the review.
  useEffect(() => {
    if (!id || status !== "building") return;
    const timer = setInterval(() => void reload(id), 1000);
    return () => clearInterval(timer);
  }, [id, status, reload]);
  useEffect(() => {
    if (id && status === "pending_user_approval" && !sending) navigate({ screen: "workflows", workflowId: id });
  }, [id, status, sending]);

  useEffect(() => {
    listEnd.current?.scrollIntoView?.({ block: "end" });
  }, [workflow?.messages.length, pendingText, streaming]);

  const { ready, canApprove, reason } = approvable(chips);
  const extracts: FileExtract[] = useMemo(
    () => (workflow ? workflow.current_version.file_extracts : ready.map((c) => c.extract!)),
    [workflow, ready],
  );

  async function approve() {
    setApproving(true);
    setNotice(null);
    try {
      const created = await transport.createWorkflow(
        approvalRequest(ready.map((c) => ({ fileId: c.fileId!, extract: c.extract! }))),
      );
      navigate({ screen: "builder", workflowId: created.workflow_id });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setApproving(false);
    }
  }

  async function send(e: Event) {
    e.preventDefault();
    await deliver(draft.trim(), false);
  }

  async function deliver(content: string, confirmPrivacy: boolean) {
    if (!workflow || !content || sending) return;
    setSending(true);
    setSentAt(Date.now());
    setNotice(null);
    setPendingText(content);
    setDraft("");
    try {
      const reply = await transport.sendMessage(workflow.id, content, confirmPrivacy);
      if (reply.context_reductions?.length) setNotice(reducedNotice(reply.context_reductions));
    } catch (err) {
      const apiError = toApiError(err);
      if (apiError.code === "privacy_blocked" && !confirmPrivacy) {
        setBlocked({ content, matches: apiError.matches });
      } else if (/cancelled/.test(apiError.message)) {
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

  const chatOpen = !!workflow && !!status && canChat(status);
  const chatPlaceholder = !workflow
    ? "Approve the masked extract first — then describe what you want done."
    : status && !canChat(status)
      ? STATUS[status].hint
      : "Describe the task, e.g. “merge these files by the date column”";

  return (
    <div class="builder">
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
              <Spinner label="Building: writing the script and testing it on your files…" />
            </li>
          )}
          {status === "building" && (
            <li class="build-item">
              <BuildProgress
                workflowId={workflow?.id}
                build={workflow?.current_version.build}
                onGate={async (decision, feedback) => {
                  try {
                    setWorkflow(await transport.resolveGate(workflow!.id, workflow!.current_version.id, { decision, feedback }));
                  } catch (err) {
                    setNotice(noticeOf(toApiError(err)));
                  }
                }}
              />
            </li>
          )}
          {status === "rejected" && workflow?.current_version.rejection_reason && (
            <li class="callout bad">This task was rejected: {workflow.current_version.rejection_reason}</li>
          )}
          {status === "failed" && (
            <li class="callout bad">
              The build failed{workflow?.current_version.failure_reason ? `: ${workflow.current_version.failure_reason}` : ""}.
              Open it in Workflows and choose Edit to try again.
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

      {blocked && (
        <PrivacyDialog
          matches={blocked.matches}
          onCancel={() => setBlocked(null)}
          onConfirm={() => {
            const { content } = blocked;
            setBlocked(null);
            void deliver(content, true);
          }}
        />
      )}
      <section class="files-pane" aria-label="Files">
        {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
        {loading && <Spinner label="Loading the workflow…" />}
        {!workflow && !loading && (
          <>
            <DropZone onFiles={addSources} disabled={approving} />
            {chips.length > 0 && <Chips chips={chips} onRemove={(key) => dispatch({ type: "remove", key })} frozen={approving} />}
          </>
        )}
        {workflow && (
          <div class="approved-bar">
            <span class="badge tone-good">Approved extract</span>
            <span class="muted">
              {extracts.length} {extracts.length === 1 ? "file" : "files"} · only this masked extract is shared with the AI
            </span>
          </div>
        )}
        {extracts.length > 0 ? (
          <div class="approval" aria-label="Approval">
            <div class="approval-head">
              <div>
                <h2>{workflow ? "What the AI sees" : "Check what the AI will see"}</h2>
                <p class="muted">Every sample value is masked: letters become A/a, digits #. Column names are kept.</p>
              </div>
              <button type="button" class="button ghost" aria-expanded={showJson} onClick={() => setShowJson(!showJson)}>
                {showJson ? "Hide JSON" : "Show exactly what will be sent"}
              </button>
            </div>
            {showJson && (
              <pre class="json" data-testid="payload-json" tabIndex={0} aria-label="The JSON that will be sent">
                {payloadJson(extracts)}
              </pre>
            )}
            {extracts.map((e, i) => (
              <ExtractView key={`${e.filename}-${i}`} extract={e} />
            ))}
            {!workflow && (
              <div class="approve-row">
                <span class="muted">{reason ?? `${ready.length} ${ready.length === 1 ? "file" : "files"} ready.`}</span>
                <button type="button" class="button primary" disabled={!canApprove || approving} onClick={() => void approve()}>
                  {approving ? "Approving…" : "Approve and start chatting"}
                </button>
              </div>
            )}
          </div>
        ) : (
          !workflow &&
          !loading &&
          chips.length === 0 && (
            <EmptyState title="No files yet" icon="⇪">
              <p class="muted">Masked previews of your files will appear here for you to approve.</p>
            </EmptyState>
          )
        )}
      </section>
    </div>
  );
}
