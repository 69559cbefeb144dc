// Flow agents as roles: which agents the Settings page offers, and the
// roles document a choice saves.
import { describe, expect, it } from "vitest";
import { agentsOf, withRole } from "./AgentRoles";

describe("flow agents in Settings", () => {
  it("lists each agent once, sorted, with the provider and model its file names", () => {
    const agents = agentsOf([
      { agents: [{ id: "planning_agent", agent: { provider: "second", model: "m-x", prompt: "p" } }, { id: "coding_agent", agent: { prompt: "p" } }] },
      { agents: [{ id: "coding_agent", agent: { provider: "other" } }] },
    ]);
    expect(agents).toEqual([
      { name: "coding_agent", provider: null, model: null },
      { name: "planning_agent", provider: "second", model: "m-x" },
    ]);
  });

  it("sets and clears a role without touching the others", () => {
    const s = { providers: [], roles: { builder: "main" } };
    const set = withRole(s, "agent:coding_agent", "local");
    expect(set.roles).toEqual({ builder: "main", "agent:coding_agent": "local" });
    expect(withRole(set, "agent:coding_agent", "").roles).toEqual({ builder: "main" });
    expect(s.roles).toEqual({ builder: "main" });
  });
});
