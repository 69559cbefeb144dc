import { describe, expect, it } from "vitest";
import {
  allStepPaths,
  indent,
  indentTarget,
  insertStep,
  move,
  newStep,
  outdent,
  outdentTarget,
  ownerOf,
  pathString,
  removeAt,
  setField,
  type FlowJson,
} from "./model";

const doc = (): FlowJson => ({
  steps: [
    { type: "llm", label: "A" },
    { type: "startLoop", steps: [{ type: "llm", label: "B" }, { type: "break", label: "C" }] },
    { type: "foreach", itemsPath: "output.items", itemVariable: "it", step: { type: "llm", label: "D" } },
  ],
});

describe("the flow editor's document", () => {
  it("adds, removes and moves steps without touching the original", () => {
    const d = doc();
    const added = insertStep(d, ["steps", 1, "steps"], newStep("llm", "writer"), 1);
    expect((added.steps?.[1]?.steps as unknown[]).length).toBe(3);
    expect((d.steps?.[1]?.steps as unknown[]).length).toBe(2);
    const moved = move(d, ["steps"], 0, 2);
    expect(moved.steps?.map((s) => s.type)).toEqual(["startLoop", "foreach", "llm"]);
    expect(move(d, ["steps"], 0, -4).steps?.[0]?.label).toBe("A");
    expect(removeAt(d, ["steps"], 1).steps?.length).toBe(2);
  });

  it("nests a step into the loop before it and takes it out again", () => {
    const d = insertStep(doc(), ["steps"], { type: "gate", label: "G" }, 2);
    expect(indentTarget(d, ["steps"], 2)).toEqual(["steps", 1, "steps"]);
    const inside = indent(d, ["steps"], 2);
    expect(inside.steps?.map((s) => s.type)).toEqual(["llm", "startLoop", "foreach"]);
    expect((inside.steps?.[1]?.steps as { label: string }[]).map((s) => s.label)).toEqual(["B", "C", "G"]);
    expect(outdentTarget(["steps", 1, "steps"])).toEqual({ list: ["steps"], index: 1 });
    expect(outdentTarget(["steps", 0, "branches", 2, "steps"])).toEqual({ list: ["steps"], index: 0 });
    expect(outdentTarget(["steps"])).toBeNull();
    const out = outdent(inside, ["steps", 1, "steps"], 2);
    expect(out.steps?.map((s) => s.label ?? s.type)).toEqual(["A", "startLoop", "G", "foreach"]);
    // The first step has nothing before it to go into.
    expect(indentTarget(d, ["steps"], 0)).toBeNull();
  });

  it("drops an optional field left empty and keeps a required one for the loader to name", () => {
    const d = setField(doc(), ["steps", 0], "label", "", true);
    expect("label" in (d.steps?.[0] ?? {})).toBe(false);
    const e = setField(doc(), ["steps", 0], "agentType", "");
    expect(e.steps?.[0]?.agentType).toBe("");
  });

  it("puts a loader message on the deepest step its path names", () => {
    const paths = allStepPaths(doc());
    expect(paths).toEqual(["steps[0]", "steps[1]", "steps[1].steps[0]", "steps[1].steps[1]", "steps[2]", "steps[2].step"]);
    expect(ownerOf("steps[1].steps[1].breakOn", paths)).toBe("steps[1].steps[1]");
    expect(ownerOf("steps[2].step.messages", paths)).toBe("steps[2].step");
    expect(ownerOf("steps[1]", paths)).toBe("steps[1]");
    expect(ownerOf("$", paths)).toBeNull();
    expect(pathString(["steps", 2, "step", "messages", 0])).toBe("steps[2].step.messages[0]");
  });
});
