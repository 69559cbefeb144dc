// A script with Python highlighting and line numbers, and a line diff of two scripts.
import { useMemo } from "preact/hooks";
import { diffLines, diffStats } from "../lib/diff";
import { highlightPython } from "../lib/highlight";

export function CodeView({ code, label }: { code: string; label: string }) {
  const html = useMemo(() => highlightPython(code), [code]);
  const lines = code.split("\n").length;
  return (
    <figure class="code" aria-label={label}>
      <div class="gutter" aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => (
          <span key={i}>{i + 1}</span>
        ))}
      </div>
      <pre tabIndex={0}>
        <code class="hljs language-python" dangerouslySetInnerHTML={{ __html: html }} />
      </pre>
    </figure>
  );
}

export function DiffView({ before, after, label }: { before: string; after: string; label: string }) {
  const lines = useMemo(() => diffLines(before, after), [before, after]);
  const stats = diffStats(lines);
  return (
    <figure class="diff" aria-label={label}>
      <figcaption>
        <span class="added-count">+{stats.added}</span> <span class="removed-count">−{stats.removed}</span>
        {stats.added + stats.removed === 0 && <span class="muted"> · the scripts are identical</span>}
      </figcaption>
      <pre tabIndex={0}>
        {lines.map((l, i) => (
          <div key={i} class={`dl dl-${l.kind}`}>
            <span class="ln">{l.kind === "added" ? "" : l.a}</span>
            <span class="ln">{l.kind === "removed" ? "" : l.b}</span>
            <span class="mark" aria-hidden="true">
              {l.kind === "added" ? "+" : l.kind === "removed" ? "−" : " "}
            </span>
            <span class="sr-only">{l.kind === "added" ? "added: " : l.kind === "removed" ? "removed: " : ""}</span>
            {l.text}
          </div>
        ))}
      </pre>
    </figure>
  );
}
