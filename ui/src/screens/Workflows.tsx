// Workflows: every workflow with its versions and statuses. A workflow's
// page shows the selected version's script (highlighted), fields, files and
// a diff against another version, with Approve and Edit (seed 000's
// post-build flow: Edit opens the builder with the conversation continued),
// Restore on an earlier version (issue 18: a new version, tested, then
// approved), the name, description and label edited in place, and Delete
// with the counts of what goes (two steps).
import { useCallback, useEffect, useState } from "preact/hooks";
import { CodeView, DiffView } from "../components/Code";
import { SafeDeleteDialog } from "../components/SafeDelete";
import { RunPanel, SessionsView, TestReportView } from "../components/VersionPanels";
import { WorkflowMeta } from "../components/WorkflowMeta";
import { EmptyState, NoticeBanner, Spinner, StatusBadge } from "../components/ui";
import { useTransport } from "../context";
import type { VersionSummary, VersionView, WorkflowSummary, WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { summary } from "../lib/extracts";
import { navigate } from "../lib/router";
import { STATUS, canApprove, canChat, canEdit } from "../lib/status";
import { toApiError } from "../transport";

function when(rfc3339: string): string {
  const d = new Date(rfc3339);
  return Number.isNaN(d.getTime()) ? rfc3339 : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

function WorkflowList({ items, selected }: { items: WorkflowSummary[]; selected?: string }) {
  return (
    <ul class="wf-list" aria-label="Workflows">
      {items.map((w) => (
        <li key={w.id}>
          <a
            href={`#/workflows/${encodeURIComponent(w.id)}`}
            class={`wf-card${w.id === selected ? " selected" : ""}`}
            aria-current={w.id === selected ? "page" : undefined}
            data-testid="workflow-card"
          >
            <span class="wf-name">
              {w.name ?? "Untitled workflow"}
              {w.label && (
                <span class="pill wf-label" data-testid="workflow-label">
                  {w.label}
                </span>
              )}
            </span>
            <StatusBadge status={w.current_version.status} />
            {w.description && <span class="wf-desc">{w.description}</span>}
            <span class="muted small">
              v{w.current_version.version} · updated {when(w.updated_at)}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

/** Where a version came from, e.g. "restored from v1". */
export function originText(v: VersionSummary): string | null {
  if (v.origin === "restored") return v.origin_version ? `restored from v${v.origin_version}` : "restored";
  if (v.origin === "edited" && v.origin_version) return `edited from v${v.origin_version}`;
  return null;
}

type Tab = "script" | "fields" | "files" | "compare" | "test" | "sessions" | "run";

function Detail({ workflow, onChanged }: { workflow: WorkflowView; onChanged: (w: WorkflowView) => void }) {
  const transport = useTransport();
  const current = workflow.current_version;
  const [selectedId, setSelectedId] = useState(current.id);
  const [version, setVersion] = useState<VersionView>(current);
  const [tab, setTab] = useState<Tab>("script");
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [compareId, setCompareId] = useState<string>("");
  const [compareTo, setCompareTo] = useState<VersionView | null>(null);
  const [deleting, setDeleting] = useState(false);

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
  }, [selectedId, workflow.id, current, transport]);

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
  }, [compareId, workflow.id, transport]);

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

  const tabs: [Tab, string][] = [
    ["script", "Script"],
    ["fields", `Fields${version.fields ? ` (${version.fields.length})` : ""}`],
    ["files", `Files (${version.file_extracts.length})`],
    ["test", "Test report"],
    ["sessions", "Build session"],
    ["compare", "Compare versions"],
    ["run", "▶ Run"],
  ];

  return (
    <article class="wf-detail" aria-label={workflow.name ?? "Workflow"}>
      <header class="detail-head">
        <WorkflowMeta workflow={workflow} onChanged={onChanged} />
        <div class="actions">
          {canChat(current.status) && (
            <a class="button" href={`#/builder/${encodeURIComponent(workflow.id)}`}>
              Continue in builder
            </a>
          )}
          {version.id === current.id && canEdit(version.status) && (
            <button type="button" class="button" disabled={busy} onClick={() => void act("edit")}>
              Edit
            </button>
          )}
          {version.id === current.id && canApprove(version.status) && (
            <button type="button" class="button primary" disabled={busy} onClick={() => void act("approve")}>
              Approve
            </button>
          )}
          {version.status === "archived" && version.script && (
            <button
              type="button"
              class="button"
              disabled={busy}
              title="Make a new version with this version's script and inputs; it is tested on your files, then you approve it."
              onClick={() => void act("restore")}
            >
              Restore v{version.version}
            </button>
          )}
          <button type="button" class="button danger" disabled={busy} onClick={() => setDeleting(true)}>
            Delete
          </button>
        </div>
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

      <div class="tabs" role="tablist" aria-label="Version details">
        {tabs.map(([key, label]) => (
          <button
            type="button"
            role="tab"
            key={key}
            id={`tab-${key}`}
            aria-selected={tab === key}
            aria-controls={`panel-${key}`}
            class={tab === key ? "selected" : ""}
            onClick={() => setTab(key)}
          >
            {label}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="panel">
        {tab === "script" &&
          (version.script ? (
            <CodeView code={version.script} label={`Script of version ${version.version}`} />
          ) : (
            <EmptyState title="No script yet" icon="✎">
              <p class="muted">
                {version.status === "failed"
                  ? `The build failed${version.failure_reason ? `: ${version.failure_reason}` : ""}.`
                  : "The script appears here once this version is built."}
              </p>
            </EmptyState>
          ))}
        {tab === "fields" &&
          (version.fields && version.fields.length ? (
            <table class="grid">
              <caption class="sr-only">Inputs of the workflow</caption>
              <thead>
                <tr>
                  <th scope="col">Input</th>
                  <th scope="col">Key</th>
                  <th scope="col">Type</th>
                  <th scope="col">Required</th>
                  <th scope="col">Accepts</th>
                </tr>
              </thead>
              <tbody>
                {version.fields.map((f) => (
                  <tr key={f.name}>
                    <td>{f.label}</td>
                    <td>
                      <code>{f.name}</code>
                    </td>
                    <td>{f.type}</td>
                    <td>{f.required ? "yes" : "no"}</td>
                    <td>{(f.accept ?? f.options ?? []).join(", ") || "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <EmptyState title="No fields yet" icon="☐">
              <p class="muted">The build declares the inputs a run asks for.</p>
            </EmptyState>
          ))}
        {tab === "fields" && version.execution && (
          <p class="muted small">
            Runs <code>{version.execution.entrypoint}</code> with {version.execution.runtime}
            {version.execution.requirements.length ? `, needs ${version.execution.requirements.join(", ")}` : ""}
            {version.execution.outputs.length ? `; writes ${version.execution.outputs.map((o) => o.name).join(", ")}` : ""}.
          </p>
        )}
        {tab === "files" && (
          <ul class="file-list">
            {version.file_extracts.map((e, i) => (
              <li key={i}>
                <strong>{e.filename}</strong> <span class="muted">{summary(e)}</span>
                <div class="columns">
                  {e.columns.map((c, j) => (
                    <span class="pill" key={j}>
                      {c}
                    </span>
                  ))}
                </div>
              </li>
            ))}
          </ul>
        )}
        {tab === "test" && <TestReportView report={version.test_report} workflowId={workflow.id} versionId={version.id} />}
        {tab === "sessions" && <SessionsView workflowId={workflow.id} versionId={version.id} />}
        {tab === "run" && <RunPanel workflow={workflow} />}
        {tab === "compare" &&
          (others.length === 0 ? (
            <EmptyState title="Only one version" icon="⇄">
              <p class="muted">Edit this workflow to make a second version, then compare their scripts here.</p>
            </EmptyState>
          ) : (
            <>
              <label class="inline">
                Compare v{version.version} with{" "}
                <select value={compareId} onChange={(e) => setCompareId(e.currentTarget.value)}>
                  {others.map((o) => (
                    <option key={o.id} value={o.id}>
                      v{o.version} ({STATUS[o.status].label})
                    </option>
                  ))}
                </select>
              </label>
              {compareTo ? (
                compareTo.version < version.version ? (
                  <DiffView before={compareTo.script ?? ""} after={version.script ?? ""} label={`Changes from v${compareTo.version} to v${version.version}`} />
                ) : (
                  <DiffView before={version.script ?? ""} after={compareTo.script ?? ""} label={`Changes from v${version.version} to v${compareTo.version}`} />
                )
              ) : (
                <Spinner label="Loading…" />
              )}
            </>
          ))}
      </section>
    </article>
  );
}

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
