// The diff of a version's script against another version of the workflow.
import { DiffView } from "../components/Code";
import { EmptyState, Spinner } from "../components/ui";
import type { VersionView } from "../generated";
import { STATUS } from "../lib/status";
import type { Versions } from "./useVersions";

/** The "Compare versions" tab of `version`. */
export function ComparePanel({ version, versions }: { version: VersionView; versions: Versions }) {
  const { others, compareId, setCompareId, compareTo } = versions;
  if (others.length === 0) {
    return (
      <EmptyState title="Only one version" icon="⇄">
        <p class="muted">Edit this workflow to make a second version, then compare their scripts here.</p>
      </EmptyState>
    );
  }
  return (
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
  );
}
