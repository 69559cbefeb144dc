// The flow editor screen (issue 31, seed 003's workflow builder): a flow as
// a list of steps with a form each, or its JSON, checked by the loader as it
// changes, with the live diagram beside it; saved to `flows/<name>.json`
// through the loader's checks. A file changed outside Maskflow while open
// is shown, and only overwritten when the user says so.
import { useState } from "preact/hooks";
import { go } from "../../lib/router";
import { Diagram } from "../Diagram";
import { ConflictBanner } from "./ConflictBanner";
import { AGENTS_LIST, TextField } from "./fields";
import { allStepPaths, ownerOf, setField } from "./model";
import { StepList, type ListContext } from "./StepList";
import { useFlowEditor } from "./useFlowEditor";
import "../flows.css";
import "./editor.css";

/** The editor of flow `name`, or of a new flow. */
export function FlowEditor({ name }: { name?: string }) {
  const ed = useFlowEditor(name);
  const [newName, setNewName] = useState("");
  const { doc, check, options } = ed;
  const target = name ?? newName.trim();

  const onSave = async () => {
    if (!target) {
      ed.setError("Give the flow a name first: it becomes its file name, flows/<name>.json.");
      return;
    }
    const ok = await ed.save(target);
    if (ok && !name) go(`#/flow-editor/${encodeURIComponent(target)}`);
  };
  const onKey = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "s") {
      e.preventDefault();
      void onSave();
    }
  };

  const messages = check?.messages ?? [];
  const ctx: ListContext | null = doc
    ? {
        doc,
        setDoc: ed.setDoc,
        agents: options?.agents ?? [],
        flowNames: ed.flowNames.filter((n) => n !== name),
        stepTypes: options?.stepTypes ?? [],
        messages: messages.map((m) => ({ owner: ownerOf(m.path, allStepPaths(doc)), message: m })),
      }
    : null;

  return (
    <div class="flow-editor" onKeyDown={onKey}>
      <header class="flow-head">
        <div>
          <h2>{name ? `Edit flow: ${name}` : "New flow"}</h2>
          <p class="muted small">
            Saved as <code>flows/{target || "<name>"}.json</code> in the data folder, checked by the same rules as when a flow is loaded.
          </p>
        </div>
        <div class="flow-controls">
          {name && (
            <a class="button" href={`#/flows/${encodeURIComponent(name)}`}>
              Open in Flows
            </a>
          )}
          {ed.dirty && <span class="small muted" data-testid="editor-dirty">Unsaved changes</span>}
          <button type="button" class="button primary" disabled={ed.busy || !ed.loaded} onClick={() => void onSave()}>
            {ed.busy ? "Saving…" : "Save"}
          </button>
        </div>
      </header>
      {ed.outsideChange && name && (
        <ConflictBanner name={name} removed={ed.disk.removed} dirty={ed.dirty} busy={ed.busy} onReload={() => void ed.reload()} onKeep={ed.keepEditing} onOverwrite={() => void ed.save(name, true)} />
      )}
      {ed.error && (
        <div class="notice notice-error" role="alert" data-testid="editor-error">
          <p>{ed.error}</p>
          <button type="button" class="icon-button" aria-label="Dismiss" onClick={() => ed.setError(null)}>
            ×
          </button>
        </div>
      )}
      {ed.saved && (
        <p class="notice notice-info" role="status" data-testid="editor-saved">
          {ed.saved}
        </p>
      )}
      <div class="editor-body">
        <div class="editor-main flow-card">
          {!name && <TextField label="Name (the file name)" value={newName} onChange={setNewName} placeholder="letters, digits, - and _" />}
          {doc && <TextField label="Description" value={doc.description} onChange={(v) => ed.setDoc(setField(doc, [], "description", v, true))} />}
          <div class="editor-tabs" role="group" aria-label="View">
            <button type="button" class={`button small${ed.mode === "steps" ? " primary" : ""}`} aria-pressed={ed.mode === "steps"} disabled={!doc} onClick={() => ed.setMode("steps")}>
              Steps
            </button>
            <button type="button" class={`button small${ed.mode === "json" ? " primary" : ""}`} aria-pressed={ed.mode === "json"} onClick={() => ed.setMode("json")}>
              JSON
            </button>
            {!doc && ed.loaded && <span class="small muted">The steps view shows list-form flows whose JSON reads; edit this one as JSON.</span>}
          </div>
          {ed.mode === "steps" && ctx ? (
            <StepList ctx={ctx} path={["steps"]} title="Steps" />
          ) : (
            <textarea class="editor-json" aria-label="The flow as JSON" spellcheck={false} value={ed.text} onInput={(e) => ed.setText((e.currentTarget as HTMLTextAreaElement).value)} />
          )}
          <datalist id={AGENTS_LIST}>
            {(options?.agents ?? []).map((a) => (
              <option key={a.name} value={a.name}>
                {a.displayName ?? a.name}
              </option>
            ))}
          </datalist>
        </div>
        <aside class="editor-side">
          <section class="flow-card" aria-label="Checks" data-testid="editor-checks">
            <h3>Checks</h3>
            {!check ? (
              <p class="muted small">Checking…</p>
            ) : check.valid ? (
              <p class="small ok" data-testid="editor-valid">The loader accepts this flow.</p>
            ) : (
              <ul class="step-errors" role="alert" data-testid="editor-messages">
                {messages.map((m, i) => (
                  <li key={i} class="field-error small">
                    <code>{m.path}</code>: {m.message}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section class="flow-card" aria-label="Preview" data-testid="editor-preview">
            <h3>Preview</h3>
            {check && !check.valid && ed.lastDiagram && <p class="small muted">The last valid version, until the messages above are fixed.</p>}
            {ed.lastDiagram ? <Diagram source={ed.lastDiagram} /> : <p class="small muted">The diagram shows once the flow is valid.</p>}
          </section>
        </aside>
      </div>
    </div>
  );
}
