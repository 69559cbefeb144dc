import { describe, expect, it } from "vitest";
import { roleLabel, usageLine } from "./UsageCard";

describe("usage card", () => {
  it("says calls and tokens in and out", () => {
    expect(usageLine({ key: "builder", calls: 12, input_tokens: 34000, output_tokens: 1200, unreported: 0 })).toBe(
      "12 calls · 34,000 in · 1,200 out",
    );
    expect(usageLine({ key: "x", calls: 1, input_tokens: 0, output_tokens: 0, unreported: 1 })).toBe(
      "1 call · 0 in · 0 out (1 without counts)",
    );
  });
  it("names roles as people read them", () => {
    expect(roleLabel("agent:critic")).toBe("Flow agent critic");
    expect(roleLabel("validator")).toBe("Validator");
    expect(roleLabel("mcp:run_workflow")).toBe("MCP client, run_workflow");
  });
});
