// A version's inputs (the fields a run asks for) and how it runs.
import { EmptyState } from "../components/ui";
import type { Execution, VersionView } from "../generated";
import { columnLabel, driftLabel, tableLabel } from "../lib/reads";

/** The "Fields" tab of a version. */
export function FieldsPanel({ version }: { version: VersionView }) {
  return (
    <>
      {version.fields && version.fields.length ? (
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
      )}
      {version.execution && <ReadsList execution={version.execution} />}
      {version.execution && (
        <p class="muted small">
          Runs <code>{version.execution.entrypoint}</code> with {version.execution.runtime}
          {version.execution.requirements.length ? `, needs ${version.execution.requirements.join(", ")}` : ""}
          {version.execution.outputs.length ? `; writes ${version.execution.outputs.map((o) => o.name).join(", ")}` : ""}.
        </p>
      )}
    </>
  );
}

/** What a re-run checks before the script starts (#41), from the version's declared reads. */
function ReadsList({ execution }: { execution: Execution }) {
  const reads = execution.reads ?? [];
  const drift = driftLabel(execution);
  if (reads.length === 0 && !drift) return null;
  return (
    <section class="reads-list" aria-label="What a re-run checks">
      <h3>What a re-run checks</h3>
      <p class="muted small">
        Before each run on new files, these must still be there as this version read them: a change here stops the run
        and says what changed; any other difference is reported and the run goes on.
      </p>
      <ul>
        {reads.map((r, i) => (
          <li key={i} data-testid="read">
            <strong>{tableLabel(r)}</strong>: {r.columns.length ? r.columns.map(columnLabel).join("; ") : "the table itself"}
          </li>
        ))}
      </ul>
      {drift && <p class="muted small">Expected to change from one period to the next: {drift}.</p>}
    </section>
  );
}
