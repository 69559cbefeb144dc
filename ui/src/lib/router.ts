// Hash routes: `#/builder`, `#/builder/<workflow>`, `#/workflows`,
// `#/workflows/<workflow>`, `#/flows/<flow>/<run>`, `#/flow-editor/<flow>`, `#/agents`. Hash routing works the same under the Tauri
// protocol and under `maskflow serve`.

export type Route =
  | { screen: "builder"; workflowId?: string }
  | { screen: "workflows"; workflowId?: string }
  | { screen: "settings"; workflowId?: undefined }
  | { screen: "ledger"; workflowId?: undefined }
  | { screen: "agents"; workflowId?: undefined }
  | { screen: "flows"; workflowId?: string; flowName?: string; runId?: string }
  | { screen: "flow-editor"; workflowId?: undefined; flowName?: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [screen, id] = parts;
  if (screen === "settings") return { screen: "settings" };
  if (screen === "ledger") return { screen: "ledger" };
  if (screen === "agents") return { screen: "agents" };
  if (screen === "flows") return { screen: "flows", flowName: id, runId: parts[2] };
  if (screen === "flow-editor") return { screen: "flow-editor", flowName: id };
  if (screen === "workflows") return id ? { screen: "workflows", workflowId: id } : { screen: "workflows" };
  return id && screen === "builder" ? { screen: "builder", workflowId: id } : { screen: "builder" };
}

export function routeHref(route: Route): string {
  if (route.screen === "flow-editor") return "#/flow-editor" + (route.flowName ? "/" + encodeURIComponent(route.flowName) : "");
  if (route.screen === "flows") {
    return "#/flows" + [route.flowName, route.runId].filter(Boolean).map((p) => "/" + encodeURIComponent(p as string)).join("");
  }
  const id = route.workflowId ? "/" + encodeURIComponent(route.workflowId) : "";
  return `#/${route.screen}${id}`;
}

/** Fired on `window` after an in-app navigation. */
export const ROUTE_EVENT = "maskflow:route";

/** Goes to `href` (`#/…`) with the History API: WebKitGTK under the
 * `tauri://` scheme does not report hash changes reliably, so the app does
 * not depend on `hashchange`. */
export function go(href: string): void {
  if (window.location.hash !== href) window.history.pushState(null, "", href);
  window.dispatchEvent(new Event(ROUTE_EVENT));
}

export function navigate(route: Route): void {
  go(routeHref(route));
}
