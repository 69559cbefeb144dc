// The flow editor's document: the flow's JSON as plain objects, edited by
// path. Nothing here checks a flow — the loader does (flows_validate); this
// only adds, removes, moves and nests steps and says where each one sits as
// the loader's JSON path (`steps[1].steps[0]`), so its messages land on the
// step they name.

/** One step as written in the file (its `type` and its fields). */
export type StepJson = { type: string; [field: string]: unknown };
/** A flow document (list form: `steps`). */
export type FlowJson = { steps?: StepJson[]; nodes?: unknown[]; [field: string]: unknown };
/** Where a value sits: keys and indexes from the document's root. */
export type Path = (string | number)[];

/** The loader's path string of `path` (`steps[1].step`). */
export function pathString(path: Path): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/** The value at `path`. */
export function at(doc: unknown, path: Path): unknown {
  let v: unknown = doc;
  for (const p of path) v = v == null ? undefined : (v as Record<string | number, unknown>)[p];
  return v;
}

/** A copy of `doc` with `edit` applied to the value at `path` (created as `{}` or `[]` when missing). */
export function update<T>(doc: T, path: Path, edit: (value: unknown) => unknown): T {
  const copy = structuredClone(doc) as unknown;
  if (path.length === 0) return edit(copy) as T;
  let parent = copy as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string | number;
    if (parent[key] == null) parent[key] = typeof path[i + 1] === "number" ? [] : {};
    parent = parent[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1] as string | number;
  const next = edit(parent[last]);
  if (next === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = next;
  return copy as T;
}

/** Sets a field of the object at `path`; an optional field left empty is removed. */
export function setField<T>(doc: T, path: Path, field: string, value: unknown, optional = false): T {
  const empty = value === "" || value === undefined || (Array.isArray(value) && value.length === 0);
  return update(doc, [...path, field], () => (optional && empty ? undefined : value));
}

/** Inserts `step` into the list at `listPath` at `index` (the end when absent). */
export function insertStep<T>(doc: T, listPath: Path, step: StepJson, index?: number): T {
  return update(doc, listPath, (list) => {
    const l = Array.isArray(list) ? list : [];
    l.splice(index ?? l.length, 0, step);
    return l;
  });
}

/** Removes the item at `index` of the list at `listPath`. */
export function removeAt<T>(doc: T, listPath: Path, index: number): T {
  return update(doc, listPath, (list) => {
    const l = Array.isArray(list) ? list : [];
    l.splice(index, 1);
    return l;
  });
}

/** Moves the item at `from` of the list at `listPath` to `to` (clamped). */
export function move<T>(doc: T, listPath: Path, from: number, to: number): T {
  return update(doc, listPath, (list) => {
    const l = Array.isArray(list) ? list : [];
    const target = Math.max(0, Math.min(l.length - 1, to));
    if (from < 0 || from >= l.length || target === from) return l;
    const [item] = l.splice(from, 1);
    l.splice(target, 0, item);
    return l;
  });
}

/** The step types whose steps nest inside them, and where. */
export type Slot = { kind: "list"; path: Path; title: string } | { kind: "single"; path: Path; title: string };

/** The nested places of the step at `path`: a loop's steps, a foreach's step, a decision's branches and default. */
export function slotsOf(step: StepJson, path: Path): Slot[] {
  switch (step.type) {
    case "startLoop":
      return [{ kind: "list", path: [...path, "steps"], title: "Steps of the loop" }];
    case "foreach":
      return [{ kind: "single", path: [...path, "step"], title: "The step run for each item" }];
    case "decision": {
      const branches = Array.isArray(step.branches) ? step.branches : [];
      const slots: Slot[] = branches.map((b, i) => ({
        kind: "list" as const,
        path: [...path, "branches", i, "steps"],
        title: `When ${String((b as Record<string, unknown>)?.condition ?? "") || "…"}`,
      }));
      if (step.default && typeof step.default === "object") {
        slots.push({ kind: "list", path: [...path, "default", "steps"], title: "Otherwise" });
      }
      return slots;
    }
    default:
      return [];
  }
}

/** The types a foreach may run per item (the loader's rule, shown as the picker's choices). */
export const FOREACH_STEP_TYPES = ["llm", "command", "script", "subflow"];

/** A new step of `type` with the fields the loader requires, filled so the form shows them. */
export function newStep(type: string, agent = ""): StepJson {
  const ident = "main";
  switch (type) {
    case "llm":
      return { type, agentType: agent, identifier: ident, messages: [{ role: "user", content: [""] }] };
    case "command":
      return { type, agentType: agent, identifier: ident, commandName: "" };
    case "startLoop":
      return { type, maxIterations: 5, steps: [] };
    case "break":
      return { type, agentType: agent, identifier: ident, question: "", breakOn: "yes" };
    case "decision":
      return { type, branches: [{ condition: "", steps: [] }] };
    case "foreach":
      return { type, itemsPath: "", itemVariable: "item", step: newStep("llm", agent) };
    case "join":
      return { type };
    case "subflow":
      return { type, flow: "" };
    case "gate":
      return { type, prompt: "", options: [{ label: "Continue" }] };
    case "script":
      return { type, workflow: "" };
    default:
      return { type };
  }
}

/** What a step shows in its card's title: its label, else its type. */
export function stepTitle(step: StepJson): string {
  return typeof step.label === "string" && step.label.trim() ? step.label : TYPE_LABEL[step.type] ?? step.type;
}

/** The step types as people read them. */
export const TYPE_LABEL: Record<string, string> = {
  llm: "Ask an agent",
  command: "Run an agent command",
  startLoop: "Loop",
  break: "Break out of the loop",
  decision: "Decision",
  foreach: "For each item",
  join: "Join the items",
  subflow: "Run another flow",
  gate: "Ask a person",
  script: "Run a script",
};

/** The document as the file's text (what is checked and saved). */
export function toText(doc: FlowJson): string {
  return JSON.stringify(doc, null, 2) + "\n";
}

/** The document in `text`, when it is a JSON object; else null. */
export function fromText(text: string): FlowJson | null {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as FlowJson) : null;
  } catch {
    return null;
  }
}

