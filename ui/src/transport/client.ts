// The calls both shells serve, made through one generic `call` whose names,
// arguments and results come from core's list (`../generated/api.ts`,
// generated from crates/maskflow-core/src/api.rs); the methods here only
// give calls friendlier names and arguments, and their types are inferred
// from the list, never restated. `Transport` is every public member of
// `CallTransport` plus the few things that differ by shell (uploads,
// events, where outputs are, session files), which `HttpTransport` and
// `TauriTransport` supply with `call`.
import type { CallName, Calls } from "../generated/api";
import type {
  AgentInput,
  BackupRetention,
  BuildOptions,
  CreateWorkflow,
  EmbeddedInput,
  FlowImport,
  FlowSave,
  FlowRunPatch,
  GateAnswer,
  GateRequest,
  HouseRulesInput,
  IsolationInput,
  LlmSettings,
  PythonInput,
  RoleBudgets,
  RunInputs,
  RunLimitsInput,
  ScheduleInput,
  StartFlow,
  StorageInput,
  StorageKind,
  WorkflowPatch,
} from "../generated";
import type { Event, UploadedFile } from "../generated";
import type { AddModelFile, PullModel, StartChoice } from "../generated";
import type { FileSource, OnProgress, OutputLocation } from "./types";

/** A call's arguments, by their names in the list. */
export type Args<N extends CallName> = Calls[N]["args"];
/** A call's result. */
export type Result<N extends CallName> = Calls[N]["result"];

/** Whose output: a run's, or a version's test run's. */
export type OutputSource = { kind: "run"; runId: string } | { kind: "test"; workflowId: string; versionId: string };

/** Every call of the list as a `Transport` method; subclasses say how a call travels. */
export abstract class CallTransport {
  /** Makes one call of the list by its name, with its arguments by their
   * names in the list: a call added to the list is at hand here with its
   * types, before it has a method of its own below. */
  abstract call<N extends CallName>(name: N, args: Args<N>): Promise<Result<N>>;

