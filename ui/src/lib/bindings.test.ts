import { describe, expect, it } from "vitest";
import { bindingsComplete } from "./bindings";

const questions = [
  { field: "left", label: "Left", candidates: ["a.csv", "b.csv"] },
  { field: "right", label: "Right", candidates: ["a.csv", "b.csv"] },
];

describe("bindingsComplete", () => {
  it("needs a distinct candidate file for every input", () => {
    expect(bindingsComplete(questions, {})).toBe(false);
    expect(bindingsComplete(questions, { left: "a.csv" })).toBe(false);
    expect(bindingsComplete(questions, { left: "a.csv", right: "a.csv" })).toBe(false);
    expect(bindingsComplete(questions, { left: "a.csv", right: "c.csv" })).toBe(false);
    expect(bindingsComplete(questions, { left: "b.csv", right: "a.csv" })).toBe(true);
  });
});
