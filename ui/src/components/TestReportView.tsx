// The auto-test's report of a version: status, what it was tested on, the
// environment it ran in, its outputs and standard error.
import type { TestReport } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { durationLabel } from "../lib/runs";
import { EmptyState } from "./ui";
import { OutputView } from "./OutputView";
import { RefusedOutputs } from "./RefusedOutputs";
import { UnisolatedBanner, ranUnisolated } from "./Unisolated";

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
          <RefusedOutputs refused={report.run.refused_outputs} />
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
