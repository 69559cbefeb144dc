//! Generates the Tauri context, and a permission per app command so the
//! capability in `tauri.conf.json` can allow exactly the commands the UI uses.

fn main() {
    let commands = tauri_build::AppManifest::new().commands(&[
        "list_workflows",
        "get_workflow",
        "get_version",
        "create_workflow",
        "send_message",
        "approve",
        "edit",
        "restore_version",
        "update_workflow",
        "delete_workflow",
        "list_backups",
        "create_backup",
        "restore_backup",
        "delete_backup",
        "set_backup_retention",
        "extract_path",
        "upload_file",
        "settings",
        "update_settings",
        "set_key",
        "delete_key",
        "test_provider",
        "detect_providers",
        "python",
        "set_python",
        "ledger",
        "manual_prompts",
        "answer_manual",
        "dismiss_manual",
        "resolve_gate",
        "sessions",
        "session_file",
        "run_workflow",
        "list_runs",
        "run_output",
        "flows_list",
        "flows_mermaid",
        "flows_export",
        "flows_import",
        "flows_run",
        "flows_runs",
        "flow_run_get",
        "flow_run_patch",
        "flow_run_delete",
        "flow_run_stop",
        "flow_run_answer",
    ]);
    if let Err(e) = tauri_build::try_build(tauri_build::Attributes::new().app_manifest(commands)) {
        eprintln!("tauri build script failed: {e:#}");
        std::process::exit(1);
    }
}
