import { describe, expect, it } from "vitest";
import { columnLabel, driftLabel, tableLabel } from "./reads";

describe("what a re-run checks (#41)", () => {
  it("names each table and column the script reads, with what is checked of it", () => {
    expect(tableLabel({ input: "orders", columns: [] })).toBe("input orders");
    expect(tableLabel({ input: "book", sheet: "Q1", columns: [] })).toBe('input book, sheet "Q1"');
    expect(tableLabel({ input: "book", sheet_index: 0, columns: [] })).toBe("input book, sheet 1");
    expect(tableLabel({ input: "statement", table: 1, columns: [] })).toBe("input statement, table 2");
    expect(columnLabel({ name: "amount" })).toBe("amount");
    expect(columnLabel({ position: 2, unique: true })).toBe("column 3 (by position) (unique)");
    expect(columnLabel({ name: "night", format: "%d/%m/%Y", mapped: true })).toBe("night (dates as %d/%m/%Y, its categories)");
  });

  it("says which drift is expected", () => {
    expect(driftLabel({ runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [], drift: ["row_count", "new_categories"] })).toBe(
      "the output's number of rows; new categories in a column the script maps",
    );
    expect(driftLabel({ runtime: "python3", entrypoint: "script.py", requirements: [], outputs: [] })).toBe("");
  });
});
