// Generated from the list of calls in crates/maskflow-core/src/api.rs by
// crates/maskflow-core/src/service/api_client.rs; do not edit.
import type { AddModelFile, AgentInput, AgentList, AgentView, Backup, BackupRetention, BackupsView, BudgetsView, BuildOptions, CancelReply, Cleared, ClientRequestView, Confirm, ConnectionTest, ConversationList, ConversationQuery, CreateWorkflow, CreatedVersion, DeleteReply, Detected, EmbeddedInput, EmbeddedView, EnvironmentsView, ExportQuery, FirstStartInput, FlowBundle, FlowCheck, FlowDraft, FlowEditorOptions, FlowImport, FlowList, FlowRunList, FlowRunPatch, FlowRunView, FlowSave, FlowSaved, FlowSource, FlowStarted, FlowSummary, GateAnswer, GateRequest, HouseRulesInput, HouseRulesView, IsolationInput, IsolationView, KeyInput, LedgerEntry, LedgerQuery, LlmSettings, ManualAnswer, ManualPrompt, MessageReply, ModelsView, OutputPreview, PreflightView, PullModel, PythonInput, PythonView, RestoreReply, RoleBudgets, RunInputs, RunLimitsInput, RunLimitsView, RunView, ScheduleInput, ScheduleView, SendMessage, SessionIteration, SettingsView, StartFlow, StorageInput, StorageKind, StorageView, Usage, VersionView, WaitingList, WorkflowPatch, WorkflowSummary, WorkflowView } from "./index";

/** How a call reaches the HTTP API; the Tauri command has the call's name
 * and takes `args` as they are. */
export interface CallSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  /** `[name in the path, argument]`, in order. */
  pathParams: readonly (readonly [string, string])[];
  /** Whether the arguments that are neither in the path nor the body go in the query string. */
  query: boolean;
  /** The argument sent as the JSON body. */
  body: string | null;
  /** `json`, `empty` (no body), `text` or `delete` (two steps: 409 until confirmed). */
  reply: "json" | "empty" | "text" | "delete";
}

