// The calls both shells serve, made through one generic `call`: every method
// here is one call of core's list (`../generated/api.ts`, generated from
// crates/maskflow-core/src/api.rs). `HttpTransport` and `TauriTransport`
// supply `call` and the few things that differ by shell (uploads, events,
// where outputs are, session files).
import type { CallName, Calls } from "../generated/api";
import type {
  AgentInput,
  BackupRetention,
  CreateWorkflow,
  FlowImport,
  FlowRunPatch,
  GateAnswer,
  GateRequest,
  HouseRulesInput,
  IsolationInput,
  LlmSettings,
  PythonInput,
  RoleBudgets,
  RunInputs,
  StartFlow,
  StorageInput,
  StorageKind,
  WorkflowPatch,
} from "../generated";
import type { OutputSource } from "./types";

/** A call's arguments, by their names in the list. */
export type Args<N extends CallName> = Calls[N]["args"];
/** A call's result. */
export type Result<N extends CallName> = Calls[N]["result"];

/** Every call of the list as a `Transport` method; subclasses say how a call travels. */
export abstract class CallTransport {
  /** Makes one call of the list. */
  protected abstract call<N extends CallName>(name: N, args: Args<N>): Promise<Result<N>>;

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
  sendMessage(workflow_id: string, content: string, confirmPrivacy = false) {
    return this.call("send_message", { workflow_id, message: { content, confirm_privacy: confirmPrivacy } });
  }
  cancelMessage(workflow_id: string) {
    return this.call("cancel_message", { workflow_id });
  }
  approve(workflow_id: string, version_id: string) {
    return this.call("approve", { workflow_id, version_id });
  }
  edit(workflow_id: string, version_id: string) {
    return this.call("edit", { workflow_id, version_id });
  }
  restoreVersion(workflow_id: string, version_id: string) {
    return this.call("restore_version", { workflow_id, version_id });
  }
  updateWorkflow(workflow_id: string, patch: WorkflowPatch) {
    return this.call("update_workflow", { workflow_id, patch });
  }
  deleteWorkflow(workflow_id: string, confirm?: string) {
    return this.call("delete_workflow", { workflow_id, confirm });
  }
  resolveGate(workflow_id: string, version_id: string, request: GateRequest) {
    return this.call("resolve_gate", { workflow_id, version_id, request });
  }
  sessions(workflow_id: string, version_id: string) {
    return this.call("sessions", { workflow_id, version_id });
  }
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
  // Settings.
  settings() {
    return this.call("settings", {});
  }
  updateSettings(settings: LlmSettings) {
    return this.call("update_settings", { settings });
  }
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
  isolation() {
    return this.call("isolation", {});
  }
  setIsolation(input: IsolationInput) {
    return this.call("set_isolation", { input });
  }
  roleBudgets() {
    return this.call("role_budgets", {});
  }
  setRoleBudgets(budgets: RoleBudgets) {
    return this.call("set_role_budgets", { budgets });
  }
  storage() {
    return this.call("storage", {});
  }
  setStorage(input: StorageInput) {
    return this.call("set_storage", { input });
  }
  clearStorage(kind: StorageKind) {
    return this.call("clear_storage", { kind });
  }
  houseRules() {
    return this.call("house_rules", {});
  }
  setHouseRules(input: HouseRulesInput) {
    return this.call("set_house_rules", { input });
  }
  environments() {
    return this.call("environments", {});
  }
  removeEnvironment(id: string) {
    return this.call("remove_environment", { id });
  }
  installUv() {
    return this.call("install_uv", {});
  }
  // The privacy ledger and the manual back end.
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
  restoreBackup(backup_id: string) {
    return this.call("restore_backup", { backup_id });
  }
  deleteBackup(backup_id: string, confirm?: string) {
    return this.call("delete_backup", { backup_id, confirm });
  }
  // Agents.
  listAgents() {
    return this.call("agents_list", {});
  }
  getAgent(name: string) {
    return this.call("agents_get", { name });
  }
  createAgent(input: AgentInput) {
    return this.call("agents_create", { input });
  }
  updateAgent(name: string, input: AgentInput) {
    return this.call("agents_update", { name, input });
  }
  deleteAgent(name: string) {
    return this.call("agents_delete", { name });
  }
  // Flows.
  listFlows() {
    return this.call("flows_list", {});
  }
  /** A flow's definition (`steps` list form or `nodes` graph form). */
  async flowDefinition(name: string) {
    return ((await this.call("flows_definition", { name })) ?? {}) as Record<string, unknown>;
  }
  flowMermaid(name: string) {
    return this.call("flows_mermaid", { name });
  }
  exportFlow(name: string) {
    return this.call("flows_export", { name });
  }
  importFlow(request: FlowImport) {
    return this.call("flows_import", { request });
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
  deleteFlowRun(id: string, confirm?: string) {
    return this.call("flow_run_delete", { id, confirm });
  }
  stopFlowRun(id: string) {
    return this.call("flow_run_stop", { id });
  }
  answerFlowRun(id: string, answer: GateAnswer) {
    return this.call("flow_run_answer", { id, answer });
  }
}
