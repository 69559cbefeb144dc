// The Workflows page's panels for one version: its test report, its build
// session files (for offline review), and the Run form with run history.
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { Field, LimitState, RunView, SessionIteration, TestReport, VersionView, WorkflowView } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { noticeOf, type Notice } from "../lib/errors";
import { durationLabel, initialValues, runRequest, runTone, type FieldValue } from "../lib/runs";
import { sourceName, toApiError, type FileSource } from "../transport";
import { EmptyState, NoticeBanner, Spinner } from "./ui";
import { OutputView } from "./OutputView";

/** Whether a run's report says it ran without file-system or network isolation. */
export function ranUnisolated(limits: LimitState[]): boolean {
  return limits.some((l) => (l.name === "file_system" || l.name === "network") && !l.mechanism);
}

function UnisolatedBanner() {
  return (
    <p class="warn-text small" role="alert" data-testid="unisolated">
      <strong>Ran without isolation</strong> — allowed in Settings on this machine; the script could read your files and reach the network.
    </p>
  );
}

function Run({ run }: { run: RunView }) {
  const [open, setOpen] = useState(false);
  const inputs = run.inputs && typeof run.inputs === "object" ? Object.entries(run.inputs as Record<string, unknown>) : [];
  return (
    <li class="run" data-testid="run">
      <div class="run-head">
        <span class={`badge tone-${runTone(run.status)}`}>{run.status.replace(/_/g, " ")}</span>
        <span class="muted small">
          {new Date(run.started_at).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "medium" })} · {durationLabel(run.duration_ms)}
        </span>
        <span class="run-msg">{run.message}</span>
      </div>
      {ranUnisolated(run.limits) && <UnisolatedBanner />}
      {inputs.length > 0 && (
        <p class="muted small">
          Inputs: {inputs.map(([k, v]) => `${k} = ${Array.isArray(v) ? v.join(", ") : String(v)}`).join(" · ")}
        </p>
      )}
      {run.outputs.map((o) => (
        <OutputView key={o.name} source={{ kind: "run", runId: run.id }} output={o} testId="run-output" />
      ))}
      <button type="button" class="button ghost small" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide details" : "Output, errors and limits"}
      </button>
      {open && (
        <div class="run-details">
          <h4>Limits</h4>
          <ul class="limits">
            {run.limits.map((l) => (
              <li key={l.name}>
                <strong>{l.name.replace(/_/g, " ")}</strong> {l.limit} —{" "}
                {l.mechanism ? <span>enforced by {l.mechanism}</span> : <span class="warn-text">not enforced{l.note ? `: ${l.note}` : ""}</span>}
              </li>
            ))}
          </ul>
          <h4>Standard output</h4>
          <pre class="preview">{run.stdout || "(empty)"}</pre>
          <h4>Standard error</h4>
          <pre class="preview">{run.stderr || "(empty)"}</pre>
        </div>
      )}
    </li>
  );
}

