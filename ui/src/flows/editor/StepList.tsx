// The steps as a nested list of cards: each card moves up and down, into
// the loop or decision before it and out of the one it is in, is removed,
// and holds its form and the steps nested in it (a loop's steps, a
// foreach's step, a decision's branches). The loader's messages show on
// the step they name.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { EditorAgent, FlowMessage } from "../../generated";
import { StepForm } from "./StepForm";
import {
  FOREACH_STEP_TYPES,
  TYPE_LABEL,
  at,
  indent,
  indentTarget,
  insertStep,
  move,
  newStep,
  outdent,
  outdentTarget,
  pathString,
  removeAt,
  slotsOf,
  stepTitle,
  update,
  type FlowJson,
  type Path,
  type Slot,
  type StepJson,
} from "./model";

/** What every list and card needs. */
export type ListContext = {
  doc: FlowJson;
  setDoc: (d: FlowJson) => void;
  agents: EditorAgent[];
  flowNames: string[];
  stepTypes: string[];
  /** The loader's messages, each with the step path that owns it. */
  messages: { owner: string | null; message: FlowMessage }[];
};

/** The step list at `path` with its "add a step" control. */
export function StepList({ ctx, path, title }: { ctx: ListContext; path: Path; title: string }) {
  const steps = (at(ctx.doc, path) as StepJson[] | undefined) ?? [];
  const own = pathString(path);
  const [over, setOver] = useState<number | null>(null);
  return (
    <div class="step-list">
      <ol aria-label={title}>
        {steps.map((s, i) => (
          <li
            key={i}
            class={over === i ? "drop-target" : ""}
            onDragOver={(e) => {
              // Drags reorder within one list; nesting is the → and ← buttons.
              if (dragging?.list !== own) return;
              e.preventDefault();
              setOver(i);
            }}
            onDragLeave={() => setOver(null)}
            onDrop={(e) => {
              if (dragging?.list !== own) return;
              e.preventDefault();
              e.stopPropagation();
              setOver(null);
              ctx.setDoc(move(ctx.doc, path, dragging.index, i));
              dragging = null;
            }}
          >
            <StepCard ctx={ctx} listPath={path} index={i} count={steps.length} step={s} />
          </li>
        ))}
      </ol>
      {steps.length === 0 && <p class="small muted">No steps here yet.</p>}
      <AddStep label={`Add a step to ${title.toLowerCase()}`} types={ctx.stepTypes} onAdd={(type) => ctx.setDoc(insertStep(ctx.doc, path, newStep(type, ctx.agents[0]?.name ?? "")))} />
    </div>
  );
}

/** The step being dragged: its list and index (one drag at a time in a window). */
let dragging: { list: string; index: number } | null = null;

/** A step type picker and its button. */
function AddStep({ label, types, onAdd, button = "Add" }: { label: string; types: string[]; onAdd: (type: string) => void; button?: string }) {
  const [type, setType] = useState(types[0] ?? "llm");
  return (
    <div class="add-step" role="group" aria-label={label}>
      <select aria-label={`${label}: type`} value={type} onChange={(e) => setType((e.currentTarget as HTMLSelectElement).value)}>
        {types.map((t) => (
          <option key={t} value={t}>
            {TYPE_LABEL[t] ?? t} ({t})
          </option>
        ))}
      </select>
      <button type="button" class="button small" onClick={() => onAdd(type)}>
        {button}
      </button>
    </div>
  );
}

