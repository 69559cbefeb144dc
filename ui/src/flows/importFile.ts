// What the Flows page's Import button sends for a chosen file (a Mermaid
// diagram, a bundle, or a flow file as kept in flows/), and the words that
// say what was imported: pure, so the shapes of seeds 003 and 004 are tested.
import type { FlowBundle, FlowImport } from "../generated";
import { nodeIds } from "./state";

/** A chosen file read as an import request, with what it holds for the notice. */
export type ReadImport = { request: FlowImport; steps: number | null; agents: string[] };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Reads a chosen file; throws an Error naming the file when it is JSON-like but not JSON. */
export function readImport(fileName: string, text: string): ReadImport {
  const stem = fileName.replace(/\.[^.]+$/, "").replace(/[^A-Za-z0-9_-]/g, "_");
  if (!text.trimStart().startsWith("{")) {
    const ids = nodeIds(text);
    return { request: { mermaid: text, name: stem }, steps: ids.length > 0 ? ids.length : null, agents: [] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`${fileName} is not valid JSON (${e instanceof Error ? e.message : String(e)}), so it cannot be imported as a bundle or a flow.`);
  }
  const obj = (json ?? {}) as Record<string, unknown>;
  if (typeof json === "object" && json !== null && "workflow" in obj) {
    const bundle = json as FlowBundle;
    const wf = (bundle.workflow ?? {}) as { steps?: unknown; definition?: unknown };
    const steps = Array.isArray(wf.steps) ? wf.steps : Array.isArray((wf.definition as { steps?: unknown })?.steps) ? (wf.definition as { steps: unknown[] }).steps : null;
    const agents = Array.isArray(bundle.agents)
      ? bundle.agents.map((a) => (a.displayName && a.displayName !== a.id ? `${a.displayName} (${a.id})` : String(a.id)))
      : [];
    return { request: { bundle }, steps: steps ? steps.length : null, agents };
  }
  const steps = Array.isArray(obj.steps) ? obj.steps.length : null;
  return { request: { flow: json, name: stem }, steps, agents: [] };
}

/** "Imported “name” with 1 step and 1 agent: Code Review Agent (code-reviewer)." */
export function importedNotice(name: string, read: ReadImport): string {
  const parts = [read.steps !== null ? plural(read.steps, "step") : null, read.agents.length > 0 ? plural(read.agents.length, "agent") : null].filter(Boolean);
  const what = parts.length > 0 ? ` with ${parts.join(" and ")}` : "";
  const who = read.agents.length > 0 ? `: ${read.agents.join(", ")}` : "";
  return `Imported “${name}”${what}${who}.`;
}