function FileInput({ field, onChange }: { field: Field; onChange: (ids: string[]) => void }) {
  const transport = useTransport();
  const input = useRef<HTMLInputElement>(null);
  const [files, setFiles] = useState<{ name: string; id?: string; error?: string }[]>([]);
  // Reports when the files change, not when the parent passes a new callback.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => onChange(files.filter((f) => f.id).map((f) => f.id!)), [files]);
  function add(sources: FileSource[]) {
    const chosen = field.type === "file" ? sources.slice(0, 1) : sources;
    if (field.type === "file") setFiles([]);
    for (const source of chosen) {
      const name = sourceName(source);
      setFiles((old) => [...old, { name }]);
      transport.extract(source).then(
        (u) => setFiles((old) => old.map((f) => (f.name === name && !f.id ? { name, id: u.file_id } : f))),
        (e) => setFiles((old) => old.map((f) => (f.name === name && !f.id ? { name, error: toApiError(e).message } : f))),
      );
    }
  }
  // One subscription per transport; add only reads the field, fixed for this input.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => transport.onNativeDrop((paths) => add(paths.map((path) => ({ kind: "path", path })))), [transport]);
  return (
    <div class="file-field">
      <button type="button" class="button small" onClick={() => input.current?.click()}>
        {field.type === "file" ? "Choose a file…" : "Choose files…"}
      </button>
      <input
        ref={input}
        type="file"
        hidden
        multiple={field.type === "files"}
        accept={field.accept?.join(",")}
        aria-label={field.label}
        data-testid={`run-file-${field.name}`}
        onChange={(e) => {
          const el = e.currentTarget;
          const picked = Array.from(el.files ?? []);
          el.value = "";
          add(picked.map((file) => ({ kind: "file", file })));
        }}
      />
      <ul class="picked">
        {files.map((f, i) => (
          <li key={i} class={f.error ? "warn-text" : ""}>
            {f.name} {f.error ? `— ${f.error}` : f.id ? "✓" : "(reading…)"}
            <button type="button" class="icon-button" aria-label={`Remove ${f.name}`} onClick={() => setFiles((old) => old.filter((_, j) => j !== i))}>
              ×
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

function FieldInput({ field, value, onChange }: { field: Field; value: FieldValue; onChange: (v: FieldValue) => void }) {
  const id = `field-${field.name}`;
  const label = (
    <label for={id} class="field-label">
      {field.label}
      {field.required && <span aria-hidden="true"> *</span>}
    </label>
  );
  switch (field.type) {
    case "file":
    case "files":
      return (
        <div class="field">
          <span class="field-label">
            {field.label}
            {field.required && " *"}
            {field.accept?.length ? <span class="muted small"> ({field.accept.join(", ")})</span> : null}
          </span>
          <FileInput field={field} onChange={onChange} />
        </div>
      );
    case "boolean":
      return (
        <div class="field">
          <label class="check">
            <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />
            {field.label}
          </label>
        </div>
      );
    case "choice":
      return (
        <div class="field">
          {label}
          <select id={id} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)}>
            {(field.options ?? []).map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </div>
      );
    default:
      return (
        <div class="field">
          {label}
          <input
            id={id}
            type={field.type === "number" ? "number" : field.type === "date" ? "date" : "text"}
            value={String(value)}
            required={field.required}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
        </div>
      );
  }
}

/** The Run tab: a form from the active version's fields, and the run history. */
export function RunPanel({ workflow }: { workflow: WorkflowView }) {
  const transport = useTransport();
  const [active, setActive] = useState<VersionView | null>(null);
  const [values, setValues] = useState<Record<string, FieldValue>>({});
  const [runs, setRuns] = useState<RunView[] | null>(null);
  const [running, setRunning] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
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
    setRunning(true);
    setNotice(null);
    try {
      const done = await transport.runWorkflow(workflow.id, r.request);
      setRuns((old) => [done, ...(old ?? []).filter((x) => x.id !== done.id)]);
    } catch (err) {
      setNotice(noticeOf(toApiError(err)));
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
      <h3>Run history</h3>
      {runs === null && <Spinner label="Loading runs…" />}
      {runs && runs.length === 0 && <p class="muted">No runs yet.</p>}
      {runs && runs.length > 0 && (
        <ul class="runs">
          {runs.map((r) => (
            <Run key={r.id} run={r} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The auto-test's report. */
export function TestReportView({
  report,
  workflowId,
  versionId,
}: {
  report: TestReport | undefined;
  workflowId: string;
  versionId: string;
}) {
  if (!report) {
    return (
      <EmptyState title="No test report yet" icon="✓">
        <p class="muted">The build tests the script on your files; its report appears here.</p>
      </EmptyState>
    );
  }
  const tone = report.status === "passed" ? "good" : report.status === "failed" ? "bad" : "muted";
  return (
    <div class="test-report" data-testid="test-report">
      <div class="run-head">
        <span class={`badge tone-${tone}`}>Test {report.status}</span>
        <span class="muted small">iteration {report.iteration}</span>
        <span class="run-msg">{report.message}</span>
      </div>
      {Object.keys(report.inputs).length > 0 && (
        <p class="muted small">
          Tested on:{" "}
          {Object.entries(report.inputs)
            .map(([k, v]) => `${k} = ${(v ?? []).join(", ")}`)
            .join(" · ")}
        </p>
      )}
      {report.run && (
        <>
          {ranUnisolated(report.run.limits) && <UnisolatedBanner />}
          <p class="small">
            {report.run.message} · {durationLabel(report.run.duration_ms)}
          </p>
          {report.environment && (
            <p class="env-report muted" data-testid="test-environment">
              Python {report.environment.python} environment <code>{report.environment.id}</code> ({bytesLabel(Number(report.environment.size))}):{" "}
              {report.environment.packages.join(", ")}
            </p>
          )}
          {report.run.outputs.length > 0 && (
            <h4>
              Outputs ({report.run.outputs.length}, {bytesLabel(report.run.outputs.reduce((n, o) => n + Number(o.size), 0))})
            </h4>
          )}
          {report.run.outputs.map((o) => (
            <OutputView key={o.name} source={{ kind: "test", workflowId, versionId }} output={o} testId="test-output" />
          ))}
          {report.run.stderr && (
            <>
              <h4>Standard error</h4>
              <pre class="preview">{report.run.stderr}</pre>
            </>
          )}
        </>
      )}
    </div>
  );
}

/** The build's session folder: iterations and their files, read on demand. */
export function SessionsView({ workflowId, versionId }: { workflowId: string; versionId: string }) {
  const transport = useTransport();
  const [iterations, setIterations] = useState<SessionIteration[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ iteration: number; path: string; text: string } | null>(null);
  useEffect(() => {
    setIterations(null);
    setOpen(null);
    transport.sessions(workflowId, versionId).then(setIterations, (e) => setError(toApiError(e).message));
  }, [transport, workflowId, versionId]);
  async function show(iteration: number, path: string) {
    try {
      setOpen({ iteration, path, text: await transport.sessionFile(workflowId, versionId, iteration, path) });
    } catch (e) {
      setError(toApiError(e).message);
    }
  }
  if (error) return <p class="warn-text">{error}</p>;
  if (!iterations) return <Spinner label="Loading the session…" />;
  if (!iterations.length) {
    return (
      <EmptyState title="No build session" icon="🗂">
        <p class="muted">The prompts, answers and scripts of each build iteration are kept here for review.</p>
      </EmptyState>
    );
  }
  return (
    <div class="sessions">
      <ul class="session-tree" aria-label="Session files">
        {iterations.map((it) => (
          <li key={it.iteration}>
            <strong>Iteration {it.iteration}</strong>
            <ul>
              {it.files.map((f) => (
                <li key={f.path}>
                  <button
                    type="button"
                    class={`link${open?.iteration === it.iteration && open.path === f.path ? " selected" : ""}`}
                    onClick={() => void show(it.iteration, f.path)}
                  >
                    {f.path}
                  </button>{" "}
                  <span class="muted small">{bytesLabel(Number(f.size))}</span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
      <div class="session-file">
        {open ? (
          <>
            <h4>
              Iteration {open.iteration} · {open.path}
            </h4>
            <pre class="preview" tabIndex={0} data-testid="session-file">
              {open.text}
            </pre>
          </>
        ) : (
          <p class="muted">Choose a file to read it.</p>
        )}
      </div>
    </div>
  );
}
