import { describe, expect, it } from "vitest";
import type { ConversationSummary } from "../generated";
import { conversationHref, conversationMeta, isOpen } from "./conversations";
import { parseRoute } from "./router";

const builder: ConversationSummary = {
  conversationId: "wf_1",
  kind: "builder",
  title: "Merge sales",
  status: "pending_user_approval",
  interrupted: false,
  archived: false,
  createdAt: "2026-01-01T00:00:00.000Z",
  lastMessageAt: "2026-01-01T00:00:01.000Z",
};
const run: ConversationSummary = {
  ...builder,
  conversationId: "flow_1",
  kind: "flow",
  title: "Flow: release notes",
  flowName: "release notes",
  status: "needs_attention",
};

describe("the sidebar's conversations", () => {
  it("open the builder chat or the flow run", () => {
    expect(conversationHref(builder)).toBe("#/builder/wf_1");
    expect(conversationHref(run)).toBe("#/flows/release%20notes/flow_1");
    expect(isOpen(run, parseRoute(conversationHref(run)))).toBe(true);
    expect(isOpen(builder, parseRoute("#/workflows/wf_1"))).toBe(true);
    expect(isOpen(builder, parseRoute("#/flows/x/wf_1"))).toBe(false);
  });

  it("say what they are and where they stand", () => {
    expect(conversationMeta(builder)).toBe("Builder · Ready for review");
    expect(conversationMeta(run)).toBe("release notes · needs attention");
    // A run cut off by a dead process says so, not "running".
    expect(conversationMeta({ ...run, status: "running", interrupted: true })).toBe("release notes · interrupted");
    expect(conversationMeta({ ...run, status: "running" })).toBe("release notes · running");
  });
});
