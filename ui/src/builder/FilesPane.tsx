// The Builder's right pane: the page's notice, the drop zone and file chips
// of a new workflow, and the masked extracts to approve (or approved).
import { useMemo } from "preact/hooks";
import type { Dispatch } from "preact/hooks";
import { EmptyState, NoticeBanner, Spinner } from "../components/ui";
import { ExtractView } from "../components/ExtractView";
import type { FileExtract } from "../generated";
import type { Chip, ChipAction } from "../lib/chips";
import { asSent, payloadJson, withCategories, withOffered } from "../lib/extracts";
import { withNotes } from "../lib/notes";
import { CategorySwitches } from "./CategorySwitches";
import { ApprovedNotes, DataNotes } from "./DataNotes";
import { FlaggedNames } from "./FlaggedNames";
import { ProfileView } from "./ProfileView";
import { Chips } from "./Chips";
import { DropZone } from "./DropZone";
import type { useBuilderWorkflow } from "./useBuilderWorkflow";
import type { useFileChips } from "./useFileChips";

/** The files pane of the Builder. */
export function FilesPane({
  wf,
  files,
  chips,
  dispatch,
}: {
  wf: ReturnType<typeof useBuilderWorkflow>;
  files: ReturnType<typeof useFileChips>;
  chips: Chip[];
  dispatch: Dispatch<ChipAction>;
}) {
  const { workflow, loading, notice, setNotice, showJson, setShowJson } = wf;
  const { addSources, ready, canApprove, reason, approving, approve, sendAsIs, toggleSendAsIs, shown, toggleShown, notes, setNotes } = files;
  // Exactly what approving sends: the masked extracts, with the flagged
  // names the user chose to send as they are put back, the category
  // columns they switched on and their notes.
  const sent = useMemo(
    () =>
      ready.map((c) => {
        const file = { fileId: c.fileId!, extract: c.extract!, flagged: c.flagged, categories: c.categories };
        return { fileId: file.fileId, file, sent: withCategories(asSent(file.extract, file.flagged, sendAsIs), file, shown) };
      }),
    [ready, sendAsIs, shown],
  );
  // What the server adds once it has checked them: the category columns
  // left off, named, and the notes.
  const extracts: FileExtract[] = useMemo(
    () =>
      workflow
        ? workflow.current_version.file_extracts
        : sent.map((f) => withNotes(withOffered(f.sent, f.file, shown), f.fileId, notes)),
    [workflow, sent, shown, notes],
  );
  return (
    <section class="files-pane" aria-label="Files">
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
      {loading && <Spinner label="Loading the workflow…" />}
      {!workflow && !loading && (
        <>
          <DropZone onFiles={addSources} disabled={approving} />
          {chips.length > 0 && <Chips chips={chips} onRemove={(key) => dispatch({ type: "remove", key })} frozen={approving} />}
        </>
      )}
      {workflow && (
        <div class="approved-bar">
          <span class="badge tone-good">Approved extract</span>
          <span class="muted">
            {extracts.length} {extracts.length === 1 ? "file" : "files"} · only this masked extract is shared with the AI
          </span>
        </div>
      )}
      {extracts.length > 0 ? (
        <div class="approval" aria-label="Approval">
          <div class="approval-head">
            <div>
              <h2>{workflow ? "What the AI sees" : "Check what the AI will see"}</h2>
              <p class="muted">
                Every sample value is masked: letters become A/a, digits #. Column and sheet names are kept, except
                those that look like values, which are masked too.
              </p>
            </div>
            <button type="button" class="button ghost" aria-expanded={showJson} onClick={() => setShowJson(!showJson)}>
              {showJson ? "Hide JSON" : "Show exactly what will be sent"}
            </button>
          </div>
          {showJson && (
            <pre class="json" data-testid="payload-json" tabIndex={0} aria-label="The JSON that will be sent">
              {payloadJson(extracts)}
            </pre>
          )}
          {!workflow && (
            <>
              <FlaggedNames files={ready} sendAsIs={sendAsIs} onToggle={toggleSendAsIs} disabled={approving} />
              <CategorySwitches files={ready} shown={shown} onToggle={toggleShown} disabled={approving} />
              <DataNotes files={sent} notes={notes} onChange={setNotes} disabled={approving} />
            </>
          )}
          {workflow && <ApprovedNotes extracts={extracts} />}
          {extracts.map((e, i) => (
            <div key={`${e.filename}-${i}`}>
              <ExtractView extract={e} />
              <ProfileView extract={e} />
            </div>
          ))}
          {!workflow && (
            <div class="approve-row">
              <span class="muted">{reason ?? `${ready.length} ${ready.length === 1 ? "file" : "files"} ready.`}</span>
              <button type="button" class="button primary" disabled={!canApprove || approving} onClick={() => void approve()}>
                {approving ? "Approving…" : "Approve and start chatting"}
              </button>
            </div>
          )}
        </div>
      ) : (
        !workflow &&
        !loading &&
        chips.length === 0 && (
          <EmptyState title="No files yet" icon="⇪">
            <p class="muted">Masked previews of your files will appear here for you to approve.</p>
          </EmptyState>
        )
      )}
    </section>
  );
}
