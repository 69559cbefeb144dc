// One workflow's page: its name and actions, its versions, and the selected
// version's details. Approve, Edit and Restore change the workflow; Delete
// asks first, with the counts of what goes.
import { useState } from "preact/hooks";
import { SafeDeleteDialog } from "../components/SafeDelete";
import { WorkflowMeta } from "../components/WorkflowMeta";
import { NoticeBanner, StatusBadge } from "../components/ui";
import { useTransport } from "../context";
import type { WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { navigate } from "../lib/router";
import { STATUS } from "../lib/status";
import { toApiError } from "../transport";
import { originText, when } from "./format";
import { useVersions } from "./useVersions";
import { BuildReviews } from "../components/BuildReviews";
import { InterfaceChangeNote } from "./InterfaceChangeNote";
import { VersionActions } from "./VersionActions";
import { VersionTabs, type Tab } from "./VersionTabs";

/** The page of `workflow`; `onChanged` gets the workflow after a change. */
export function Detail({ workflow, onChanged }: { workflow: WorkflowView; onChanged: (w: WorkflowView) => void }) {
  const transport = useTransport();
  const [tab, setTab] = useState<Tab>("script");
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [deleting, setDeleting] = useState(false);
  const versions = useVersions(workflow, setNotice);
  const { selectedId, setSelectedId, version } = versions;

  async function act(kind: "approve" | "edit" | "restore") {
    setBusy(true);
    setNotice(null);
    try {
      if (kind === "approve") {
        onChanged(await transport.approve(workflow.id, version.id));
      } else if (kind === "restore") {
        const created = await transport.restoreVersion(workflow.id, version.id);
        const next = await transport.getWorkflow(workflow.id);
        onChanged(next);
        setSelectedId(created.version_id);
        setTab("test");
      } else {
        await transport.edit(workflow.id, version.id);
        navigate({ screen: "builder", workflowId: workflow.id });
      }
    } catch (e) {
      const error = toApiError(e);
      setNotice(noticeOf(error));
      // A conflict means this view is behind: catch up.
      if (error.code === "conflict") transport.getWorkflow(workflow.id).then(onChanged, () => {});
    } finally {
      setBusy(false);
    }
  }

  return (
    <article class="wf-detail" aria-label={workflow.name ?? "Workflow"}>
      <header class="detail-head">
        <WorkflowMeta workflow={workflow} onChanged={onChanged} />
        <VersionActions workflow={workflow} version={version} busy={busy} act={act} onDelete={() => setDeleting(true)} />
      </header>
      {deleting && (
        <SafeDeleteDialog
          title={`Delete “${workflow.name ?? "Untitled workflow"}”?`}
          run={(confirm) => transport.deleteWorkflow(workflow.id, confirm)}
          onCancel={() => setDeleting(false)}
          onDone={() => {
            setDeleting(false);
            navigate({ screen: "workflows" });
          }}
        />
      )}
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {version.interface_change && <InterfaceChangeNote change={version.interface_change} />}
      {/* A finished build opens here: its plan and the reviewer's verdict stay in view. */}
      <BuildReviews build={version.build} />

      <div class="versions" role="radiogroup" aria-label="Versions">
        {workflow.versions.map((v) => (
          <button
            type="button"
            role="radio"
            aria-checked={v.id === selectedId}
            key={v.id}
            class={`version${v.id === selectedId ? " selected" : ""}`}
            onClick={() => setSelectedId(v.id)}
            data-testid="version"
          >
            <span class="vnum">v{v.version}</span>
            <StatusBadge status={v.status} />
            {v.is_active && <span class="small muted">in use</span>}
            {originText(v) && (
              <span class="small muted" data-testid="version-origin">
                {originText(v)}
              </span>
            )}
          </button>
        ))}
      </div>
      <p class="muted small">
        {STATUS[version.status].hint} Created {when(version.created_at)}.
      </p>

      <VersionTabs workflow={workflow} version={version} versions={versions} tab={tab} setTab={setTab} />
    </article>
  );
}
