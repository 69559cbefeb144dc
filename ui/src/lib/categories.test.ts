import { describe, expect, it } from "vitest";
import type { CategoryCandidate, FileExtract } from "../generated";
import { approvalRequest, categoryKey, withCategories, withOffered } from "./extracts";

const island: CategoryCandidate = { column: "island", values: [{ value: "Biscoe", count: 12 }, { value: "Dream", count: 12 }] };
const species: CategoryCandidate = { column: "species", values: [{ value: "Gentoo", count: 18 }] };

function extract(): FileExtract {
  return { filename: "penguins.csv", kind: "csv", columns: ["species", "island"], sample_rows: [["Aaaaaa", "Aaaaaa"]], row_count: 36 };
}

describe("category switches (#28)", () => {
  it("sends no category until one is switched on, then exactly that one", () => {
    const file = { fileId: "file_1", extract: extract(), categories: [species, island] };
    const off = approvalRequest([file]);
    expect(off.show_categories).toBeUndefined();
    expect(JSON.stringify(off)).not.toContain("Biscoe");
    const on = approvalRequest([file], new Set(), new Set([categoryKey("file_1", island)]));
    expect(on.show_categories).toEqual([{ file_id: "file_1", column: "island" }]);
    expect(on.file_extracts[0]!.categories).toEqual([{ column: "island", values: island.values }]);
    expect(JSON.stringify(on)).not.toContain("Gentoo");
  });

  it("puts a sheet's column on its sheet, found by its name as in the file", () => {
    const wb: FileExtract = {
      ...extract(),
      filename: "p.xlsx",
      kind: "excel",
      sheets: [
        { name: "Aaaaa", columns: [], sample_rows: [], row_count: 0 },
        { name: "Data", columns: ["island"], sample_rows: [], row_count: 36 },
      ],
    };
    const flagged = [{ at: "/sheets/0/name", name: "Smith", masked: "Aaaaa", reason: "looks like a person's name" }];
    const onData = { ...island, sheet: "Data" };
    const file = { fileId: "f", extract: wb, flagged, categories: [onData] };
    const sent = withCategories(wb, file, new Set([categoryKey("f", onData)]));
    expect(sent.categories).toBeUndefined();
    expect(sent.sheets?.[1]?.categories?.[0]?.column).toBe("island");
    expect(wb.sheets?.[1]?.categories).toBeUndefined();
    expect(approvalRequest([file], new Set(), new Set([categoryKey("f", onData)])).show_categories).toEqual([
      { file_id: "f", sheet: "Data", column: "island" },
    ]);
  });

  it("names the columns left off with their number of values, as the server does, and no value", () => {
    const file = { fileId: "file_1", extract: extract(), categories: [species, island] };
    const shown = new Set([categoryKey("file_1", island)]);
    const offered = withOffered(withCategories(extract(), file, shown), file, shown) as FileExtract & { switchable_categories?: unknown };
    expect(offered.switchable_categories).toEqual([{ column: "species", values: 1 }]);
    expect(JSON.stringify(offered)).not.toContain("Gentoo");
    // Not in the request: the server adds it after its check.
    expect(JSON.stringify(approvalRequest([file], new Set(), shown))).not.toContain("switchable_categories");
  });
});
