import { describe, expect, it } from "vitest";
import type { FileExtract } from "../generated";
import { approvalRequest } from "./extracts";
import { placeOf, storedNotes, targets, withNotes, type NoteDraft } from "./notes";

function book(): FileExtract {
  return {
    filename: "book.xlsx",
    kind: "excel",
    columns: [],
    sample_rows: [],
    row_count: 0,
    sheets: [{ name: "Q1", columns: ["region", "Aaaa Aaaaa"], sample_rows: [], row_count: 4 }],
  } as FileExtract;
}

describe("notes on the data (#40 point 7)", () => {
  it("offers the file, each sheet and each column, by the names as sent", () => {
    expect(targets(book()).map((t) => t.label)).toEqual(["The whole file", "Sheet Q1", "Sheet Q1 › column region", "Sheet Q1 › column Aaaa Aaaaa"]);
    expect(placeOf(book(), { sheet: 0, column: 0 })).toBe("Sheet Q1 › column region");
  });

  it("names a note's column as the request sends it, masked or as it is", () => {
    const note: NoteDraft = { fileId: "file_1", sheet: 0, column: 1, text: " hours worked, not paid " };
    const extract = book();
    const masked = approvalRequest([{ fileId: "file_1", extract }], new Set(), new Set(), [note]);
    expect(masked.notes).toEqual([{ file_id: "file_1", sheet: "Q1", column: "Aaaa Aaaaa", text: "hours worked, not paid" }]);
    // Its column's name sent as it is: the note follows the name.
    const flagged = [{ at: "/sheets/0/columns/1", name: "Maria Garcia", masked: "Aaaaa Aaaaaa", reason: "looks like a person's name" }];
    const asIs = approvalRequest([{ fileId: "file_1", extract, flagged }], new Set(["Maria Garcia"]), new Set(), [note]);
    expect(asIs.notes?.[0]?.column).toBe("Maria Garcia");
    expect(approvalRequest([{ fileId: "file_1", extract }]).notes).toBeUndefined();
  });

  it("shows the notes beside their tables as the server keeps them, and reads them back", () => {
    const notes: NoteDraft[] = [
      { fileId: "file_1", sheet: null, column: null, text: "provisional figures" },
      { fileId: "file_1", sheet: 0, column: 0, text: "2019 map" },
      { fileId: "file_2", sheet: null, column: null, text: "another file's" },
    ];
    const shown = withNotes(book(), "file_1", notes);
    expect((shown as { notes?: unknown }).notes).toEqual([{ note: "provisional figures" }]);
    expect((shown.sheets![0] as { notes?: unknown }).notes).toEqual([{ column: "region", note: "2019 map" }]);
    expect(storedNotes(shown)).toEqual([
      { place: "The whole file", text: "provisional figures" },
      { place: "Sheet Q1 › column region", text: "2019 map" },
    ]);
    expect(withNotes(book(), "file_3", notes)).toEqual(book());
  });
});
