// Which version of a workflow the page shows and which one it compares it
// with: the current one until the user picks another, reset when the
// current version changes.
import { useEffect, useState } from "preact/hooks";
import type { Dispatch, StateUpdater } from "preact/hooks";
import { useTransport } from "../context";
import type { VersionView, WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";

/** The selected and compared versions of `workflow`; load errors go to `setNotice`. */
export function useVersions(workflow: WorkflowView, setNotice: Dispatch<StateUpdater<Notice | null>>) {
  const transport = useTransport();
  const current = workflow.current_version;
  const [selectedId, setSelectedId] = useState(current.id);
  const [version, setVersion] = useState<VersionView>(current);
  const [compareId, setCompareId] = useState<string>("");
  const [compareTo, setCompareTo] = useState<VersionView | null>(null);

  useEffect(() => {
    setSelectedId(current.id);
    setVersion(current);
    // Back to the current version when it changes, not on every reload of the same one.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current.id, current.status]);

  useEffect(() => {
    if (selectedId === current.id) {
      setVersion(current);
      return;
    }
    transport.getVersion(workflow.id, selectedId).then(setVersion, (e) => setNotice(noticeOf(toApiError(e))));
  }, [selectedId, workflow.id, current, transport, setNotice]);

  const others = workflow.versions.filter((v) => v.id !== version.id);
  useEffect(() => {
    const fallback = others[others.length - 1]?.id ?? "";
    setCompareId((id) => (others.some((o) => o.id === id) ? id : fallback));
    // `others` is derived from these two and new on every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [version.id, workflow.versions.length]);
  useEffect(() => {
    if (!compareId) {
      setCompareTo(null);
      return;
    }
    transport.getVersion(workflow.id, compareId).then(setCompareTo, (e) => setNotice(noticeOf(toApiError(e))));
  }, [compareId, workflow.id, transport, setNotice]);

  return { current, selectedId, setSelectedId, version, others, compareId, setCompareId, compareTo };
}

/** What useVersions returns. */
export type Versions = ReturnType<typeof useVersions>;
