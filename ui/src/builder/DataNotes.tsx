// Notes on your data (#40 point 7): what the user knows that the masked
// extract cannot show (units, scale, what codes mean), on a file, a sheet
// or a column. Sent to the AI in the user's own words — not masked: the
// privacy guard still refuses a note that names someone in the files — and
// kept with the workflow.
import { useState } from "preact/hooks";
import type { FileExtract } from "../generated";
import { MAX_NOTE_CHARS, placeOf, storedNotes, targets, type NoteDraft } from "../lib/notes";

/** The notes of the files to approve: a list per file and a form to add one. */
export function DataNotes({
  files,
  notes,
  onChange,
  disabled,
}: {
  files: { fileId: string; sent: FileExtract }[];
  notes: NoteDraft[];
  onChange: (notes: NoteDraft[]) => void;
  disabled?: boolean;
}) {
  if (files.length === 0) return null;
  return (
    <div class="data-notes" role="group" aria-label="Notes on your data">
      <h3>Notes on your data</h3>
      <p class="muted">
        Tell the AI what the files cannot show: units or scale (“amounts are in thousands”), what codes mean, which rows
        to leave out. Notes are sent in your own words, not masked, and kept with the workflow.
      </p>
      {files.map((f) => (
        <FileNotes
          key={f.fileId}
          file={f}
          notes={notes}
          disabled={disabled}
          onAdd={(n) => onChange([...notes, n])}
          onRemove={(n) => onChange(notes.filter((x) => x !== n))}
        />
      ))}
    </div>
  );
}

function FileNotes({
  file,
  notes,
  onAdd,
  onRemove,
  disabled,
}: {
  file: { fileId: string; sent: FileExtract };
  notes: NoteDraft[];
  onAdd: (n: NoteDraft) => void;
  onRemove: (n: NoteDraft) => void;
  disabled?: boolean;
}) {
  const places = targets(file.sent);
  const [place, setPlace] = useState(0);
  const [text, setText] = useState("");
  const mine = notes.filter((n) => n.fileId === file.fileId);
  const name = file.sent.filename;
  const add = () => {
    const at = places[place] ?? places[0]!;
    onAdd({ fileId: file.fileId, sheet: at.sheet, column: at.column, text: text.trim() });
    setText("");
  };
  return (
    <div class="file-notes" data-testid="file-notes">
      <h4>{name}</h4>
      {mine.length > 0 && (
        <ul aria-label={`Notes on ${name}`}>
          {mine.map((n, i) => (
            <li key={i} data-testid="data-note">
              <strong>{placeOf(file.sent, n)}:</strong> {n.text}{" "}
              <button type="button" class="button ghost small" disabled={disabled} onClick={() => onRemove(n)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="note-form">
        <label>
          On{" "}
          <select value={place} disabled={disabled} onChange={(e) => setPlace(Number((e.target as HTMLSelectElement).value))}>
            {places.map((p, i) => (
              <option key={i} value={i}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <textarea
          aria-label={`A note on ${name}`}
          rows={2}
          maxLength={MAX_NOTE_CHARS}
          placeholder="e.g. amounts are in thousands of euros"
          value={text}
          disabled={disabled}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <button type="button" class="button" disabled={disabled || !text.trim()} onClick={add}>
          Add note
        </button>
      </div>
    </div>
  );
}

/** The notes an approved workflow keeps, read from its extracts. */
export function ApprovedNotes({ extracts }: { extracts: FileExtract[] }) {
  const rows = extracts.flatMap((e) => storedNotes(e).map((n) => ({ ...n, file: e.filename })));
  if (rows.length === 0) return null;
  return (
    <div class="data-notes" role="group" aria-label="Your notes on the data">
      <h3>Your notes on the data</h3>
      <ul>
        {rows.map((n, i) => (
          <li key={i} data-testid="data-note">
            <strong>
              {n.file}, {n.place.charAt(0).toLowerCase() + n.place.slice(1)}:
            </strong>{" "}
            {n.text}
          </li>
        ))}
      </ul>
    </div>
  );
}
