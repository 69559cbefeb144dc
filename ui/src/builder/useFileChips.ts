// The files of a new workflow: read into masked extracts as they come in
// (dropped, picked or dropped on the desktop window), then approved together.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { Dispatch, StateUpdater } from "preact/hooks";
import { useTransport } from "../context";
import type { WorkflowView } from "../generated";
import { approvable, type Chip, type ChipAction } from "../lib/chips";
import { noticeOf, type Notice } from "../lib/errors";
import { approvalRequest } from "../lib/extracts";
import type { NoteDraft } from "../lib/notes";
import { navigate } from "../lib/router";
import { sourceName, sourceSize, toApiError, type FileSource } from "../transport";

let nextKey = 0;

/** Adding and approving files while no workflow is open. */
export function useFileChips(
  chips: Chip[],
  dispatch: Dispatch<ChipAction>,
  workflow: WorkflowView | null,
  setNotice: Dispatch<StateUpdater<Notice | null>>,
) {
  const transport = useTransport();
  const [approving, setApproving] = useState(false);
  // Flagged names (people, companies, dates… as column or sheet names) the
  // user chose to send as they are; every other one is sent masked.
  const [sendAsIs, setSendAsIs] = useState<ReadonlySet<string>>(new Set());
  const toggleSendAsIs = useCallback((name: string) => {
    setSendAsIs((prev) => {
      const next = new Set(prev);
      if (next.has(name)) next.delete(name);
      else next.add(name);
      return next;
    });
  }, []);

  // Category columns (keys of `categoryKey`) the user switched on: their
  // values go to the AI; every other one stays on this machine.
  const [shown, setShown] = useState<ReadonlySet<string>>(new Set());
  const toggleShown = useCallback((key: string) => {
    setShown((prev) => {
      const next = new Set(prev);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  }, []);

  // The user's notes on the data (#40 point 7), sent in their words.
  const [notes, setNotes] = useState<NoteDraft[]>([]);

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
    [transport, dispatch],
  );

  // Files dropped by the operating system (desktop window): paths.
  useEffect(
    () => transport.onNativeDrop((paths) => {
      if (!workflow) addSources(paths.map((path) => ({ kind: "path", path })));
    }),
    [transport, addSources, workflow],
  );

  const { ready, canApprove, reason } = approvable(chips);

  async function approve() {
    setApproving(true);
    setNotice(null);
    try {
      const created = await transport.createWorkflow(
        approvalRequest(
          ready.map((c) => ({ fileId: c.fileId!, extract: c.extract!, flagged: c.flagged, categories: c.categories })),
          sendAsIs,
          shown,
          notes,
        ),
      );
      navigate({ screen: "builder", workflowId: created.workflow_id });
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    } finally {
      setApproving(false);
    }
  }

  return { addSources, ready, canApprove, reason, approving, approve, sendAsIs, toggleSendAsIs, shown, toggleShown, notes, setNotes };
}
