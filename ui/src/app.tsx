// The app shell: navigation and the screen of the current route.
import { useEffect, useState } from "preact/hooks";
import { Builder } from "./screens/Builder";
import { Workflows } from "./screens/Workflows";
import { parseRoute, type Route } from "./lib/router";

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  const nav: [Route["screen"], string, string][] = [
    ["builder", "New workflow", "#/builder"],
    ["workflows", "Workflows", "#/workflows"],
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
              <a href={href} class={route.screen === screen ? "active" : ""} aria-current={route.screen === screen ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
        <p class="privacy-note">
          Your files stay on this machine. An AI only ever sees masked extracts you approved.
        </p>
      </nav>
      <main class="screen">
        {route.screen === "builder" ? <Builder workflowId={route.workflowId} /> : <Workflows workflowId={route.workflowId} />}
      </main>
    </div>
  );
}
