// Pure helpers of the Flows page: which diagram node a step path is, and the
// state of every node in a run (pending, running, done, failed, waiting).
import type { FlowRunView, StepMeta } from "../generated";

/** A turn's metadata when the turn belongs to a step. */
export type StepTurn = Extract<StepMeta, { stepIndex: number }>;

/** The step a turn belongs to, or null for a turn of the run as a whole. */
export function stepOf(command: StepMeta | undefined): StepTurn | null {
  return command && "stepIndex" in command ? command : null;
}

export type NodeState = "pending" | "running" | "done" | "failed" | "waiting";

/** The node ids of a Mermaid export (`%% @id:` entries of its config block). */
export function nodeIds(mermaid: string): string[] {
  const ids: string[] = [];
  for (const line of mermaid.split("\n")) {
    const m = /^%% @([A-Za-z0-9_-]+):/.exec(line.trim());
    const id = m?.[1];
    if (id && id !== "_flow") ids.push(id);
  }
  return ids;
}

/** The node a step path is drawn as: graph form by node index, list form `s<path>`. */
export function nodeOf(path: readonly number[] | undefined, graphIds: string[] | null, known: Set<string>): string | null {
  if (!path || path.length === 0) return null;
  if (graphIds) return graphIds[path[0] ?? -1] ?? null;
  for (let n = path.length; n > 0; n--) {
    const id = "s" + path.slice(0, n).join("_");
    if (known.has(id)) return id;
  }
  return null;
}

/** Every node's state in a run. */
export function nodeStates(run: FlowRunView | null, graphIds: string[] | null, known: Set<string>): Map<string, NodeState> {
  const out = new Map<string, NodeState>();
  if (!run) return out;
  let last: string | null = null;
  for (const t of run.turns) {
    const id = nodeOf(stepOf(t.command)?.stepPath, graphIds, known);
    if (id) {
      out.set(id, "done");
      last = id;
      // A loop or a decision whose steps ran has run too (list-form ids nest).
      for (let cut = id.lastIndexOf("_"); cut > 0; cut = id.lastIndexOf("_", cut - 1)) {
        const parent = id.slice(0, cut);
        if (known.has(parent) && !out.has(parent)) out.set(parent, "done");
      }
    }
  }
  const next = nodeOf(run.flags.flow.nextStepPath?.map(Number), graphIds, known);
  const status = String(run.status);
  // A cut-off run (its process died) is not running: its step waits for the person to resume it.
  if (status === "running" && next) out.set(next, run.interrupted ? "waiting" : "running");
  if (status === "waiting") {
    const p = run.pending as { stepPath?: number[] } | null;
    const at = nodeOf(p?.stepPath, graphIds, known) ?? next ?? last;
    if (at) out.set(at, "waiting");
  }
  if (status === "failed" || status === "needs_attention") {
    const p = run.pending as { stepPath?: number[] } | null;
    const at = nodeOf(p?.stepPath, graphIds, known) ?? next ?? last;
    if (at) out.set(at, "failed");
  }
  return out;
}

/** The Mermaid text with a class per node state appended (styles by state). */
export function styled(mermaid: string, states: Map<string, NodeState>): string {
  const lines = [
    "classDef pending fill:#ffffff,stroke:#c9cede,color:#161a2d",
    "classDef running fill:#e9e8ff,stroke:#4f46e5,stroke-width:2px,color:#1e1b6b",
    "classDef done fill:#e5f6ee,stroke:#0f7a4d,color:#0b3d27",
    "classDef failed fill:#fdecea,stroke:#b42318,stroke-width:2px,color:#5c130d",
    "classDef waiting fill:#fff6e0,stroke:#935f00,stroke-width:2px,color:#4a3000",
  ];
  const all = nodeIds(mermaid);
  const by: Record<NodeState, string[]> = { pending: [], running: [], done: [], failed: [], waiting: [] };
  for (const id of all) by[states.get(id) ?? "pending"].push(id);
  for (const [state, ids] of Object.entries(by)) if (ids.length) lines.push(`class ${ids.join(",")} ${state}`);
  const cut = mermaid.indexOf("%% === WORKFLOW_CONFIG ===");
  const diagram = cut >= 0 ? mermaid.slice(0, cut) : mermaid;
  return diagram.trimEnd() + "\n" + lines.map((l) => "    " + l).join("\n") + "\n";
}
