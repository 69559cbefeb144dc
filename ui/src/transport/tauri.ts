// The Tauri transport, for the desktop window: one IPC command per service
// call (see src-tauri/src/commands.rs) and the `maskflow://event` event.
// Files dropped on the window arrive as paths and are read where they lie.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import type {
  ConnectionTest,
  CreateWorkflow,
  CreatedVersion,
  Detected,
  Event,
  GateRequest,
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
import { toApiError, type FileSource, type OnProgress, type OutputLocation, type OutputSource, type Transport } from "./index";

/** The Tauri event that carries core events (src-tauri's `EVENT`). */
export const EVENT = "maskflow://event";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toApiError(e);
  }
}

export class TauriTransport implements Transport {
  listWorkflows() {
    return call<WorkflowSummary[]>("list_workflows");
  }
  getWorkflow(workflow_id: string) {
    return call<WorkflowView>("get_workflow", { workflow_id });
  }
  getVersion(workflow_id: string, version_id: string) {
    return call<VersionView>("get_version", { workflow_id, version_id });
  }
  createWorkflow(request: CreateWorkflow) {
    return call<CreatedVersion>("create_workflow", { request });
  }
  sendMessage(workflow_id: string, content: string, confirmPrivacy = false) {
    return call<MessageReply>("send_message", { workflow_id, content, confirm_privacy: confirmPrivacy });
  }
  cancelMessage(workflow_id: string) {
    return call<CancelReply>("cancel_message", { workflow_id });
  }
  settings() {
    return call<SettingsView>("settings");
  }
  updateSettings(settings: LlmSettings) {
    return call<SettingsView>("update_settings", { settings });
  }
  async setKey(id: string, key: string) {
    await call<null>("set_key", { id, key });
  }
  async deleteKey(id: string) {
    await call<null>("delete_key", { id });
  }
  testProvider(id: string) {
    return call<ConnectionTest>("test_provider", { id });
  }
  detectProviders() {
    return call<Detected[]>("detect_providers");
  }
  python() {
    return call<PythonView>("python");
  }
  setPython(input: PythonInput) {
    return call<PythonView>("set_python", { input });
  }
  isolation() {
    return call<IsolationView>("isolation");
  }
  setIsolation(input: IsolationInput) {
    return call<IsolationView>("set_isolation", { input });
  }
  storage() {
    return call<StorageView>("storage");
  }
  setStorage(input: StorageInput) {
    return call<StorageView>("set_storage", { input });
  }
  clearStorage(kind: StorageKind) {
    return call<Cleared>("clear_storage", { kind });
  }
  roleBudgets() {
    return call<BudgetsView>("role_budgets");
  }
  setRoleBudgets(budgets: RoleBudgets) {
    return call<BudgetsView>("set_role_budgets", { budgets });
  }
  ledger(q: string, limit: number, offset: number) {
    return call<LedgerEntry[]>("ledger", { q: q || null, limit, offset });
  }
  usage() {
    return call<Usage>("usage");
  }
  manualPrompts() {
    return call<ManualPrompt[]>("manual_prompts");
  }
  async answerManual(id: string, text: string) {
    await call<null>("answer_manual", { id, text });
  }
  async dismissManual(id: string) {
    await call<null>("dismiss_manual", { id });
  }
  resolveGate(workflow_id: string, version_id: string, request: GateRequest) {
    return call<WorkflowView>("resolve_gate", { workflow_id, version_id, request });
  }
  sessions(workflow_id: string, version_id: string) {
    return call<SessionIteration[]>("sessions", { workflow_id, version_id });
  }
  sessionFile(workflow_id: string, version_id: string, iteration: number, path: string) {
    return call<string>("session_file", { workflow_id, version_id, iteration, path });
  }
  runWorkflow(workflow_id: string, request: RunInputs) {
    return call<RunView>("run_workflow", { workflow_id, request });
  }
  listRuns(workflow_id: string) {
    return call<RunView[]>("list_runs", { workflow_id });
  }
  async testOutputLocation(workflow_id: string, version_id: string, name: string): Promise<OutputLocation> {
    return { kind: "path", path: await call<string>("test_output", { workflow_id, version_id, name }) };
  }
  outputPreview(source: OutputSource, name: string) {
    return source.kind === "run"
      ? call<OutputPreview>("run_output_preview", { run_id: source.runId, name })
      : call<OutputPreview>("test_output_preview", { workflow_id: source.workflowId, version_id: source.versionId, name });
  }
  environments() {
    return call<EnvironmentsView>("environments");
  }
  removeEnvironment(id: string) {
    return call<EnvironmentsView>("remove_environment", { id });
  }
  installUv() {
    return call<EnvironmentsView>("install_uv");
  }
  async outputLocation(run_id: string, name: string): Promise<OutputLocation> {
    return { kind: "path", path: await call<string>("run_output", { run_id, name }) };
  }
  approve(workflow_id: string, version_id: string) {
    return call<WorkflowView>("approve", { workflow_id, version_id });
  }
  edit(workflow_id: string, version_id: string) {
    return call<CreatedVersion>("edit", { workflow_id, version_id });
  }
  updateWorkflow(workflow_id: string, patch: WorkflowPatch) {
    return call<WorkflowView>("update_workflow", { workflow_id, patch });
  }
  deleteWorkflow(workflow_id: string, confirm?: string) {
    return call<DeleteReply>("delete_workflow", { workflow_id, confirm: confirm ?? null });
  }
  restoreVersion(workflow_id: string, version_id: string) {
    return call<CreatedVersion>("restore_version", { workflow_id, version_id });
  }
  backups() {
    return call<BackupsView>("list_backups");
  }
  createBackup() {
    return call<Backup>("create_backup");
  }
  setBackupRetention(retention: BackupRetention) {
    return call<BackupsView>("set_backup_retention", { retention });
  }
  restoreBackup(backup_id: string) {
    return call<RestoreReply>("restore_backup", { backup_id });
  }
  deleteBackup(backup_id: string, confirm?: string) {
    return call<DeleteReply>("delete_backup", { backup_id, confirm: confirm ?? null });
  }

  async extract(source: FileSource, onProgress?: OnProgress): Promise<UploadedFile> {
    if (source.kind === "path") return call<UploadedFile>("extract_path", { path: source.path });
    const bytes = new Uint8Array(await source.file.arrayBuffer());
    onProgress?.(1);
    try {
      return await invoke<UploadedFile>("upload_file", bytes, {
        headers: { "x-filename": encodeURIComponent(source.file.name) },
      });
    } catch (e) {
      throw toApiError(e);
    }
  }

  onEvent(listener: (e: Event) => void): () => void {
    const stop = listen<Event>(EVENT, (e) => listener(e.payload));
    return () => {
      void stop.then((f) => f());
    };
  }

  onNativeDrop(listener: (paths: string[]) => void): () => void {
    const stop = listen<{ paths: string[] }>("tauri://drag-drop", (e) => {
      if (e.payload.paths.length) listener(e.payload.paths);
    });
    return () => {
      void stop.then((f) => f());
    };
  }
}