  // Workflows, versions and the conversation.
  listWorkflows() {
    return this.call("list_workflows", {});
  }
  getWorkflow(workflow_id: string) {
    return this.call("get_workflow", { workflow_id });
  }
  getVersion(workflow_id: string, version_id: string) {
    return this.call("get_version", { workflow_id, version_id });
  }
  createWorkflow(request: CreateWorkflow) {
    return this.call("create_workflow", { request });
  }
  /** `confirmPrivacy`: the user confirmed what the privacy guard found. */
  sendMessage(workflow_id: string, content: string, confirmPrivacy = false) {
    return this.call("send_message", {
      workflow_id,
      message: { content, confirm_privacy: confirmPrivacy, go_ahead: false },
    });
  }
  /** What a build needs on this machine (Python, uv, isolation, disk), each with its fix. */
  preflight() {
    return this.call("preflight", {});
  }
  /** Retries a build that failed on its environment, with the script the builder wrote. */
  retryBuild(workflow_id: string, version_id: string) {
    return this.call("retry_build", { workflow_id, version_id });
  }
  /** Stops the LLM reply in flight on a workflow (its send then fails as cancelled). */
  cancelMessage(workflow_id: string) {
    return this.call("cancel_message", { workflow_id });
  }
  approve(workflow_id: string, version_id: string) {
    return this.call("approve", { workflow_id, version_id });
  }
  edit(workflow_id: string, version_id: string) {
    return this.call("edit", { workflow_id, version_id });
  }
  /** Restores an earlier version as a new version, tested before approval. */
  restoreVersion(workflow_id: string, version_id: string) {
    return this.call("restore_version", { workflow_id, version_id });
  }
  /** Renames, re-describes or relabels a workflow (absent fields stay; "" label removes it). */
  updateWorkflow(workflow_id: string, patch: WorkflowPatch) {
    return this.call("update_workflow", { workflow_id, patch });
  }
  /** Two steps: without `confirm`, what would be deleted and a token
   * (`deleted: false`); with the token, the delete. */
  deleteWorkflow(workflow_id: string, confirm?: string) {
    return this.call("delete_workflow", { workflow_id, confirm });
  }
  resolveGate(workflow_id: string, version_id: string, request: GateRequest) {
    return this.call("resolve_gate", { workflow_id, version_id, request });
  }
  /** A workflow's build choices: plan first, AI review, AI approval of the gates. */
  buildOptions(workflow_id: string) {
    return this.call("get_build_options", { workflow_id });
  }
  setBuildOptions(workflow_id: string, options: BuildOptions) {
    return this.call("set_build_options", { workflow_id, options });
  }
  sessions(workflow_id: string, version_id: string) {
    return this.call("sessions", { workflow_id, version_id });
  }
  /** What an output looks like: an image, a table per sheet, or text (local only). */
  outputPreview(source: OutputSource, name: string) {
    return source.kind === "run"
      ? this.call("run_output_preview", { run_id: source.runId, name })
      : this.call("test_output_preview", { workflow_id: source.workflowId, version_id: source.versionId, name });
  }
  /** Builder conversations and flow runs, most recent first; `flowName` is a flow or `__none__`. */
  listConversations(flowName?: string) {
    return this.call("list_conversations", { flowName });
  }
  // Runs.
  runWorkflow(workflow_id: string, request: RunInputs) {
    return this.call("run_workflow", { workflow_id, request });
  }
  listRuns(workflow_id: string) {
    return this.call("list_runs", { workflow_id });
  }
  // Schedules: cron expressions and watched folders.
  listSchedules() {
    return this.call("list_schedules", {});
  }
  createSchedule(input: ScheduleInput) {
    return this.call("create_schedule", { input });
  }
  pauseSchedule(id: string) {
    return this.call("pause_schedule", { id });
  }
  resumeSchedule(id: string) {
    return this.call("resume_schedule", { id });
  }
  /** Removes a schedule (its runs stay in the history); answers the rest. */
  deleteSchedule(id: string) {
    return this.call("delete_schedule", { id });
  }
  // Settings.
  settings() {
    return this.call("settings", {});
  }
  updateSettings(settings: LlmSettings) {
    return this.call("update_settings", { settings });
  }
  /** Stores a key in the system keyring; it is never read back. */
  setKey(id: string, key: string) {
    return this.call("set_key", { id, input: { key } });
  }
  deleteKey(id: string) {
    return this.call("delete_key", { id });
  }
  testProvider(id: string) {
    return this.call("test_provider", { id });
  }
  detectProviders() {
    return this.call("detect_providers", {});
  }
  python() {
    return this.call("python", {});
  }
  setPython(input: PythonInput) {
    return this.call("set_python", { input });
  }
  /** The per-machine "run scripts without isolation" switch. */
  isolation() {
    return this.call("isolation", {});
  }
  setIsolation(input: IsolationInput) {
    return this.call("set_isolation", { input });
  }
  /** The memory and time a script run gets, and this computer's defaults. */
  runLimits() {
    return this.call("run_limits", {});
  }
  setRunLimits(input: RunLimitsInput) {
    return this.call("set_run_limits", { input });
  }
  /** The embedded model's idle time, and what this machine runs it with. */
  embedded() {
    return this.call("embedded", {});
  }
  setEmbedded(input: EmbeddedInput) {
    return this.call("set_embedded", { input });
  }
  /** The most reply tokens of each LLM role, and the defaults. */
  roleBudgets() {
    return this.call("role_budgets", {});
  }
  setRoleBudgets(budgets: RoleBudgets) {
    return this.call("set_role_budgets", { budgets });
  }
  /** What the data folder keeps, by kind, and the upload expiry. */
  storage() {
    return this.call("storage", {});
  }
  setStorage(input: StorageInput) {
    return this.call("set_storage", { input });
  }
  /** Clears one kind safely (what it keeps is in the storage view). */
  clearStorage(kind: StorageKind) {
    return this.call("clear_storage", { kind });
  }
  /** The house rules: the Settings text and the files of the data folder's house-rules/. */
  houseRules() {
    return this.call("house_rules", {});
  }
  /** Saves the house rules' Settings text (refused: a missing include or a cycle). */
  setHouseRules(input: HouseRulesInput) {
    return this.call("set_house_rules", { input });
  }
  environments() {
    return this.call("environments", {});
  }
  removeEnvironment(id: string) {
    return this.call("remove_environment", { id });
  }
  /** Installs uv into the data folder (the user asked for it). */
  installUv() {
    return this.call("install_uv", {});
  }
  // The privacy ledger and the manual back end.
  /** Token totals from the ledger: in all, per role and per workflow. */
  usage() {
    return this.call("usage", {});
  }
  ledger(q: string, limit: number, offset: number) {
    return this.call("ledger", { q: q || undefined, limit, offset });
  }
  manualPrompts() {
    return this.call("manual_prompts", {});
  }
  answerManual(id: string, text: string) {
    return this.call("answer_manual", { id, answer: { text } });
  }
  dismissManual(id: string) {
    return this.call("dismiss_manual", { id });
  }
  /** Everything waiting for a person: the sidebar's badge. */
  waitingItems() {
    return this.call("waiting_items", {});
  }
  // Database backups.
  backups() {
    return this.call("list_backups", {});
  }
  createBackup() {
    return this.call("create_backup", {});
  }
  setBackupRetention(retention: BackupRetention) {
    return this.call("set_backup_retention", { retention });
  }
  /** Restores a backup over the database (the current one is backed up first). */
  restoreBackup(backup_id: string) {
    return this.call("restore_backup", { backup_id });
  }
  /** Two steps, like `deleteWorkflow`. */
  deleteBackup(backup_id: string, confirm?: string) {
    return this.call("delete_backup", { backup_id, confirm });
  }
  // Agents (`agents/<name>.json`): a 400 names every problem of a request.
  listAgents() {
    return this.call("agents_list", {});
  }
  /** One agent by name (seed 003's "fetch agent by id"). */
  getAgent(name: string) {
    return this.call("agents_get", { name });
  }
  createAgent(input: AgentInput) {
    return this.call("agents_create", { input });
  }
  /** Replaces the agent's prompt, back end and model (absent fields are unset). */
  updateAgent(name: string, input: AgentInput) {
    return this.call("agents_update", { name, input });
  }
  /** Two steps, like `deleteWorkflow`; refused (`conflict`) while a flow uses the agent. */
  deleteAgent(name: string, confirm?: string) {
    return this.call("agents_delete", { name, confirm });
  }
  // Flows (their turns and statuses arrive through `onEvent`).
  listFlows() {
    return this.call("flows_list", {});
  }
  /** A flow's definition (`steps` list form or `nodes` graph form). */
  async flowDefinition(name: string) {
    return ((await this.call("flows_definition", { name })) ?? {}) as Record<string, unknown>;
  }
  /** One step of a flow by its id (seed 003's stage id). */
  flowStep(name: string, stage_id: string) {
    return this.call("flows_step", { name, stage_id });
  }
  flowMermaid(name: string) {
    return this.call("flows_mermaid", { name });
  }
  /** A flow with its agents: Maskflow's bundle, or seed 003's own shape. */
  exportFlow(name: string, format?: "maskflow" | "seed003") {
    return this.call("flows_export", format ? { name, format } : { name });
  }
  importFlow(request: FlowImport) {
    return this.call("flows_import", { request });
  }
  // The flow editor: a flow's file with its revision, the loader's checks, saves.
  flowSource(name: string) {
    return this.call("flows_source", { name });
  }
  validateFlow(text: string) {
    return this.call("flows_validate", { draft: { text } });
  }
  /** Refused (`conflict`) when the file changed on disk since `save.baseRevision`. */
  saveFlow(name: string, save: FlowSave) {
    return this.call("flows_save", { name, save });
  }
  flowEditorOptions() {
    return this.call("flows_editor_options", {});
  }
  runFlow(name: string, request: StartFlow) {
    return this.call("flows_run", { name, request });
  }
  flowRuns(name: string) {
    return this.call("flows_runs", { name });
  }
  getFlowRun(id: string) {
    return this.call("flow_run_get", { id });
  }
  patchFlowRun(id: string, patch: FlowRunPatch) {
    return this.call("flow_run_patch", { id, patch });
  }
  /** Two steps, like `deleteWorkflow`. */
  deleteFlowRun(id: string, confirm?: string) {
    return this.call("flow_run_delete", { id, confirm });
  }
  stopFlowRun(id: string) {
    return this.call("flow_run_stop", { id });
  }
  answerFlowRun(id: string, answer: GateAnswer) {
    return this.call("flow_run_answer", { id, answer });
  }
  // Models of the embedded back end (issue 32).
  models() {
    return this.call("models_list", {});
  }
  /** Starts a download; its progress comes as `model_progress` events. */
  pullModel(request: PullModel) {
    return this.call("models_pull", { request });
  }
  cancelModelPull(name: string) {
    return this.call("models_cancel", { name });
  }
  addModelFile(input: AddModelFile) {
    return this.call("models_add_file", { input });
  }
  useModel(name: string) {
    return this.call("models_use", { name });
  }
  removeModel(name: string) {
    return this.call("models_remove", { name });
  }
  chooseFirstStart(choice: StartChoice) {
    return this.call("models_first_start", { input: { choice } });
  }

