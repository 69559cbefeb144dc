// A workflow's header actions: continue in the builder, Edit, Approve,
// Restore an archived version, and Delete.
import type { VersionView, WorkflowView } from "../generated";
import { canApprove, canChat, canEdit } from "../lib/status";

/** What the user can do with `version` of `workflow`; `act` runs the change. */
export function VersionActions({
  workflow,
  version,
  busy,
  act,
  onDelete,
}: {
  workflow: WorkflowView;
  version: VersionView;
  busy: boolean;
  act: (kind: "approve" | "edit" | "restore") => Promise<void>;
  onDelete: () => void;
}) {
  const current = workflow.current_version;
  return (
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
      <button type="button" class="button danger" disabled={busy} onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}
