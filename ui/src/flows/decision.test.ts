import { describe, expect, it } from "vitest";
import { decisionAnswer, decisionLabel, readResult } from "./decision";

describe("readResult", () => {
  it("keeps text as text and leaves an empty field out", () => {
    expect(readResult("  rename it ", "text")).toEqual({ ok: true, value: "rename it" });
    expect(readResult("   ", "json")).toEqual({ ok: true });
  });
  it("parses JSON, and names what is wrong with bad JSON", () => {
    expect(readResult('{"priority": 2}', "json")).toEqual({ ok: true, value: { priority: 2 } });
    const bad = readResult("{priority: 2}", "json");
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/not valid JSON/);
  });
});

describe("decisionAnswer", () => {
  it("sends the decision with its result only when there is one", () => {
    expect(decisionAnswer("request changes", undefined, { notes: "x" })).toEqual({ option: "request changes", input: null, result: { notes: "x" } });
    expect(decisionAnswer("approve")).toEqual({ option: "approve", input: null });
    expect(decisionAnswer("retry", "again")).toEqual({ option: "retry", input: "again" });
  });
});

describe("decisionLabel", () => {
  it("capitalises the default decisions and keeps a flow's own labels", () => {
    expect(decisionLabel("request changes")).toBe("Request changes");
    expect(decisionLabel("Ship it")).toBe("Ship it");
    expect(decisionLabel("OK then")).toBe("OK then");
  });
});
