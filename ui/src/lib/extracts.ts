// Helpers over masked extracts: the exact JSON that will be sent when the
// user approves, and short human summaries of each file.
import type { CreateWorkflow, FileExtract } from "../generated";

/** The request that approving sends: exactly these extracts and the file ids. */
export function approvalRequest(files: { fileId: string; extract: FileExtract }[]): CreateWorkflow {
  return {
    file_extracts: files.map((f) => f.extract),
    file_ids: files.map((f) => f.fileId),
  };
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
