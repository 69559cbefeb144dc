// A version's inputs (the fields a run asks for) and how it runs.
import { EmptyState } from "../components/ui";
import type { VersionView } from "../generated";

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
