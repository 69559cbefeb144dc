// A flow's diagram: the bundled `mermaid` package, loaded lazily (it is large),
// rendered to SVG with each node coloured by its state.
import { useEffect, useRef, useState } from "preact/hooks";

let loader: Promise<typeof import("mermaid").default> | null = null;
function loadMermaid() {
  loader ??= import("mermaid").then((m) => {
    m.default.initialize({ startOnLoad: false, securityLevel: "strict", theme: "base", flowchart: { htmlLabels: false } });
    return m.default;
  });
  return loader;
}

let counter = 0;

export function Diagram({ source }: { source: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const id = `flow-diagram-${++counter}`;
    loadMermaid()
      .then((m) => m.render(id, source))
      .then(({ svg }) => {
        if (live && host.current) {
          host.current.innerHTML = svg;
          setError(null);
        }
      })
      .catch((e: unknown) => live && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      live = false;
    };
  }, [source]);
  return (
    <div class="flow-diagram" data-testid="flow-diagram">
      {error && <p class="notice notice-error">The diagram cannot be drawn: {error}</p>}
      <div ref={host} />
    </div>
  );
}