  // Outside clients (`maskflow mcp`): the files they asked to see.
  clientRequests() {
    return this.call("client_requests", {});
  }
  approveClientRequest(id: string) {
    return this.call("approve_client_request", { id });
  }
  declineClientRequest(id: string) {
    return this.call("decline_client_request", { id });
  }
}

/** The calls of the list: `call` and every method of `CallTransport`. */
export type ListCalls = { [K in keyof CallTransport]: CallTransport[K] };

/** Everything the UI asks of Maskflow: the list's calls, and what each shell does its own way. */
export interface Transport extends ListCalls {
  /** Reads one file locally and returns its masked extract. */
  extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile>;
  sessionFile(workflowId: string, versionId: string, iteration: number, path: string): Promise<string>;
  /** Where to get a run's output: a download (browser) or the file's path on this machine (desktop). */
  outputLocation(runId: string, name: string): Promise<OutputLocation>;
  /** Where to get an output of a version's latest test run. */
  testOutputLocation(workflowId: string, versionId: string, name: string): Promise<OutputLocation>;
  /** Calls `listener` with every event from the core; returns the unsubscribe. */
  onEvent(listener: (event: Event) => void): () => void;
  /** Calls `listener` each time the event stream (re)connects: events sent
   * while it was not connected were missed, so what they change is read again. */
  onConnected(listener: () => void): () => void;
  /** Calls `listener` with the paths of files dropped on the window by the
   * operating system, where the shell gets paths (never in a browser). */
  onNativeDrop(listener: (paths: string[]) => void): () => void;
}
