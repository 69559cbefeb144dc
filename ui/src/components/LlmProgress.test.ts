import { describe, expect, it } from "vitest";
import { elapsedLabel, nextStreaming } from "./LlmProgress";

describe("nextStreaming", () => {
  it("counts pieces per role and restarts for a new role", () => {
    let s = nextStreaming(null, "validator", "{\"fe", 1000);
    s = nextStreaming(s, "validator", "asible", 1500);
    expect(s).toEqual({ role: "validator", chars: 10, pieces: 2, started: 1000 });
    s = nextStreaming(s, "clarifier", "{", 2000);
    expect(s).toEqual({ role: "clarifier", chars: 1, pieces: 1, started: 2000 });
  });
});

describe("elapsedLabel", () => {
  it("shows seconds, then minutes", () => {
    expect(elapsedLabel(1234)).toBe("1.2 s");
    expect(elapsedLabel(65_000)).toBe("1 min 05 s");
    expect(elapsedLabel(-5)).toBe("0.0 s");
  });
});
