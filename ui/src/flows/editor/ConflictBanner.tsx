// The notice of a flow file changed (or removed) outside Maskflow while it
// is open: reload it, keep editing, or overwrite it — never silently.

/** The choices when `flows/<name>.json` changed on disk since it was opened. */
export function ConflictBanner({
  name,
  removed,
  dirty,
  busy,
  onReload,
  onKeep,
  onOverwrite,
}: {
  name: string;
  removed: boolean;
  dirty: boolean;
  busy: boolean;
  onReload: () => void;
  onKeep: () => void;
  onOverwrite: () => void;
}) {
  return (
    <div class="notice notice-warning editor-conflict" role="alert" data-testid="editor-conflict">
      <div>
        <strong>
          flows/{name}.json {removed ? "was removed" : "changed"} outside Maskflow
        </strong>
        <p class="small">
          {removed
            ? "Someone or something deleted the file since you opened it. Save writes it again only if you choose to."
            : `The file on disk is not the one you opened.${dirty ? " Reloading discards your edits here." : ""}`}
        </p>
      </div>
      <div class="flow-controls">
        {!removed && (
          <button type="button" class="button" disabled={busy} onClick={onReload}>
            Reload from disk
          </button>
        )}
        <button type="button" class="button" disabled={busy} onClick={onKeep}>
          Keep editing
        </button>
        <button type="button" class="button danger" disabled={busy} onClick={onOverwrite}>
          {removed ? "Write it again" : "Overwrite with mine"}
        </button>
      </div>
    </div>
  );
}
