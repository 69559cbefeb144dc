// The inputs of the step forms: labelled text and number fields, the agent
// picker (the agents in `agents/`, or a new name) and the command picker
// (the chosen agent's command files). Each writes one field of one step.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { EditorAgent } from "../../generated";

let ids = 0;
/** An id for a label's `for`, the same for the life of the field. */
function useFieldId(): string {
  return useState(() => `flow-field-${++ids}`)[0];
}

/** A labelled row; `error` is the loader's message for this field. */
export function Row({ id, label, error, children }: { id: string; label: string; error?: string; children: ComponentChildren }) {
  return (
    <div class={`editor-row${error ? " has-error" : ""}`}>
      <label for={id}>{label}</label>
      {children}
      {error && (
        <span class="field-error small" id={`${id}-error`}>
          {error}
        </span>
      )}
    </div>
  );
}

/** A text field; `multiline` is a text area. */
export function TextField({
  label,
  value,
  onChange,
  multiline,
  placeholder,
  error,
  list,
}: {
  label: string;
  value: unknown;
  onChange: (v: string) => void;
  multiline?: boolean;
  placeholder?: string;
  error?: string;
  list?: string;
}) {
  const id = useFieldId();
  const v = typeof value === "string" ? value : value == null ? "" : String(value);
  const common = {
    id,
    value: v,
    placeholder,
    "aria-invalid": error ? true : undefined,
    "aria-describedby": error ? `${id}-error` : undefined,
    onInput: (e: Event) => onChange((e.currentTarget as HTMLInputElement).value),
  };
  return (
    <Row id={id} label={label} error={error}>
      {multiline ? <textarea rows={3} {...common} /> : <input type="text" list={list} {...common} />}
    </Row>
  );
}

/** A whole-number field; empty gives `undefined`. */
export function NumberField({ label, value, onChange, error, min }: { label: string; value: unknown; onChange: (v: number | undefined) => void; error?: string; min?: number }) {
  const id = useFieldId();
  return (
    <Row id={id} label={label} error={error}>
      <input
        id={id}
        type="number"
        min={min}
        value={typeof value === "number" ? String(value) : ""}
        aria-invalid={error ? true : undefined}
        onInput={(e) => {
          const raw = (e.currentTarget as HTMLInputElement).value.trim();
          const n = Number(raw);
          onChange(raw === "" || !Number.isFinite(n) ? undefined : Math.trunc(n));
        }}
      />
    </Row>
  );
}

/** A choice among fixed values. */
export function SelectField({ label, value, choices, onChange, error }: { label: string; value: unknown; choices: [string, string][]; onChange: (v: string) => void; error?: string }) {
  const id = useFieldId();
  const v = typeof value === "string" ? value : "";
  return (
    <Row id={id} label={label} error={error}>
      <select id={id} value={v} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        {!choices.some(([c]) => c === v) && <option value={v}>{v || "—"}</option>}
        {choices.map(([c, text]) => (
          <option key={c} value={c}>
            {text}
          </option>
        ))}
      </select>
    </Row>
  );
}

/** The agents' datalist, rendered once per editor. */
export const AGENTS_LIST = "flow-editor-agents";

/** The agent picker: the agents in `agents/`, or a new name (it runs with default settings). */
export function AgentPicker({ value, agents, onChange, error }: { value: unknown; agents: EditorAgent[]; onChange: (v: string) => void; error?: string }) {
  const known = agents.some((a) => a.name === value);
  return (
    <>
      <TextField label="Agent" value={value} onChange={onChange} list={AGENTS_LIST} placeholder="an agent's name" error={error} />
      {typeof value === "string" && value && !known && (
        <p class="small muted editor-hint">No file agents/{value}.json: the agent runs with the default back end and no persona.</p>
      )}
    </>
  );
}

/** The command picker: the command files of the chosen agent. */
export function CommandPicker({ agent, value, agents, onChange, error }: { agent: unknown; value: unknown; agents: EditorAgent[]; onChange: (v: string) => void; error?: string }) {
  const commands = agents.find((a) => a.name === agent)?.commands ?? [];
  if (commands.length === 0) {
    return (
      <>
        <TextField label="Command" value={value} onChange={onChange} error={error} />
        <p class="small muted editor-hint">
          {typeof agent === "string" && agent ? `Agent ${agent} has no command files in agents/${agent}/commands/.` : "Pick an agent first."}
        </p>
      </>
    );
  }
  return <SelectField label="Command" value={value} choices={commands.map((c) => [c, c])} onChange={onChange} error={error} />;
}
