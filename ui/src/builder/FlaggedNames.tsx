// Column and sheet names that look like values (a person, a company, an
// e-mail address, a date, an ID, a number): each is masked in what is sent,
// shown here with why, and the user may choose to send one as it is.
import type { Chip } from "../lib/chips";

/** The flagged names of the files to approve, each with a "send as it is" choice. */
export function FlaggedNames({
  files,
  sendAsIs,
  onToggle,
  disabled,
}: {
  files: Chip[];
  sendAsIs: ReadonlySet<string>;
  onToggle: (name: string) => void;
  disabled?: boolean;
}) {
  // One row per distinct name in a file (a sheet's columns and their mirror are one choice).
  const rows = files.flatMap((c) => {
    const seen = new Set<string>();
    return (c.flagged ?? [])
      .filter((f) => (seen.has(f.name) ? false : (seen.add(f.name), true)))
      .map((f) => ({ file: c.extract?.filename ?? c.name, flag: f, key: `${c.key}:${f.at}` }));
  });
  if (rows.length === 0) return null;
  return (
    <div class="flagged-names" role="group" aria-label="Names that look like values">
      <h3>Names that look like values</h3>
      <p class="muted">
        These column or sheet names are masked like the samples, so the AI never sees them; it will refer to those columns
        by position. Tick one to send it as it is.
      </p>
      <ul>
        {rows.map(({ file, flag, key }) => (
          <li key={key} data-testid="flagged-name">
            <label>
              <input
                type="checkbox"
                checked={sendAsIs.has(flag.name)}
                disabled={disabled}
                onChange={() => onToggle(flag.name)}
              />{" "}
              Send <strong>{flag.name}</strong> as it is
            </label>
            <span class="muted">
              {" "}
              — {file}: sent as <code>{sendAsIs.has(flag.name) ? flag.name : flag.masked}</code>; {flag.reason}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
