// Helpers over masked extracts: the exact JSON that will be sent when the
// user approves, and short human summaries of each file.
import type { CategoryCandidate, CategoryChoice, CreateWorkflow, FileExtract, FlaggedName } from "../generated";
import { requestNotes, type NoteDraft } from "./notes";

/** A file to approve: its masked extract, the names masked in it and its category columns. */
export interface ApprovalFile {
  fileId: string;
  extract: FileExtract;
  flagged?: FlaggedName[];
  categories?: CategoryCandidate[];
}

/** The key of one category column's switch. */
export function categoryKey(fileId: string, c: { sheet?: string | null; column: string }): string {
  return JSON.stringify([fileId, c.sheet ?? null, c.column]);
}

/**
 * The extract with the category columns switched on (keys of
 * {@link categoryKey}) added where the server adds them: the top level, or
 * their sheet's `categories`, in the candidates' order.
 */
export function withCategories(extract: FileExtract, file: ApprovalFile, shown: ReadonlySet<string>): FileExtract {
  const on = (file.categories ?? []).filter((c) => shown.has(categoryKey(file.fileId, c)));
  if (on.length === 0) return extract;
  const copy = structuredClone(extract);
  for (const c of on) {
    const column = { column: c.column, values: c.values };
    if (c.sheet == null) {
      copy.categories = [...(copy.categories ?? []), column];
      continue;
    }
    // The sheet by its name as in the file (a flagged one is masked in the extract).
    const raw = (file.flagged ?? []).find((f) => /^\/sheets\/\d+\/name$/.test(f.at) && f.name === c.sheet);
    const i = raw ? Number(raw.at.split("/")[2]) : (copy.sheets ?? []).findIndex((s) => s.name === c.sheet);
    const sheet = copy.sheets?.[i];
    if (sheet) sheet.categories = [...(sheet.categories ?? []), column];
  }
  return copy;
}

/**
 * The extract with the category columns left switched off named where the
 * server names them (`switchable_categories`: the column and its number of
 * values, never a value), for the view of what is sent.
 */
export function withOffered(extract: FileExtract, file: ApprovalFile, shown: ReadonlySet<string>): FileExtract {
  const off = (file.categories ?? []).filter((c) => !shown.has(categoryKey(file.fileId, c)));
  if (off.length === 0) return extract;
  const copy = structuredClone(extract);
  type Offered = { columns: string[]; switchable_categories?: { column: string; values: number }[] };
  for (const c of off) {
    const table = (c.sheet == null ? copy : copy.sheets?.find((s) => s.name === c.sheet)) as Offered | undefined;
    if (!table?.columns.includes(c.column)) continue;
    table.switchable_categories = [...(table.switchable_categories ?? []), { column: c.column, values: c.values.length }];
  }
  return copy;
}

/**
 * The extract as it will be sent: each flagged name the user chose to send
 * as it is put back at its place (the server does the same and refuses a
 * preview that differs from what it would send).
 */
export function asSent(extract: FileExtract, flagged: FlaggedName[] | undefined, sendAsIs: ReadonlySet<string>): FileExtract {
  const chosen = (flagged ?? []).filter((f) => sendAsIs.has(f.name));
  if (chosen.length === 0) return extract;
  const copy = structuredClone(extract) as unknown as Record<string, unknown>;
  for (const f of chosen) setAt(copy, f.at, f.name);
  return copy as unknown as FileExtract;
}

/** Sets the string at a JSON pointer (`/sheets/0/columns/2`), if it is there. */
function setAt(root: Record<string, unknown>, pointer: string, value: string) {
  const keys = pointer.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
  let node: unknown = root;
  for (const k of keys.slice(0, -1)) {
    node = node && typeof node === "object" ? (node as Record<string, unknown>)[k] : undefined;
  }
  const last = keys[keys.length - 1];
  if (node && typeof node === "object" && last !== undefined && typeof (node as Record<string, unknown>)[last] === "string") {
    (node as Record<string, unknown>)[last] = value;
  }
}

/**
 * The request that approving sends: exactly the extracts shown, the file
 * ids, the names sent as they are, the category columns switched on and
 * the user's notes on the data.
 */
export function approvalRequest(
  files: ApprovalFile[],
  sendAsIs: ReadonlySet<string> = new Set(),
  shown: ReadonlySet<string> = new Set(),
  notes: NoteDraft[] = [],
): CreateWorkflow {
  const request: CreateWorkflow = {
    file_extracts: files.map((f) => withCategories(asSent(f.extract, f.flagged, sendAsIs), f, shown)),
    file_ids: files.map((f) => f.fileId),
  };
  // The server puts the notes beside their tables after it has checked
  // these extracts against the stored ones.
  const named = requestNotes(
    notes,
    files.map((f, i) => ({ fileId: f.fileId, sent: request.file_extracts[i]! })),
  );
  if (named.length) request.notes = named;
  const flagged = new Set(files.flatMap((f) => (f.flagged ?? []).map((n) => n.name)));
  const chosen = [...sendAsIs].filter((n) => flagged.has(n));
  if (chosen.length) request.send_as_is = chosen;
  const categories: CategoryChoice[] = files.flatMap((f) =>
    (f.categories ?? [])
      .filter((c) => shown.has(categoryKey(f.fileId, c)))
      .map((c) => (c.sheet == null ? { file_id: f.fileId, column: c.column } : { file_id: f.fileId, sheet: c.sheet, column: c.column })),
  );
  if (categories.length) request.show_categories = categories;
  return request;
}

/** What an LLM would be shown of the files: the extracts only (ids stay local). */
export function payloadJson(extracts: FileExtract[]): string {
  return JSON.stringify({ file_extracts: extracts }, null, 2);
}

/** "1,542 rows" / "1 row". */
export function rowsLabel(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "row" : "rows"}`;
}

/** "2.4 MB" */
export function bytesLabel(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** One line about a file: kind, rows, columns, sheets/pages. */
export function summary(e: FileExtract): string {
  const parts: string[] = [];
  if (e.kind === "image" && e.image) {
    parts.push(`${e.image.width}×${e.image.height} ${e.image.format.toUpperCase()}`);
  } else if (e.kind === "pdf" || e.kind === "word") {
    if (e.document?.page_count != null) {
      parts.push(`${e.document.page_count} ${e.document.page_count === 1 ? "page" : "pages"}`);
    }
    if (e.document?.headings.length) parts.push(`${e.document.headings.length} headings`);
    const tables = e.document?.tables?.length ?? 0;
    if (tables) parts.push(`${tables} ${tables === 1 ? "table" : "tables"}`);
  }
  if (e.columns.length) {
    parts.push(rowsLabel(e.row_count));
    parts.push(`${e.columns.length} ${e.columns.length === 1 ? "column" : "columns"}`);
  }
  if (e.sheets && e.sheets.length) parts.push(`${e.sheets.length} ${e.sheets.length === 1 ? "sheet" : "sheets"}`);
  return parts.join(" · ") || e.kind.toUpperCase();
}

/** Short kind label for a chip. */
export function kindLabel(e: FileExtract): string {
  return { csv: "CSV", excel: "Excel", pdf: "PDF", word: "Word", image: "Image" }[e.kind];
}
