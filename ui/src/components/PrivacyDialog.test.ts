import { describe, expect, it } from "vitest";
import { marked } from "./PrivacyDialog";

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
});
