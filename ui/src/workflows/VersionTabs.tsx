// A version's details as tabs: script, fields, files, test report, build
// session, a diff against another version, and the run form.
import { CodeView } from "../components/Code";
import { RunPanel } from "../components/RunPanel";
import { SessionsView } from "../components/SessionsView";
import { TestReportView } from "../components/TestReportView";
import { EmptyState } from "../components/ui";
import type { VersionView, WorkflowView } from "../generated";
import { summary } from "../lib/extracts";
import { ComparePanel } from "./ComparePanel";
import { FieldsPanel } from "./FieldsPanel";
import type { Versions } from "./useVersions";

/** The tabs of a version's details. */
export type Tab = "script" | "fields" | "files" | "compare" | "test" | "sessions" | "run";

/** The tab list and the open tab's panel for `version` of `workflow`. */
export function VersionTabs({
  workflow,
  version,
  versions,
  tab,
  setTab,
}: {
  workflow: WorkflowView;
  version: VersionView;
  versions: Versions;
  tab: Tab;
  setTab: (tab: Tab) => void;
}) {
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
    <>
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
        {tab === "fields" && <FieldsPanel version={version} />}
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
        {tab === "compare" && <ComparePanel version={version} versions={versions} />}
      </section>
    </>
  );
}
