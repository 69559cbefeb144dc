// The flows part of the transport (issue 8): the Flows page reaches the flow
// engine only through this interface. Two implementations, like `Transport`:
// HTTP against `maskflow serve` and Tauri IPC (one command per call, see
// src-tauri/src/commands.rs). Events (flow_turn, flow_status, flow_delta)
// arrive through the main transport's `onEvent`.
import type {
  DeleteReply,
  FlowBundle,
  FlowImport,
  FlowList,
  FlowRunList,
  FlowRunPatch,
  FlowRunView,
  FlowStarted,
  FlowSummary,
  GateAnswer,
  StartFlow,
} from "../generated";
import { inTauri } from "./index";

/** Everything the Flows page asks of Maskflow. */
export interface FlowsTransport {
  listFlows(): Promise<FlowList>;
  /** A flow's definition (`steps` list form or `nodes` graph form). */
  flowDefinition(name: string): Promise<Record<string, unknown>>;
  flowMermaid(name: string): Promise<string>;
  exportFlow(name: string): Promise<FlowBundle>;
  importFlow(request: FlowImport): Promise<FlowSummary>;
  runFlow(name: string, request: StartFlow): Promise<FlowStarted>;
  flowRuns(name: string): Promise<FlowRunList>;
  getFlowRun(id: string): Promise<FlowRunView>;
  patchFlowRun(id: string, patch: FlowRunPatch): Promise<FlowRunView>;
  /** Two steps: without `confirm`, what would be deleted and a token; with it, the delete. */
  deleteFlowRun(id: string, confirm?: string): Promise<DeleteReply>;
  stopFlowRun(id: string): Promise<FlowRunView>;
  answerFlowRun(id: string, answer: GateAnswer): Promise<FlowStarted>;
}

/** The flows transport for where the UI runs. */
export async function pickFlowsTransport(): Promise<FlowsTransport> {
  if (inTauri()) {
    const { TauriFlows } = await import("./flows-tauri");
    return new TauriFlows();
  }
  const { HttpFlows } = await import("./flows-http");
  return new HttpFlows(window.location.origin);
}
