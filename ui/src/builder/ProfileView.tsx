// The extract's profile (#28 point 1), when the extractor gave one: per
// column what a data engineer reads first and what identifies no one —
// type, blanks, placeholders, distinct values, value shapes with their
// counts, range. A compact table under the masked samples.
import type { FileExtract, TableProfile } from "../generated";

function profileOf(x: unknown): TableProfile | null {
  const p = (x as { profile?: unknown } | null)?.profile as TableProfile | undefined;
  return p && Array.isArray(p.columns) ? p : null;
}

const n = (v: number) => v.toLocaleString("en-US");

function Table({ profile, caption }: { profile: TableProfile; caption: string }) {
  return (
    <div class="table-scroll">
      <table class="sample profile" data-testid="profile-table">
        <caption>
          {caption}: {n(profile.rows_profiled)} rows profiled · {n(profile.duplicate_rows)} duplicate rows
          {profile.unique_columns?.length ? ` · unique: ${profile.unique_columns.join(", ")}` : ""}
        </caption>
        <thead>
          <tr>
            <th scope="col">Column</th>
            <th scope="col">Type</th>
            <th scope="col">Nulls</th>
            <th scope="col">Placeholders</th>
            <th scope="col">Distinct</th>
            <th scope="col">Shapes</th>
            <th scope="col">Range</th>
          </tr>
        </thead>
        <tbody>
          {profile.columns.map((c, i) => (
            <tr key={i}>
              <th scope="row">{c.name}</th>
              <td>
                {c.inferred_type}
                {c.date_format ? ` (${c.date_format})` : ""}
              </td>
              <td>{n(c.nulls)}</td>
              <td>{n(c.placeholders)}</td>
              <td>
                {n(c.distinct)}
                {c.distinct_capped ? "+" : ""}
              </td>
              <td>
                {(c.shapes ?? []).map((s, j) => (
                  <span key={j} class="pill">
                    <code>{s.shape}</code> × {n(s.count)}
                  </span>
                ))}
                {c.other_shapes ? <span class="muted"> +{n(c.other_shapes)} other</span> : null}
              </td>
              <td>{c.min != null || c.max != null ? `${c.min ?? "…"} – ${c.max ?? "…"}` : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The profile of an extract and of each of its sheets, when present. */
export function ProfileView({ extract }: { extract: FileExtract }) {
  const top = profileOf(extract);
  const sheets = (extract.sheets ?? []).flatMap((s) => {
    const p = profileOf(s);
    return p ? [{ name: s.name, p }] : [];
  });
  if (!top && sheets.length === 0) return null;
  return (
    <section class="profile-view" aria-label={`Profile of ${extract.filename}`}>
      {sheets.length > 0
        ? sheets.map(({ name, p }) => <Table key={name} profile={p} caption={`Profile of sheet ${name}`} />)
        : top && <Table profile={top} caption={`Profile of ${extract.filename}`} />}
    </section>
  );
}
