import { describe, expect, it } from "vitest";
import type { InterfaceChange } from "../generated";
import { commandLines, interfaceChangeTitle } from "./interfaceChange";

const renamed: InterfaceChange = {
  approved_version: 2,
  changes: ["input `bakers` (file) is removed", "input `contestants` (file) is new"],
  old_command: "maskflow run 'Bake Off' --input bakers=FILE",
  new_command: "maskflow run 'Bake Off' --input contestants=FILE",
};

describe("interface change", () => {
  it("names the approved version and counts the changes", () => {
    expect(interfaceChangeTitle(renamed)).toBe(
      "Approving this version changes what it takes or writes (2 changes from v2)",
    );
    expect(interfaceChangeTitle({ ...renamed, changes: ["output `a.csv` is new"] })).toContain("1 change from v2");
  });

  it("shows the maskflow run line before and after, only when it changes", () => {
    expect(commandLines(renamed)).toEqual([
      { label: "Before (v2)", line: "maskflow run 'Bake Off' --input bakers=FILE" },
      { label: "After", line: "maskflow run 'Bake Off' --input contestants=FILE" },
    ]);
    expect(commandLines({ ...renamed, new_command: renamed.old_command })).toEqual([]);
  });
});
