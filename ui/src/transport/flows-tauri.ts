// The flows transport over Tauri IPC: one command per call (src-tauri/src/commands.rs).
import { invoke } from "@tauri-apps/api/core";
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
import type { FlowsTransport } from "./flows";
import { toApiError } from "./index";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toApiError(e);
  }
}

export class TauriFlows implements FlowsTransport {
  listFlows() {
    return call<FlowList>("flows_list");
  }
  async flowDefinition(name: string) {
    const bundle = await call<FlowBundle>("flows_export", { name });
    return (bundle.workflow.definition ?? {}) as Record<string, unknown>;
  }
  flowMermaid(name: string) {
    return call<string>("flows_mermaid", { name });
  }
  exportFlow(name: string) {
    return call<FlowBundle>("flows_export", { name });
  }
  importFlow(request: FlowImport) {
    return call<FlowSummary>("flows_import", { request });
  }
  runFlow(name: string, request: StartFlow) {
    return call<FlowStarted>("flows_run", { name, request });
  }
  flowRuns(name: string) {
    return call<FlowRunList>("flows_runs", { name });
  }
  getFlowRun(id: string) {
    return call<FlowRunView>("flow_run_get", { id });
  }
  patchFlowRun(id: string, patch: FlowRunPatch) {
    return call<FlowRunView>("flow_run_patch", { id, patch });
  }
  deleteFlowRun(id: string, confirm?: string) {
    return call<DeleteReply>("flow_run_delete", { id, confirm: confirm ?? null });
  }
  stopFlowRun(id: string) {
    return call<FlowRunView>("flow_run_stop", { id });
  }
  answerFlowRun(id: string, answer: GateAnswer) {
    return call<FlowStarted>("flow_run_answer", { id, answer });
  }
}
