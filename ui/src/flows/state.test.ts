import { describe, expect, test } from "vitest";
import type { FlowRunView } from "../generated";
import { nodeIds, nodeOf, nodeStates, styled } from "./state";

const LIST = `graph TD
    s0[["Loop: Main"]]
    s0_0["Draft"]
    s0_1["Check"]
    s0 --> s0_0

%% === WORKFLOW_CONFIG ===
%% @_flow: {"form": "list"}
%% @s0: {"type": "startLoop"}
%% @s0_0: {"type": "llm"}
%% @s0_1: {"type": "break"}
%% === END_CONFIG ===
`;

function run(status: string, paths: number[][], next?: number[], pending: unknown = null): FlowRunView {
  return {
    conversationId: "flow_1",
    flowName: "f",
    title: "Flow: f",
    status: status as FlowRunView["status"],
    archived: false,
    error: null,
    interrupted: false,
    runningElsewherePid: null,
    flags: { flow: { stepPath: [], nextStepPath: next ?? null, loopStack: [], agentConversations: {} } } as unknown as FlowRunView["flags"],
    turns: paths.map((p) => ({
      role: "assistant",
      content: "x",
      createdAt: "",
      command: { name: "flow", stepIndex: 0, totalSteps: 1, loopDepth: 0, agentType: "a", identifier: "i", label: "l", stepPath: p },
      suggestedTags: [],
    })),
    pending,
    parentId: null,
    resumeSteps: [],
    resume: { completedSteps: [], lastOutput: null, lastOutputLocal: false, fanOut: null },
    createdAt: "",
    updatedAt: "",
  };
}

describe("flow node states", () => {
  const known = new Set(nodeIds(LIST));
  test("ids come from the config block, without @_flow", () => {
    expect(nodeIds(LIST)).toEqual(["s0", "s0_0", "s0_1"]);
  });
  test("list paths map to s<path>, graph paths to node ids", () => {
    expect(nodeOf([0, 1], null, known)).toBe("s0_1");
    expect(nodeOf([0, 1, 4], null, known)).toBe("s0_1");
    expect(nodeOf([2], ["A", "B", "C"], known)).toBe("C");
    expect(nodeOf([], null, known)).toBeNull();
  });
  test("done, running, waiting and failed nodes", () => {
    const s = nodeStates(run("running", [[0, 0]], [0, 1]), null, known);
    expect(s.get("s0_0")).toBe("done");
    expect(s.get("s0")).toBe("done");
    expect(s.get("s0_1")).toBe("running");
    expect(nodeStates(run("waiting", [[0, 0]], undefined, { kind: "gate", stepPath: [0, 1] }), null, known).get("s0_1")).toBe("waiting");
    expect(nodeStates(run("failed", [[0, 0]], [0, 1]), null, known).get("s0_1")).toBe("failed");
    expect(nodeStates(null, null, known).size).toBe(0);
    const cut = { ...run("running", [[0, 0]], [0, 1]), interrupted: true };
    expect(nodeStates(cut, null, known).get("s0_1")).toBe("waiting");
  });
  test("styled drops the config block and classes every node", () => {
    const out = styled(LIST, new Map([["s0_0", "done"]]));
    expect(out).not.toContain("WORKFLOW_CONFIG");
    expect(out).toContain("class s0_0 done");
    expect(out).toContain("class s0,s0_1 pending");
  });
});
