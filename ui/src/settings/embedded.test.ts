// The Embedded model card's context sentence: from the model and the
// machine, capped by memory, set on the back end, or not known.
import { describe, expect, it } from "vitest";
import type { EmbeddedContext } from "../generated";
import { contextLine } from "./embedded";

const ctx = (over: Partial<EmbeddedContext>): EmbeddedContext => ({
  provider: "local",
  model: "/data/models/smollm2-135m.gguf",
  tokens: 8192,
  trained: 8192,
  from_setting: false,
  problem: null,
  ...over,
});

describe("contextLine", () => {
  it("names the model, its back end and the size it was trained on", () => {
    expect(contextLine(ctx({}))).toEqual({
      text: "smollm2-135m.gguf (back end “local”) runs with a context of 8,192 tokens (the context it was trained on; this computer has the memory for it).",
      problem: false,
    });
  });

  it("says when memory caps it, and when the back end sets it", () => {
    expect(contextLine(ctx({ tokens: 768 })).text).toContain(
      "a context of 768 tokens (it was trained on 8,192 tokens; this computer's free memory allows 768 tokens)",
    );
    expect(contextLine(ctx({ tokens: 2048, from_setting: true })).text).toContain("a context of 2,048 tokens (set on the back end)");
  });

  it("says why the size is not known, and when no back end is embedded", () => {
    const missing = contextLine(ctx({ tokens: null, trained: null, problem: "could not read /x.gguf: No such file" }));
    expect(missing.problem).toBe(true);
    expect(missing.text).toContain("could not read /x.gguf");
    expect(contextLine(null)).toEqual({ text: expect.stringContaining("No back end uses an embedded model yet"), problem: false });
  });
});
