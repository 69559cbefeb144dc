// The transport's types and helpers, apart from `pickTransport` so that the
// two implementations can import them without an import cycle.
import type {
  AgentInput,
  AgentList,
  AgentView,
  ConnectionTest,
  ConversationList,
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
  HouseRulesInput,
  HouseRulesView,
  IsolationInput,
  IsolationView,
  StorageInput,
  StorageKind,
  StorageView,
  EnvironmentsView,
  OutputPreview,
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

/** An error from either shell: a stable code and a sentence for people. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** For `privacy_blocked`: what the guard found, masked, and where from. */
    readonly matches: GuardMatch[] = [],
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** A file to extract: picked or dropped in a browser, or dropped natively (a path). */
export type FileSource =
  | { kind: "file"; file: File }
  | { kind: "path"; path: string };

/** Upload progress of one file, 0..1. */
export type OnProgress = (fraction: number) => void;

/** Everything the UI asks of Maskflow. */
export interface Transport {
  listWorkflows(): Promise<WorkflowSummary[]>;
  getWorkflow(workflowId: string): Promise<WorkflowView>;
  /** Builder conversations and flow runs, most recent first; `flowName`: a flow, or `__none__` for the builder's. */
  listConversations(flowName?: string): Promise<ConversationList>;
  getVersion(workflowId: string, versionId: string): Promise<VersionView>;
  createWorkflow(request: CreateWorkflow): Promise<CreatedVersion>;
  /** `confirmPrivacy`: the user confirmed what the privacy guard found. */
  sendMessage(workflowId: string, content: string, confirmPrivacy?: boolean): Promise<MessageReply>;
  approve(workflowId: string, versionId: string): Promise<WorkflowView>;
  edit(workflowId: string, versionId: string): Promise<CreatedVersion>;
  /** Renames, re-describes or relabels a workflow (absent fields stay; "" label removes it). */
  updateWorkflow(workflowId: string, patch: WorkflowPatch): Promise<WorkflowView>;
  /** Two steps: without `confirm`, what would be deleted and a token
   * (`deleted: false`); with the token, the delete. */
  deleteWorkflow(workflowId: string, confirm?: string): Promise<DeleteReply>;
  /** Restores an earlier version as a new version, tested before approval. */
  restoreVersion(workflowId: string, versionId: string): Promise<CreatedVersion>;
  // Database backups (Settings).
  backups(): Promise<BackupsView>;
  createBackup(): Promise<Backup>;
  setBackupRetention(retention: BackupRetention): Promise<BackupsView>;
  /** Restores a backup over the database (the current one is backed up first). */
  restoreBackup(backupId: string): Promise<RestoreReply>;
  /** Two steps, like `deleteWorkflow`. */
  deleteBackup(backupId: string, confirm?: string): Promise<DeleteReply>;
  /** Reads one file locally and returns its masked extract. */
  extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile>;
  /** Stops the LLM reply in flight on a workflow (its send then fails as cancelled). */
  cancelMessage(workflowId: string): Promise<CancelReply>;
  // Settings: back ends, roles, keys, local servers, Python.
  settings(): Promise<SettingsView>;
  updateSettings(settings: LlmSettings): Promise<SettingsView>;
  /** Stores a key in the system keyring; it is never read back. */
  setKey(providerId: string, key: string): Promise<void>;
  deleteKey(providerId: string): Promise<void>;
  testProvider(providerId: string): Promise<ConnectionTest>;
  detectProviders(): Promise<Detected[]>;
  python(): Promise<PythonView>;
  setPython(input: PythonInput): Promise<PythonView>;
  /** The per-machine "run scripts without isolation" switch. */
  isolation(): Promise<IsolationView>;
  setIsolation(input: IsolationInput): Promise<IsolationView>;
  /** What the data folder keeps, by kind, and the upload expiry. */
  storage(): Promise<StorageView>;
  setStorage(input: StorageInput): Promise<StorageView>;
  /** Clears one kind safely (what it keeps is in the storage view). */
  clearStorage(kind: StorageKind): Promise<Cleared>;
  /** The house rules: the Settings text and the files of the data folder's house-rules/. */
  houseRules(): Promise<HouseRulesView>;
  /** Saves the house rules' Settings text (refused: a missing include or a cycle). */
  setHouseRules(input: HouseRulesInput): Promise<HouseRulesView>;
  // The privacy ledger and the manual back end.
  /** The most reply tokens of each LLM role, and the defaults. */
  roleBudgets(): Promise<BudgetsView>;
  setRoleBudgets(budgets: RoleBudgets): Promise<BudgetsView>;
  ledger(q: string, limit: number, offset: number): Promise<LedgerEntry[]>;
  /** Token totals from the ledger: in all, per role and per workflow. */
  usage(): Promise<Usage>;
  manualPrompts(): Promise<ManualPrompt[]>;
  answerManual(promptId: string, text: string): Promise<void>;
  dismissManual(promptId: string): Promise<void>;
  // Builds, sessions and runs.
  resolveGate(workflowId: string, versionId: string, request: GateRequest): Promise<WorkflowView>;
  sessions(workflowId: string, versionId: string): Promise<SessionIteration[]>;
  sessionFile(workflowId: string, versionId: string, iteration: number, path: string): Promise<string>;
  runWorkflow(workflowId: string, request: RunInputs): Promise<RunView>;
  listRuns(workflowId: string): Promise<RunView[]>;
  /** Where to get a run's output: a download (browser) or the file's path on this machine (desktop). */
  outputLocation(runId: string, name: string): Promise<OutputLocation>;
  /** Where to get an output of a version's latest test run. */
  testOutputLocation(workflowId: string, versionId: string, name: string): Promise<OutputLocation>;
  /** What an output looks like: an image, a table per sheet, or text (local only). */
  outputPreview(source: OutputSource, name: string): Promise<OutputPreview>;
  // Managed Python environments.
  environments(): Promise<EnvironmentsView>;
  removeEnvironment(id: string): Promise<EnvironmentsView>;
  /** Installs uv into the data folder (the user asked for it). */
  installUv(): Promise<EnvironmentsView>;
  // Agents (`agents/<name>.json`): a 400 names every problem of a request.
  listAgents(): Promise<AgentList>;
  /** One agent by name (seed 003's "fetch agent by id"). */
  getAgent(name: string): Promise<AgentView>;
  createAgent(input: AgentInput): Promise<AgentView>;
  /** Replaces the agent's prompt, back end and model (absent fields are unset). */
  updateAgent(name: string, input: AgentInput): Promise<AgentView>;
  /** Refused (`conflict`) while a flow uses the agent. */
  deleteAgent(name: string): Promise<void>;
  // Flows (their turns and statuses arrive through `onEvent`).
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
  /** Two steps, like `deleteWorkflow`. */
  deleteFlowRun(id: string, confirm?: string): Promise<DeleteReply>;
  stopFlowRun(id: string): Promise<FlowRunView>;
  answerFlowRun(id: string, answer: GateAnswer): Promise<FlowStarted>;
  /** Calls `listener` with every event from the core; returns the unsubscribe. */
  onEvent(listener: (event: Event) => void): () => void;
  /** Calls `listener` with the paths of files dropped on the window by the
   * operating system, where the shell gets paths (never in a browser). */
  onNativeDrop(listener: (paths: string[]) => void): () => void;
}

/** Whose output: a run's, or a version's test run's. */
export type OutputSource = { kind: "run"; runId: string } | { kind: "test"; workflowId: string; versionId: string };

/** Where a run's output file can be had: a download the browser saves
 * (`href` is the API's address, for reading only: it opens nothing without
 * the token, so `save` fetches it with the token), or a path on this machine. */
export type OutputLocation =
  | { kind: "download"; href: string; name: string; save: () => Promise<void> }
  | { kind: "path"; path: string };

/** The file name of a source, for chips and messages. */
export function sourceName(source: FileSource): string {
  if (source.kind === "file") return source.file.name;
  const parts = source.path.split(/[\\/]/);
  return parts[parts.length - 1] || source.path;
}

/** The size of a source in bytes, when known before reading it. */
export function sourceSize(source: FileSource): number | undefined {
  return source.kind === "file" ? source.file.size : undefined;
}

/** Turns anything thrown into an ApiError. */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const { code, message, matches } = e as { code: unknown; message: unknown; matches?: unknown };
    return new ApiError(String(code), String(message), Array.isArray(matches) ? (matches as GuardMatch[]) : []);
  }
  if (e instanceof Error) return new ApiError("network", e.message);
  return new ApiError("unknown", String(e));
}

/** Whether this page runs inside the Tauri window. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}
