// What a re-run checks before the script starts (#41): the tables and
// columns the approved script declared it reads (`execution.reads`), its
// assumptions about them and the drift it expects, in words.
import type { ColumnRead, Execution, Read } from "../generated";

/** "input orders", "input book, sheet "Q1"", "input statement, table 2". */
export function tableLabel(r: Read): string {
  const at =
    r.sheet != null ? `, sheet "${r.sheet}"` : r.sheet_index != null ? `, sheet ${r.sheet_index + 1}` : r.table != null ? `, table ${r.table + 1}` : "";
  return `input ${r.input}${at}`;
}

/** "amount", "column 3 (by position)", with what is checked of it. */
export function columnLabel(c: ColumnRead): string {
  const name = c.name ?? (c.position != null ? `column ${c.position + 1} (by position)` : "a column");
  const checks = [
    c.format ? `dates as ${c.format}` : null,
    c.mapped ? "its categories" : null,
    c.unique ? "unique" : null,
  ].filter((x): x is string => x != null);
  return checks.length ? `${name} (${checks.join(", ")})` : name;
}

const DRIFTS: Record<string, string> = {
  new_categories: "new categories in a column the script maps",
  row_count: "the output's number of rows",
};

/** The drift the workflow expects, in words ("" for none). */
export function driftLabel(e: Execution): string {
  return (e.drift ?? []).map((d) => DRIFTS[d] ?? d).join("; ");
}
