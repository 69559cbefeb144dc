// One file a script wrote, as a person looks at it: images inline, CSV and
// workbooks as a scrollable table per sheet with their row counts, text
// and JSON as text, and a download (browser) or the file's path (desktop).
// These are the user's own results, read locally; they never go to an LLM.
import { useEffect, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { OutputFile, OutputPreview, SheetPreview } from "../generated";
import { bytesLabel } from "../lib/extracts";
import { toApiError, type OutputLocation, type OutputSource } from "../transport";

function Sheet({ sheet }: { sheet: SheetPreview }) {
  const [head, ...body] = sheet.rows;
  const total = Number(sheet.row_count);
  return (
    <div class="output-sheet">
      <p class="muted small" data-testid="sheet-rows">
        {total.toLocaleString("en-US")} rows{total > sheet.rows.length ? ` · the first ${sheet.rows.length} shown` : ""}
      </p>
      {head && (
        <div class="table-scroll output-table">
          <table class="grid" data-testid="output-table">
            <thead>
              <tr>
                {head.map((h, i) => (
                  <th key={i} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {body.map((r, i) => (
                <tr key={i}>
                  {r.map((c, j) => (
                    <td key={j}>{c}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function Sheets({ sheets, name }: { sheets: SheetPreview[]; name: string }) {
  const [at, setAt] = useState(0);
  const sheet = sheets[Math.min(at, sheets.length - 1)];
  if (!sheet) return <p class="muted small">The workbook has no sheets.</p>;
  return (
    <div>
      {sheets.length > 1 && (
        <div class="sheet-tabs" role="tablist" aria-label={`Sheets of ${name}`}>
          {sheets.map((s, i) => (
            <button
              key={s.name}
              type="button"
              role="tab"
              aria-selected={i === at}
              class={`button small ${i === at ? "primary" : "ghost"}`}
              onClick={() => setAt(i)}
            >
              {s.name}
            </button>
          ))}
        </div>
      )}
      <Sheet sheet={sheet} />
    </div>
  );
}

function Body({ preview, name }: { preview: OutputPreview; name: string }) {
  switch (preview.kind) {
    case "image":
      return <img class="output-image" src={preview.data_url} alt={name} data-testid="output-image" />;
    case "table":
      return <Sheets sheets={preview.sheets} name={name} />;
    case "text":
      return (
        <>
          <pre class="preview output-text" data-testid="output-text">
            {preview.text}
          </pre>
          {preview.truncated && <p class="muted small">Only the beginning is shown; download the file for all of it.</p>}
        </>
      );
    case "none":
      return <p class="muted small">{preview.reason}</p>;
  }
}

/** An output with its preview and a download. */
export function OutputView({ source, output, testId = "output" }: { source: OutputSource; output: OutputFile; testId?: string }) {
  const transport = useTransport();
  const [where, setWhere] = useState<OutputLocation | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  const [preview, setPreview] = useState<OutputPreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const key = source.kind === "run" ? source.runId : `${source.workflowId}/${source.versionId}`;
  useEffect(() => {
    let live = true;
    const location =
      source.kind === "run"
        ? transport.outputLocation(source.runId, output.name)
        : transport.testOutputLocation(source.workflowId, source.versionId, output.name);
    location.then(
      (l) => live && setWhere(l),
      () => live && setWhere(null),
    );
    transport.outputPreview(source, output.name).then(
      (p) => live && setPreview(p),
      (e) => live && setError(toApiError(e).message),
    );
    return () => {
      live = false;
    };
    // `key` stands for `source` (a new object on every render of the parent).
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [transport, key, output.name]);
  const save = (e: MouseEvent, location: OutputLocation & { kind: "download" }) => {
    // The link's address opens nothing without the token: fetch it with it.
    e.preventDefault();
    setSaveError(null);
    location.save().catch((err: unknown) => setSaveError(toApiError(err).message));
  };
  return (
    <div class="output" data-testid={testId} data-name={output.name}>
      <div class="output-head">
        <strong>{output.name}</strong>
        <span class="muted small">
          {bytesLabel(Number(output.size))}
          {output.row_count != null && ` · ${Number(output.row_count).toLocaleString("en-US")} rows`}
        </span>
        {where?.kind === "download" && (
          <a class="button small" href={where.href} download={where.name} onClick={(e) => save(e, where)}>
            Download
          </a>
        )}
        {where?.kind === "path" && (
          <code class="small" title="Where the file is on this machine">
            {where.path}
          </code>
        )}
      </div>
      {saveError && <p class="muted small">Download failed: {saveError}</p>}
      {preview && <Body preview={preview} name={output.name} />}
      {error && <p class="muted small">No preview: {error}</p>}
    </div>
  );
}
