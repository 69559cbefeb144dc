// One file's masked extract, as the user approves it: columns, masked
// sample rows as a table, row count, sheets / pages / headings / a
// document's tables.
import type { FileExtract } from "../generated";
import { kindLabel, rowsLabel, summary } from "../lib/extracts";

function SampleTable({ columns, rows, caption }: { columns: string[]; rows: string[][]; caption: string }) {
  if (!columns.length) return null;
  return (
    <div class="table-scroll">
      <table class="sample">
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length} class="muted">
                No data rows.
              </td>
            </tr>
          )}
          {rows.map((r, i) => (
            <tr key={i}>
              {columns.map((_, j) => (
                <td key={j}>{r[j] ?? ""}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ExtractView({ extract }: { extract: FileExtract }) {
  const e = extract;
  return (
    <article class="extract" aria-label={`Masked extract of ${e.filename}`}>
      <header class="extract-head">
        <span class={`kind kind-${e.kind}`}>{kindLabel(e)}</span>
        <h3>{e.filename}</h3>
        <span class="muted">{summary(e)}</span>
      </header>
      {e.columns.length > 0 && (
        <>
          <div class="columns" aria-label="Columns">
            {e.columns.map((c, i) => (
              <span class="pill" key={i}>
                {c}
              </span>
            ))}
          </div>
          <SampleTable
            columns={e.columns}
            rows={e.sample_rows}
            caption={`Masked sample rows of ${e.filename}`}
          />
          <p class="foot muted">
            {rowsLabel(e.row_count)} in the file · {e.sample_rows.length} masked sample{" "}
            {e.sample_rows.length === 1 ? "row" : "rows"} shown
            {e.text_format ? ` · ${e.text_format.encoding}, "${e.text_format.delimiter === "\t" ? "tab" : e.text_format.delimiter}" separated` : ""}
          </p>
        </>
      )}
      {e.sheets && e.sheets.length > 1 && (
        <details class="sub">
          <summary>
            {e.sheets.length} sheets: {e.sheets.map((s) => s.name).join(", ")}
          </summary>
          {e.sheets.map((s) => (
            <div key={s.name} class="sheet">
              <h4>
                {s.name} <span class="muted">· {rowsLabel(s.row_count)}</span>
              </h4>
              <SampleTable columns={s.columns} rows={s.sample_rows} caption={`Sheet ${s.name}`} />
            </div>
          ))}
        </details>
      )}
      {e.document && (
        <div class="sub">
          {e.document.headings.length > 0 && (
            <>
              <h4>Headings</h4>
              <ul class="headings">
                {e.document.headings.map((h, i) => (
                  <li key={i} style={{ paddingLeft: `${(h.level - 1) * 14}px` }}>
                    {h.text}
                  </li>
                ))}
              </ul>
            </>
          )}
          {e.document.tables?.map((t, i) => (
            <div key={i} class="sheet">
              <h4>
                Table {i + 1}{" "}
                <span class="muted">
                  · {t.columns.length} columns · {rowsLabel(t.row_count)}
                </span>
              </h4>
              <SampleTable columns={t.columns} rows={t.sample_rows} caption={`Table ${i + 1} of ${e.filename}`} />
            </div>
          ))}
          {e.document.text_preview && (
            <>
              <h4>Text preview (masked)</h4>
              <p class="preview">{e.document.text_preview}</p>
            </>
          )}
        </div>
      )}
      {e.image && (
        <div class="sub">
          <p>
            {e.image.width} × {e.image.height} pixels, {e.image.format.toUpperCase()}
          </p>
          {e.image.ocr_text ? (
            <p class="preview">{e.image.ocr_text}</p>
          ) : (
            e.image.ocr_unavailable_reason && <p class="muted">No text read: {e.image.ocr_unavailable_reason}</p>
          )}
        </div>
      )}
      {e.warnings && e.warnings.length > 0 && (
        <ul class="warnings">
          {e.warnings.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
    </article>
  );
}