/** Whether the structured editor can show `doc` (list form); graph-form flows are edited as JSON. */
export function isListForm(doc: FlowJson | null): doc is FlowJson {
  return !!doc && doc.nodes === undefined && (doc.steps === undefined || Array.isArray(doc.steps));
}

/** The deepest step path (of `stepPaths`) a loader message's path falls in. */
export function ownerOf(messagePath: string, stepPaths: string[]): string | null {
  let best: string | null = null;
  for (const p of stepPaths) {
    const inside = messagePath === p || messagePath.startsWith(p + ".") || messagePath.startsWith(p + "[");
    if (inside && (best === null || p.length > best.length)) best = p;
  }
  return best;
}

/** Every step's path string in `doc`, nested ones included. */
export function allStepPaths(doc: FlowJson): string[] {
  const out: string[] = [];
  const walk = (step: unknown, path: Path) => {
    if (!step || typeof step !== "object") return;
    out.push(pathString(path));
    for (const slot of slotsOf(step as StepJson, path)) {
      const v = at(doc, slot.path);
      if (slot.kind === "single") walk(v, slot.path);
      else if (Array.isArray(v)) v.forEach((s, i) => walk(s, [...slot.path, i]));
    }
  };
  (doc.steps ?? []).forEach((s, i) => walk(s, ["steps", i]));
  return out;
}

/** The list a step may move into: the first list slot of the step before it, if any. */
export function indentTarget(doc: FlowJson, listPath: Path, index: number): Path | null {
  if (index < 1) return null;
  const prevPath = [...listPath, index - 1];
  const prev = at(doc, prevPath) as StepJson | undefined;
  if (!prev || typeof prev !== "object") return null;
  const slot = slotsOf(prev, prevPath).find((s) => s.kind === "list");
  return slot ? slot.path : null;
}

/** Moves the step at `index` of `listPath` to the end of the step before it (a loop, a branch). */
export function indent(doc: FlowJson, listPath: Path, index: number): FlowJson {
  const target = indentTarget(doc, listPath, index);
  if (!target) return doc;
  const step = at(doc, [...listPath, index]) as StepJson;
  return removeAt(insertStep(doc, target, structuredClone(step)), listPath, index);
}

/** Where the step list at `listPath` sits: the list of its containing step and that step's index. */
export function outdentTarget(listPath: Path): { list: Path; index: number } | null {
  if (listPath[listPath.length - 1] !== "steps") return null;
  let owner = listPath.slice(0, -1);
  if (owner[owner.length - 2] === "branches" && typeof owner[owner.length - 1] === "number") owner = owner.slice(0, -2);
  else if (owner[owner.length - 1] === "default") owner = owner.slice(0, -1);
  const index = owner[owner.length - 1];
  if (owner.length < 2 || typeof index !== "number") return null;
  return { list: owner.slice(0, -1), index };
}

/** Moves the step at `index` of `listPath` out of its loop or branch, to just after that step. */
export function outdent(doc: FlowJson, listPath: Path, index: number): FlowJson {
  const target = outdentTarget(listPath);
  if (!target || listPath.length < 2) return doc;
  const step = at(doc, [...listPath, index]) as StepJson;
  return insertStep(removeAt(doc, listPath, index), target.list, structuredClone(step), target.index + 1);
}
