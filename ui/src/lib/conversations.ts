// The sidebar's conversation list (seed 004's `GET /conversations`): where
// each conversation opens, how it is described, and the filter values.
import type { ConversationSummary, Status } from "../generated";
import { routeHref, type Route } from "./router";
import { STATUS } from "./status";

/** The `flowName` filter value of the builder conversations (no flow name). */
export const NO_FLOW = "__none__";

/** Where a conversation opens: the builder's chat, or the flow run. */
export function conversationRoute(c: ConversationSummary): Route {
  return c.kind === "flow" && c.flowName
    ? { screen: "flows", flowName: c.flowName, runId: c.conversationId }
    : { screen: "builder", workflowId: c.conversationId };
}

/** The link of a conversation. */
export function conversationHref(c: ConversationSummary): string {
  return routeHref(conversationRoute(c));
}

/** Whether `route` shows `c`. */
export function isOpen(c: ConversationSummary, route: Route): boolean {
  if (c.kind === "flow") return route.screen === "flows" && route.runId === c.conversationId;
  return (route.screen === "builder" || route.screen === "workflows") && route.workflowId === c.conversationId;
}

/** One line under the title: what it is and where it stands. */
export function conversationMeta(c: ConversationSummary): string {
  if (c.kind === "flow") return `${c.flowName ?? "flow"} · ${c.interrupted ? "interrupted" : c.status.replace(/_/g, " ")}`;
  const label = STATUS[c.status as Status]?.label ?? c.status;
  return `Builder · ${label}`;
}
