// The HTTP + WebSocket transport, for a browser against `maskflow serve`.
// The token travels in the HttpOnly cookie the server set when the printed
// URL was opened, so nothing here ever sees it.
import type {
  ConnectionTest,
  CreateWorkflow,
  CreatedVersion,
  Detected,
  Event,
  GateRequest,
  GuardMatch,
  LedgerEntry,
  Usage,
  LlmSettings,
  ManualPrompt,
  MessageReply,
  PythonInput,
  Cleared,
  IsolationInput,
  IsolationView,
  StorageInput,
  StorageKind,
  StorageView,
  PythonView,
  BudgetsView,
  CancelReply,
  Backup,
  BackupsView,
  DeleteReply,
  RestoreReply,
  BackupRetention,
  RoleBudgets,
  RunInputs,
  RunView,
  SessionIteration,
  SettingsView,
  UploadedFile,
  VersionView,
  WorkflowPatch,
  WorkflowSummary,
  WorkflowView,
  EnvironmentsView,
  OutputPreview,
} from "../generated";
import { ApiError, type FileSource, type OnProgress, type OutputLocation, type OutputSource, type Transport } from "./index";

/** The error body of the HTTP API. */
interface ErrorBody {
  error: string;
  message: string;
  matches?: GuardMatch[];
}

function isErrorBody(v: unknown): v is ErrorBody {
  return (
    !!v &&
    typeof v === "object" &&
    typeof (v as ErrorBody).error === "string" &&
    typeof (v as ErrorBody).message === "string"
  );
}

/**
 * A two-step delete over HTTP: without `confirm` the server answers 409
 * `confirmation_required` with what would be deleted and a token (returned
 * here as a `DeleteReply` with `deleted: false`); with the token, 200.
 */
export async function safeDelete(origin: string, path: string, confirm?: string): Promise<DeleteReply> {
  const query = confirm ? `?confirm=${encodeURIComponent(confirm)}` : "";
  let response: Response;
  try {
    response = await fetch(origin + path + query, { method: "DELETE", credentials: "same-origin" });
  } catch {
    throw new ApiError("network", "Maskflow cannot be reached. Is `maskflow serve` still running?");
  }
  let body: unknown = undefined;
  try {
    body = JSON.parse(await response.text());
  } catch {
    body = undefined;
  }
  const reply = body as DeleteReply | undefined;
  if (response.ok && reply) return reply;
  if (response.status === 409 && reply && typeof reply.confirm_token === "string") return reply;
  throw errorFromResponse(response.status, body);
}

/** Builds the ApiError of a failed response. */
export function errorFromResponse(status: number, body: unknown): ApiError {
  if (isErrorBody(body)) {
    return new ApiError(body.error, body.message, Array.isArray(body.matches) ? body.matches : []);
  }
  return new ApiError("http_" + status, `Maskflow answered ${status}.`);
}

const seg = encodeURIComponent;

export class HttpTransport implements Transport {
  private listeners = new Set<(e: Event) => void>();
  private socket: WebSocket | null = null;
  private retry = 0;

  constructor(private readonly origin: string) {}

