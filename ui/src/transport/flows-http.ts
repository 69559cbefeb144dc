// The flows transport over HTTP (`/api/flows…`, `/api/flow-runs…`).
import type {
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
import { errorFromResponse, safeDelete } from "./http";
import { ApiError } from "./index";

const seg = encodeURIComponent;

export class HttpFlows implements FlowsTransport {
  constructor(private readonly origin: string) {}

  private async call<T>(method: string, path: string, body?: unknown, text = false): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.origin + path, {
        method,
        credentials: "same-origin",
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError("network", "Maskflow cannot be reached. Is `maskflow serve` still running?");
    }
    const raw = await response.text();
    let parsed: unknown = raw;
    if (raw && (!text || !response.ok)) {
      try {
        parsed = JSON.parse(raw);
      } catch {
        parsed = raw;
      }
    }
    if (!response.ok) throw errorFromResponse(response.status, parsed);
    return parsed as T;
  }

  listFlows() {
    return this.call<FlowList>("GET", "/api/flows");
  }
  flowDefinition(name: string) {
    return this.call<Record<string, unknown>>("GET", `/api/flows/${seg(name)}`);
  }
  flowMermaid(name: string) {
    return this.call<string>("GET", `/api/flows/${seg(name)}/mermaid`, undefined, true);
  }
  exportFlow(name: string) {
    return this.call<FlowBundle>("GET", `/api/flows/${seg(name)}/export`);
  }
  importFlow(request: FlowImport) {
    return this.call<FlowSummary>("POST", "/api/flows/import", request);
  }
  runFlow(name: string, request: StartFlow) {
    return this.call<FlowStarted>("POST", `/api/flows/${seg(name)}/run`, request);
  }
  flowRuns(name: string) {
    return this.call<FlowRunList>("GET", `/api/flows/${seg(name)}/runs`);
  }
  getFlowRun(id: string) {
    return this.call<FlowRunView>("GET", `/api/flow-runs/${seg(id)}`);
  }
  patchFlowRun(id: string, patch: FlowRunPatch) {
    return this.call<FlowRunView>("PATCH", `/api/flow-runs/${seg(id)}`, patch);
  }
  deleteFlowRun(id: string, confirm?: string) {
    return safeDelete(this.origin, `/api/flow-runs/${seg(id)}`, confirm);
  }
  stopFlowRun(id: string) {
    return this.call<FlowRunView>("POST", `/api/flow-runs/${seg(id)}/stop`);
  }
  answerFlowRun(id: string, answer: GateAnswer) {
    return this.call<FlowStarted>("POST", `/api/flow-runs/${seg(id)}/gate`, answer);
  }
}
