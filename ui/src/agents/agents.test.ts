// Unit tests of the Agents page's logic.
import { describe, expect, it } from "vitest";
import type { ProviderView } from "../generated";
import { draftOf, inputOf, modelChoices, problemsOf, usedByText } from "./agents";

const providers: ProviderView[] = [
  { id: "manual", kind: "manual", key: "none", key_error: null },
  { id: "llama", kind: "ollama", model: "llama3", key: "none", key_error: null },
  { id: "qwen", kind: "ollama", model: "qwen2.5", key: "none", key_error: null },
  { id: "cloud", kind: "openai", model: "gpt-4o", key: "keyring", key_error: null },
];

describe("agents", () => {
  it("sends only what is set", () => {
    expect(inputOf(draftOf())).toEqual({ name: "" });
    const agent = { name: "rev", prompt: "You review.", provider: "llama", usedBy: [], disabled: false };
    expect(inputOf({ ...draftOf(agent), prompt: "  " })).toEqual({ name: "rev", provider: "llama" });
    expect(inputOf({ ...draftOf(agent), model: "qwen2.5" })).toEqual({ name: "rev", prompt: "You review.", provider: "llama", model: "qwen2.5" });
  });
  it("offers the models of the configured back ends of the same kind", () => {
    expect(modelChoices(providers, "llama", "")).toEqual([
      { value: "", label: "The back end's own (llama3)" },
      { value: "qwen2.5", label: "qwen2.5" },
    ]);
    expect(modelChoices(providers, "manual", "").map((m) => m.label)).toEqual(["None (you paste the answers)"]);
    expect(modelChoices(providers, "", "")).toHaveLength(1);
    // An edit keeps the agent's own model among the choices.
    expect(modelChoices(providers, "cloud", "gpt-4.1").map((m) => m.value)).toEqual(["", "gpt-4.1"]);
  });
  it("puts each problem of a 400 under its field", () => {
    const message =
      "the agent is not valid:\n- colour: unknown field; expected one of name, prompt, provider, model\n- name: \"a b\" may only use letters, digits, - and _ (1 to 128 of them)\n- provider: \"x\" is not a configured back end (configured: manual); add it in Settings first";
    const p = problemsOf(message);
    expect(p.name).toEqual(['"a b" may only use letters, digits, - and _ (1 to 128 of them)']);
    expect(p.provider?.[0]).toMatch(/not a configured back end/);
    expect(p[""]).toEqual(["colour: unknown field; expected one of name, prompt, provider, model"]);
    expect(problemsOf("an agent named \"a\" exists already")).toEqual({ "": ['an agent named "a" exists already'] });
  });
  it("says which flows use an agent", () => {
    expect(usedByText([])).toBe("Not used by any flow");
    expect(usedByText(["a"])).toBe("Used by flow a");
    expect(usedByText(["a", "b"])).toBe("Used by flows a, b");
  });
});