  private async call<T>(method: string, path: string, body?: unknown, raw = false): Promise<T> {
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
    const text = await response.text();
    if (raw && response.ok) return text as T;
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) throw errorFromResponse(response.status, parsed);
    return parsed as T;
  }

  listWorkflows() {
    return this.call<WorkflowSummary[]>("GET", "/api/workflows");
  }
  getWorkflow(id: string) {
    return this.call<WorkflowView>("GET", `/api/workflows/${seg(id)}`);
  }
  getVersion(id: string, versionId: string) {
    return this.call<VersionView>("GET", `/api/workflows/${seg(id)}/versions/${seg(versionId)}`);
  }
  createWorkflow(request: CreateWorkflow) {
    return this.call<CreatedVersion>("POST", "/api/workflows", request);
  }
  sendMessage(id: string, content: string, confirmPrivacy = false) {
    return this.call<MessageReply>("POST", `/api/workflows/${seg(id)}/messages`, {
      content,
      confirm_privacy: confirmPrivacy,
    });
  }
  cancelMessage(id: string) {
    return this.call<CancelReply>("POST", `/api/workflows/${seg(id)}/cancel`);
  }
  settings() {
    return this.call<SettingsView>("GET", "/api/settings");
  }
  updateSettings(settings: LlmSettings) {
    return this.call<SettingsView>("PUT", "/api/settings", settings);
  }
  async setKey(id: string, key: string) {
    await this.call<unknown>("PUT", `/api/providers/${seg(id)}/key`, { key });
  }
  async deleteKey(id: string) {
    await this.call<unknown>("DELETE", `/api/providers/${seg(id)}/key`);
  }
  testProvider(id: string) {
    return this.call<ConnectionTest>("POST", `/api/providers/${seg(id)}/test`);
  }
  detectProviders() {
    return this.call<Detected[]>("GET", "/api/providers/detected");
  }
  python() {
    return this.call<PythonView>("GET", "/api/settings/python");
  }
  setPython(input: PythonInput) {
    return this.call<PythonView>("PUT", "/api/settings/python", input);
  }
  isolation() {
    return this.call<IsolationView>("GET", "/api/settings/isolation");
  }
  setIsolation(input: IsolationInput) {
    return this.call<IsolationView>("PUT", "/api/settings/isolation", input);
  }
  storage() {
    return this.call<StorageView>("GET", "/api/settings/storage");
  }
  setStorage(input: StorageInput) {
    return this.call<StorageView>("PUT", "/api/settings/storage", input);
  }
  clearStorage(kind: StorageKind) {
    return this.call<Cleared>("POST", `/api/settings/storage/${kind}/clear`);
  }
  roleBudgets() {
    return this.call<BudgetsView>("GET", "/api/settings/budgets");
  }
  setRoleBudgets(budgets: RoleBudgets) {
    return this.call<BudgetsView>("PUT", "/api/settings/budgets", budgets);
  }
  usage() {
    return this.call<Usage>("GET", "/api/ledger/usage");
  }
  ledger(q: string, limit: number, offset: number) {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
    if (q) query.set("q", q);
    return this.call<LedgerEntry[]>("GET", `/api/ledger?${query.toString()}`);
  }
  manualPrompts() {
    return this.call<ManualPrompt[]>("GET", "/api/manual");
  }
  async answerManual(id: string, text: string) {
    await this.call<unknown>("POST", `/api/manual/${seg(id)}/answer`, { text });
  }
  async dismissManual(id: string) {
    await this.call<unknown>("DELETE", `/api/manual/${seg(id)}`);
  }
  resolveGate(id: string, versionId: string, request: GateRequest) {
    return this.call<WorkflowView>(
      "POST",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/gate`,
      request,
    );
  }
  sessions(id: string, versionId: string) {
    return this.call<SessionIteration[]>(
      "GET",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/sessions`,
    );
  }
  sessionFile(id: string, versionId: string, iteration: number, path: string) {
    const p = path.split("/").map(seg).join("/");
    return this.call<string>(
      "GET",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/sessions/${iteration}/${p}`,
      undefined,
      true,
    );
  }
  runWorkflow(id: string, request: RunInputs) {
    return this.call<RunView>("POST", `/api/workflows/${seg(id)}/runs`, request);
  }
  listRuns(id: string) {
    return this.call<RunView[]>("GET", `/api/workflows/${seg(id)}/runs`);
  }
  testOutputLocation(id: string, versionId: string, name: string): Promise<OutputLocation> {
    return Promise.resolve({
      kind: "url",
      url: `${this.origin}/api/workflows/${seg(id)}/versions/${seg(versionId)}/outputs/${encodeURIComponent(name)}`,
    });
  }
  outputPreview(source: OutputSource, name: string) {
    const n = encodeURIComponent(name);
    return this.call<OutputPreview>(
      "GET",
      source.kind === "run"
        ? `/api/runs/${seg(source.runId)}/previews/${n}`
        : `/api/workflows/${seg(source.workflowId)}/versions/${seg(source.versionId)}/previews/${n}`,
    );
  }
  environments() {
    return this.call<EnvironmentsView>("GET", "/api/environments");
  }
  removeEnvironment(id: string) {
    return this.call<EnvironmentsView>("DELETE", `/api/environments/${seg(id)}`);
  }
  installUv() {
    return this.call<EnvironmentsView>("POST", "/api/environments/uv");
  }
  outputLocation(runId: string, name: string): Promise<OutputLocation> {
    const p = name.split("/").map(seg).join("/");
    return Promise.resolve({ kind: "url", url: `${this.origin}/api/runs/${seg(runId)}/outputs/${p}` });
  }
  approve(id: string, versionId: string) {
    return this.call<WorkflowView>(
      "POST",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/approve`,
    );
  }
  edit(id: string, versionId: string) {
    return this.call<CreatedVersion>(
      "POST",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/edit`,
    );
  }
  updateWorkflow(id: string, patch: WorkflowPatch) {
    return this.call<WorkflowView>("PATCH", `/api/workflows/${seg(id)}`, patch);
  }
  deleteWorkflow(id: string, confirm?: string) {
    return safeDelete(this.origin, `/api/workflows/${seg(id)}`, confirm);
  }
  restoreVersion(id: string, versionId: string) {
    return this.call<CreatedVersion>(
      "POST",
      `/api/workflows/${seg(id)}/versions/${seg(versionId)}/restore`,
    );
  }
  backups() {
    return this.call<BackupsView>("GET", "/api/backups");
  }
  createBackup() {
    return this.call<Backup>("POST", "/api/backups");
  }
  setBackupRetention(retention: BackupRetention) {
    return this.call<BackupsView>("PUT", "/api/backups/retention", retention);
  }
  restoreBackup(id: string) {
    return this.call<RestoreReply>("POST", `/api/backups/${seg(id)}/restore`);
  }
  deleteBackup(id: string, confirm?: string) {
    return safeDelete(this.origin, `/api/backups/${seg(id)}`, confirm);
  }

  extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile> {
    if (source.kind !== "file") {
      return Promise.reject(
        new ApiError("invalid_request", "A browser can only upload files, not paths."),
      );
    }
    // XMLHttpRequest, because fetch reports no upload progress.
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", this.origin + "/api/extracts");
      xhr.withCredentials = true;
      xhr.responseType = "text";
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable && onProgress) onProgress(e.loaded / Math.max(e.total, 1));
      };
      xhr.onerror = () =>
        reject(new ApiError("network", "The upload failed: Maskflow cannot be reached."));
      xhr.onload = () => {
        let body: unknown;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          body = undefined;
        }
        if (xhr.status >= 200 && xhr.status < 300 && Array.isArray(body) && body[0]) {
          resolve(body[0] as UploadedFile);
        } else {
          reject(errorFromResponse(xhr.status, body));
        }
      };
      const form = new FormData();
      form.append("file", source.file, source.file.name);
      xhr.send(form);
    });
  }

  onEvent(listener: (e: Event) => void): () => void {
    this.listeners.add(listener);
    this.connect();
    return () => {
      this.listeners.delete(listener);
    };
  }

  onNativeDrop(): () => void {
    return () => {};
  }

  private connect() {
    if (this.socket) return;
    const url = this.origin.replace(/^http/, "ws") + "/api/events";
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.retry = 0;
    };
    socket.onmessage = (m) => {
      let event: Event;
      try {
        event = JSON.parse(String(m.data)) as Event;
      } catch {
        return;
      }
      for (const l of this.listeners) l(event);
    };
    socket.onclose = () => {
      this.socket = null;
      if (this.listeners.size === 0) return;
      this.retry = Math.min(this.retry + 1, 6);
      setTimeout(() => this.connect(), 250 * 2 ** this.retry);
    };
  }
}
