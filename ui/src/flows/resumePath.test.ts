import { describe, expect, it } from "vitest";
import type { FlowRunView } from "../generated";
import { defaultResumeStep, formatStepPath, parseStepPath } from "./resumePath";

const run = (stepPath: number[]) =>
  ({
    flags: { flow: { stepPath, loopStack: [], agentConversations: {} } },
    resumeSteps: [
      { stepPath: [0], label: "First" },
      { stepPath: [1], label: "Loop" },
      { stepPath: [1, 0], label: "Inner" },
    ],
  }) as unknown as Pick<FlowRunView, "flags" | "resumeSteps">;

describe("step paths", () => {
  it("print and parse as dotted zero-based indices", () => {
    expect(formatStepPath([1, 0])).toBe("1.0");
    expect(parseStepPath(" 1.0 ")).toEqual([1, 0]);
    expect(parseStepPath("-1")).toEqual([-1]);
  });
  it("say why text is not a path", () => {
    expect(parseStepPath("")).toEqual({ error: "Type a step path, such as 0 or 1.0." });
    expect(parseStepPath("1.x")).toHaveProperty("error", expect.stringContaining('"1.x" is not a step path'));
  });
  it("start the picker on the last completed step, else the first", () => {
    expect(defaultResumeStep(run([1, 0]))?.label).toBe("Inner");
    expect(defaultResumeStep(run([]))?.label).toBe("First");
  });
});
