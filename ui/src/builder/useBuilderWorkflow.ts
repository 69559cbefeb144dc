// The workflow the Builder has open: loaded for the route, reloaded on the
// core's events and once a second while it builds, with the page's notice.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { Dispatch, StateUpdater } from "preact/hooks";
import { useTransport } from "../context";
import type { WorkflowView } from "../generated";
import type { ChipAction } from "../lib/chips";
import { nextStreaming, type Streaming } from "../components/LlmProgress";
import { noticeOf, reducedNotice, type Notice } from "../lib/errors";
import { toApiError } from "../transport";

/** The route's workflow; file-reading progress goes to `dispatch`, streamed replies to `setStreaming`. */
export function useBuilderWorkflow(
  workflowId: string | undefined,
  dispatch: Dispatch<ChipAction>,
  setStreaming: Dispatch<StateUpdater<Streaming | null>>,
) {
  const transport = useTransport();
  const [workflow, setWorkflow] = useState<WorkflowView | null>(null);
  const [loading, setLoading] = useState(!!workflowId);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [showJson, setShowJson] = useState(false);

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
  }, [workflowId, reload, dispatch]);

  // Core events: row-count progress, streamed replies, status changes.
  const id = workflow?.id;
  useEffect(
    () =>
      transport.onEvent((event) => {
        if (event.type === "extract_progress") {
          const fraction = event.done / Math.max(event.total, 1);
          dispatch({ type: "count", name: event.filename, fraction, waiting: event.waiting });
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
    [transport, id, reload, dispatch, setStreaming],
  );

  const status = workflow?.current_version.status;

  // While building, poll once a second (seed 000), then go to the review.
  useEffect(() => {
    if (!id || status !== "building") return;
    const timer = setInterval(() => void reload(id), 1000);
    return () => clearInterval(timer);
  }, [id, status, reload]);

  // A build gate's decision (approve the plan, or send feedback).
  const onGate = async (decision: "approve" | "reject", feedback: string | null, bindings?: Record<string, string>, plan?: string) => {
    try {
      setWorkflow(await transport.resolveGate(workflow!.id, workflow!.current_version.id, { decision, feedback, bindings, plan }));
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
    }
  };

  return { workflow, status, loading, notice, setNotice, showJson, setShowJson, reload, onGate };
}