/** Every call both shells serve. */
export const calls = {
  list_workflows: { method: "GET", path: "/api/workflows", pathParams: [], query: false, body: null, reply: "json" },
  create_workflow: { method: "POST", path: "/api/workflows", pathParams: [], query: false, body: "request", reply: "json" },
  get_workflow: { method: "GET", path: "/api/workflows/{id}", pathParams: [["id", "workflow_id"]], query: false, body: null, reply: "json" },
  update_workflow: { method: "PATCH", path: "/api/workflows/{id}", pathParams: [["id", "workflow_id"]], query: false, body: "patch", reply: "json" },
  delete_workflow: { method: "DELETE", path: "/api/workflows/{id}", pathParams: [["id", "workflow_id"]], query: true, body: null, reply: "delete" },
  send_message: { method: "POST", path: "/api/workflows/{id}/messages", pathParams: [["id", "workflow_id"]], query: false, body: "message", reply: "json" },
  preflight: { method: "GET", path: "/api/preflight", pathParams: [], query: false, body: null, reply: "json" },
  retry_build: { method: "POST", path: "/api/workflows/{id}/versions/{version_id}/retry", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  cancel_message: { method: "POST", path: "/api/workflows/{id}/cancel", pathParams: [["id", "workflow_id"]], query: false, body: null, reply: "json" },
  approve: { method: "POST", path: "/api/workflows/{id}/versions/{version_id}/approve", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  edit: { method: "POST", path: "/api/workflows/{id}/versions/{version_id}/edit", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  restore_version: { method: "POST", path: "/api/workflows/{id}/versions/{version_id}/restore", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  get_version: { method: "GET", path: "/api/workflows/{id}/versions/{version_id}", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  resolve_gate: { method: "POST", path: "/api/workflows/{id}/versions/{version_id}/gate", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: "request", reply: "json" },
  sessions: { method: "GET", path: "/api/workflows/{id}/versions/{version_id}/sessions", pathParams: [["id", "workflow_id"], ["version_id", "version_id"]], query: false, body: null, reply: "json" },
  get_build_options: { method: "GET", path: "/api/workflows/{id}/build-options", pathParams: [["id", "workflow_id"]], query: false, body: null, reply: "json" },
  set_build_options: { method: "PUT", path: "/api/workflows/{id}/build-options", pathParams: [["id", "workflow_id"]], query: false, body: "options", reply: "json" },
  test_output_preview: { method: "GET", path: "/api/workflows/{id}/versions/{version_id}/previews/{name}", pathParams: [["id", "workflow_id"], ["version_id", "version_id"], ["name", "name"]], query: false, body: null, reply: "json" },
  list_conversations: { method: "GET", path: "/api/conversations", pathParams: [], query: true, body: null, reply: "json" },
  run_workflow: { method: "POST", path: "/api/workflows/{id}/runs", pathParams: [["id", "workflow_id"]], query: false, body: "request", reply: "json" },
  list_runs: { method: "GET", path: "/api/workflows/{id}/runs", pathParams: [["id", "workflow_id"]], query: false, body: null, reply: "json" },
  run_output_preview: { method: "GET", path: "/api/runs/{run_id}/previews/{name}", pathParams: [["run_id", "run_id"], ["name", "name"]], query: false, body: null, reply: "json" },
  settings: { method: "GET", path: "/api/settings", pathParams: [], query: false, body: null, reply: "json" },
  update_settings: { method: "PUT", path: "/api/settings", pathParams: [], query: false, body: "settings", reply: "json" },
  set_key: { method: "PUT", path: "/api/providers/{id}/key", pathParams: [["id", "id"]], query: false, body: "input", reply: "empty" },
  delete_key: { method: "DELETE", path: "/api/providers/{id}/key", pathParams: [["id", "id"]], query: false, body: null, reply: "empty" },
  test_provider: { method: "POST", path: "/api/providers/{id}/test", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  detect_providers: { method: "GET", path: "/api/providers/detected", pathParams: [], query: false, body: null, reply: "json" },
  python: { method: "GET", path: "/api/settings/python", pathParams: [], query: false, body: null, reply: "json" },
  set_python: { method: "PUT", path: "/api/settings/python", pathParams: [], query: false, body: "input", reply: "json" },
  isolation: { method: "GET", path: "/api/settings/isolation", pathParams: [], query: false, body: null, reply: "json" },
  set_isolation: { method: "PUT", path: "/api/settings/isolation", pathParams: [], query: false, body: "input", reply: "json" },
  run_limits: { method: "GET", path: "/api/settings/run-limits", pathParams: [], query: false, body: null, reply: "json" },
  set_run_limits: { method: "PUT", path: "/api/settings/run-limits", pathParams: [], query: false, body: "input", reply: "json" },
  embedded: { method: "GET", path: "/api/settings/embedded", pathParams: [], query: false, body: null, reply: "json" },
  set_embedded: { method: "PUT", path: "/api/settings/embedded", pathParams: [], query: false, body: "input", reply: "json" },
  role_budgets: { method: "GET", path: "/api/settings/budgets", pathParams: [], query: false, body: null, reply: "json" },
  set_role_budgets: { method: "PUT", path: "/api/settings/budgets", pathParams: [], query: false, body: "budgets", reply: "json" },
  house_rules: { method: "GET", path: "/api/settings/house-rules", pathParams: [], query: false, body: null, reply: "json" },
  set_house_rules: { method: "PUT", path: "/api/settings/house-rules", pathParams: [], query: false, body: "input", reply: "json" },
  storage: { method: "GET", path: "/api/settings/storage", pathParams: [], query: false, body: null, reply: "json" },
  set_storage: { method: "PUT", path: "/api/settings/storage", pathParams: [], query: false, body: "input", reply: "json" },
  clear_storage: { method: "POST", path: "/api/settings/storage/{kind}/clear", pathParams: [["kind", "kind"]], query: false, body: null, reply: "json" },
  environments: { method: "GET", path: "/api/environments", pathParams: [], query: false, body: null, reply: "json" },
  remove_environment: { method: "DELETE", path: "/api/environments/{id}", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  install_uv: { method: "POST", path: "/api/environments/uv", pathParams: [], query: false, body: null, reply: "json" },
  usage: { method: "GET", path: "/api/ledger/usage", pathParams: [], query: false, body: null, reply: "json" },
  ledger: { method: "GET", path: "/api/ledger", pathParams: [], query: true, body: null, reply: "json" },
  manual_prompts: { method: "GET", path: "/api/manual", pathParams: [], query: false, body: null, reply: "json" },
  answer_manual: { method: "POST", path: "/api/manual/{id}/answer", pathParams: [["id", "id"]], query: false, body: "answer", reply: "empty" },
  dismiss_manual: { method: "DELETE", path: "/api/manual/{id}", pathParams: [["id", "id"]], query: false, body: null, reply: "empty" },
  waiting_items: { method: "GET", path: "/api/waiting", pathParams: [], query: false, body: null, reply: "json" },
  list_backups: { method: "GET", path: "/api/backups", pathParams: [], query: false, body: null, reply: "json" },
  create_backup: { method: "POST", path: "/api/backups", pathParams: [], query: false, body: null, reply: "json" },
  set_backup_retention: { method: "PUT", path: "/api/backups/retention", pathParams: [], query: false, body: "retention", reply: "json" },
  restore_backup: { method: "POST", path: "/api/backups/{id}/restore", pathParams: [["id", "backup_id"]], query: false, body: null, reply: "json" },
  delete_backup: { method: "DELETE", path: "/api/backups/{id}", pathParams: [["id", "backup_id"]], query: true, body: null, reply: "delete" },
  agents_list: { method: "GET", path: "/api/agents", pathParams: [], query: false, body: null, reply: "json" },
  agents_get: { method: "GET", path: "/api/agents/{name}", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  agents_create: { method: "POST", path: "/api/agents", pathParams: [], query: false, body: "input", reply: "json" },
  agents_update: { method: "PUT", path: "/api/agents/{name}", pathParams: [["name", "name"]], query: false, body: "input", reply: "json" },
  agents_delete: { method: "DELETE", path: "/api/agents/{name}", pathParams: [["name", "name"]], query: true, body: null, reply: "delete" },
  flows_list: { method: "GET", path: "/api/flows", pathParams: [], query: false, body: null, reply: "json" },
  flows_definition: { method: "GET", path: "/api/flows/{name}", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  flows_step: { method: "GET", path: "/api/flows/{name}/steps/{stageId}", pathParams: [["name", "name"], ["stageId", "stage_id"]], query: false, body: null, reply: "json" },
  flows_run: { method: "POST", path: "/api/flows/{name}/run", pathParams: [["name", "name"]], query: false, body: "request", reply: "json" },
  flows_runs: { method: "GET", path: "/api/flows/{name}/runs", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  flows_mermaid: { method: "GET", path: "/api/flows/{name}/mermaid", pathParams: [["name", "name"]], query: false, body: null, reply: "text" },
  flows_export: { method: "GET", path: "/api/flows/{name}/export", pathParams: [["name", "name"]], query: true, body: null, reply: "json" },
  flows_import: { method: "POST", path: "/api/flows/import", pathParams: [], query: false, body: "request", reply: "json" },
  flow_run_get: { method: "GET", path: "/api/flow-runs/{conversationId}", pathParams: [["conversationId", "id"]], query: false, body: null, reply: "json" },
  flow_run_patch: { method: "PATCH", path: "/api/flow-runs/{conversationId}", pathParams: [["conversationId", "id"]], query: false, body: "patch", reply: "json" },
  flow_run_delete: { method: "DELETE", path: "/api/flow-runs/{conversationId}", pathParams: [["conversationId", "id"]], query: true, body: null, reply: "delete" },
  flow_run_stop: { method: "POST", path: "/api/flow-runs/{conversationId}/stop", pathParams: [["conversationId", "id"]], query: false, body: null, reply: "json" },
  flow_run_answer: { method: "POST", path: "/api/flow-runs/{conversationId}/gate", pathParams: [["conversationId", "id"]], query: false, body: "answer", reply: "json" },
  models_list: { method: "GET", path: "/api/models", pathParams: [], query: false, body: null, reply: "json" },
  models_pull: { method: "POST", path: "/api/models/pull", pathParams: [], query: false, body: "request", reply: "json" },
  models_add_file: { method: "POST", path: "/api/models/file", pathParams: [], query: false, body: "input", reply: "json" },
  models_first_start: { method: "POST", path: "/api/models/first-start", pathParams: [], query: false, body: "input", reply: "json" },
  models_cancel: { method: "POST", path: "/api/models/{name}/cancel", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  models_use: { method: "POST", path: "/api/models/{name}/use", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  models_remove: { method: "DELETE", path: "/api/models/{name}", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  flows_source: { method: "GET", path: "/api/flows/{name}/source", pathParams: [["name", "name"]], query: false, body: null, reply: "json" },
  flows_validate: { method: "POST", path: "/api/flow-editor/validate", pathParams: [], query: false, body: "draft", reply: "json" },
  flows_save: { method: "PUT", path: "/api/flows/{name}", pathParams: [["name", "name"]], query: false, body: "save", reply: "json" },
  flows_editor_options: { method: "GET", path: "/api/flow-editor/options", pathParams: [], query: false, body: null, reply: "json" },
  client_requests: { method: "GET", path: "/api/client-requests", pathParams: [], query: false, body: null, reply: "json" },
  approve_client_request: { method: "POST", path: "/api/client-requests/{id}/approve", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  decline_client_request: { method: "POST", path: "/api/client-requests/{id}/decline", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  list_schedules: { method: "GET", path: "/api/schedules", pathParams: [], query: false, body: null, reply: "json" },
  create_schedule: { method: "POST", path: "/api/schedules", pathParams: [], query: false, body: "input", reply: "json" },
  pause_schedule: { method: "POST", path: "/api/schedules/{id}/pause", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  resume_schedule: { method: "POST", path: "/api/schedules/{id}/resume", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
  delete_schedule: { method: "DELETE", path: "/api/schedules/{id}", pathParams: [["id", "id"]], query: false, body: null, reply: "json" },
} as const satisfies Record<string, CallSpec>;

/** Each call's arguments (by their Tauri names) and result. */
export interface Calls {
  /** Every workflow, newest first. */
  list_workflows: { args: {}; result: Array<WorkflowSummary> };
  /** Creates a workflow and its first version from approved extracts. */
  create_workflow: { args: { request: CreateWorkflow }; result: CreatedVersion };
  /** A workflow with its current version, versions and conversation (poll this while building). */
  get_workflow: { args: { workflow_id: string }; result: WorkflowView };
  /** Renames, re-describes or relabels a workflow. */
  update_workflow: { args: { workflow_id: string; patch: WorkflowPatch }; result: WorkflowView };
  /** Deletes a workflow with its versions, conversation and runs, in two */
  /** steps: without `confirm` nothing is deleted and the answer (HTTP 409 */
  /** `confirmation_required`) holds `would_delete`, `confirm_token` and */
  /** `expires_at`; with the token it is deleted. Ledger entries stay. */
  delete_workflow: { args: { workflow_id: string } & Confirm; result: DeleteReply };
  /** Sends a message; routed by the draft's status (validator, clarifier, */
  /** build). A `privacy_blocked` answer lists the `matches`; resend with */
  /** `confirm_privacy: true` to send the user's own text anyway. */
  send_message: { args: { workflow_id: string; message: SendMessage }; result: MessageReply };
  /** What a build will need on this machine (Python, uv, isolation, */
  /** free disk), each with whether it is there and its fix. */
  preflight: { args: {}; result: PreflightView };
  /** Retries a build that failed on its Python environment or test run */
  /** (uv missing, the index unreachable) with the script the builder */
  /** already wrote: only the environment and the test run again. */
  retry_build: { args: { workflow_id: string; version_id: string }; result: WorkflowView };
  /** Stops the LLM call of the message in flight on a workflow. */
  cancel_message: { args: { workflow_id: string }; result: CancelReply };
  /** Approves a built version: it becomes active; the others are archived. */
  approve: { args: { workflow_id: string; version_id: string }; result: WorkflowView };
  /** Edits a version: creates version N+1 (`validated`) with the same extracts. */
  edit: { args: { workflow_id: string; version_id: string }; result: CreatedVersion };
  /** Restores an earlier (archived) version as a new version, tested on */
  /** the real files before approval. */
  restore_version: { args: { workflow_id: string; version_id: string }; result: CreatedVersion };
  /** One version in full (its script, fields and extracts), archived ones too. */
  get_version: { args: { workflow_id: string; version_id: string }; result: VersionView };
  /** Resolves a build gate waiting for the user; the build continues in the background. */
  resolve_gate: { args: { workflow_id: string; version_id: string; request: GateRequest }; result: WorkflowView };
  /** A version's build session folder: the iterations and their files. */
  sessions: { args: { workflow_id: string; version_id: string }; result: Array<SessionIteration> };
  /** A workflow's build choices: plan first, AI review of the script, */
  /** and whether the AI reviewer approves the gates (all off by default). */
  get_build_options: { args: { workflow_id: string }; result: BuildOptions };
  /** Sets a workflow's build choices; the next build uses them. */
  set_build_options: { args: { workflow_id: string; options: BuildOptions }; result: BuildOptions };
  /** A preview of an output of a version's latest test run. */
  test_output_preview: { args: { workflow_id: string; version_id: string; name: string }; result: OutputPreview };
  /** Builder conversations and flow runs together, most recent activity first */
  /** (seed 004); `flowName=NAME` keeps one flow's runs, `flowName=__none__` */
  /** the conversations without a flow name. */
  list_conversations: { args: ConversationQuery; result: ConversationList };
  /** Runs a workflow's approved version; the answer is the finished run */
  /** (it may have failed: see `status`). */
  run_workflow: { args: { workflow_id: string; request: RunInputs }; result: RunView };
  /** A workflow's runs, newest first. */
  list_runs: { args: { workflow_id: string }; result: Array<RunView> };
  /** A preview of a run's output: an image, a table per sheet, or text. */
  run_output_preview: { args: { run_id: string; name: string }; result: OutputPreview };
  /** The LLM settings (never a key, only where it comes from). */
  settings: { args: {}; result: SettingsView };
  /** Replaces the LLM settings. */
  update_settings: { args: { settings: LlmSettings }; result: SettingsView };
  /** Stores a provider's API key in the system keyring (503 */
  /** `keyring_unavailable` names the environment variable to use instead). */
  set_key: { args: { id: string; input: KeyInput }; result: void };
  /** Removes a provider's API key from the system keyring. */
  delete_key: { args: { id: string }; result: void };
  /** Tries a provider's connection and key. */
  test_provider: { args: { id: string }; result: ConnectionTest };
  /** Local LLM servers answering now. */
  detect_providers: { args: {}; result: Array<Detected> };
  /** The Python interpreter setting. */
  python: { args: {}; result: PythonView };
  /** Sets the Python interpreter (checked first; used from the next start). */
  set_python: { args: { input: PythonInput }; result: PythonView };
  /** The "run scripts without isolation" setting and this machine's isolation. */
  isolation: { args: {}; result: IsolationView };
  /** Allows or forbids running scripts without isolation on this machine. */
  set_isolation: { args: { input: IsolationInput }; result: IsolationView };
  /** The memory and time a script run gets: in force, the defaults from this machine, and what is stored. */
  run_limits: { args: {}; result: RunLimitsView };
  /** Sets the memory and time a script run gets (`null`: this machine's default); used from the next run and build. */
  set_run_limits: { args: { input: RunLimitsInput }; result: RunLimitsView };
  /** The embedded model's settings (idle unload time) and what this machine runs it with. */
  embedded: { args: {}; result: EmbeddedView };
  /** Sets how many idle minutes the embedded model stays loaded. */
  set_embedded: { args: { input: EmbeddedInput }; result: EmbeddedView };
  /** The output budget of each LLM role. */
  role_budgets: { args: {}; result: BudgetsView };
  /** Sets the output budgets of the LLM roles. */
  set_role_budgets: { args: { budgets: RoleBudgets }; result: BudgetsView };
  /** The house rules: the Settings text, its scopes and the files of `house-rules/`. */
  house_rules: { args: {}; result: HouseRulesView };
  /** Replaces the house rules' Settings text (the builder's prompt carries the sections that apply). */
  set_house_rules: { args: { input: HouseRulesInput }; result: HouseRulesView };
  /** The data folder's disk use by kind, free space and the upload expiry. */
  storage: { args: {}; result: StorageView };
  /** Sets how long uploads that joined no workflow are kept. */
  set_storage: { args: { input: StorageInput }; result: StorageView };
  /** Clears one kind: unattached uploads, finished runs' outputs or closed */
  /** versions' session folders (what each keeps is in the storage view). */
  clear_storage: { args: { kind: StorageKind }; result: Cleared };
  /** The managed Python environments, their sizes, whether a version uses each, and `uv`. */
  environments: { args: {}; result: EnvironmentsView };
  /** Removes an environment no version uses any more. */
  remove_environment: { args: { id: string }; result: EnvironmentsView };
  /** Installs `uv` into the data folder (the user asked for it); progress comes as events. */
  install_uv: { args: {}; result: EnvironmentsView };
  /** Token totals from the ledger: in all, per role and per workflow. */
  usage: { args: {}; result: Usage };
  /** What left the machine: every outbound LLM request, newest first, searched and paged. */
  ledger: { args: LedgerQuery; result: Array<LedgerEntry> };
  /** Prompts waiting for the user to paste an answer (manual back end). */
  manual_prompts: { args: {}; result: Array<ManualPrompt> };
  /** Answers a pending manual prompt; the work waiting on it continues, even after a restart. */
  answer_manual: { args: { id: string; answer: ManualAnswer }; result: void };
  /** Dismisses a pending manual prompt (its call fails as cancelled). */
  dismiss_manual: { args: { id: string }; result: void };
  /** Everything waiting for a person (flow runs at a gate or needing */
  /** attention, manual prompts), oldest first: the sidebar's badge. */
  waiting_items: { args: {}; result: WaitingList };
  /** Every backup and the retention counts. */
  list_backups: { args: {}; result: BackupsView };
  /** Takes a backup now. */
  create_backup: { args: {}; result: Backup };
  /** Sets the retention counts; the backups are pruned to them. */
  set_backup_retention: { args: { retention: BackupRetention }; result: BackupsView };
  /** Restores a backup over the database; `previous` is the backup of the database as it was. */
  restore_backup: { args: { backup_id: string }; result: RestoreReply };
  /** Deletes a backup in two steps (see `delete_workflow`). */
  delete_backup: { args: { backup_id: string } & Confirm; result: DeleteReply };
  /** Every agent in `agents/` (re-read now) with the flows that use it; */
  /** invalid files and refused file names are `disabled` with their `error`. */
  agents_list: { args: {}; result: AgentList };
  /** One agent by name (seed 003's "fetch agent by id"). */
  agents_get: { args: { name: string }; result: AgentView };
  /** Creates an agent (`{name, prompt?, provider?, model?}`); a 400 names */
  /** every problem of the request at once. */
  agents_create: { args: { input: AgentInput }; result: AgentView };
  /** Replaces an agent's prompt, back end and model (absent fields are unset). */
  agents_update: { args: { name: string; input: AgentInput }; result: AgentView };
  /** Deletes an agent in two steps (see `delete_workflow`); refused while a */
  /** flow names it (the message names the flows). */
  agents_delete: { args: { name: string } & Confirm; result: DeleteReply };
  /** Every flow in `flows/` (re-read now); invalid ones are `disabled` with their `error`. */
  flows_list: { args: {}; result: FlowList };
  /** A flow's definition. */
  flows_definition: { args: { name: string }; result: unknown };
  /** One step of a flow by its id (seed 003's stage id), nested steps included. */
  flows_step: { args: { name: string; stage_id: string }; result: unknown };
  /** Starts a run, or resumes one (`conversationId`, optional `resumeStepPath`). */
  flows_run: { args: { name: string; request: StartFlow }; result: FlowStarted };
  /** A flow's runs, newest first. */
  flows_runs: { args: { name: string }; result: FlowRunList };
  /** A flow as a Mermaid `graph TD` with its `WORKFLOW_CONFIG` block (seed 003). */
  flows_mermaid: { args: { name: string }; result: string };
  /** A flow with its agents as one JSON bundle; `?format=seed003` gives seed 003's own shape (`workflow.steps`, `agents[{id, displayName, agentPrompt}]`). */
  flows_export: { args: { name: string } & ExportQuery; result: FlowBundle };
  /** Imports a bundle or a Mermaid diagram (`{bundle?, mermaid?, name?, overwrite?}`). */
  flows_import: { args: { request: FlowImport }; result: FlowSummary };
  /** A run: status, `flags.flow` (resume state), transcript, pending question. */
  flow_run_get: { args: { id: string }; result: FlowRunView };
  /** Renames or (un)archives a run. */
  flow_run_patch: { args: { id: string; patch: FlowRunPatch }; result: FlowRunView };
  /** Deletes a run with its subflow runs, transcript and checkpoints, in */
  /** two steps (see `delete_workflow`). */
  flow_run_delete: { args: { id: string } & Confirm; result: DeleteReply };
  /** Stops a run: the step in flight is cancelled and `stopped` recorded. */
  flow_run_stop: { args: { id: string }; result: FlowRunView };
  /** Answers the gate or manual task the run waits at (`{option | decision, */
  /** input?, result?}`: the person's result is text or JSON), or a run */
  /** that needs attention (`retry`, `skip`, `stop`). */
  flow_run_answer: { args: { id: string; answer: GateAnswer }; result: FlowStarted };
  /** The installed models, the recommended list (size, memory need, */
  /** speed here), downloads in progress and whether this is the first start. */
  models_list: { args: {}; result: ModelsView };
  /** Starts downloading a recommended model (`name`) or a URL with its */
  /** `sha256`; progress, the checksum and the end come as `model_progress` */
  /** events. An interrupted download resumes where it stopped. */
  models_pull: { args: { request: PullModel }; result: ModelsView };
  /** Adds a GGUF file from this machine (checked by its header; hard-linked */
  /** into the models folder, or copied when on another disk). */
  models_add_file: { args: { input: AddModelFile }; result: ModelsView };
  /** Records the first start's choice (local model, cloud API or manual). */
  models_first_start: { args: { input: FirstStartInput }; result: ModelsView };
  /** Stops a download; its partial file stays, and the next pull resumes it. */
  models_cancel: { args: { name: string }; result: ModelsView };
  /** Uses a model: the `local` back end points at it and answers the builder's roles. */
  models_use: { args: { name: string }; result: ModelsView };
  /** Removes a model (or a partial download of one); refused while it is in use. */
  models_remove: { args: { name: string }; result: ModelsView };
  /** A flow's file as written, its revision (SHA-256 of the file) and the loader's verdict. */
  flows_source: { args: { name: string }; result: FlowSource };
  /** Checks a draft with the loader's own checks (its messages, or its Mermaid); nothing is written. */
  flows_validate: { args: { draft: FlowDraft }; result: FlowCheck };
  /** Saves a draft as `flows/{name}.json` through the loader's checks; `baseRevision` is the */
  /** revision the editor opened (absent: a new flow). */
  flows_save: { args: { name: string; save: FlowSave }; result: FlowSaved };
  /** The step types and the agents with their commands, for the editor's pickers. */
  flows_editor_options: { args: {}; result: FlowEditorOptions };
  /** Files an outside (MCP) client asked to see, waiting for the user's */
  /** approval, each with the masked extract the client would get. */
  client_requests: { args: {}; result: Array<ClientRequestView> };
  /** Approves a client's request: the client may now get the file's masked extract. */
  approve_client_request: { args: { id: string }; result: ClientRequestView };
  /** Declines a client's request: the client is told the user declined. */
  decline_client_request: { args: { id: string }; result: ClientRequestView };
  /** Every schedule, with its last run, last error and next run. */
  list_schedules: { args: {}; result: Array<ScheduleView> };
  /** Schedules an approved workflow or a flow: a cron expression or a watched folder. */
  create_schedule: { args: { input: ScheduleInput }; result: ScheduleView };
  /** Pauses a schedule: it runs nothing until resumed. */
  pause_schedule: { args: { id: string }; result: ScheduleView };
  /** Resumes a schedule from its next time; the back-off starts over. */
  resume_schedule: { args: { id: string }; result: ScheduleView };
  /** Removes a schedule (its runs stay in the history); answers the rest. */
  delete_schedule: { args: { id: string }; result: Array<ScheduleView> };
}

/** A call's name. */
export type CallName = keyof Calls;