function StepCard({ ctx, listPath, index, count, step }: { ctx: ListContext; listPath: Path; index: number; count: number; step: StepJson }) {
  const path = [...listPath, index];
  const title = stepTitle(step);
  const { doc, setDoc } = ctx;
  const into = indentTarget(doc, listPath, index);
  const out = outdentTarget(listPath);
  return (
    <StepBody ctx={ctx} path={path} step={step} title={`${index + 1}. ${title}`}>
      <div class="step-actions" role="group" aria-label={`Move or remove step ${title}`}>
        <span
          class="drag-handle"
          aria-hidden="true"
          draggable
          title="Drag to reorder (or use the arrows)"
          data-testid={`drag-${pathString(path)}`}
          onDragStart={(e) => {
            dragging = { list: pathString(listPath), index };
            e.dataTransfer?.setData("text/plain", title);
          }}
          onDragEnd={() => (dragging = null)}
        >
          ⠿
        </span>
        <button type="button" class="icon-button" aria-label={`Move ${title} up`} title="Move up" disabled={index === 0} onClick={() => setDoc(move(doc, listPath, index, index - 1))}>
          ↑
        </button>
        <button type="button" class="icon-button" aria-label={`Move ${title} down`} title="Move down" disabled={index === count - 1} onClick={() => setDoc(move(doc, listPath, index, index + 1))}>
          ↓
        </button>
        {into && (
          <button type="button" class="icon-button" aria-label={`Move ${title} into the step above`} title="Into the step above" onClick={() => setDoc(indent(doc, listPath, index))}>
            →
          </button>
        )}
        {out && (
          <button type="button" class="icon-button" aria-label={`Move ${title} out of its loop`} title="Out of the loop or branch" onClick={() => setDoc(outdent(doc, listPath, index))}>
            ←
          </button>
        )}
        <button type="button" class="icon-button" aria-label={`Remove ${title}`} title="Remove" onClick={() => setDoc(removeAt(doc, listPath, index))}>
          ×
        </button>
      </div>
    </StepBody>
  );
}

/** A step's card: title, the loader's messages about it, its form and its nested steps. */
function StepBody({ ctx, path, step, title, children }: { ctx: ListContext; path: Path; step: StepJson; title: string; children?: ComponentChildren }) {
  const own = pathString(path);
  const mine = ctx.messages.filter((m) => m.owner === own).map((m) => m.message);
  const errorOf = (field: string) => {
    const full = `${own}.${field}`;
    return mine.find((m) => m.path === full || m.path.startsWith(full + ".") || m.path.startsWith(full + "["))?.message;
  };
  return (
    <section class={`step-card${mine.length ? " has-error" : ""}`} aria-label={title} data-testid={`step-${own}`}>
      <header class="step-head">
        <h4>
          {title} <span class="badge small">{step.type}</span>
        </h4>
        {children}
      </header>
      {mine.length > 0 && (
        <ul class="step-errors" role="alert">
          {mine.map((m, i) => (
            <li key={i} class="field-error small">
              <code>{m.path}</code>: {m.message}
            </li>
          ))}
        </ul>
      )}
      <StepForm step={step} path={path} doc={ctx.doc} setDoc={ctx.setDoc} agents={ctx.agents} flowNames={ctx.flowNames} errorOf={errorOf} />
      {slotsOf(step, path).map((slot) => (
        <NestedSlot key={pathString(slot.path)} ctx={ctx} slot={slot} />
      ))}
    </section>
  );
}

function NestedSlot({ ctx, slot }: { ctx: ListContext; slot: Slot }) {
  if (slot.kind === "list") {
    return (
      <div class="step-nested">
        <h5>{slot.title}</h5>
        <StepList ctx={ctx} path={slot.path} title={slot.title} />
      </div>
    );
  }
  const inner = at(ctx.doc, slot.path) as StepJson | undefined;
  return (
    <div class="step-nested">
      <h5>{slot.title}</h5>
      {inner && typeof inner === "object" ? (
        <StepBody ctx={ctx} path={slot.path} step={inner} title={stepTitle(inner)}>
          <AddStep
            label={`Replace ${stepTitle(inner)} with`}
            types={FOREACH_STEP_TYPES}
            button="Replace"
            onAdd={(type) => ctx.setDoc(update(ctx.doc, slot.path, () => newStep(type, ctx.agents[0]?.name ?? "")))}
          />
        </StepBody>
      ) : (
        <AddStep label={slot.title} types={FOREACH_STEP_TYPES} onAdd={(type) => ctx.setDoc(update(ctx.doc, slot.path, () => newStep(type, ctx.agents[0]?.name ?? "")))} />
      )}
    </div>
  );
}
