// The user's notes on their data (#40 point 7): what they know that no
// extract shows, on a file, a sheet or a column. Written at approval, sent
// to the AI in the user's own words and kept with the workflow. A note
// points at its table and column by position, so a name masked or sent as
// it is (a switch of the approval view) is resolved when it is sent.
import type { DataNote, FileExtract } from "../generated";

/** A note being written: its file, sheet (index) and column (index). */
export interface NoteDraft {
  fileId: string;
  sheet: number | null;
  column: number | null;
  text: string;
}

/** What a note may sit on: the file, one of its sheets, or a column. */
export interface NoteTarget {
  sheet: number | null;
  column: number | null;
  label: string;
}

/** The longest note the server takes (`data_notes::MAX_NOTE_CHARS`). */
export const MAX_NOTE_CHARS = 2000;

function columnsOf(extract: FileExtract, sheet: number | null): string[] {
  if (sheet == null) return extract.columns;
  return extract.sheets?.[sheet]?.columns ?? [];
}

/** A place in words: "The whole file", "Column amount", "Sheet Q1 › column amount". */
function label(sheet: string | null, column: string | null): string {
  if (sheet == null) return column == null ? "The whole file" : `Column ${column}`;
  return column == null ? `Sheet ${sheet}` : `Sheet ${sheet} › column ${column}`;
}

/** Every place of `extract` (as sent) a note can sit on, labelled. */
export function targets(extract: FileExtract): NoteTarget[] {
  const out: NoteTarget[] = [{ sheet: null, column: null, label: label(null, null) }];
  extract.columns.forEach((c, i) => out.push({ sheet: null, column: i, label: label(null, c) }));
  (extract.sheets ?? []).forEach((s, si) => {
    out.push({ sheet: si, column: null, label: label(s.name, null) });
    s.columns.forEach((c, i) => out.push({ sheet: si, column: i, label: label(s.name, c) }));
  });
  return out;
}

/** Where a note sits, in words, by the names of `extract` (as sent). */
export function placeOf(extract: FileExtract, note: Pick<NoteDraft, "sheet" | "column">): string {
  return targets(extract).find((t) => t.sheet === note.sheet && t.column === note.column)?.label ?? label(null, null);
}

/** The notes of the approval request, their sheets and columns named as `sent` sends them. */
export function requestNotes(notes: NoteDraft[], files: { fileId: string; sent: FileExtract }[]): DataNote[] {
  const out: DataNote[] = [];
  for (const n of notes) {
    const file = files.find((f) => f.fileId === n.fileId);
    if (!file || !n.text.trim()) continue;
    const note: DataNote = { file_id: n.fileId, text: n.text.trim() };
    if (n.sheet != null) {
      const sheet = file.sent.sheets?.[n.sheet]?.name;
      if (sheet == null) continue;
      note.sheet = sheet;
    }
    if (n.column != null) {
      const column = columnsOf(file.sent, n.sheet)[n.column];
      if (column == null) continue;
      note.column = column;
    }
    out.push(note);
  }
  return out;
}

/** A table's notes as the server keeps them, beside the table. */
type Noted = { notes?: { column?: string; note?: string }[] };

/** The extract with its notes where the server puts them, for the view of what is sent. */
export function withNotes(extract: FileExtract, fileId: string, notes: NoteDraft[]): FileExtract {
  const mine = notes.filter((n) => n.fileId === fileId && n.text.trim());
  if (mine.length === 0) return extract;
  const copy = structuredClone(extract);
  for (const n of mine) {
    const text = n.text.trim();
    const entry = n.column == null ? { note: text } : { column: columnsOf(copy, n.sheet)[n.column], note: text };
    const table = (n.sheet == null ? copy : copy.sheets?.[n.sheet]) as Noted | undefined;
    if (table) table.notes = [...(table.notes ?? []), entry];
  }
  return copy;
}

/** The notes an approved extract holds, each with its place, for the approved view. */
export function storedNotes(extract: FileExtract): { place: string; text: string }[] {
  const read = (table: Noted, sheet: string | null) =>
    (table.notes ?? [])
      .filter((n) => typeof n.note === "string")
      .map((n) => ({ place: label(sheet, n.column ?? null), text: n.note ?? "" }));
  return [...read(extract as Noted, null), ...(extract.sheets ?? []).flatMap((s) => read(s as Noted, s.name))];
}
