// A workflow's name, description and label, edited in place on the
// Workflows page (seed 000: set by the first build, then only by the user).
// Each field saves on Enter or when it loses focus; Escape puts it back.
import { useEffect, useRef, useState } from "preact/hooks";
import type { WorkflowPatch, WorkflowView } from "../generated";
import { noticeOf, type Notice } from "../lib/errors";
import { toApiError } from "../transport";
import { useTransport } from "../context";
import { NoticeBanner } from "./ui";

type Key = "name" | "description" | "label";

function InlineField({
  field,
  value,
  placeholder,
  multiline,
  onSave,
}: {
  field: Key;
  value: string;
  placeholder: string;
  multiline?: boolean;
  onSave: (value: string) => Promise<boolean>;
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(value);
  // Set once Enter or Escape has decided: the blur of the closing input must not save again.
  const settled = useRef(false);
  useEffect(() => setDraft(value), [value]);

  function open() {
    settled.current = false;
    setEditing(true);
  }
  async function save() {
    if (settled.current) return;
    settled.current = true;
    if (draft.trim() === value.trim() || (await onSave(draft))) {
      setEditing(false);
    } else {
      settled.current = false; // refused: keep editing
    }
  }
  function onKey(e: KeyboardEvent) {
    if (e.key === "Escape") {
      settled.current = true;
      setDraft(value);
      setEditing(false);
    } else if (e.key === "Enter" && !(multiline && e.shiftKey)) {
      e.preventDefault();
      void save();
    }
  }

  // Not "Edit …": that is the version's Edit button.
  const label = `Change the ${field}`;
  if (!editing) {
    return (
      <button
        type="button"
        class={`inline-edit inline-${field}${value ? "" : " empty"}`}
        title={label}
        aria-label={`${label}: ${value || placeholder}`}
        data-testid={`edit-${field}`}
        onClick={open}
      >
        {value || placeholder}
        <span class="pencil" aria-hidden="true">
          ✎
        </span>
      </button>
    );
  }
  const common = {
    value: draft,
    "aria-label": label,
    placeholder,
    autoFocus: true,
    "data-testid": `input-${field}`,
    onInput: (e: Event) => setDraft((e.currentTarget as HTMLInputElement).value),
    onKeyDown: onKey,
    onBlur: () => void save(),
  };
  return multiline ? (
    <textarea class={`inline-input inline-${field}`} rows={2} {...common} />
  ) : (
    <input class={`inline-input inline-${field}`} {...common} />
  );
}

/** The editable heading of a workflow's page. */
export function WorkflowMeta({ workflow, onChanged }: { workflow: WorkflowView; onChanged: (w: WorkflowView) => void }) {
  const transport = useTransport();
  const [notice, setNotice] = useState<Notice | null>(null);

  async function save(field: Key, value: string): Promise<boolean> {
    setNotice(null);
    const patch: WorkflowPatch = { [field]: value };
    try {
      onChanged(await transport.updateWorkflow(workflow.id, patch));
      return true;
    } catch (e) {
      setNotice(noticeOf(toApiError(e)));
      return false;
    }
  }

  return (
    <div class="wf-meta">
      <h2>
        <InlineField field="name" value={workflow.name ?? ""} placeholder="Untitled workflow" onSave={(v) => save("name", v)} />
      </h2>
      <InlineField
        field="description"
        value={workflow.description ?? ""}
        placeholder="Add a description"
        multiline
        onSave={(v) => save("description", v)}
      />
      <span class="wf-label-row">
        <span class="muted small">Label:</span>
        <InlineField field="label" value={workflow.label ?? ""} placeholder="none" onSave={(v) => save("label", v)} />
      </span>
      {notice && <NoticeBanner notice={notice} onClose={() => setNotice(null)} />}
    </div>
  );
}
