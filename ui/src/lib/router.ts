// Hash routes: `#/builder`, `#/builder/<workflow>`, `#/workflows`,
// `#/workflows/<workflow>`. Hash routing works the same under the Tauri
// protocol and under `maskflow serve`.

export type Route =
  | { screen: "builder"; workflowId?: string }
  | { screen: "workflows"; workflowId?: string };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [screen, id] = parts;
  if (screen === "workflows") return id ? { screen: "workflows", workflowId: id } : { screen: "workflows" };
  return id && screen === "builder" ? { screen: "builder", workflowId: id } : { screen: "builder" };
}

export function routeHref(route: Route): string {
  const id = route.workflowId ? "/" + encodeURIComponent(route.workflowId) : "";
  return `#/${route.screen}${id}`;
}

export function navigate(route: Route): void {
  window.location.hash = routeHref(route);
}
