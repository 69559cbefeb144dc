// The Workflows page's Run tab: a form from the active version's fields,
// and the workflow's run history kept fresh by the core's events.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { RunInputs, RunView, VersionView, WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { initialValues, runRequest, type FieldValue } from "../lib/runs";
import { toApiError } from "../transport";
import { EmptyState, NoticeBanner, Spinner } from "./ui";
import { FieldInput } from "./FieldInput";
import { RunItem } from "./RunItem";
import { ScheduleWorkflow } from "../settings/ScheduleWorkflow";

/** The Run tab: a form from the active version's fields, and the run history. */
export function RunPanel({ workflow }: { workflow: WorkflowView }) {
  const transport = useTransport();
  const [active, setActive] = useState<VersionView | null>(null);
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const [runs, setRuns] = useState<RunView[] | null>(null);
  const [running, setRunning] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  // Files that differ in shape from the approved ones: the list, and the request to run anyway.
  const [differs, setDiffers] = useState<{ lines: string[]; request: RunInputs } | null>(null);
  const activeId = workflow.active_version_id;

  useEffect(() => {
    if (!activeId) return;
    transport.getVersion(workflow.id, activeId).then(
      (v) => {
        setActive(v);
        setValues(initialValues(v.fields ?? []));
      },
      (e) => setNotice(noticeOf(toApiError(e))),
    );
    transport.listRuns(workflow.id).then(setRuns, (e) => setNotice(noticeOf(toApiError(e))));
  }, [transport, workflow.id, activeId]);

  useEffect(
    () =>
      transport.onEvent((e) => {
        if (e.type === "run_changed" && e.workflow_id === workflow.id) transport.listRuns(workflow.id).then(setRuns, () => {});
      }),
    [transport, workflow.id],
  );

  if (!activeId) {
    return (
      <EmptyState title="Approve a version to run it" icon="▶">
        <p class="muted">Runs use the approved version of the workflow.</p>
      </EmptyState>
    );
  }
  if (!active) return <Spinner label="Loading the form…" />;
  const fields = active.fields ?? [];

  async function run(e: Event) {
    e.preventDefault();
    const r = runRequest(fields, values);
    if ("problem" in r) {
      setNotice({ tone: "warning", title: "The form is not complete", detail: r.problem });
      return;
    }
    await start(r.request);
  }

  async function start(request: RunInputs) {
    setRunning(true);
    setNotice(null);
    setDiffers(null);
    try {
      const done = await transport.runWorkflow(workflow.id, request);
      setRuns((old) => [done, ...(old ?? []).filter((x) => x.id !== done.id)]);
    } catch (err) {
      const apiError = toApiError(err);
      if (apiError.detail === "INPUTS_DIFFER") {
        // The first line says what happened; each other line is one difference.
        setDiffers({ lines: apiError.message.split("\n").slice(1), request });
      } else {
        setNotice(noticeOf(apiError));
      }
    } finally {
      setRunning(false);
    }
  }

  return (
    <div class="run-panel">
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      <form class="run-form" onSubmit={run} aria-label="Run the workflow">
        <p class="muted small">Runs version {active.version} on this machine, in a sandbox without network.</p>
        {fields.map((f) => (
          <FieldInput key={f.name} field={f} value={values[f.name] ?? ""} onChange={(v) => setValues((old) => ({ ...old, [f.name]: v }))} />
        ))}
        <button type="submit" class="button primary" disabled={running}>
          {running ? "Running…" : "▶ Run"}
        </button>
      </form>
      {differs && (
        <div class="callout bad run-differs" role="alert" data-testid="run-differs">
          <strong>Not run: these files differ from the ones version {active.version} was approved with.</strong>
          <ul>
            {differs.lines.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
          <div class="row">
            <button type="button" class="button small" disabled={running} onClick={() => void start({ ...differs.request, force: true })}>
              Run anyway
            </button>
            <button type="button" class="button small" onClick={() => setDiffers(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <h3>Run history</h3>
      {runs === null && <Spinner label="Loading runs…" />}
      {runs && runs.length === 0 && <p class="muted">No runs yet.</p>}
      {runs && runs.length > 0 && (
        <ul class="runs">
          {runs.map((r) => (
            <RunItem key={r.id} run={r} />
          ))}
        </ul>
      )}
      {activeId && <ScheduleWorkflow workflowId={workflow.id} />}
    </div>
  );
}
