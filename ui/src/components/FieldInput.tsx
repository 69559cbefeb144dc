// The run form's inputs, one per field the version declares: text, number,
// date, choice, checkbox, or files read into uploads as they are chosen.
import { useEffect, useRef, useState } from "preact/hooks";
import { useTransport } from "../context";
import type { Field } from "../generated";
import type { FieldValue } from "../lib/runs";
import { sourceName, toApiError, type FileSource } from "../transport";

/** A file being read into an upload, read, or refused. */
type ChosenFile = { name: string; id?: string; error?: string };

function FileInput({ field, onChange }: { field: Field; onChange: (ids: string[]) => void }) {
  const transport = useTransport();
  const input = useRef<HTMLInputElement>(null);
  const [files, setShown] = useState<ChosenFile[]>([]);
  const latest = useRef<ChosenFile[]>([]);
  // The parent hears of a change in the same update that shows it: a Run
  // clicked as soon as a file shows its ✓ already has the file.
  function setFiles(next: (old: ChosenFile[]) => ChosenFile[]) {
    latest.current = next(latest.current);
    setShown(latest.current);
    onChange(latest.current.filter((f) => f.id).map((f) => f.id!));
  }
  function add(sources: FileSource[]) {
    const chosen = field.type === "file" ? sources.slice(0, 1) : sources;
    if (field.type === "file") setFiles(() => []);
    for (const source of chosen) {
      const name = sourceName(source);
      setFiles((old) => [...old, { name }]);
      transport.extract(source).then(
        (u) => setFiles((old) => old.map((f) => (f.name === name && !f.id ? { name, id: u.file_id } : f))),
        (e) => setFiles((old) => old.map((f) => (f.name === name && !f.id ? { name, error: toApiError(e).message } : f))),
      );
    }
  }
  // One subscription per transport; add only reads the field, fixed for this input.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => transport.onNativeDrop((paths) => add(paths.map((path) => ({ kind: "path", path })))), [transport]);
  return (
    <div class="file-field">
      <button type="button" class="button small" onClick={() => input.current?.click()}>
        {field.type === "file" ? "Choose a file…" : "Choose files…"}
      </button>
      <input
        ref={input}
        type="file"
        hidden
        multiple={field.type === "files"}
        accept={field.accept?.join(",")}
        aria-label={field.label}
        data-testid={`run-file-${field.name}`}
        onChange={(e) => {
          const el = e.currentTarget;
          const picked = Array.from(el.files ?? []);
          el.value = "";
          add(picked.map((file) => ({ kind: "file", file })));
        }}
      />
      <ul class="picked">
        {files.map((f, i) => (
          <li key={i} class={f.error ? "warn-text" : ""}>
            {f.name} {f.error ? `— ${f.error}` : f.id ? "✓" : "(reading…)"}
            <button type="button" class="icon-button" aria-label={`Remove ${f.name}`} onClick={() => setFiles((old) => old.filter((_, j) => j !== i))}>
              ×
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The input of one field of the run form (files are read as they are chosen). */
export function FieldInput({ field, value, onChange }: { field: Field; value: FieldValue; onChange: (v: FieldValue) => void }) {
  const id = `field-${field.name}`;
  const label = (
    <label for={id} class="field-label">
      {field.label}
      {field.required && <span aria-hidden="true"> *</span>}
    </label>
  );
  switch (field.type) {
    case "file":
    case "files":
      return (
        <div class="field">
          <span class="field-label">
            {field.label}
            {field.required && " *"}
            {field.accept?.length ? <span class="muted small"> ({field.accept.join(", ")})</span> : null}
          </span>
          <FileInput field={field} onChange={onChange} />
        </div>
      );
    case "boolean":
      return (
        <div class="field">
          <label class="check">
            <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />
            {field.label}
          </label>
        </div>
      );
    case "choice":
      return (
        <div class="field">
          {label}
          <select id={id} value={String(value)} onChange={(e) => onChange(e.currentTarget.value)}>
            {(field.options ?? []).map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </div>
      );
    default:
      return (
        <div class="field">
          {label}
          <input
            id={id}
            type={field.type === "number" ? "number" : field.type === "date" ? "date" : "text"}
            value={String(value)}
            required={field.required}
            onInput={(e) => onChange(e.currentTarget.value)}
          />
        </div>
      );
  }
}
