import { describe, expect, it } from "vitest";
import { importedNotice, readImport } from "./importFile";

const BUNDLE = JSON.stringify({
  workflow: { name: "PR Review Pipeline", description: "d", mermaidSource: "graph TD", steps: [{ id: "A", stepType: "task", prompt: "x" }] },
  agents: [{ id: "code-reviewer", displayName: "Code Review Agent", agentPrompt: "You are…" }],
  exportVersion: "2.0",
  exportedAt: "2025-01-15T10:00:00Z",
});

describe("readImport", () => {
  it("reads a seed 003 bundle with its steps and agents", () => {
    const r = readImport("003-export-bundle.json", BUNDLE);
    expect(r.request.bundle?.workflow.name).toBe("PR Review Pipeline");
    expect(importedNotice("pr-review-pipeline", r)).toBe("Imported “pr-review-pipeline” with 1 step and 1 agent: Code Review Agent (code-reviewer).");
  });
  it("reads a Mermaid config, named after the file, counting its configured steps", () => {
    const r = readImport("my review.mmd", "graph TD\n  A --> B\n%% === WORKFLOW_CONFIG ===\n%% @A: {}\n%% @B: {}\n%% === END_CONFIG ===\n");
    expect(r.request).toMatchObject({ name: "my_review" });
    expect(importedNotice("my_review", r)).toBe("Imported “my_review” with 2 steps.");
  });
  it("reads a flow file as kept in flows/", () => {
    const r = readImport("flow.json", '{"steps": [{"type": "llm"}, {"type": "gate"}]}');
    expect(r.request).toMatchObject({ name: "flow", flow: { steps: [{ type: "llm" }, { type: "gate" }] } });
    expect(r.steps).toBe(2);
  });
  it("names a file cut short instead of a parser's bare message", () => {
    expect(() => readImport("cut.json", '{"workflow": {')).toThrow(/^cut\.json is not valid JSON \(.+\), so it cannot be imported/);
  });
});
