import { describe, expect, it } from "vitest";
import { budgetsOf } from "./BudgetSettings";

describe("budgetsOf", () => {
  it("keeps blanks as defaults and numbers as budgets", () => {
    expect(budgetsOf({ validator: "256", clarifier: "", builder: " 9000 ", agent: "" })).toEqual({
      validator: 256,
      clarifier: null,
      builder: 9000,
      agent: null,
    });
  });
  it("names the role whose budget is not a number", () => {
    expect(budgetsOf({ validator: "", clarifier: "lots", builder: "", agent: "" })).toContain("Clarifier");
    expect(typeof budgetsOf({ validator: "1.5", clarifier: "", builder: "", agent: "" })).toBe("string");
  });
});
