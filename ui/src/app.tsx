// The app shell: navigation and the screen of the current route.
import { useEffect, useState } from "preact/hooks";
import { Builder } from "./screens/Builder";
import { Workflows } from "./screens/Workflows";
import { Settings } from "./screens/Settings";
import { Ledger } from "./screens/Ledger";
import { Flows } from "./screens/Flows";
import { Agents } from "./screens/Agents";
import { FlowEditor } from "./flows/editor/FlowEditor";
import { SidebarConversations } from "./components/SidebarConversations";
import { FirstStart } from "./settings/FirstStart";
import { WaitingBadge } from "./notifications/WaitingBadge";
import { ROUTE_EVENT, go, parseRoute, type Route } from "./lib/router";

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    // In-app links go through the History API (see lib/router.ts).
    const onClick = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const a = (e.target as Element | null)?.closest?.("a[href^='#/']");
      const href = a?.getAttribute("href");
      if (!href) return;
      e.preventDefault();
      go(href);
    };
    const events = ["hashchange", "popstate", ROUTE_EVENT];
    for (const name of events) window.addEventListener(name, onHash);
    document.addEventListener("click", onClick);
    // The address may have changed between the first render and these
    // listeners (a link opened while the page was starting): catch up.
    onHash();
    return () => {
      for (const name of events) window.removeEventListener(name, onHash);
      document.removeEventListener("click", onClick);
    };
  }, []);
  const nav: [Route["screen"], string, string][] = [
    ["builder", "New workflow", "#/builder"],
    ["workflows", "Workflows", "#/workflows"],
    ["flows", "Flows", "#/flows"],
    ["agents", "Agents", "#/agents"],
    ["ledger", "Privacy ledger", "#/ledger"],
    ["settings", "Settings", "#/settings"],
  ];
  return (
    <div class="app">
      <nav class="sidebar" aria-label="Main">
        <a class="brand" href="#/builder">
          <img src="./icon.png" alt="" width={28} height={28} />
          <span>Maskflow</span>
        </a>
        <ul>
          {nav.map(([screen, label, href]) => (
            <li key={screen}>
              <a href={href} class={route.screen === screen || (screen === "flows" && route.screen === "flow-editor") ? "active" : ""} aria-current={route.screen === screen ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
        <WaitingBadge />
        <SidebarConversations route={route} />
        <p class="privacy-note">
          Your files stay on this machine. An AI only ever sees masked extracts you approved.
        </p>
      </nav>
      <main class="screen">
        {route.screen !== "settings" && <FirstStart />}
        {route.screen === "flow-editor" ? (
          <FlowEditor key={route.flowName ?? ""} name={route.flowName} />
        ) : route.screen === "flows" ? (
          <Flows flowName={route.flowName} runId={route.runId} />
        ) : route.screen === "agents" ? (
          <Agents />
        ) : route.screen === "settings" ? (
          <Settings />
        ) : route.screen === "ledger" ? (
          <Ledger />
        ) : route.screen === "builder" ? (
          <Builder workflowId={route.workflowId} />
        ) : (
          <Workflows workflowId={route.workflowId} />
        )}
      </main>
    </div>
  );
}
