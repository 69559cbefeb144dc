import { describe, expect, it } from "vitest";
import { marked, typedValues } from "./PrivacyDialog";

describe("the privacy dialog's message (#28 point 7)", () => {
  it("marks each typed value in place, longest first, whatever its case", () => {
    expect(marked("only Biscoe and biscoe, seen by Ada Lovelace", ["Biscoe", "Ada Lovelace", "Ada"])).toEqual([
      "only ",
      { mark: "Biscoe" },
      " and ",
      { mark: "biscoe" },
      ", seen by ",
      { mark: "Ada Lovelace" },
    ]);
    expect(marked("a (b)+ c", ["(b)+"])).toEqual(["a ", { mark: "(b)+" }, " c"]);
    expect(marked("nothing", [])).toEqual(["nothing"]);
  });

  it("finds the user's words where the guard located them, only where they have the value's shape", () => {
    const content = "né 🐧 Torgersen and Biscoe";
    const found = typedValues(content, [
      { masked: "Aaaaaaaaa", source: "p.csv, column \"island\"", at: [6, 15] },
      { masked: "Aaaaaa", source: "p.csv, column \"island\"", at: [0, 6] },
      { masked: "Aaaa Aaaaa", source: "p.csv, column \"name\"" },
    ]);
    expect(found).toEqual(["Torgersen", null, null]);
  });
});
