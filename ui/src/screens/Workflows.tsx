// Workflows: every workflow with its versions and statuses. A workflow's
// page shows the selected version's script (highlighted), fields, files and
// a diff against another version, with Approve and Edit (seed 000's
// post-build flow: Edit opens the builder with the conversation continued),
// Restore on an earlier version (issue 18: a new version, tested, then
// approved), the name, description and label edited in place, and Delete
// with the counts of what goes (two steps). The page of one workflow is
// workflows/Detail.
import { useCallback, useEffect, useState } from "preact/hooks";
import { EmptyState, NoticeBanner, Spinner } from "../components/ui";
import { useTransport } from "../context";
import type { WorkflowSummary, WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { Detail } from "../workflows/Detail";
import { WorkflowList } from "../workflows/WorkflowList";

/** The Workflows page, with the route's workflow open. */
export function Workflows({ workflowId }: { workflowId?: string }) {
  const transport = useTransport();
  const [items, setItems] = useState<WorkflowSummary[] | null>(null);
  const [workflow, setWorkflow] = useState<WorkflowView | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);

  const refresh = useCallback(async () => {
    try {
      setItems(await transport.listWorkflows());
      if (workflowId) setWorkflow(await transport.getWorkflow(workflowId));
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
    }
  }, [transport, workflowId]);

  useEffect(() => {
    setWorkflow(null);
    void refresh();
  }, [refresh]);

  useEffect(
    () =>
      transport.onEvent((e) => {
        if (e.type === "status_changed" || e.type === "workflow_deleted") void refresh();
      }),
    [transport, refresh],
  );

  return (
    <div class="workflows">
      <section class="wf-side" aria-label="All workflows">
        <header class="pane-head">
          <h2>Workflows</h2>
          <a class="button primary small" href="#/builder">
            New
          </a>
        </header>
        {items === null && !notice && <Spinner label="Loading…" />}
        {items && items.length === 0 && (
          <EmptyState title="No workflows yet" icon="✦">
            <p class="muted">Drop a file in the builder and describe what you want done.</p>
            <a class="button primary" href="#/builder">
              Build your first workflow
            </a>
          </EmptyState>
        )}
        {items && items.length > 0 && <WorkflowList items={items} selected={workflowId} />}
      </section>
      <section class="wf-main">
        {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
        {workflow ? (
          <Detail workflow={workflow} onChanged={(w) => { setWorkflow(w); void refresh(); }} />
        ) : (
          !workflowId &&
          items &&
          items.length > 0 && (
            <EmptyState title="Choose a workflow" icon="←">
              <p class="muted">Its versions, script and fields appear here.</p>
            </EmptyState>
          )
        )}
      </section>
    </div>
  );
}
